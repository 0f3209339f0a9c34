"""`registry export MODULE:ATTR`: the tool manifest of a real ADK agent (needs the `adk` extra)."""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from skills_lsp.cli.common import UsageError, printable

if TYPE_CHECKING:
    from skills_lsp.cli.common import Subparsers


def register(sub: Subparsers) -> None:
    registry = sub.add_parser("registry", help="work with tool manifests (skill-tools.yaml)")
    registry_sub = registry.add_subparsers(dest="registry_command", required=True, metavar="ACTION")
    export = registry_sub.add_parser(
        "export",
        help="write the tool manifest of an ADK agent (needs skills-lsp[adk])",
        description=(
            "Import MODULE (the current directory is on the import path), take ATTR (an ADK agent, or a "
            "list of tools) and write its tools as a skill-tools.yaml manifest. An agent's sub-agents' "
            "tools are included (--no-sub-agents to leave them out); toolsets are expanded with "
            "get_tools() without an invocation context, or skipped with a warning."
        ),
    )
    export.add_argument("target", metavar="MODULE:ATTR", help="e.g. my_agent.agent:root_agent")
    export.add_argument("-o", "--output", help="write the manifest here (default: stdout)")
    export.add_argument(
        "--no-sub-agents", dest="sub_agents", action="store_false", help="only the agent's own tools"
    )
    export.add_argument(
        "--toolset-timeout", type=float, default=10.0, help="seconds per toolset's get_tools (default: 10)"
    )
    export.set_defaults(func=cmd_registry_export)


_TARGET = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")


def _load_target(target: str) -> Any:
    """The object named by `MODULE:ATTR` (ATTR may be dotted), MODULE imported with the cwd on sys.path."""
    import contextlib
    import importlib

    if not _TARGET.fullmatch(target):
        raise UsageError(f"expected MODULE:ATTR (e.g. `my_agent.agent:root_agent`), got {target!r}")
    module_name, attr = target.split(":", 1)
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    try:
        with contextlib.redirect_stdout(sys.stderr):  # a module that prints must not corrupt the YAML
            module = importlib.import_module(module_name)
    except (Exception, SystemExit) as exc:
        raise UsageError(f"cannot import module {module_name!r}: {type(exc).__name__}: {exc}") from None
    value: Any = module
    for part in attr.split("."):
        try:
            value = getattr(value, part)
        except AttributeError:
            raise UsageError(f"module {module_name!r} has no attribute {attr!r}") from None
    return value


def cmd_registry_export(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    import yaml

    try:  # google-adk is imported by this command only
        from skills_lsp.adk.export import ExportError, collect_tools
    except ImportError as exc:
        raise UsageError(str(exc)) from None
    target: str = args.target
    obj = _load_target(target)
    try:
        export = collect_tools(obj, sub_agents=args.sub_agents, toolset_timeout=args.toolset_timeout)
    except ExportError as exc:
        raise UsageError(f"{target}: {exc}") from None
    for warning in export.warnings:
        err.write(f"skills-lsp: warning: {printable(warning)}\n")
    manifest = export.manifest(f"adk:{target}")
    text = f"# The tools of {target}, written by `skills-lsp registry export {target}`.\n" + yaml.safe_dump(
        manifest, sort_keys=False, allow_unicode=True, width=100
    )
    if args.output is None:
        out.write(text)
        return 0
    try:
        Path(args.output).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write {args.output}: {exc.strerror or exc}") from None
    out.write(f"Wrote {len(export.tools)} tools to {args.output}.\n")
    return 0
