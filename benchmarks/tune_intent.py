"""The quick-question penalty of `hybrid` (core/routing/intent.py): the search behind its
defaults, on the tuning split only (benchmarks/routing/queries.yaml; heldout.yaml is never read).

    python benchmarks/tune_intent.py [--corpus DIR] [--distractors 2000] [--top 10]

For every tuning request it takes both channels' scores of every skill in three pools (the
labelled skills alone, among `--distractors` synthetic skills, and among as many real ones from
`--corpus DIR` when given) and the intent probe's probability that the request asks for a task.
The hybrid score becomes 0.6 x bm25f + 0.4 x semantic - slope x max(0, floor - probability), the
same for every skill of a request. For each (slope, floor) on a grid it finds the lowest
min_score that keeps `expect: none` false accepts at or under 10% in every pool, and prints the
pairs whose threshold lies in 0.25-0.35 (hybrid's scale) that turn away the fewest answerable
requests in the worst pool. Reports only; exits 0.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench_routing import ROUTING  # noqa: E402
from tune_fusion import pools_of  # noqa: E402

from skills_lsp.core.routing.hybrid import HYBRID_BM25F_WEIGHT  # noqa: E402
from skills_lsp.core.routing.intent import PENALTY_SLOPE, TASK_FLOOR, probe_for  # noqa: E402
from skills_lsp.core.routing.queries import load_query_file  # noqa: E402
from skills_lsp.core.routing.semantic import semantic_for  # noqa: E402

Array = np.ndarray[Any, Any]
FALSE_ACCEPTS = 0.10


Outcome = tuple[float, dict[str, tuple[float, float, float]]]


def outcome(
    pools: dict[str, tuple[Array, Array]], none: Array, probability: Array, slope: float, floor: float
) -> Outcome:
    """The threshold for FALSE_ACCEPTS in every pool, and per pool (routed, turned away, false accepts)."""
    penalty = slope * np.maximum(0.0, floor - probability)
    scored = {name: (np.clip(top - penalty, 0, 1), right) for name, (top, right) in pools.items()}
    highest = [float(np.quantile(s[none], 1 - FALSE_ACCEPTS, method="higher")) for s, _ in scored.values()]
    threshold = max(highest) + 1e-9
    result = {}
    for name, (score, right) in scored.items():
        accepted = score >= threshold
        result[name] = (
            float((right & accepted)[~none].mean()),
            float((~accepted)[~none].mean()),
            float(accepted[none].mean()),
        )
    return threshold, result


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--distractors", type=int, default=2000)
    parser.add_argument("--corpus", type=Path, help="a folder of real SKILL.md files (a third pool)")
    parser.add_argument("--top", type=int, default=10, help="rows to print")
    args = parser.parse_args()
    cases, _ = load_query_file(ROUTING / "queries.yaml")
    none = np.array([c.expects_none for c in cases])
    pools: dict[str, tuple[Array, Array]] = {}
    for name, index, ch in pools_of(cases, args.distractors, args.corpus, "skills-lsp-intent-"):
        fused = HYBRID_BM25F_WEIGHT * ch.bm25f + (1 - HYBRID_BM25F_WEIGHT) * ch.semantic
        best = fused.argmax(axis=1)
        pools[name] = (fused.max(axis=1), ch.right[np.arange(len(cases)), best])
        search = semantic_for(index)
    probe = probe_for(search.model)
    if probe is None:
        print(f"no intent probe ships for {search.model.name}")
        return 0
    probability = np.array([probe.task_probability(search.query_vector(c.query)) for c in cases])
    print(f"{(~none).sum()} answerable and {none.sum()} none tuning requests; pools: {', '.join(pools)}")
    print(f"false accepts held at {FALSE_ACCEPTS:.0%} in every pool", end="; ")
    print(f"shipped: slope {PENALTY_SLOPE}, floor {TASK_FLOOR}\n")
    rows = []
    for slope in np.arange(0.0, 1.51, 0.05):
        for floor in np.arange(0.2, 0.9, 0.02):
            threshold, result = outcome(pools, none, probability, slope, floor)
            if 0.25 <= threshold <= 0.35 or slope == 0.0:
                worst = max(r[1] for r in result.values())
                rows.append((worst, float(slope), float(floor), threshold, result))
    rows.sort(key=lambda row: row[0])
    for row in [r for r in rows if r[1] == 0.0][:1] + [r for r in rows if r[1] > 0][: args.top]:
        _, slope, floor, threshold, result = row
        cells = " | ".join(
            f"{n}: routed {r:5.1%} away {a:5.1%} FA {f:5.1%}" for n, (r, a, f) in result.items()
        )
        print(f"slope {slope:.2f} floor {floor:.2f} min_score {threshold:.3f} | {cells}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
