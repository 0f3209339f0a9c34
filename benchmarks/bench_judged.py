"""How often each scorer decides what an LLM router decides, on requests a judge has routed.

    python benchmarks/bench_judged.py [--split fresh2] [--corpus DIR] [--distractors 2000]

Real runtimes pick a skill with an LLM. A judge acting as one read each request of a split with
candidates from the pool of the labelled skills and `--distractors` real skills from `--corpus`
(names and descriptions only, no scores) and wrote down the skill it would load, or none, and
every other candidate that would also do (benchmarks/routing/<split>-judged.json; how:
benchmarks/README.md, "Adjacent tasks"). For every scorer at its default threshold, in the pool
of the labelled skills alone and in the judged pool (with `--corpus`), this prints:

- labelled top-1: the scorer's first skill is the request's label;
- judged top-1: ... or one the judge would load or accepts;
- same decision: the scorer loads nothing where the judge loads nothing, or loads a skill the
  judge would load or accepts.

Reports only; exits 0.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench_routing import ROUTING, SPLITS, pool  # noqa: E402

from skills_lsp.core.errors import ScorerUnavailable  # noqa: E402
from skills_lsp.core.routing.queries import load_query_file  # noqa: E402
from skills_lsp.core.routing.scorer import SCORERS, SelectionPolicy, select_skills  # noqa: E402
from skills_lsp.core.routing.semantic import VECTORS  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--split", default="fresh2", choices=sorted(SPLITS))
    parser.add_argument("--corpus", type=Path, help="the real SKILL.md files the judge's pool came from")
    parser.add_argument("--distractors", type=int, default=2000)
    args = parser.parse_args()
    judged_file = ROUTING / f"{args.split}-judged.json"
    if not judged_file.is_file():
        print(f"no judgement for {args.split}: {judged_file} is missing")
        return 0
    judged = {item["id"]: item for item in json.loads(judged_file.read_text(encoding="utf-8"))["judged"]}
    cases, problems = load_query_file(ROUTING / SPLITS[args.split])
    if problems:
        print(f"{SPLITS[args.split]}: {problems[0].message}")
        return 0
    cases = [c for c in cases if c.id in judged]
    VECTORS.attach(REPO / "benchmarks" / ".workspace" / "routing-vectors.npz")
    print(f"{len(cases)} judged requests of {args.split}; the judge loads no skill for ", end="")
    print(f"{sum(judged[c.id or ''].get('pick') is None for c in cases)}\n")
    header = f"{'pool':<9} {'scorer':<9} {'min':>5} {'labelled top-1':>15} {'judged top-1':>13}"
    print(f"{header} {'same decision':>14}")
    with tempfile.TemporaryDirectory(prefix="skills-lsp-judged-") as scratch:
        pools = [("labelled", 0, None)] + ([("real", args.distractors, args.corpus)] if args.corpus else [])
        for label, extra, corpus in pools:
            index = pool(extra, Path(scratch), corpus)
            for name, entry in SCORERS.items():
                policy = SelectionPolicy(scorer=name, min_score=0.0, top_k=1)
                threshold = entry.default_min_score
                labelled = accepted = same = answerable = 0
                try:
                    for case in cases:
                        verdict = judged[case.id or ""]
                        matches = select_skills(index, case.query, policy)
                        first = matches[0].skill.name if matches else None
                        loads = first if matches and matches[0].score >= threshold else None
                        pick = verdict.get("pick")
                        ok = {pick, *verdict.get("acceptable", [])} - {None}
                        if not case.expects_none:
                            answerable += 1
                            labelled += first in case.expect
                            accepted += first in case.expect or first in ok
                        same += (loads is None and pick is None) or (loads is not None and loads in ok)
                except ScorerUnavailable:
                    print(f"{label:<9} {name:<9} not installed")
                    continue
                VECTORS.flush()
                print(
                    f"{label:<9} {name:<9} {threshold:>5.2f} {labelled / answerable:>15.1%} "
                    f"{accepted / answerable:>13.1%} {same / len(cases):>14.1%}"
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
