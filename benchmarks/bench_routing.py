"""Routing quality of each scorer on our labelled set, alone and in a large pool of distractors.

    python benchmarks/bench_routing.py [--distractors 2000] [--scorer lexical,bm25f,semantic,hybrid]
                                       [--calibrate 0.15] [--format text|json]

The labelled set is benchmarks/routing/ (skills written for this project and requests written the
way users ask, two thirds of the answerable ones paraphrased, plus `expect: none` requests).
Distractors come from benchmarks/generate_workspace.py (deterministic): they make the pool grow
the way a real skills folder does, so the figures show what holds at 2,000+ skills. With
--calibrate RATE it also
prints, per pool and scorer, the lowest min_score that keeps `expect: none` false accepts at most
RATE, and what that threshold turns away. Scorers whose extra is not installed are skipped with a
note. Reports only; exits 0.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from skills_lsp.core.index.skill_index import SkillIndex, load_workspace_index  # noqa: E402
from skills_lsp.core.routing.evaluation import calibrate, evaluate, format_threshold  # noqa: E402
from skills_lsp.core.routing.queries import load_query_file  # noqa: E402
from skills_lsp.core.routing.semantic import ScorerUnavailable  # noqa: E402

ROUTING = REPO / "benchmarks" / "routing"


def _generator() -> Any:
    import generate_workspace  # benchmarks/ is on sys.path: these run as scripts

    return generate_workspace


def pool(distractors: int, scratch: Path) -> SkillIndex:
    """The labelled skills, plus exactly `distractors` synthetic skills (the generator also writes
    convention files, which are left out, so it is asked for a few more)."""
    index = load_workspace_index(ROUTING)
    if distractors:
        target = scratch / f"distractors-{distractors}"
        _generator().generate(target, distractors + distractors // 10 + 20, 7)
        skills = [doc for doc in load_workspace_index(target) if doc.kind.value != "convention"]
        skills.sort(key=lambda doc: doc.sort_key())
        for doc in skills[:distractors]:
            index.upsert(doc)
    return index


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--distractors", type=int, default=2000, help="synthetic skills added (0: none)")
    parser.add_argument("--scorer", default="lexical,bm25f,semantic,hybrid")
    parser.add_argument("--calibrate", type=float, default=0.15, help="false-accept target (0: skip)")
    parser.add_argument("--format", choices=["text", "json"], default="text")
    args = parser.parse_args()
    cases, problems = load_query_file(ROUTING / "queries.yaml")
    if problems:
        for p in problems:
            print(f"{p.path}:{p.range.start.line + 1}: {p.message}", file=sys.stderr)
    scorers = [s for s in args.scorer.split(",") if s]
    results: list[dict[str, Any]] = []
    skipped: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="skills-lsp-routing-") as scratch:
        for extra in sorted({0, args.distractors}):
            index = pool(extra, Path(scratch))
            for scorer in scorers:
                if scorer in skipped:
                    continue
                try:
                    evaluated = evaluate(index, cases, scorer)
                except ScorerUnavailable as error:
                    skipped[scorer] = str(error)
                    continue
                report = evaluated.to_json()
                report["skills"] = len(index)
                if args.calibrate:
                    report["calibration"] = calibrate(evaluated, args.calibrate).to_json()
                results.append(report)
    if args.format == "json":
        print(json.dumps({"cases": len(cases), "results": results, "skipped": skipped}, indent=2))
        return 0
    print(f"{len(cases)} cases from {ROUTING.relative_to(REPO)}/queries.yaml\n")
    print(
        f"{'skills':>7} {'scorer':<8} {'min':>5} {'top-1':>6} {'top-3':>6} {'direct':>6} {'paraphr.':>8} "
        f"{'routed':>7} "
        f"{'turned away':>11} {'none FA':>8} {'AUROC':>6} {'p50 ms':>7}"
    )
    for r in results:
        print(
            f"{r['skills']:>7} {r['scorer']:<8} {r['threshold']:>5.2f} {r['top1_accuracy']:>6.1%} "
            f"{r['top3_recall']:>6.1%} {r['direct_top1_accuracy']:>6.1%} "
            f"{r['paraphrased_top1_accuracy']:>8.1%} {r['routed_accuracy']:>7.1%} "
            f"{r['answerable_rejected_rate']:>11.1%} {r['none_false_accept_rate']:>8.1%} {r['auroc']:>6.3f} "
            f"{r['latency_p50_ms']:>7.2f}"
        )
    if args.calibrate:
        print(f"\nCalibration: the lowest min_score with none false accepts <= {args.calibrate:.0%}")
        for r in results:
            c = r["calibration"]
            low, high = c["none_false_accept_interval"]
            print(
                f"{r['skills']:>7} {r['scorer']:<8} min_score {format_threshold(c['threshold']):<18} none FA "
                f"{c['none_false_accept_rate']:>6.1%} (95% CI {low:>5.1%}-{high:>5.1%})  "
                f"routed {c['routed_accuracy']:>6.1%}  turned away {c['answerable_rejected_rate']:>6.1%}"
            )
        print(
            f"95% CI: Wilson interval of that rate for {sum(c.expects_none for c in cases)} `expect: none` "
            "requests; the threshold is fitted on them, so expect new requests in the upper part of it"
        )
    for scorer, reason in skipped.items():
        print(f"\n{scorer}: skipped ({reason})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
