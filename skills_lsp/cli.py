"""`skills-lsp` command line: check, rules, rule, init, index, select, prompt, test, serve."""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO
from urllib.parse import quote

from skills_lsp._version import __version__
from skills_lsp.core.assist.scaffold import ScaffoldError, scaffold_skill
from skills_lsp.core.errors import ScorerUnavailable
from skills_lsp.core.files.config import Config
from skills_lsp.core.model import Finding, Severity
from skills_lsp.core.routing.scorer import SCORERS
from skills_lsp.core.rules import RULES
from skills_lsp.core.rules.check import CheckResult, check_paths, default_cache_dir
from skills_lsp.core.rules.profiles import PROFILES
from skills_lsp.core.rules.reference import rule_json, rule_text, rules_markdown
from skills_lsp.core.workspace.settings import resolve_config

if TYPE_CHECKING:  # the engine (numpy) is imported by the engine commands only
    from skills_lsp.core.index.skill_index import SkillIndex
    from skills_lsp.core.routing.queries import QueryResult
    from skills_lsp.core.routing.scorer import SkillMatch

DOCS_URL = "https://github.com/skills-lsp/skills-lsp/blob/main/docs/rules.md"
_SARIF_LEVEL = {
    Severity.ERROR: "error",
    Severity.WARNING: "warning",
    Severity.INFO: "note",
    Severity.HINT: "note",
}


class UsageError(Exception):
    """Bad command-line input: exit status 2."""


def _codes(text: str | None, option: str) -> tuple[str, ...] | None:
    if text is None:
        return None
    codes = tuple(c.strip().upper() for c in text.split(",") if c.strip())
    if not codes:
        raise UsageError(f"{option} needs at least one rule code or prefix, such as SK2 or SK401 (or ALL)")
    for code in codes:
        if code != "ALL" and not any(c.startswith(code) for c in RULES):
            raise UsageError(f"no rule code starts with {code!r}; see `skills-lsp rules`")
    return codes


