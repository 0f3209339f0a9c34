"""How `hybrid` fuses bm25f and the embedding model: the search behind its defaults, on the tuning
split only (benchmarks/routing/queries.yaml; heldout.yaml is never read here).

    python benchmarks/tune_fusion.py [--distractors 2000] [--format text|json]

For every answerable tuning request it takes both channels' scores of every skill, in two pools
(the labelled skills alone, and among `--distractors` synthetic ones), then compares fusions:

- `mean w`: w x bm25f + (1 - w) x semantic (what hybrid did before issue 15);
- `rrf`: reciprocal rank fusion (k = 60), by rank only;
- `noisy-or`: each channel's score turned into a probability that the skill is the right one
  (a logistic fit per channel), then 1 - (1 - p_bm25f) x (1 - p_semantic): a strong match in one
  channel is never pulled under what that channel says alone;
- `logistic`: one logistic fit over both scores;
- `lift w`: the mean, never under bm25f's own score;
- `m0.6-s`: the 0.6 mean less a share `s` of the best other skill's score (a margin).

The fitted fusions are fitted on one half of the requests and scored on the other (alternately, in
file order) and the other way round, so the figures show what holds for requests the fit has not
seen. Reports top-1 without a threshold, then for each fusion the threshold that keeps the
`expect: none` false accepts at most 10% in both pools, and what that threshold turns away.
Reports only; exits 0.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench_routing import ROUTING, pool  # noqa: E402

from skills_lsp.core.index.skill_index import SkillIndex  # noqa: E402
from skills_lsp.core.routing.bm25f import bm25f_for  # noqa: E402
from skills_lsp.core.routing.queries import QueryCase, load_query_file  # noqa: E402
from skills_lsp.core.routing.semantic import VECTORS, semantic_for  # noqa: E402

Array = np.ndarray[Any, Any]


@dataclass
class Channels:
    """Both channels' scores: one row per request, one column per skill."""

    names: list[str]
    bm25f: Array
    semantic: Array
    right: Array  # True where the column is an expected skill of the row's request


def channels(index: SkillIndex, cases: list[QueryCase]) -> Channels:
    words, meaning = bm25f_for(index), semantic_for(index)
    docs = [d for d in meaning.documents() if d is not None]
    word_slot = words.slot_of()
    order = np.array([word_slot[id(d)] for d in docs])
    names = [d.name for d in docs]
    b = np.array([words.scores(c.query)[order] for c in cases])
    s = np.array([meaning.scores(c.query) for c in cases])
    right = np.array([[n in c.expect for n in names] for c in cases])
    return Channels(names, b, s, right)


def pools_of(
    cases: list[QueryCase], distractors: int, corpus: Path | None, prefix: str
) -> Iterator[tuple[str, SkillIndex, Channels]]:
    """Each pool ("79", "synthetic" and, with `corpus`, "real") with both channels' scores of
    `cases`, skill vectors read from and added to benchmarks/.workspace/'s cache."""
    VECTORS.attach(REPO / "benchmarks" / ".workspace" / "routing-vectors.npz")
    with tempfile.TemporaryDirectory(prefix=prefix) as scratch:
        sources: list[tuple[str, int, Path | None]] = [("79", 0, None), ("synthetic", distractors, None)]
        if corpus:
            sources.append(("real", distractors, corpus))
        for name, extra, folder in sources:
            index = pool(extra, Path(scratch), folder)
            found = channels(index, cases)
            VECTORS.flush()  # after each pool: an interrupted run keeps what it embedded
            yield name, index, found


def _logistic(features: Array, labels: Array, weight: Array) -> Array:
    """Weighted logistic regression by Newton's method (a few features: no library needed)."""
    x = np.hstack([features, np.ones((len(features), 1))])
    beta = np.zeros(x.shape[1])
    for _ in range(50):
        p = 1 / (1 + np.exp(-(x @ beta)))
        gradient = x.T @ (weight * (labels - p))
        hessian = (x * (weight * p * (1 - p))[:, None]).T @ x + 1e-6 * np.eye(x.shape[1])
        step = np.linalg.solve(hessian, gradient)
        beta += step
        if np.abs(step).max() < 1e-9:
            break
    return beta


