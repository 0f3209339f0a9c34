"""`check` (findings for skills, in text, JSON, SARIF, GitHub or GitLab form; `--fix`, baselines,
statistics), `rules`, `rule CODE` and `init NAME`."""

from __future__ import annotations

import argparse
import gc
import io
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from skills_lsp.cli import recheck
from skills_lsp.cli.common import (
    DeferredHelp,
    UsageError,
    display,
    leave_to_exit,
    parse_codes,
    printable,
    split_codes,
)
from skills_lsp.cli.recheck import RunRecord

# The stages are imported by the commands that run them: a re-check answered from the saved run
# imports none of them (see recheck.py).
if TYPE_CHECKING:
    from skills_lsp.cli.common import Subparsers
    from skills_lsp.core.files.config import Config
    from skills_lsp.core.model import Finding
    from skills_lsp.core.rules.baseline import Baseline
    from skills_lsp.core.rules.check import CheckResult
    from skills_lsp.core.rules.fixing import FileFix


def register(sub: Subparsers) -> None:
    _add_check(sub)
    _add_rules(sub)
    _add_init(sub)


def _add_check(sub: Subparsers) -> None:
    check = sub.add_parser("check", help="check skills and print findings")
    check.add_argument(
        "paths", nargs="*", metavar="PATH", help="workspace, skill directory or file (default: .)"
    )
    check.add_argument("--profile", help=DeferredHelp(_profile_help))
    check.add_argument(
        "--select", help="comma-separated rule codes or prefixes to enable (replaces defaults)"
    )
    check.add_argument("--extend-select", help="rule codes or prefixes to enable in addition")
    check.add_argument("--ignore", help="rule codes or prefixes to disable")
    check.add_argument(
        "--output-format",
        "--format",
        dest="format",
        choices=["text", "json", "sarif", "github", "gitlab"],
        default="text",
        help="text (default), json, sarif (SARIF 2.1.0), github (workflow annotations) or gitlab "
        "(Code Quality); --format is the same option",
    )
    fixing = check.add_argument_group("fixing")
    fixing.add_argument("--fix", action="store_true", help="apply the safe fixes, then report what is left")
    fixing.add_argument(
        "--unsafe-fixes",
        action="store_true",
        help="with --fix or --diff, also apply fixes that change meaning",
    )
    fixing.add_argument(
        "--diff",
        action="store_true",
        help="print the fixes as a unified diff and write nothing (exit 1 when there is one)",
    )
    fixing.add_argument(
        "--show-fixes", action="store_true", help="list what was fixed (with --fix) or what --fix would fix"
    )
    check.add_argument(
        "--statistics", action="store_true", help="print a count per code instead of the findings"
    )
    check.add_argument("--baseline", metavar="FILE", help="report only findings FILE does not record")
    check.add_argument(
        "--write-baseline", metavar="FILE", help="record the findings in FILE (for --baseline) and exit 0"
    )
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
        "--respect-gitignore",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="leave out what .gitignore and .ignore files ignore (default: on, or `respect-gitignore` "
        "in the config)",
    )
    check.add_argument(
        "--cache-dir", help=f"cache directory (default: <config dir or target>/{'.skills-lsp-cache'})"
    )
    check.add_argument("--jobs", type=int, help="processes checking files (default: the CPU count)")
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


EDITOR_ONLY_RULE = "SK704"  # competing descriptions: the editor and `overlap` score the workspace
# Options that change neither the findings nor how they are printed: left out of a saved run's key.
_NOT_IN_RUN_KEY = frozenset({"func", "paths", "jobs", "no_cache", "cache_dir", "config"})


def _profile_help() -> str:
    from skills_lsp.core.rules.profiles import PROFILES

    return f"profile for every file ({', '.join(PROFILES)})"


@contextmanager
def _no_full_collections() -> Iterator[None]:
    """A check keeps what it builds (every file's findings, each skill's name and description)
    until it has printed them: the collector's full passes would only walk that growing heap
    again and again (1.1 s of a 16 s check of 15,000 files, in one process). The young
    generations still free what each file's parse leaves behind."""
    young, middle, full = gc.get_threshold()
    gc.set_threshold(young, middle, 1_000_000)
    try:
        yield
    finally:
        gc.set_threshold(young, middle, full)


