"""`skills-lsp`: the command line. One module per command group registers its commands on the
parser: `check` (check, rules, rule, init), `engine` (index, select, prompt), `budget`, `routing` (test,
eval, overlap), `registry` (registry export), `mcp_server` (mcp); `serve` hands over to the language
server's own parser."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import TextIO

from skills_lsp._version import __version__
from skills_lsp.cli.common import UsageError, end_process, left_to_exit, printable
from skills_lsp.core.errors import ScorerUnavailable

COMMAND_GROUPS = ("check", "engine", "budget", "routing", "registry", "mcp_server")
# The group of each command: a command imports its own group only (a warm `check` or `select`
# does not pay for the others' imports). tests/cli checks this against what the groups register.
GROUP_OF = {
    "check": "check",
    "rules": "check",
    "rule": "check",
    "init": "check",
    "index": "engine",
    "select": "engine",
    "prompt": "engine",
    "budget": "budget",
    "overlap": "routing",
    "test": "routing",
    "eval": "routing",
    "registry": "registry",
    "mcp": "mcp_server",
}


def build_parser(group: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or of `group`'s commands only."""
    parser = argparse.ArgumentParser(prog="skills-lsp", description="Validate, test and serve agent skills.")
    parser.add_argument("--version", action="version", version=f"skills-lsp {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMAND_GROUPS if group is None else (group,):
        importlib.import_module(f"skills_lsp.cli.{name}").register(sub)
    sub.add_parser("serve", help="run the language server (stdio by default; see `skills-lsp serve --help`)")
    return parser


def main(argv: Sequence[str] | None = None, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] == ["serve"]:  # the server parses its own options (editors add --stdio)
        from skills_lsp.core.memory import no_collection

        # The server's imports make about 400,000 objects that live as long as it does (lsprotocol's
        # classes, pygls, numpy) and almost no garbage: not walked by collections meanwhile (one
        # full collection took 20-30 ms of every start), then kept in the oldest generation.
        with no_collection():
            from skills_lsp.server.generated_code import keep_generated_code

            keep_generated_code()  # before lsprotocol's classes are made: their methods are generated code
            from skills_lsp.server.app import main as serve

        return serve(arguments[1:])
    parser = build_parser(GROUP_OF.get(arguments[0]) if arguments else None)
    args = parser.parse_args(arguments)
    try:
        code: int = args.func(args, out, err)
    except UsageError as exc:
        err.write(f"skills-lsp: error: {printable(str(exc))}\n")
        return 2
    except ScorerUnavailable as exc:
        err.write(f"skills-lsp: error: {printable(str(exc))}\n")
        return 2
    except BrokenPipeError:  # pragma: no cover - e.g. piped into head
        return 0
    finally:
        semantic = sys.modules.get("skills_lsp.core.routing.semantic")  # loaded only by scoring commands
        if semantic is not None:
            semantic.VECTORS.flush()  # what `_keep_vectors` attached; nothing if nothing new
    if argv is None and left_to_exit(args):  # the program itself, not a call from Python
        end_process(code, out, err)
    return code
