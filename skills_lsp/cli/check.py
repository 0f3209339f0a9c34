"""`check` (findings for skills, in text, JSON, SARIF or GitHub form), `rules`, `rule CODE` and
`init NAME`."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from skills_lsp.cli.common import UsageError, parse_codes, printable
from skills_lsp.cli.output import sarif_log, write_github, write_json, write_text
from skills_lsp.core.assist.scaffold import ScaffoldError, scaffold_skill
from skills_lsp.core.model import Severity
from skills_lsp.core.rules import RULES
from skills_lsp.core.rules.check import check_paths, default_cache_dir
from skills_lsp.core.rules.parallel import default_jobs
from skills_lsp.core.rules.profiles import PROFILES
from skills_lsp.core.rules.reference import rule_json, rule_text, rules_markdown
from skills_lsp.core.workspace.settings import resolve_config

if TYPE_CHECKING:
    from skills_lsp.cli.common import Subparsers


def register(sub: Subparsers) -> None:
    _add_check(sub)
    _add_rules(sub)
    _add_init(sub)


def _add_check(sub: Subparsers) -> None:
    check = sub.add_parser("check", help="check skills and print findings")
    check.add_argument(
        "paths", nargs="*", metavar="PATH", help="workspace, skill directory or file (default: .)"
    )
    check.add_argument("--profile", help=f"profile for every file ({', '.join(PROFILES)})")
    check.add_argument(
        "--select", help="comma-separated rule codes or prefixes to enable (replaces defaults)"
    )
    check.add_argument("--extend-select", help="rule codes or prefixes to enable in addition")
    check.add_argument("--ignore", help="rule codes or prefixes to disable")
    check.add_argument("--format", choices=["text", "json", "sarif", "github"], default="text")
    check.add_argument(
        "--min-severity",
        choices=["error", "warning", "info", "hint"],
        default="info",
        help="lowest severity to print (default: info; hints are editor-only)",
    )
    check.add_argument("--exit-zero", action="store_true", help="exit 0 even when errors are found")
    check.add_argument("--config", help="config file (default: nearest skills-lsp.toml or pyproject.toml)")
    check.add_argument("--no-cache", action="store_true", help="do not read or write the result cache")
    check.add_argument(
        "--cache-dir", help=f"cache directory (default: <config dir or target>/{'.skills-lsp-cache'})"
    )
    check.add_argument(
        "--jobs", type=int, default=default_jobs(), help="processes checking files (default: the CPU count)"
    )
    check.set_defaults(func=cmd_check)


def _add_rules(sub: Subparsers) -> None:
    rules = sub.add_parser("rules", help="list every rule")
    rules.add_argument("--format", choices=["text", "json", "markdown"], default="text")
    rules.set_defaults(func=cmd_rules)

    rule = sub.add_parser("rule", help="print one rule's documentation")
    rule.add_argument("code")
    rule.set_defaults(func=cmd_rule)


def _add_init(sub: Subparsers) -> None:
    init = sub.add_parser("init", help="create a new skill from a template")
    init.add_argument("name")
    init.add_argument("--dir", default=".", help="parent directory (default: .)")
    init.add_argument("--description", help="the skill's description")
    init.set_defaults(func=cmd_init)


def cmd_check(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    targets = args.paths or ["."]
    missing = [t for t in targets if not Path(t).exists()]
    if missing:
        raise UsageError(f"no such file or directory: {', '.join(missing)}")
    explicit = Path(args.config) if args.config else None
    if explicit is not None and not explicit.is_file():
        raise UsageError(f"config file not found: {explicit}")
    config, config_problems = resolve_config(targets, explicit)
    config = config.with_overrides(
        select=parse_codes(args.select, "--select"),
        ignore=parse_codes(args.ignore, "--ignore"),
        extend_select=parse_codes(args.extend_select, "--extend-select"),
    )
    if args.jobs < 1:
        raise UsageError("--jobs must be 1 or more")
    if args.profile and args.profile not in PROFILES:
        raise UsageError(f"unknown profile {args.profile!r}; choose one of {', '.join(PROFILES)}")
    cache_dir = (
        None
        if args.no_cache
        else (Path(args.cache_dir) if args.cache_dir else default_cache_dir(targets, config))
    )
    show_progress = args.format == "text" and err.isatty()

    def progress(done: int, total: int) -> None:
        err.write(f"\rChecking {done}/{total} files...")
        if done == total:
            err.write("\r" + " " * 40 + "\r")
        err.flush()

    result = check_paths(
        targets,
        config=config,
        profile=args.profile,
        cache_dir=cache_dir,
        progress=progress if show_progress else None,
        jobs=args.jobs,
    )
    result.findings[:0] = config_problems
    threshold = Severity.parse(args.min_severity)
    shown = [f for f in result.findings if f.severity <= threshold]
    if args.format == "json":
        write_json(shown, out)
    elif args.format == "sarif":
        json.dump(sarif_log(shown), out, indent=2, ensure_ascii=False)
        out.write("\n")
    elif args.format == "github":
        write_github(shown, out)
    else:
        write_text(result, shown, out)
    if args.exit_zero:
        return 0
    return 1 if any(f.severity is Severity.ERROR for f in result.findings) else 0


def cmd_rules(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if args.format == "markdown":
        out.write(rules_markdown())
        return 0
    rows = [RULES[c] for c in sorted(RULES)]
    if args.format == "json":
        json.dump([rule_json(r) for r in rows], out, indent=2)
        out.write("\n")
        return 0
    for r in rows:
        fix = "fix" if r.fixable else "   "
        out.write(f"{r.code}  {r.severity.label:<7}  {fix}  {r.name:<28} {r.summary}\n")
    return 0


def cmd_rule(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    r = RULES.get(args.code.upper())
    if r is None:
        raise UsageError(f"unknown rule {args.code!r}; see `skills-lsp rules`")
    out.write(rule_text(r))
    return 0


def cmd_init(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    base = Path(args.dir)
    if base.exists() and not base.is_dir():
        raise UsageError(f"--dir {printable(str(base))} is not a directory")
    try:
        skill_md = scaffold_skill(args.name, base, args.description)
    except ScaffoldError as exc:
        raise UsageError(printable(str(exc))) from None
    out.write(f"Created {printable(skill_md.as_posix())}\n")
    return 0