def _printable(text: str) -> str:
    """`text` with the undecodable bytes of a file name (`os.fsdecode`'s lone surrogates) shown
    as backslash escapes, `\\xff`, so it can be written to any UTF-8 stream and into JSON."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    try:
        raw = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate that is no escaped byte
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return raw.decode("utf-8", "backslashreplace")


def _relative(path: str) -> str | None:
    """`path` relative to the working directory with `/` separators, or None when it is not
    below it."""
    absolute = os.path.abspath(path)
    try:
        rel = os.path.relpath(absolute, os.getcwd())
    except ValueError:  # pragma: no cover - another Windows drive
        return None
    if rel == os.pardir or rel.startswith(os.pardir + os.sep):
        return None
    return rel.replace(os.sep, "/")


@cache
def _display(path: str) -> str:
    """`path` relative to the working directory when it is below it, with `/` separators;
    printable (see `_printable`)."""
    rel = _relative(path)
    return _printable(path.replace(os.sep, "/") if rel is None else rel)


def _counts(findings: Sequence[Finding]) -> str:
    parts = []
    for severity in Severity:
        n = sum(f.severity is severity for f in findings)
        if n:
            parts.append(f"{n} {severity.label}{'s' if n != 1 and severity is not Severity.INFO else ''}")
    return ", ".join(parts)


def write_text(result: CheckResult, shown: Sequence[Finding], out: TextIO) -> None:
    for f in shown:
        line, col = f.range.start.line + 1, f.range.start.character + 1
        out.write(f"{_display(f.path)}:{line}:{col}: {f.code} [{f.severity.label}] {_printable(f.message)}\n")
    files = len(result.files)
    noun = "file" if files == 1 else "files"
    if shown:
        plural = "s" if len(shown) != 1 else ""
        out.write(f"\nFound {len(shown)} problem{plural} ({_counts(shown)}) in {files} {noun}.\n")
    else:
        out.write(f"All checks passed: {files} {noun}.\n")


def write_json(shown: Sequence[Finding], out: TextIO) -> None:
    # One finding per line: readable, and the C encoder (json's indent= uses the slow Python one).
    rows = [
        json.dumps(
            dict(f.to_json(), path=_display(f.path), message=_printable(f.message)), ensure_ascii=False
        )
        for f in shown
    ]
    out.write("[\n  " + ",\n  ".join(rows) + "\n]\n" if rows else "[]\n")


def _gh_escape(text: str, prop: bool = False) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if prop else text


def write_github(shown: Sequence[Finding], out: TextIO) -> None:
    level = {
        Severity.ERROR: "error",
        Severity.WARNING: "warning",
        Severity.INFO: "notice",
        Severity.HINT: "notice",
    }
    for f in shown:
        r = f.range
        out.write(
            f"::{level[f.severity]} file={_gh_escape(_display(f.path), True)},line={r.start.line + 1},"
            f"col={r.start.character + 1},endLine={r.end.line + 1},endColumn={r.end.character + 1},"
            f"title={_gh_escape(f.code, True)}::{_gh_escape(_printable(f.message))}\n"
        )


def _artifact_location(path: str) -> dict[str, str]:
    """A SARIF artifactLocation: a percent-encoded URI reference relative to %SRCROOT% (the
    working directory) for a file below it, else an absolute `file:` URI. The raw bytes of
    the name are encoded, so names that are not valid UTF-8 survive too."""
    rel = _relative(path)
    if rel is None:
        return {"uri": Path(os.path.abspath(path)).as_uri()}
    return {"uri": quote(os.fsencode(rel), safe="/"), "uriBaseId": "%SRCROOT%"}


def _srcroot_uri() -> str:
    uri = Path.cwd().as_uri()
    return uri if uri.endswith("/") else uri + "/"


def sarif_log(shown: Sequence[Finding]) -> dict[str, object]:
    codes = sorted(RULES)
    index = {code: i for i, code in enumerate(codes)}
    rules = [
        {
            "id": code,
            "name": RULES[code].name,
            "shortDescription": {"text": RULES[code].summary},
            "fullDescription": {"text": RULES[code].doc},
            "helpUri": f"{DOCS_URL}#{code.lower()}",
            "defaultConfiguration": {"level": _SARIF_LEVEL[RULES[code].severity]},
        }
        for code in codes
    ]
    results = []
    for f in shown:
        r = f.range
        result: dict[str, object] = {
            "ruleId": f.code,
            "level": _SARIF_LEVEL[f.severity],
            "message": {"text": _printable(f.message)},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": _artifact_location(f.path),
                        "region": {
                            "startLine": r.start.line + 1,
                            "startColumn": r.start.character + 1,
                            "endLine": r.end.line + 1,
                            "endColumn": r.end.character + 1,
                        },
                    }
                }
            ],
        }
        if f.code in index:
            result["ruleIndex"] = index[f.code]
        results.append(result)
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "skills-lsp",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "informationUri": "https://github.com/skills-lsp/skills-lsp",
                        "rules": rules,
                    }
                },
                "originalUriBaseIds": {"%SRCROOT%": {"uri": _srcroot_uri()}},
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }


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
        select=_codes(args.select, "--select"),
        ignore=_codes(args.ignore, "--ignore"),
        extend_select=_codes(args.extend_select, "--extend-select"),
    )
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
        raise UsageError(f"--dir {_printable(str(base))} is not a directory")
    try:
        skill_md = scaffold_skill(args.name, base, args.description)
    except ScaffoldError as exc:
        raise UsageError(_printable(str(exc))) from None
    out.write(f"Created {_printable(skill_md.as_posix())}\n")
    return 0


def _workspace(args: argparse.Namespace) -> tuple[Path, Config]:
    """The workspace folder of an engine command and its config."""
    root = Path(getattr(args, "root", None) or ".")
    if not root.is_dir():
        raise UsageError(f"not a directory: {root}")
    config, _ = resolve_config([root])
    return root, config


def _index(args: argparse.Namespace) -> SkillIndex:
    from skills_lsp.core.index.skill_index import load_skill_index, load_workspace_index

    root, config = _workspace(args)
    if getattr(args, "crate", False):
        return load_skill_index(root)
    return load_workspace_index(root, config.roots_for(root), config.max_depth)


def _keep_vectors(args: argparse.Namespace, scorers: Sequence[str]) -> None:
    """Semantic scorers: reuse skill vectors saved by earlier runs, in the workspace's cache
    folder (the one `check` uses); main() saves what this run adds."""
    if not any(s in ("semantic", "hybrid") for s in scorers):
        return
    from skills_lsp.core.routing.semantic import VECTOR_FILE, VECTORS

    root, config = _workspace(args)
    VECTORS.attach(default_cache_dir([root], config) / VECTOR_FILE)


def _tags(text: str | None) -> list[str]:
    return [t.strip() for t in (text or "").split(",") if t.strip()]


def cmd_index(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    index = _index(args)
    if args.format == "json":
        rows = []
        for doc in index:
            row = doc.to_json()
            row["path"] = _display(str(doc.path))
            rows.append(row)
        out.write(json.dumps(rows, indent=2, ensure_ascii=False) + "\n")
        return 0
    out.write(f"{len(index)} skill{'s' if len(index) != 1 else ''}\n")
    for doc in index:
        tags = f" [{', '.join(doc.tags)}]" if doc.tags else ""
        out.write(f"{doc.id}  {_display(str(doc.path))}{tags}\n    {doc.description[:100]}\n")
    return 0


def cmd_select(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from skills_lsp.core.routing.lexical import select_skills_plain
    from skills_lsp.core.routing.scorer import DEFAULT_MIN_SCORE, SelectionPolicy, select_skills

    if args.top_k < 0:
        raise UsageError("--top-k must be 0 or more")
    index = _index(args)
    _keep_vectors(args, [args.scorer])
    if args.min_score is not None and not math.isfinite(args.min_score):
        raise UsageError(f"--min-score must be a number, not {args.min_score}")
    min_score = DEFAULT_MIN_SCORE[args.scorer] if args.min_score is None else args.min_score
    policy = SelectionPolicy(
        args.top_k,
        min_score,
        _tags(args.include_tags),
        _tags(args.exclude_tags),
        args.tokenizer,
        args.scorer,
    )
    if args.scorer == "lexical":
        # One query: the crate's plain scorer beats building an inverted index (same results).
        matches = select_skills_plain(index, args.query, policy)
    else:
        matches = select_skills(index, args.query, policy)
    if args.format == "json":
        rows = [
            {"name": m.skill.name, "path": _display(str(m.skill.path)), "id": m.skill.id, "score": m.score}
            for m in matches
        ]
        if args.explain:
            for row, match in zip(rows, matches, strict=True):
                row["explain"] = _explain_json(args.query, index, match, args.tokenizer, args.scorer)
        out.write(json.dumps(rows, indent=2, ensure_ascii=False) + "\n")
        return 0
    if not matches:
        out.write(f"No skill scores {min_score} or more ({args.scorer} scorer) for: {args.query}\n")
        return 0
    for rank, match in enumerate(matches, 1):
        out.write(f"{rank}. {match.score:8.4f}  {match.skill.name}  ({_display(str(match.skill.path))})\n")
        if not args.explain:
            continue
        hits = _explain_json(args.query, index, match, args.tokenizer, args.scorer)
        if args.scorer != "lexical":
            if args.scorer == "semantic":
                out.write("     cosine similarity of meaning (name, description, tags, body start)\n")
                continue
            for field_name, words in hits.get("shared_words", {}).items():
                if words:
                    out.write(f"     {field_name:<11} {' '.join(words)}\n")
            if "semantic" in hits:
                out.write(f"     bm25f {hits['bm25f']:.4f}, semantic {hits['semantic']:.4f}\n")
            continue
        from skills_lsp.core.routing.lexical import FIELD_WEIGHTS

        for field_name in ("name", "description", "tags", "body"):
            tokens = hits[field_name]
            if tokens:
                weight = FIELD_WEIGHTS[field_name]
                out.write(f"     {field_name:<11} x{weight}: {' '.join(tokens)}\n")
        out.write(
            f"     raw {hits['raw']} / sqrt({hits['unique_body_tokens']} unique body tokens) = "
            f"{hits['raw']} / {hits['norm']:.4f} = {match.score:.4f}\n"
        )
    return 0


def _explain_json(
    query: str, index: SkillIndex, match: SkillMatch, tokenizer: str, scorer: str = "lexical"
) -> dict[str, Any]:
    from skills_lsp.core.routing.lexical import explain

    document = index.find_by_id(match.skill.id)
    assert document is not None
    if scorer == "semantic":  # no words to show: meaning, not vocabulary
        return {"embedded": "name, description, tags, body start"}
    if scorer != "lexical":
        from skills_lsp.core.routing.bm25f import matched_terms

        found: dict[str, Any] = {"shared_words": matched_terms(query, document)}
        if scorer == "hybrid":
            from skills_lsp.core.routing.hybrid import hybrid_for

            found["bm25f"], found["semantic"] = hybrid_for(index).components(query)[id(document)]
        return found
    hits = explain(query, document, "unicode" if tokenizer == "unicode" else "ascii")
    return {
        "name": list(hits.name),
        "description": list(hits.description),
        "tags": list(hits.tags),
        "body": list(hits.body),
        "raw": hits.raw,
        "unique_body_tokens": hits.unique_body_tokens,
        "norm": hits.norm,
    }


def cmd_prompt(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from skills_lsp.core.engine.catalog import to_prompt

    out.write(to_prompt(_index(args)) + "\n")
    return 0


def cmd_test(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from skills_lsp.core.index.skill_index import load_workspace_index
    from skills_lsp.core.routing.queries import load_query_file, run_cases

    root, config = _workspace(args)
    query_file = Path(args.query_file) if args.query_file else (config.root or root) / config.query_file
    if not query_file.is_file():
        raise UsageError(f"test-query file not found: {query_file} (see `skills-lsp test --help`)")
    cases, problems = load_query_file(query_file)
    index = load_workspace_index(root, config.roots_for(root), config.max_depth)
    _keep_vectors(args, [args.scorer or config.scorer])
    results = run_cases(index, cases, scorer=args.scorer or config.scorer)
    failed = sum(not r.passed for r in results)
    if args.format == "json":
        payload = {
            "passed": len(results) - failed,
            "failed": failed,
            "problems": [dict(p.to_json(), path=_display(p.path)) for p in problems],
            "results": [r.to_json() for r in results],
        }
        out.write(json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
    else:
        for p in problems:
            line, col = p.range.start.line + 1, p.range.start.character + 1
            out.write(f"{_display(p.path)}:{line}:{col}: {p.code} {p.message}\n")
        out.write(_results_table(results, _display(str(query_file))))
        out.write(f"\n{len(results) - failed} passed, {failed} failed\n")
    return 1 if failed or problems else 0


def _results_table(results: Sequence[QueryResult], path: str) -> str:
    def cell(match: SkillMatch | None) -> str:
        return "-" if match is None else f"{match.skill.name} ({match.score:.3f})"

    rows = [("", "line", "expected", "winner", "runner-up", "lead", "query")]
    for r in results:
        lead = "-" if r.lead is None else f"{r.lead:.3f}"
        expected = " | ".join(r.case.expect) or "none"
        rows.append(
            (
                "PASS" if r.passed else "FAIL",
                str(r.case.range.start.line + 1),
                expected,
                cell(r.winner),
                cell(r.runner_up),
                lead,
                r.case.query if len(r.case.query) <= 60 else r.case.query[:57] + "...",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    lines = []
    for row in rows:
        lines.append("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=False)) + "  " + row[-1])
    failures = [f"{path}:{r.case.range.start.line + 1}: {r.reason}" for r in results if not r.passed]
    return "\n".join(lines) + ("\n\n" + "\n".join(failures) if failures else "") + "\n"


def cmd_eval(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from skills_lsp.core.index.skill_index import load_workspace_index
    from skills_lsp.core.routing import semantic
    from skills_lsp.core.routing.evaluation import calibrate, evaluate, format_threshold
    from skills_lsp.core.routing.queries import load_query_file

    root, config = _workspace(args)
    if args.scorer is None:
        scorers = [s for s in tuple(SCORERS) if semantic.available() or s not in ("semantic", "hybrid")]
    else:
        scorers = [s.strip() for s in args.scorer.split(",") if s.strip()]
    unknown = [s for s in scorers if s not in tuple(SCORERS)]
    if not scorers or unknown:
        raise UsageError(
            f"unknown scorer {', '.join(unknown) or '(none)'}; choose from {', '.join(tuple(SCORERS))}"
        )
    if args.calibrate is not None and not 0.0 <= args.calibrate <= 1.0:
        raise UsageError("--calibrate takes a rate from 0 to 1, e.g. 0.15")
    query_file = Path(args.query_file)
    if not query_file.is_file():
        raise UsageError(f"test-query file not found: {query_file}")
    cases, problems = load_query_file(query_file)
    for p in problems:
        err.write(f"{_display(p.path)}:{p.range.start.line + 1}: {p.code} {p.message}\n")
    index = load_workspace_index(root, config.roots_for(root), config.max_depth)
    _keep_vectors(args, scorers)
    evaluated = [evaluate(index, cases, scorer) for scorer in scorers]
    reports = [r.to_json() for r in evaluated]
    calibrations = [calibrate(r, args.calibrate) for r in evaluated] if args.calibrate is not None else []
    if args.format == "json":
        payload: dict[str, Any] = {"skills": len(index), "cases": len(cases), "scorers": reports}
        if calibrations:
            payload["calibration"] = [c.to_json() for c in calibrations]
        out.write(json.dumps(payload, indent=2) + "\n")
        return 0
    out.write(f"{len(index)} skills, {len(cases)} cases\n\n")
    columns = (
        ("top-1", "top1_accuracy", 6),
        ("top-3", "top3_recall", 6),
        ("direct", "direct_top1_accuracy", 6),
        ("paraphr.", "paraphrased_top1_accuracy", 8),
        ("routed", "routed_accuracy", 6),
        ("turned away", "answerable_rejected_rate", 11),
        ("none FA", "none_false_accept_rate", 7),
    )
    header = " ".join(f"{title:>{width}}" for title, _, width in columns)
    out.write(f"{'scorer':<9} {'min':>6} {header}  {'AUROC':>6} {'p50 ms':>7} {'p95 ms':>7}\n")
    for report, r in zip(evaluated, reports, strict=True):
        cells = " ".join(
            f"{'n/a' if r[key] is None else format(r[key], '.1%'):>{width}}" for _, key, width in columns
        )
        auroc = "n/a" if r["auroc"] is None else f"{r['auroc']:.3f}"
        out.write(
            f"{report.scorer:<9} {format_threshold(report.threshold):>6} {cells}  {auroc:>6} "
            f"{r['latency_p50_ms']:>7.2f} {r['latency_p95_ms']:>7.2f}\n"
        )
    out.write(
        "\ntop-1: the first skill is right; top-3: a right one is in the first three; direct / "
        "paraphr.: top-1 on requests using / avoiding the skill's words;\nrouted: the skill selected "
        "at the scorer's min_score is right; turned away: answerable requests whose top score is under "
        "min_score;\nnone FA: `expect: none` requests whose top score reaches min_score; AUROC: top "
        "score, answerable vs none; n/a: no such case in the file.\n"
    )
    if calibrations:
        out.write(f"\nCalibration: the lowest min_score with none false accepts <= {args.calibrate:.0%}\n")
        for c in calibrations:
            routed = "n/a" if c.routed_accuracy is None else f"{c.routed_accuracy:.1%}"
            away = "n/a" if c.answerable_rejected_rate is None else f"{c.answerable_rejected_rate:.1%}"
            fa = "n/a" if c.false_accept_rate is None else f"{c.false_accept_rate:.1%}"
            if c.false_accept_interval:
                fa += f" (95% CI {c.false_accept_interval[0]:.1%}-{c.false_accept_interval[1]:.1%})"
            out.write(
                f"{c.scorer:<9} min_score {format_threshold(c.threshold)}: none FA {fa}, "
                f"routed {routed}, turned away {away}\n"
            )
        out.write(
            "95% CI: Wilson interval of that rate for this many `expect: none` cases; the threshold is "
            "fitted on those very cases, so expect new requests in the upper part of it.\n"
        )
    return 0


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
        err.write(f"skills-lsp: warning: {_printable(warning)}\n")
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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="skills-lsp", description="Validate, test and serve agent skills.")
    parser.add_argument("--version", action="version", version=f"skills-lsp {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

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
    check.set_defaults(func=cmd_check)

    rules = sub.add_parser("rules", help="list every rule")
    rules.add_argument("--format", choices=["text", "json", "markdown"], default="text")
    rules.set_defaults(func=cmd_rules)

    rule = sub.add_parser("rule", help="print one rule's documentation")
    rule.add_argument("code")
    rule.set_defaults(func=cmd_rule)

    init = sub.add_parser("init", help="create a new skill from a template")
    init.add_argument("name")
    init.add_argument("--dir", default=".", help="parent directory (default: .)")
    init.add_argument("--description", help="the skill's description")
    init.set_defaults(func=cmd_init)

    index = sub.add_parser("index", help="list the skill index of a workspace")
    index.add_argument("root", nargs="?", default=".", help="workspace folder (default: .)")
    index.add_argument("--format", choices=["text", "json"], default="text")
    index.add_argument("--crate", action="store_true", help="only what adk-skill 0.6.0 itself indexes")
    index.set_defaults(func=cmd_index)

    select = sub.add_parser("select", help="rank skills for a request, as adk-skill scores them")
    select.add_argument("query")
    select.add_argument("--root", default=".", help="workspace folder (default: .)")
    select.add_argument(
        "--top-k", type=int, default=3, help="results to show (default 3, as `adk skills match`)"
    )
    select.add_argument(
        "--min-score",
        type=float,
        default=None,
        help="lowest score selected (default: the scorer's: 1.0 lexical, calibrated for the others)",
    )
    select.add_argument("--include-tags", help="only skills with one of these tags (comma-separated)")
    select.add_argument("--exclude-tags", help="never skills with one of these tags (comma-separated)")
    select.add_argument(
        "--tokenizer",
        choices=["ascii", "unicode"],
        default="ascii",
        help="ascii (adk-skill's) or unicode letters and digits",
    )
    select.add_argument("--crate", action="store_true", help="only what adk-skill 0.6.0 itself indexes")
    select.add_argument(
        "--scorer",
        choices=tuple(SCORERS),
        default="lexical",
        help="lexical (adk-skill's, default); bm25f, semantic, hybrid score 0..1 "
        "(semantic and hybrid need the `semantic` extra)",
    )
    select.add_argument("--format", choices=["text", "json"], default="text")
    select.add_argument("--explain", action="store_true", help="show which tokens hit which field")
    select.set_defaults(func=cmd_select)

    prompt = sub.add_parser("prompt", help="print the <available_skills> catalog")
    prompt.add_argument("root", nargs="?", default=".", help="workspace folder (default: .)")
    prompt.add_argument("--crate", action="store_true", help="only what adk-skill 0.6.0 itself indexes")
    prompt.set_defaults(func=cmd_prompt)

    test = sub.add_parser("test", help="run routing tests: does each request select the right skill?")
    test.add_argument("query_file", nargs="?", help="test-query file (default: query-file from the config)")
    test.add_argument("--root", default=".", help="workspace folder (default: .)")
    test.add_argument("--format", choices=["text", "json"], default="text")
    test.add_argument(
        "--scorer", choices=tuple(SCORERS), help="default: `scorer` in the config, else lexical"
    )
    test.set_defaults(func=cmd_test)

    evaluation = sub.add_parser("eval", help="measure routing: accuracy, false accepts, AUROC, latency")
    evaluation.add_argument("query_file")
    evaluation.add_argument("--root", default=".", help="workspace folder (default: .)")
    evaluation.add_argument(
        "--scorer",
        default=None,
        help="comma-separated: lexical, bm25f, semantic, hybrid (default: all that are installed)",
    )
    evaluation.add_argument(
        "--calibrate",
        type=float,
        metavar="RATE",
        help="also find, per scorer, the lowest min_score that keeps none false accepts at most RATE "
        "(e.g. 0.15), and what it turns away",
    )

    evaluation.add_argument("--format", choices=["text", "json"], default="text")
    evaluation.set_defaults(func=cmd_eval)

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

    sub.add_parser("serve", help="run the language server (stdio by default; see `skills-lsp serve --help`)")
    return parser


def main(argv: Sequence[str] | None = None, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] == ["serve"]:  # the server parses its own options (editors add --stdio)
        from skills_lsp.server.app import main as serve

        return serve(arguments[1:])
    parser = build_parser()
    args = parser.parse_args(arguments)
    try:
        code: int = args.func(args, out, err)
        return code
    except UsageError as exc:
        err.write(f"skills-lsp: error: {_printable(str(exc))}\n")
        return 2
    except ScorerUnavailable as exc:
        err.write(f"skills-lsp: error: {_printable(str(exc))}\n")
        return 2
    except BrokenPipeError:  # pragma: no cover - e.g. piped into head
        return 0
    finally:
        semantic = sys.modules.get("skills_lsp.core.routing.semantic")  # loaded only by scoring commands
        if semantic is not None:
            semantic.VECTORS.flush()  # what `_keep_vectors` attached; nothing if nothing new