def cmd_check(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    with _no_full_collections():
        return _cmd_check(args, out, err)


def _cmd_check(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    targets = args.paths or ["."]
    missing = [t for t in targets if not Path(t).exists()]
    if missing:
        raise UsageError(f"no such file or directory: {', '.join(missing)}")
    explicit = Path(args.config) if args.config else None
    if explicit is not None and not explicit.is_file():
        raise UsageError(f"config file not found: {explicit}")
    if args.diff and args.write_baseline:
        raise UsageError("--diff writes nothing; it cannot be combined with --write-baseline")
    if args.diff and args.statistics:
        raise UsageError("--diff prints a unified diff; it cannot be combined with --statistics")
    if args.diff and args.format != "text":
        raise UsageError(f"--diff prints a unified diff; it cannot be {args.format}")
    if args.statistics and args.format not in ("text", "json"):
        # a report file written with `> report.json` would silently hold a text table
        raise UsageError(f"--statistics prints text or json, not {args.format}")
    if args.jobs is not None and args.jobs < 1:
        raise UsageError("--jobs must be 1 or more")
    if args.no_cache or args.fix or args.diff or args.baseline or args.write_baseline:
        return _check(args, targets, explicit, out, err, None)
    # A run that only prints: answered from the saved run when nothing it rested on changed.
    from skills_lsp.core.files.cache import cache_dir_for, find_config

    config_file = explicit or find_config(Path(targets[0]))
    cache_dir = (
        Path(args.cache_dir)
        if args.cache_dir
        else cache_dir_for(targets, config_file.parent if config_file is not None else None)
    )
    options = {name: value for name, value in vars(args).items() if name not in _NOT_IN_RUN_KEY}
    config_name = os.path.abspath(config_file) if config_file is not None else None
    key = recheck.run_key(os.getcwd(), targets, options, config_name)
    saved = recheck.load(cache_dir, key, os.environ)
    if saved is not None:
        _warn_editor_only(split_codes(args.select), split_codes(args.extend_select), err)
        output, code = saved
        recheck.write_output(output, out)
        return code
    record = RunRecord()
    printed = io.StringIO()
    code = _check(args, targets, explicit, printed, err, record)
    out.write(printed.getvalue())
    if record.cache_dir == cache_dir:
        recheck.save(cache_dir, key, record, printed.getvalue(), code)
    return code


def _warn_editor_only(
    selected: tuple[str, ...] | None, extended: tuple[str, ...] | None, err: TextIO
) -> None:
    for option, codes in (("--select", selected), ("--extend-select", extended)):
        if EDITOR_ONLY_RULE in (codes or ()):
            # Selecting it here would do nothing, silently: it needs the scorer kept warm as a
            # description is typed, so `check` does not run it.
            err.write(
                f"skills-lsp: warning: {option} {EDITOR_ONLY_RULE}: {EDITOR_ONLY_RULE} runs in the editor "
                "(the language server) and in `skills-lsp overlap`, not in `check`\n"
            )


def _check(
    args: argparse.Namespace,
    targets: list[str],
    explicit: Path | None,
    out: TextIO,
    err: TextIO,
    record: RunRecord | None,
) -> int:
    """The check itself; with `record`, what its output rests on is gathered there."""
    from skills_lsp.core.files.discovery import WalkRecord
    from skills_lsp.core.model import Severity
    from skills_lsp.core.rules.baseline import Baseline, BaselineError, forget_lines, write_baseline
    from skills_lsp.core.rules.check import check_paths, default_cache_dir, workspace_root
    from skills_lsp.core.rules.listing import CLAUDE_BUDGET_VARIABLE, budget_variables
    from skills_lsp.core.rules.parallel import default_jobs
    from skills_lsp.core.rules.profiles import PROFILES
    from skills_lsp.core.workspace.settings import resolve_config

    config, config_problems = resolve_config(targets, explicit)
    selected = parse_codes(args.select, "--select")
    extended = parse_codes(args.extend_select, "--extend-select")
    _warn_editor_only(selected, extended, err)
    config = config.with_overrides(
        select=selected,
        ignore=parse_codes(args.ignore, "--ignore"),
        extend_select=extended,
        respect_gitignore=args.respect_gitignore,
        budget_variables=budget_variables(os.environ),  # core reads no environment
    )
    if args.profile and args.profile not in PROFILES:
        raise UsageError(f"unknown profile {args.profile!r}; choose one of {', '.join(PROFILES)}")
    baseline: Baseline | None = None
    if args.baseline:
        try:
            baseline = Baseline.load(Path(args.baseline))
        except BaselineError as exc:
            raise UsageError(printable(str(exc))) from None
    cache_dir = (
        None
        if args.no_cache
        else (Path(args.cache_dir) if args.cache_dir else default_cache_dir(targets, config))
    )
    show_progress = args.format == "text" and err.isatty()
    walk = WalkRecord() if record is not None else None

    def progress(done: int, total: int) -> None:
        err.write(f"\rChecking {done}/{total} files...")
        if done == total:
            err.write("\r" + " " * 40 + "\r")
        err.flush()

    def run() -> CheckResult:
        from skills_lsp.core.routing.queries import query_file_problems

        return check_paths(
            targets,
            config=config,
            profile=args.profile,
            cache_dir=cache_dir,
            progress=progress if show_progress else None,
            jobs=args.jobs if args.jobs is not None else default_jobs(),
            workspace_files=lambda root, files: query_file_problems(root, config.query_file, files),
            walk=walk,
        )

    result = run()
    if record is not None and walk is not None:
        from skills_lsp.core.routing.queries import query_file_paths

        root = workspace_root(targets, config)
        record.cache_dir = cache_dir
        record.env = {CLAUDE_BUDGET_VARIABLE: os.environ.get(CLAUDE_BUDGET_VARIABLE)}
        record.dirs.update(walk.dirs)
        record.ignore_probes.extend(walk.probed)
        record.probes.update(result.probes)
        record.files.update(item.path for item in result.files)
        paths = [root / config.tool_manifest, *query_file_paths(root, config.query_file, result.files)]
        record.watched.update(map(os.fspath, paths))
        if config.source is not None:
            record.watched.add(os.fspath(config.source))
        for target in targets:
            record.watch_target(target)
    fixes: list[FileFix] = []
    if args.fix or args.diff:
        fixes = _fix(args, targets, config, result, baseline, err)
        if args.diff:
            return _write_diff(fixes, args, out, err)
        if any(f.changed for f in fixes):
            forget_lines()
            result = run()
    result.findings[:0] = config_problems
    reported = baseline.new(result.findings) if baseline is not None else result.findings
    if args.write_baseline:
        try:
            count = write_baseline(Path(args.write_baseline), result.findings)
        except OSError as exc:
            raise UsageError(
                f"cannot write the baseline {printable(args.write_baseline)}: {exc.strerror or exc}"
            ) from None
        err.write(
            f"Recorded {count} finding{'s' if count != 1 else ''} in {printable(args.write_baseline)}.\n"
        )
        return 0
    leave_to_exit(args, result)  # freed by the process's end, if this is the program
    _write_findings(args, result, reported, fixes, out, err)
    if args.exit_zero:
        return 0
    return 1 if any(f.severity is Severity.ERROR for f in reported) else 0


def _write_findings(
    args: argparse.Namespace,
    result: CheckResult,
    reported: list[Finding],
    fixes: list[FileFix],
    out: TextIO,
    err: TextIO,
) -> None:
    import json

    from skills_lsp.cli.output import (
        Fixability,
        gitlab_report,
        sarif_log,
        write_fixable,
        write_fixes,
        write_github,
        write_json,
        write_statistics,
        write_text,
    )
    from skills_lsp.core.model import Severity

    threshold = Severity.parse(args.min_severity)
    shown = [f for f in reported if f.severity <= threshold]
    fixed = sum(len(f.applied) for f in fixes if f.changed)
    if args.statistics:
        write_statistics(shown, out, args.unsafe_fixes, as_json=args.format == "json")
    elif args.format == "json":
        write_json(shown, out)
    elif args.format == "sarif":
        json.dump(sarif_log(shown), out, indent=2, ensure_ascii=False)
        out.write("\n")
    elif args.format == "github":
        write_github(shown, out)
    elif args.format == "gitlab":
        json.dump(gitlab_report(shown), out, indent=2, ensure_ascii=False)
        out.write("\n")
    else:
        listed = args.show_fixes and args.fix  # the list below says what was fixed: say it once
        if listed:
            write_fixes(fixes, out)
        write_text(
            result,
            shown,
            out,
            fixed=0 if listed else fixed,
            fixability=Fixability.of(shown, args.unsafe_fixes),
            in_baseline=len(result.findings) - len(reported),
        )
    if args.show_fixes and not (args.fix and args.format == "text" and not args.statistics):
        stream = out if args.format == "text" and not args.statistics else err  # machine formats own stdout
        if args.fix:
            write_fixes(fixes, stream)
        else:
            write_fixable(shown, stream, args.unsafe_fixes)


def _fix(
    args: argparse.Namespace,
    targets: list[str],
    config: Config,
    result: CheckResult,
    baseline: Baseline | None,
    err: TextIO,
) -> list[FileFix]:
    """Fix (in memory) every file that has a finding `--fix` would fix; write them unless
    `--diff`. Only such files are read again, so a file without a finding is never touched."""
    from skills_lsp.core.parse.frontmatter import BOM, split_lines
    from skills_lsp.core.rules.check import load_manifest, workspace_root
    from skills_lsp.core.rules.fixing import fix_file, fix_kind, write_atomically

    reported = baseline.new(result.findings) if baseline is not None else result.findings
    wanted = {f.path for f in reported if fix_kind(f, args.unsafe_fixes) is not None}
    if not wanted:
        return []
    manifest, _ = load_manifest(workspace_root(targets, config), config)

    def keep(findings: list[Finding], text: str) -> list[Finding]:
        assert baseline is not None
        lines = split_lines(text.removeprefix(BOM))
        return baseline.new(findings, lambda _path: lines)

    fixes: list[FileFix] = []
    for item in result.files:
        if item.path not in wanted:
            continue
        fixed = fix_file(
            item,
            config=config,
            profile=args.profile,
            manifest=manifest,
            others=result.named,
            unsafe=args.unsafe_fixes,
            keep=keep if baseline is not None else None,
        )
        if fixed is None or not fixed.changed:
            continue
        if not args.diff:
            try:
                write_atomically(item.path, fixed.after)
            except OSError as exc:
                err.write(f"{display(item.path)}: cannot write the fixes: {exc.strerror or exc}\n")
                continue
        fixes.append(fixed)
    return fixes


def _write_diff(fixes: list[FileFix], args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """`--diff`: a unified diff per file `--fix` would change; exit 1 when there is one."""
    import difflib

    from skills_lsp.cli.output import write_fixes

    for fix in fixes:
        name = display(fix.path)
        before = fix.before.decode("utf-8").splitlines(keepends=True)
        after = fix.after.decode("utf-8").splitlines(keepends=True)
        for line in difflib.unified_diff(before, after, f"a/{name}", f"b/{name}"):
            out.write(line if line.endswith(("\n", "\r")) else line + "\n\\ No newline at end of file\n")
    if args.show_fixes:
        write_fixes(fixes, err, would=True)
    else:
        total = sum(len(f.applied) for f in fixes)
        err.write(
            f"Would fix {total} problem{'s' if total != 1 else ''}.\n" if total else "No fixes to apply.\n"
        )
    return 1 if fixes else 0


def cmd_rules(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    import json

    from skills_lsp.core.rules import RULES
    from skills_lsp.core.rules.reference import fix_kinds, rule_json, rules_markdown

    if args.format == "markdown":
        out.write(rules_markdown())
        return 0
    rows = [RULES[c] for c in sorted(RULES)]
    if args.format == "json":
        json.dump([rule_json(r) for r in rows], out, indent=2)
        out.write("\n")
        return 0
    for r in rows:
        # How far `check --fix` goes: safe, unsafe (--unsafe-fixes) or editor (display-only).
        kinds = fix_kinds(r)
        fix = {"display-only": "editor"}.get(kinds[0], kinds[0]) if kinds else ""
        out.write(f"{r.code}  {r.severity.label:<7}  {fix:<6}  {r.name:<28} {r.summary}\n")
    return 0


def cmd_rule(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from skills_lsp.core.rules import RULES
    from skills_lsp.core.rules.reference import rule_text

    r = RULES.get(args.code.upper())
    if r is None:
        raise UsageError(f"unknown rule {args.code!r}; see `skills-lsp rules`")
    out.write(rule_text(r))
    return 0


def cmd_init(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from skills_lsp.core.assist.scaffold import ScaffoldError, scaffold_skill

    base = Path(args.dir)
    if base.exists() and not base.is_dir():
        raise UsageError(f"--dir {printable(str(base))} is not a directory")
    try:
        skill_md = scaffold_skill(args.name, base, args.description)
    except ScaffoldError as exc:
        raise UsageError(printable(str(exc))) from None
    out.write(f"Created {printable(skill_md.as_posix())}\n")
    return 0
