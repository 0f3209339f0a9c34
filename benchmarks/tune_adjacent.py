"""Can hybrid tell an adjacent task from a skill's own job? The search behind that answer, on the
tuning requests only (benchmarks/routing/queries.yaml and tune2.yaml; no held-out or fresh file is
read).

    python benchmarks/tune_adjacent.py [--corpus DIR] [--distractors 2000]

An adjacent task is real work no skill does, near one skill's topic ("plan my daughter's birthday
party in our back garden" beside a garden-planting skill); tune2.yaml's comments mark 94 of them
(`# adjacent`) beside 79 paraphrased requests in the same detailed style (`t*`). For each pool
(the labelled skills alone, among `--distractors` synthetic skills, and among as many real ones
from `--corpus DIR`) it prints:

1. what hybrid at its defaults does with each kind of request;
2. how well each signal that could decide it tells the paraphrased requests from the adjacent
   tasks (AUROC, by each request's top skill), and a logistic fit over all of them, 5-fold
   cross-validated, with what it turns away where 10% of adjacent tasks get through;
3. the best semantic floors (every skill loses beta x (s0 - semantic) below s0), with min_score
   refitted so that the other none requests (quick questions, off-topic) keep 10% false accepts
   in every pool, against no floor;
4. top-1 of the answerable tuning requests for fusion weights 0.3-0.8.

Reports only; exits 0.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench_routing import ROUTING  # noqa: E402
from tune_fusion import Channels, pools_of  # noqa: E402

from skills_lsp.core.routing.bm25f import bm25f_for, matched_terms  # noqa: E402
from skills_lsp.core.routing.hybrid import HYBRID_BM25F_WEIGHT  # noqa: E402
from skills_lsp.core.routing.intent import _logistic, keyword_search, probe_for, quick_answer_penalty  # noqa: E402
from skills_lsp.core.routing.queries import QueryCase, load_query_file  # noqa: E402
from skills_lsp.core.routing.semantic import semantic_for  # noqa: E402

Array = np.ndarray[Any, Any]
MIN_SCORE = 0.28  # hybrid's default
FALSE_ACCEPTS = 0.10
_KIND = re.compile(r"- id: (\w+)\s+# (\w+),")


def auroc(positive: Array, negative: Array) -> float:
    """P(a positive scores above a negative), ties counting half."""
    above = (positive[:, None] > negative[None]).mean()
    return float(above + 0.5 * (positive[:, None] == negative[None]).mean())


def coverage(index: Any, cases: list[QueryCase], ch: Channels, best: Array) -> Array:
    """For each request, the idf share of its words that its top skill holds in any field."""
    words = bm25f_for(index)
    docs = {doc.name: doc for doc in index}
    shares = np.zeros(len(cases))
    for row, case in enumerate(cases):
        idfs = words.statistics(case.query).idfs
        held = {t for found in matched_terms(case.query, docs[ch.names[best[row]]]).values() for t in found}
        shares[row] = sum(idfs[t] for t in held) / (sum(idfs.values()) or 1.0)
    return shares


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--distractors", type=int, default=2000)
    parser.add_argument("--corpus", type=Path, help="a folder of real SKILL.md files (a third pool)")
    args = parser.parse_args()
    cases: list[QueryCase] = []
    kinds: dict[str, str] = {}
    for name in ("queries.yaml", "tune2.yaml"):
        found, problems = load_query_file(ROUTING / name)
        if problems:
            print(f"{name}: {problems[0].message}")
            return 0
        cases += found
        kinds.update(_KIND.findall((ROUTING / name).read_text(encoding="utf-8")))
    none = np.array([c.expects_none for c in cases])
    adjacent = np.array([kinds.get(c.id or "") == "adjacent" for c in cases])
    paraphrased = np.array([(c.id or "").startswith("t") for c in cases])  # tune2's, in the same style
    other_none = none & ~adjacent
    pools: dict[str, tuple[Channels, Array]] = {}
    for name, index, ch in pools_of(cases, args.distractors, args.corpus, "skills-lsp-adjacent-"):
        fused = HYBRID_BM25F_WEIGHT * ch.bm25f + (1 - HYBRID_BM25F_WEIGHT) * ch.semantic
        pools[name] = (ch, coverage(index, cases, ch, fused.argmax(axis=1)))
        search = semantic_for(index)
    probe = probe_for(search.model)
    vectors = [search.query_vector(c.query) for c in cases]
    chance = np.array([1.0 if probe is None else probe.task_probability(v) for v in vectors])
    penalty = np.array(
        [
            0.0 if keyword_search(c.query) else quick_answer_penalty(p)
            for c, p in zip(cases, chance, strict=True)
        ]
    )
    print(
        f"{paraphrased.sum()} paraphrased (tune2), {adjacent.sum()} adjacent, {other_none.sum()} other none, "
        f"{(~none).sum()} answerable in all; pools: {', '.join(pools)}\n"
    )
    rng = np.random.default_rng(0)
    for name, (ch, shares) in pools.items():
        rows = np.arange(len(cases))
        fused = HYBRID_BM25F_WEIGHT * ch.bm25f + (1 - HYBRID_BM25F_WEIGHT) * ch.semantic
        ranked = np.argsort(-fused, axis=1)
        best, second = ranked[:, 0], ranked[:, 1]
        score = np.maximum(fused[rows, best] - penalty, 0.0)
        accepted = score >= MIN_SCORE
        print(f"== {name} ({len(ch.names)} skills)")
        print(
            f"  hybrid at {MIN_SCORE}: paraphrased top-1 {ch.right[rows, best][paraphrased].mean():.1%}, "
            f"turned away {(~accepted)[paraphrased].mean():.1%}; let through: adjacent "
            f"{accepted[adjacent].sum()}/{adjacent.sum()}, "
            f"other none {accepted[other_none].sum()}/{other_none.sum()}"
        )
        signals = {
            "hybrid's score": score,
            "lead over the second": fused[rows, best] - fused[rows, second],
            "idf share held": shares,
            "semantic": ch.semantic[rows, best],
            "bm25f": ch.bm25f[rows, best],
            "best semantic of any skill": ch.semantic.max(axis=1),
            "quick-question probe": chance,
        }
        for label, values in signals.items():
            print(f"  AUROC {label:28} {auroc(values[paraphrased], values[adjacent]):.2f}")
        both = np.flatnonzero(paraphrased | adjacent)
        features = np.column_stack([signals[k] for k in list(signals)[:-1]])[both]
        features = (features - features.mean(axis=0)) / features.std(axis=0)
        labels = paraphrased[both].astype(float)
        folds = rng.permutation(len(both)) % 5
        fitted = np.zeros(len(both))
        for fold in range(5):
            fit = _logistic(features[folds != fold], labels[folds != fold], 1.0)
            fitted[folds == fold] = features[folds == fold] @ fit[:-1] + fit[-1]
        cut = np.quantile(fitted[labels == 0], 1 - FALSE_ACCEPTS)
        own_cut = np.quantile(score[adjacent], 1 - FALSE_ACCEPTS)
        print(
            f"  AUROC {'logistic fit, cross-validated':28} "
            f"{auroc(fitted[labels == 1], fitted[labels == 0]):.2f}; at {FALSE_ACCEPTS:.0%} adjacent let "
            f"through it turns away {(fitted[labels == 1] <= cut).mean():.1%} "
            f"(hybrid's score: {(score[paraphrased] <= own_cut).mean():.1%})"
        )
        weights = []
        for weight in (0.3, 0.4, 0.5, 0.6, 0.7, 0.8):
            top = (weight * ch.bm25f + (1 - weight) * ch.semantic).argmax(axis=1)
            weights.append(f"{weight}: {ch.right[rows, top][~none].mean():.1%}")
        print(f"  top-1 of the answerable by fusion weight: {', '.join(weights)}\n")

    def floor(s0: float, beta: float) -> tuple[float, dict[str, tuple[float, float, float, float]]]:
        """The min_score holding the other none requests at FALSE_ACCEPTS in every pool, and per pool
        (top-1, turned away, adjacent let through, other none let through) with this floor."""
        tops = {}
        for name, (ch, _) in pools.items():
            scored = HYBRID_BM25F_WEIGHT * ch.bm25f + (1 - HYBRID_BM25F_WEIGHT) * ch.semantic
            scored = scored - beta * np.maximum(0.0, s0 - ch.semantic)
            best = scored.argmax(axis=1)
            rows = np.arange(len(cases))
            tops[name] = (np.maximum(scored[rows, best] - penalty, 0.0), ch.right[rows, best])
        highest = [
            float(np.quantile(top[other_none], 1 - FALSE_ACCEPTS, method="higher"))
            for top, _ in tops.values()
        ]
        threshold = 1e-9 + max(highest)
        result = {}
        for name, (top, right) in tops.items():
            taken = top >= threshold
            result[name] = (
                float(right[~none].mean()),
                float((~taken)[~none].mean()),
                float(taken[adjacent].mean()),
                float(taken[other_none].mean()),
            )
        return threshold, result

    def line(label: str, threshold: float, result: dict[str, tuple[float, float, float, float]]) -> str:
        cells = " | ".join(
            f"{n}: top-1 {t:.1%} away {a:.1%} adjacent {j:.1%} other {o:.1%}"
            for n, (t, a, j, o) in result.items()
        )
        return f"{label} min_score {threshold:.3f} | {cells}"

    print(f"Semantic floors, min_score refitted for {FALSE_ACCEPTS:.0%} of the other none requests per pool:")
    print(line("no floor            ", *floor(0.0, 0.0)))
    rows_found = []
    for start in np.arange(0.04, 0.31, 0.02):
        for beta in (0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0):
            found_at, result = floor(float(start), beta)
            rows_found.append((max(r[1] for r in result.values()), float(start), beta, found_at, result))
    rows_found.sort(key=lambda row: row[0])
    for _, s0, beta, threshold, result in rows_found[:5]:
        print(line(f"s0 {s0:.2f} beta {beta:<4}", threshold, result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