def _pairs(ch: Channels, rows: list[int], negatives: int = 10) -> tuple[Array, Array, Array, Array]:
    """Training pairs: each request's right skill, and its `negatives` hardest wrong ones by each
    channel (what a fused score has to rank below the right one), balanced per request."""
    b, s, y, w = [], [], [], []
    for r in rows:
        wrong = ~ch.right[r]
        hard = set()
        for scores in (ch.bm25f[r], ch.semantic[r]):
            ranked = np.argsort(-np.where(wrong, scores, -1.0))[:negatives]
            hard.update(int(i) for i in ranked)
        for i in np.flatnonzero(ch.right[r]):
            b.append(ch.bm25f[r, i]), s.append(ch.semantic[r, i]), y.append(1.0), w.append(1.0)
        for i in hard:
            b.append(ch.bm25f[r, i]), s.append(ch.semantic[r, i]), y.append(0.0), w.append(1.0 / len(hard))
    return np.array(b), np.array(s), np.array(y), np.array(w)


def _all_pairs(pools: list[Channels], rows: list[int]) -> tuple[Array, Array, Array, Array]:
    """_pairs over every pool, joined: one fit serves all pool sizes."""
    parts = [_pairs(ch, rows) for ch in pools]
    b, s, y, w = (np.concatenate([p[k] for p in parts]) for k in range(4))
    return b, s, y, w


Fusion = Callable[[Array, Array], Array]


def fit_noisy_or(pools: list[Channels], rows: list[int]) -> tuple[Fusion, dict[str, float]]:
    b, s, y, w = _all_pairs(pools, rows)
    beta_b = _logistic(b[:, None], y, w)
    beta_s = _logistic(s[:, None], y, w)

    def fused(bm: Array, sem: Array) -> Array:
        pb = 1 / (1 + np.exp(-(beta_b[0] * bm + beta_b[1])))
        ps = 1 / (1 + np.exp(-(beta_s[0] * sem + beta_s[1])))
        result: Array = 1 - (1 - pb) * (1 - ps)
        return result

    return fused, {
        "bm25f_slope": beta_b[0],
        "bm25f_bias": beta_b[1],
        "semantic_slope": beta_s[0],
        "semantic_bias": beta_s[1],
    }


def fit_logistic(pools: list[Channels], rows: list[int]) -> tuple[Fusion, dict[str, float]]:
    b, s, y, w = _all_pairs(pools, rows)
    beta = _logistic(np.stack([b, s], axis=1), y, w)

    def fused(bm: Array, sem: Array) -> Array:
        result: Array = 1 / (1 + np.exp(-(beta[0] * bm + beta[1] * sem + beta[2])))
        return result

    return fused, {"bm25f": beta[0], "semantic": beta[1], "bias": beta[2]}


def standardised(x: Array) -> Array:
    """Each score as standard deviations above the mean of its request's scores over the pool: a
    request no skill fits has no outlier, a request with a match has one."""
    result: Array = (x - x.mean(axis=1, keepdims=True)) / (x.std(axis=1, keepdims=True) + 1e-9)
    return result


def lifted(weight: float) -> Fusion:
    """The weighted mean, but never under bm25f's own score: the embedding can lift a skill whose
    words match weakly, never sink one whose words match strongly."""

    def fused(bm: Array, sem: Array) -> Array:
        result: Array = np.maximum(weight * bm + (1 - weight) * sem, bm)
        return result

    return fused


def with_margin(fusion: Fusion, share: float) -> Fusion:
    """A fused score less `share` of the best other skill's: a request that several skills fit
    about equally well (what "no skill fits" requests look like) scores lower. The order of
    the skills is unchanged (each loses a share of the same best score, the top one of the
    runner-up's)."""

    def fused(bm: Array, sem: Array) -> Array:
        base = fusion(bm, sem)
        top2 = -np.partition(-base, 1, axis=1)[:, :2]
        best_other = np.where(base >= top2[:, :1], top2[:, 1:2], top2[:, :1])
        result: Array = base - share * best_other
        return result

    return fused


def rrf(bm: Array, sem: Array, k: float = 60.0) -> Array:
    def ranks(x: Array) -> Array:
        return np.argsort(np.argsort(-x, axis=1), axis=1) + 1

    result: Array = 1 / (k + ranks(bm)) + 1 / (k + ranks(sem))
    return result


def weighted_mean(weight: float) -> Fusion:
    def fused(bm: Array, sem: Array) -> Array:
        result: Array = weight * bm + (1 - weight) * sem
        return result

    return fused


