"""`skills-lsp serve`: builds the server (base.py) and registers every feature module on it."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from skills_lsp.server import (
    code_actions,
    codelens,
    commands,
    completion,
    diagnostics,
    hover,
    inlay_hints,
    links,
    symbols,
    sync,
)
from skills_lsp.server.base import SkillsLanguageServer

# One module per LSP feature; each registers its handlers on the server.
FEATURES = (
    sync,
    diagnostics,
    completion,
    hover,
    codelens,
    code_actions,
    links,
    symbols,
    inlay_hints,
    commands,
)


def create_server() -> SkillsLanguageServer:
    server = SkillsLanguageServer()
    for module in FEATURES:
        module.register(server)
    return server


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="skills-lsp serve", description="Run the language server.")
    parser.add_argument("--stdio", action="store_true", help="use stdio (the default; accepted for editors)")
    parser.add_argument("--tcp", action="store_true", help="listen on TCP instead of stdio")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=2087)
    parser.add_argument("--log-file", help="write the server's log here")
    parser.add_argument("--log-level", default="WARNING", choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    args = parser.parse_args(argv)
    handlers: list[logging.Handler] = (
        [logging.FileHandler(args.log_file, encoding="utf-8")]
        if args.log_file
        else [logging.StreamHandler(sys.stderr)]
    )
    logging.basicConfig(
        level=args.log_level, handlers=handlers, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    # pygls warns about ordinary races (a cancel for a request already answered); editors such as
    # Neovim log all stderr as errors, so keep the protocol layer quiet unless asked.
    if args.log_level != "DEBUG":
        logging.getLogger("pygls.protocol").setLevel(logging.ERROR)
    server = create_server()
    if args.tcp:
        server.start_tcp(args.host, args.port)
    else:
        server.start_io()
    return 0
