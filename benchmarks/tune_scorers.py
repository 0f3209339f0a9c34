"""Grid search of bm25f's field weights, length normalisation and saturation on benchmarks/routing/,
with a held-out check, so the defaults in skills_lsp/core/bm25.py can be re-derived and audited.

    python benchmarks/tune_bm25f.py [--distractors 2000] [--format text|json]

The objective is top-1 accuracy on the answerable requests, averaged over two pools: the labelled
skills alone and among `--distractors` synthetic ones (the pool bench_routing.py reports), so a
setting that only suits one pool size does not win. The requests are split in two folds (by the
parity of their position in queries.yaml); the setting that is best on one fold is scored on the
other, which shows how much of the gain is fitted to these particular requests. The final line is the
setting that is best on all requests and what the current defaults give. Reports only; exits 0.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench_routing import ROUTING, pool  # noqa: E402

from skills_lsp.core.bm25 import Bm25fParameters, Bm25fSearch  # noqa: E402
from skills_lsp.core.queries import QueryCase, load_query_file  # noqa: E402
from skills_lsp.core.selection import SelectionPolicy  # noqa: E402

GRID: dict[str, tuple[float, ...]] = {
    "name_weight": (1.5, 3.0, 4.5),
    "description_weight": (1.0, 2.0, 3.0),
    "body_weight": (0.2, 0.4, 0.7, 1.0),
    "description_b": (0.3, 0.6),
    "body_b": (0.5, 0.75, 0.9),
    "k1": (0.9, 1.2, 1.6),
}


# Two values a parameter, around the defaults: a smoke run of the script.
QUICK_GRID: dict[str, tuple[float, ...]] = {
    "name_weight": (3.0,),
    "description_weight": (1.0, 2.0),
    "body_weight": (0.4, 0.7),
    "description_b": (0.6,),
    "body_b": (0.75,),
    "k1": (1.2,),
}


def settings(grid: dict[str, tuple[float, ...]]) -> list[Bm25fParameters]:
    keys = list(grid)
    return [
        Bm25fParameters(**dict(zip(keys, values, strict=True)))
        for values in itertools.product(*grid.values())
    ]


def hits(search: Bm25fSearch, parameters: Bm25fParameters, cases: list[QueryCase]) -> list[bool]:
    """Whether each case's first-ranked skill is a right one under `parameters`."""
    search.p = parameters
    search._cached_for = None  # the per-word cache holds the old parameters' contributions
    policy = SelectionPolicy(top_k=1, min_score=0.0, scorer="bm25f")
    found = []
    for case in cases:
        policy.include_tags, policy.exclude_tags = list(case.include_tags), list(case.exclude_tags)
        matches = search.select(case.query, policy)
        found.append(bool(matches) and matches[0].skill.name in case.expect)
    return found


def accuracy(
    table: dict[Bm25fParameters, list[list[bool]]], setting: Bm25fParameters, fold: list[int]
) -> float:
    """Top-1 over the cases in `fold`, averaged over the pools."""
    per_pool = [sum(found[i] for i in fold) / len(fold) for found in table[setting]]
    return sum(per_pool) / len(per_pool)


def describe(p: Bm25fParameters) -> str:
    return ", ".join(f"{k}={getattr(p, k)}" for k in GRID)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--distractors", type=int, default=2000)
    parser.add_argument("--format", choices=["text", "json"], default="text")
    parser.add_argument("--grid", choices=["full", "quick"], default="full", help="quick: a smoke run")
    args = parser.parse_args()
    all_cases, _ = load_query_file(ROUTING / "queries.yaml")
    cases = [c for c in all_cases if not c.expects_none]
    default = Bm25fParameters()
    grid = settings(QUICK_GRID if args.grid == "quick" else GRID)
    if default not in grid:
        grid.append(default)
    table: dict[Bm25fParameters, list[list[bool]]] = {p: [] for p in grid}
    with tempfile.TemporaryDirectory(prefix="skills-lsp-tune-") as scratch:
        for extra in sorted({0, args.distractors}):
            search = Bm25fSearch(pool(extra, Path(scratch)))
            for p in grid:
                table[p].append(hits(search, p, cases))
    everything = list(range(len(cases)))
    folds = [everything[0::2], everything[1::2]]
    held_out = []
    for tune, check in ((folds[0], folds[1]), (folds[1], folds[0])):
        best = max(grid, key=lambda p: (accuracy(table, p, tune), p == default))
        held_out.append(
            {
                "tuned": describe(best),
                "tuned_fold": accuracy(table, best, tune),
                "held_out_fold": accuracy(table, best, check),
                "default_on_held_out": accuracy(table, default, check),
            }
        )
    best = max(grid, key=lambda p: (accuracy(table, p, everything), p == default))
    result: dict[str, Any] = {
        "answerable_cases": len(cases),
        "settings": len(grid),
        "pools": sorted({0, args.distractors}),
        "folds": held_out,
        "best": {
            "setting": describe(best),
            "top1": accuracy(table, best, everything),
            "per_pool": [sum(f) / len(f) for f in table[best]],
        },
        "default": {
            "setting": describe(default),
            "top1": accuracy(table, default, everything),
            "per_pool": [sum(f) / len(f) for f in table[default]],
        },
    }
    if args.format == "json":
        print(json.dumps(result, indent=2))
        return 0
    print(f"{len(grid)} settings, {len(cases)} answerable requests, pools of +{result['pools']} distractors")
    for i, fold in enumerate(held_out):
        print(
            f"fold {i + 1}: tuned {fold['tuned_fold']:.1%} -> held out {fold['held_out_fold']:.1%} "
            f"(defaults on the held-out fold: {fold['default_on_held_out']:.1%})\n    {fold['tuned']}"
        )
    for label in ("best", "default"):
        row = result[label]
        pools = " / ".join(f"{v:.1%}" for v in row["per_pool"])
        print(f"{label + ':':<8} top-1 {row['top1']:.1%} (per pool {pools})\n    {row['setting']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