def top1(ch: Channels, fused: Array, rows: list[int]) -> float:
    best = fused[rows].argmax(axis=1)
    return float(np.mean([ch.right[r, i] for r, i in zip(rows, best, strict=True)]))


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--distractors", type=int, default=2000)
    parser.add_argument("--format", choices=["text", "json"], default="text")
    parser.add_argument("--max-tokens", type=int, help="minilm's cut (default: the shipped one)")
    args = parser.parse_args()
    if args.max_tokens:
        from skills_lsp.core.routing import embedding

        embedding.MINILM_MAX_TOKENS = args.max_tokens  # read when the model loads
    cases, _ = load_query_file(ROUTING / "queries.yaml")
    answerable = [c for c in cases if c.expect]
    nones = [c for c in cases if not c.expect]
    cache = REPO / "benchmarks" / ".workspace" / "tune-vectors.npz"
    VECTORS.attach(cache)
    with tempfile.TemporaryDirectory(prefix="skills-lsp-fusion-") as scratch:
        sizes = sorted({0, args.distractors})
        pools, none_pools = [], []
        for n in sizes:
            index = pool(n, Path(scratch))
            VECTORS.flush()  # after each pool: an interrupted run keeps what it embedded
            pools.append(channels(index, answerable))
            none_pools.append(channels(index, nones))
            VECTORS.flush()
    folds = [list(range(0, len(answerable), 2)), list(range(1, len(answerable), 2))]
    every = list(range(len(answerable)))
    para = [i for i, c in enumerate(answerable) if c.paraphrase]
    fixed: dict[str, Fusion] = {f"mean {w:.1f}": weighted_mean(w) for w in (0.3, 0.4, 0.5, 0.6)}
    fixed["rrf"] = rrf
    for w in (0.3, 0.4, 0.5, 0.6):
        fixed[f"lift {w:.1f}"] = lifted(w)
    for share in (0.25, 0.5):
        fixed[f"m0.6-{share:g}"] = with_margin(weighted_mean(0.6), share)
    fixed["bm25f"] = lambda b, s: b
    fixed["semantic"] = lambda b, s: s
    fitters = {"noisy-or": fit_noisy_or, "logistic": fit_logistic}
    rows_out: list[dict[str, Any]] = []

    def score(name: str, fusions: list[tuple[Fusion, list[int]]], parameters: dict[str, float]) -> None:
        row: dict[str, Any] = {"fusion": name, "parameters": parameters}
        for size, ch in zip(sizes, pools, strict=True):
            hits = {r: False for r in every}
            para_hits = []
            for fusion, rows in fusions:
                fused = fusion(ch.bm25f, ch.semantic)
                best = fused.argmax(axis=1)
                for r in rows:
                    hits[r] = bool(ch.right[r, best[r]])
            para_hits = [hits[r] for r in para]
            row[f"top1_{size}"] = float(np.mean(list(hits.values())))
            row[f"paraphrase_{size}"] = float(np.mean(para_hits))
        # The threshold: lowest that keeps none false accepts <= 10% in every pool (full fit).
        full_fusion = fusions[0][0] if len(fusions) == 1 else fitters[name](pools, every)[0]
        none_tops = np.concatenate([full_fusion(c.bm25f, c.semantic).max(axis=1) for c in none_pools])
        threshold = float(np.quantile(none_tops, 0.9, method="higher")) + 1e-6
        for size, ch in zip(sizes, pools, strict=True):
            fused = full_fusion(ch.bm25f, ch.semantic)
            best = fused.argmax(axis=1)
            top = fused.max(axis=1)
            routed = [bool(ch.right[r, best[r]]) and top[r] >= threshold for r in every]
            row[f"routed_{size}"] = float(np.mean(routed))
            row[f"turned_away_{size}"] = float(np.mean(top < threshold))
        row["threshold"] = threshold
        rows_out.append(row)

    for name, fusion in fixed.items():
        score(name, [(fusion, every)], {})
    for name, fitter in fitters.items():
        crossed = [(fitter(pools, folds[1 - k])[0], folds[k]) for k in range(2)]
        score(name, crossed, fitter(pools, every)[1])
    if args.format == "json":
        print(json.dumps(rows_out, indent=2))
        return 0
    head = "".join(f" {'top-1 ' + str(n + 79):>11} {'para.':>6} {'routed':>7} {'away':>6}" for n in sizes)
    print(f"{len(answerable)} answerable and {len(nones)} none tuning requests (queries.yaml)\n")
    print(f"{'fusion':<10}{head} {'threshold':>9}")
    for row in rows_out:
        cells = "".join(
            f" {row[f'top1_{n}']:>11.1%} {row[f'paraphrase_{n}']:>6.1%} {row[f'routed_{n}']:>7.1%}"
            f" {row[f'turned_away_{n}']:>6.1%}"
            for n in sizes
        )
        print(f"{row['fusion']:<10}{cells} {row['threshold']:>9.3f}")
    print(
        "\nnoisy-or and logistic: top-1 fitted on one half, scored on the other; "
        "threshold and routed: fitted on all"
    )
    for row in rows_out:
        if row["parameters"]:
            print(f"{row['fusion']}: " + ", ".join(f"{k} {v:.3f}" for k, v in row["parameters"].items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
