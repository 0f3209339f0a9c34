"""Routing quality of each scorer on our labelled set, alone and in a large pool of distractors.

    python benchmarks/bench_routing.py [--split tune,tune2,heldout,fresh,fresh2] [--distractors 2000]
                                       [--corpus DIR]
                                       [--scorer lexical,bm25f,semantic,hybrid] [--calibrate 0.10]
                                       [--format text|json]

The labelled set is benchmarks/routing/: skills written for this project, and three files of
requests written the way users ask: `queries.yaml`, the tuning split (every default was fitted on
it), and `tune2.yaml`, more of it (paraphrased requests, adjacent tasks and off-topic ones);
`heldout.yaml`, which no tuning reads; `fresh.yaml` and `fresh2.yaml`, each written before a change
to the defaults and run once after it (routing/WRITING.md). Each pool is the labelled
skills plus `--distractors` others: synthetic ones from benchmarks/generate_workspace.py
(deterministic), or with `--corpus DIR` real public SKILL.md files found under DIR (the first N by
a hash of their path, so the same N every run; skills named like one of ours are left out). Real
skills are the honest pool: synthetic ones are word salad that no request means, real ones
sometimes do the job a request asks for under another name, which counts as a miss here. With
--calibrate RATE it also prints, per pool and scorer, the lowest min_score that keeps `expect:
none` false accepts at most RATE, and what that threshold turns away. Skill vectors are cached in
benchmarks/.workspace/ between runs. Scorers whose extra is not installed are skipped with a
note. Reports only; exits 0.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from skills_lsp.core.index.skill_index import (  # noqa: E402
    SkillDocument,
    SkillIndex,
    load_workspace_index,
    read_workspace_document,
)
from skills_lsp.core.model import FileKind  # noqa: E402
from skills_lsp.core.routing.evaluation import calibrate, evaluate, format_threshold  # noqa: E402
from skills_lsp.core.routing.queries import load_query_file  # noqa: E402
from skills_lsp.core.routing.semantic import VECTORS, ScorerUnavailable, model_name  # noqa: E402

ROUTING = REPO / "benchmarks" / "routing"


def _generator() -> Any:
    import generate_workspace  # benchmarks/ is on sys.path: these run as scripts

    return generate_workspace


def corpus_skills(corpus: Path, count: int, taken: set[str]) -> list[SkillDocument]:
    """`count` real skills from a folder of public SKILL.md files: the first by the SHA-1 of their
    path (a fixed sample, spread over the whole corpus), skipping unparsable ones and names
    already in the pool."""

    def spread(path: Path) -> bytes:
        return hashlib.sha1(str(path.relative_to(corpus)).encode()).digest()

    paths = sorted(corpus.rglob("SKILL.md"), key=spread)
    chosen: list[SkillDocument] = []
    for path in paths:
        if len(chosen) == count:
            break
        doc = read_workspace_document(path, FileKind.AGENT_SKILL)
        if doc is None or not doc.name or doc.name in taken or not doc.description:
            continue
        taken.add(doc.name)
        chosen.append(doc)
    return chosen


def pool(distractors: int, scratch: Path, corpus: Path | None = None) -> SkillIndex:
    """The labelled skills, plus exactly `distractors` others: real ones from `corpus`, else
    synthetic ones (the generator also writes convention files, which are left out, so it is
    asked for a few more)."""
    index = load_workspace_index(ROUTING)
    if distractors and corpus is not None:
        for doc in corpus_skills(corpus, distractors, {d.name for d in index}):
            index.upsert(doc)
    elif distractors:
        target = scratch / f"distractors-{distractors}"
        _generator().generate(target, distractors + distractors // 10 + 20, 7)
        skills = [doc for doc in load_workspace_index(target) if doc.kind.value != "convention"]
        skills.sort(key=lambda doc: doc.sort_key())
        for doc in skills[:distractors]:
            index.upsert(doc)
    return index


SPLITS = {
    "tune": "queries.yaml",
    "tune2": "tune2.yaml",
    "heldout": "heldout.yaml",
    "fresh": "fresh.yaml",
    "fresh2": "fresh2.yaml",
}


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--split",
        default="tune,heldout",
        help=", ".join(f"{name} ({file})" for name, file in SPLITS.items()),
    )
    parser.add_argument("--distractors", type=int, default=2000, help="skills added to the pool (0: none)")
    parser.add_argument("--corpus", type=Path, help="a folder of real SKILL.md files (distractors)")
    parser.add_argument("--scorer", default="lexical,bm25f,semantic,hybrid")
    parser.add_argument("--calibrate", type=float, default=0.10, help="false-accept target (0: skip)")
    parser.add_argument("--format", choices=["text", "json"], default="text")
    args = parser.parse_args()
    splits = [s for s in args.split.split(",") if s]
    cases_of = {}
    for split in splits:
        cases, problems = load_query_file(ROUTING / SPLITS[split])
        for p in problems:
            print(f"{p.path}:{p.range.start.line + 1}: {p.message}", file=sys.stderr)
        cases_of[split] = cases
    scorers = [s for s in args.scorer.split(",") if s]
    results: list[dict[str, Any]] = []
    skipped: dict[str, str] = {}
    VECTORS.attach(REPO / "benchmarks" / ".workspace" / "routing-vectors.npz")
    with tempfile.TemporaryDirectory(prefix="skills-lsp-routing-") as scratch:
        for extra in sorted({0, args.distractors}):
            index = pool(extra, Path(scratch), args.corpus)
            for scorer in scorers:
                if scorer in skipped:
                    continue
                for split, cases in cases_of.items():
                    try:
                        evaluated = evaluate(index, cases, scorer)
                    except ScorerUnavailable as error:
                        skipped[scorer] = str(error)
                        break
                    VECTORS.flush()
                    report = evaluated.to_json()
                    report["skills"] = len(index)
                    report["split"] = split
                    if args.calibrate:
                        report["calibration"] = calibrate(evaluated, args.calibrate).to_json()
                    results.append(report)
    if args.format == "json":
        print(json.dumps({"results": results, "skipped": skipped}, indent=2))
        return 0
    pool_kind = f"real skills from {args.corpus}" if args.corpus else "synthetic skills"
    print("Splits: " + ", ".join(f"{s} ({SPLITS[s]}, {len(c)} cases)" for s, c in cases_of.items()))
    print(f"Distractors: {pool_kind}; embedding model: {model_label()}\n")
    print(
        f"{'split':<8} {'skills':>7} {'scorer':<8} {'min':>5} {'top-1':>6} {'top-3':>6} {'direct':>6} "
        f"{'paraphr.':>8} {'routed':>7} {'turned away':>11} {'none FA':>8} {'AUROC':>6} {'p50 ms':>7}"
    )
    for r in results:
        print(
            f"{r['split']:<8} {r['skills']:>7} {r['scorer']:<8} {r['threshold']:>5.2f} "
            f"{r['top1_accuracy']:>6.1%} "
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
                f"{r['split']:<8} {r['skills']:>7} {r['scorer']:<8} "
                f"min_score {format_threshold(c['threshold']):<18} "
                f"none FA {c['none_false_accept_rate']:>6.1%} (95% CI {low:>5.1%}-{high:>5.1%})  "
                f"routed {c['routed_accuracy']:>6.1%}  turned away {c['answerable_rejected_rate']:>6.1%}"
            )
    for scorer, reason in skipped.items():
        print(f"\n{scorer}: skipped ({reason})")
    return 0


def model_label() -> str:
    try:
        return model_name()
    except ScorerUnavailable:
        return "none installed"


if __name__ == "__main__":
    raise SystemExit(main())
