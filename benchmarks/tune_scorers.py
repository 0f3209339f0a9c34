"""Grid searches behind the scorers' defaults on benchmarks/routing/, each with a held-out check, so
the defaults in skills_lsp/core/routing/bm25f.py (bm25f's field weights, b and k1) and semantic.py (hybrid's
weight of bm25f) can be re-derived and audited.

    python benchmarks/tune_scorers.py [--scorer bm25f,hybrid] [--distractors 2000] [--grid full|quick]
                                      [--format text|json]

The objective is top-1 accuracy on the answerable requests, averaged over two pools: the labelled
skills alone and among `--distractors` synthetic ones (the pool bench_routing.py reports), so a
setting that only suits one pool size does not win. The answerable requests are split in two folds
(alternately, in file order); the setting that is best on one fold is scored on the other, which
shows how much of a gain is fitted to these particular requests. Then the setting best on all
requests, and what the current default gives. `hybrid` is skipped when the `semantic` extra is
missing. Reports only; exits 0.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench_routing import ROUTING, pool  # noqa: E402

from skills_lsp.core.errors import ScorerUnavailable  # noqa: E402
from skills_lsp.core.index.skill_index import SkillIndex  # noqa: E402
from skills_lsp.core.routing.bm25f import Bm25fParameters, bm25f_for  # noqa: E402
from skills_lsp.core.routing.hybrid import HYBRID_BM25F_WEIGHT, hybrid_for  # noqa: E402
from skills_lsp.core.routing.queries import QueryCase, load_query_file  # noqa: E402
from skills_lsp.core.routing.scorer import SelectionPolicy  # noqa: E402

BM25F_GRID: dict[str, tuple[float, ...]] = {
    "name_weight": (1.5, 3.0, 4.5),
    "description_weight": (1.0, 2.0, 3.0),
    "body_weight": (0.2, 0.4, 0.7, 1.0),
    "description_b": (0.3, 0.6),
    "body_b": (0.5, 0.75, 0.9),
    "k1": (0.9, 1.2, 1.6),
}
# A smoke run: the defaults and a neighbour or two.
BM25F_QUICK_GRID: dict[str, tuple[float, ...]] = {
    "name_weight": (3.0,),
    "description_weight": (1.0, 2.0),
    "body_weight": (0.4, 0.7),
    "description_b": (0.6,),
    "body_b": (0.75,),
    "k1": (1.2,),
}
HYBRID_WEIGHTS = (0.3, 0.4, 0.5, 0.6, 0.7)
HYBRID_QUICK_WEIGHTS = (0.5, 0.6)

# A setting: its label, and how to make a pool's index score with it.
Setting = tuple[str, Callable[[SkillIndex], None]]


def bm25f_settings(grid: dict[str, tuple[float, ...]]) -> tuple[list[Setting], str]:
    def apply(parameters: Bm25fParameters) -> Callable[[SkillIndex], None]:
        return lambda index: bm25f_for(index).set_parameters(parameters)

    def label(p: Bm25fParameters) -> str:
        return ", ".join(f"{k}={getattr(p, k)}" for k in BM25F_GRID)

    keys = list(grid)
    every = [Bm25fParameters(**dict(zip(keys, v, strict=True))) for v in itertools.product(*grid.values())]
    if Bm25fParameters() not in every:
        every.append(Bm25fParameters())
    return [(label(p), apply(p)) for p in every], label(Bm25fParameters())


def hybrid_settings(weights: tuple[float, ...]) -> tuple[list[Setting], str]:
    def apply(weight: float) -> Callable[[SkillIndex], None]:
        def set_weight(index: SkillIndex) -> None:
            bm25f_for(index).set_parameters(Bm25fParameters())
            hybrid_for(index).weight = weight

        return set_weight

    every = sorted({*weights, HYBRID_BM25F_WEIGHT})
    return [(f"bm25f weight {w}", apply(w)) for w in every], f"bm25f weight {HYBRID_BM25F_WEIGHT}"


def hits(index: SkillIndex, scorer: str, cases: list[QueryCase]) -> list[bool]:
    """Whether each case's first-ranked skill is a right one, as `scorer` now scores `index`."""
    search = bm25f_for(index) if scorer == "bm25f" else hybrid_for(index)
    found = []
    for case in cases:
        policy = SelectionPolicy(
            top_k=1,
            min_score=0.0,
            include_tags=list(case.include_tags),
            exclude_tags=list(case.exclude_tags),
            scorer="bm25f" if scorer == "bm25f" else "hybrid",
        )
        matches = search.select(case.query, policy)
        found.append(bool(matches) and matches[0].skill.name in case.expect)
    return found


