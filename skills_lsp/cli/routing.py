"""The routing commands: `test` (does each test query select its skill?), `eval` (accuracy,
false accepts, AUROC and latency per scorer, and `--calibrate`) and `overlap` (the pairs of
skills that compete for the same requests)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from skills_lsp.cli.common import UsageError, add_root, display, keep_vectors, load_index, workspace_of
from skills_lsp.core.routing.scorer import SCORERS

if TYPE_CHECKING:
    from skills_lsp.cli.common import Subparsers
    from skills_lsp.core.routing.queries import QueryResult
    from skills_lsp.core.routing.scorer import SkillMatch


def register(sub: Subparsers) -> None:
    _add_test(sub)
    _add_eval(sub)
    _add_overlap(sub)


def _add_overlap(sub: Subparsers) -> None:
    overlap = sub.add_parser("overlap", help="list pairs of skills that compete for the same requests")
    add_root(overlap)
    overlap.add_argument(
        "--scorer",
        choices=tuple(SCORERS),
        help="default: the config's `scorer`, else the profile's: lexical for .skills/, else hybrid or bm25f",
    )
    overlap.add_argument(
        "--close",
        type=float,
        default=None,
        metavar="RATIO",
        help="a rival competes when it scores at least RATIO of the skill's own score (default 0.9)",
    )
    overlap.add_argument("--format", choices=["text", "json"], default="text")
    overlap.set_defaults(func=cmd_overlap)


def cmd_overlap(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Exit 1 when any pair competes (and is not accepted in the config's `overlap`)."""
    from skills_lsp.core.model import Range
    from skills_lsp.core.routing.overlap import CLOSE, overlapping_pairs
    from skills_lsp.core.rules.workspace import competing_descriptions
    from skills_lsp.core.workspace.scorers import default_scorer
    from skills_lsp.core.workspace.settings import unknown_overlap_names

    close = CLOSE if args.close is None else args.close
    if not 0.0 < close <= 1.0:
        raise UsageError("--close takes a ratio above 0 and at most 1, e.g. 0.9")
    _, config = workspace_of(args)
    index = load_index(args)
    for problem in unknown_overlap_names(config, {d.name for d in index}):
        start = problem.range.start
        err.write(
            f"{display(problem.path)}:{start.line + 1}:{start.character + 1}: {problem.code} "
            f"[{problem.severity.label}] {problem.message}\n"
        )
    scorer = args.scorer or default_scorer(config, index)
    keep_vectors(args, [scorer])
    pairs = overlapping_pairs(index, scorer, config.accepted_overlaps(), close)
    if args.format == "json":
        rows = [dict(c.to_json(), paths=[display(p) for p in (c.skill_path, c.rival_path)]) for c in pairs]
        out.write(json.dumps({"scorer": scorer, "skills": len(index), "pairs": rows}, indent=2) + "\n")
        return 1 if pairs else 0
    for c in pairs:
        (report,) = competing_descriptions(c.rivalry(Range.point(0, 0)))
        out.write(f"{c.confusability:.3f}  {c.skill} / {c.rival}  ({display(c.skill_path)})\n")
        out.write(f"       {report.message}\n")
    accepted = f", {len(config.overlap)} accepted in the config" if config.overlap else ""
    noun = "pair" if len(pairs) == 1 else "pairs"
    out.write(f"{len(pairs)} competing {noun} among {len(index)} skills ({scorer} scorer{accepted})\n")
    return 1 if pairs else 0


def _add_test(sub: Subparsers) -> None:
    test = sub.add_parser("test", help="run routing tests: does each request select the right skill?")
    test.add_argument(
        "query_file",
        nargs="?",
        help="test-query file, or a skill's evals/eval_queries.json (default: query-file from the config)",
    )
    test.add_argument("--root", default=".", help="workspace folder (default: .)")
    test.add_argument("--format", choices=["text", "json"], default="text")
    test.add_argument(
        "--scorer",
        choices=tuple(SCORERS),
        help="default: the config's `scorer`, else the profile's: lexical for .skills/, else hybrid or bm25f",
    )
    test.set_defaults(func=cmd_test)


def _add_eval(sub: Subparsers) -> None:
    evaluation = sub.add_parser("eval", help="measure routing: accuracy, false accepts, AUROC, latency")
    evaluation.add_argument("query_file", help="test-query file, or a skill's evals/eval_queries.json")
    evaluation.add_argument("--root", default=".", help="workspace folder (default: .)")
    evaluation.add_argument(
        "--scorer",
        default=None,
        help=f"comma-separated: {', '.join(SCORERS)} (default: all that are installed)",
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


def cmd_test(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from skills_lsp.core.routing.queries import load_query_file, run_cases

    root, config = workspace_of(args)
    query_file = Path(args.query_file) if args.query_file else (config.root or root) / config.query_file
    if not query_file.is_file():
        raise UsageError(f"test-query file not found: {query_file} (see `skills-lsp test --help`)")
    cases, problems = load_query_file(query_file)
    index = load_index(args)
    from skills_lsp.core.workspace.scorers import default_scorer

    scorer = args.scorer or default_scorer(config, index)
    keep_vectors(args, [scorer])
    results = run_cases(index, cases, scorer=scorer)
    failed = sum(not r.passed for r in results)
    if args.format == "json":
        payload = {
            "passed": len(results) - failed,
            "failed": failed,
            "scorer": scorer,
            "problems": [dict(p.to_json(), path=display(p.path)) for p in problems],
            "results": [r.to_json() for r in results],
        }
        out.write(json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
    else:
        for p in problems:
            line, col = p.range.start.line + 1, p.range.start.character + 1
            out.write(f"{display(p.path)}:{line}:{col}: {p.code} {p.message}\n")
        out.write(_results_table(results, display(str(query_file))))
        out.write(f"\n{len(results) - failed} passed, {failed} failed (scorer {scorer})\n")
    return 1 if failed or problems else 0


def _results_table(results: Sequence[QueryResult], path: str) -> str:
    def cell(match: SkillMatch | None) -> str:
        return "-" if match is None else f"{match.skill.name} ({match.score:.3f})"

    rows = [("", "line", "expected", "winner", "runner-up", "lead", "query")]
    for r in results:
        lead = "-" if r.lead is None else f"{r.lead:.3f}"
        expected = " | ".join(r.case.expect) or (
            "not " + " | ".join(r.case.reject) if r.case.reject else "none"
        )
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
    from skills_lsp.core.model import Severity
    from skills_lsp.core.routing.evaluation import calibrate, evaluate, format_threshold
    from skills_lsp.core.routing.queries import load_query_file

    workspace_of(args)  # a missing folder is a usage error before anything is read
    if args.scorer is None:
        scorers = [name for name, spec in SCORERS.items() if spec.available()]
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
        line, col = p.range.start.line + 1, p.range.start.character + 1
        err.write(f"{display(p.path)}:{line}:{col}: {p.code} {p.message}\n")
    if any(p.severity is Severity.ERROR for p in problems):
        # Measuring what is left of a broken file would report figures for cases nobody wrote.
        err.write(
            f"skills-lsp: error: {display(str(query_file))} has errors (above); nothing was evaluated\n"
        )
        return 2
    index = load_index(args)
    keep_vectors(args, scorers)
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
        "min_score;\nnone FA: `expect: none` requests whose top score reaches min_score (and "
        "`should_trigger: false` ones that select their skill); AUROC: top score, answerable vs none; "
        "n/a: no such case in the file.\n"
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