def accuracy(per_pool: list[list[bool]], fold: list[int]) -> float:
    """Top-1 over the cases in `fold`, averaged over the pools."""
    rates = [sum(found[i] for i in fold) / len(fold) for found in per_pool]
    return sum(rates) / len(rates)


def report(table: dict[str, list[list[bool]]], default: str) -> dict[str, Any]:
    cases = len(next(iter(table.values()))[0])
    everything = list(range(cases))
    folds = [everything[0::2], everything[1::2]]

    def best_on(fold: list[int]) -> str:
        return max(table, key=lambda label: (accuracy(table[label], fold), label == default))

    held_out = []
    for tune, check in ((folds[0], folds[1]), (folds[1], folds[0])):
        best = best_on(tune)
        held_out.append(
            {
                "tuned": best,
                "tuned_fold": accuracy(table[best], tune),
                "held_out_fold": accuracy(table[best], check),
                "default_on_held_out": accuracy(table[default], check),
            }
        )
    best = best_on(everything)
    return {
        "answerable_cases": cases,
        "settings": len(table),
        "folds": held_out,
        **{
            key: {
                "setting": label,
                "top1": accuracy(table[label], everything),
                "per_pool": [sum(found) / len(found) for found in table[label]],
            }
            for key, label in (("best", best), ("default", default))
        },
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--scorer", default="bm25f,hybrid", help="which defaults to search: bm25f, hybrid")
    parser.add_argument("--distractors", type=int, default=2000)
    parser.add_argument("--grid", choices=["full", "quick"], default="full", help="quick: a smoke run")
    parser.add_argument("--format", choices=["text", "json"], default="text")
    args = parser.parse_args()
    scorers = [s.strip() for s in args.scorer.split(",") if s.strip()]
    unknown = set(scorers) - {"bm25f", "hybrid"}
    if unknown:
        parser.error(f"--scorer takes bm25f and hybrid, not {', '.join(sorted(unknown))}")
    quick = args.grid == "quick"
    all_cases, _ = load_query_file(ROUTING / "queries.yaml")
    cases = [c for c in all_cases if not c.expects_none]
    pools = sorted({0, args.distractors})
    results: dict[str, Any] = {"pools": pools, "scorers": {}, "skipped": {}}
    with tempfile.TemporaryDirectory(prefix="skills-lsp-tune-") as scratch:
        indexes = [pool(extra, Path(scratch)) for extra in pools]
        for scorer in scorers:
            if scorer == "bm25f":
                settings, default = bm25f_settings(BM25F_QUICK_GRID if quick else BM25F_GRID)
            else:
                settings, default = hybrid_settings(HYBRID_QUICK_WEIGHTS if quick else HYBRID_WEIGHTS)
            table: dict[str, list[list[bool]]] = {}
            try:
                for label, apply in settings:
                    for index in indexes:
                        apply(index)
                        table.setdefault(label, []).append(hits(index, scorer, cases))
            except ScorerUnavailable as error:
                results["skipped"][scorer] = str(error)
                continue
            finally:
                for index in indexes:  # leave the defaults in place
                    bm25f_for(index).set_parameters(Bm25fParameters())
            results["scorers"][scorer] = report(table, default)
    if args.format == "json":
        print(json.dumps(results, indent=2))
        return 0
    for scorer, found in results["scorers"].items():
        print(
            f"{scorer}: {found['settings']} settings, {found['answerable_cases']} answerable requests, "
            f"pools of {' and '.join(str(n + len(indexes[0])) for n in pools)} skills"
        )
        for i, fold in enumerate(found["folds"]):
            print(
                f"  fold {i + 1}: tuned {fold['tuned_fold']:.1%} -> held out {fold['held_out_fold']:.1%} "
                f"(the default there: {fold['default_on_held_out']:.1%})\n      {fold['tuned']}"
            )
        for key in ("best", "default"):
            row = found[key]
            per_pool = " / ".join(f"{v:.1%}" for v in row["per_pool"])
            print(f"  {key + ':':<8} top-1 {row['top1']:.1%} (per pool {per_pool})\n      {row['setting']}")
    for scorer, reason in results["skipped"].items():
        print(f"{scorer}: skipped ({reason})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
