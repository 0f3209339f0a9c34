"""Time building the skill index and selecting skills over a large synthetic workspace.

    python benchmarks/bench_select.py [--skills 20000] [--seed 1] [--workspace DIR] [--queries 500]
                                      [--scorers lexical,bm25f,semantic,hybrid]

Prints: time to discover+parse+index the workspace, time to build the inverted index, and
`select_skills` latency (p50/p95/max over the queries) for the default policy and for top_k 10 /
min_score 0, then checks on a sample that the inverted index gives exactly the crate's plain
scorer results (which re-tokenizes every skill for every query, as adk-skill 0.6.0 does) and
times that too. Targets: p50 under 1 ms and p95 under 3 ms per query.

Then, for each other scorer: its build time over the same workspace, latency with its own
default policy and with top_k 10 / min_score 0, and the first query after an edit (an upsert
empties bm25f's per-word cache, so this is what an editor sees while someone types). Targets:
bm25f p50 under 1 ms; semantic and hybrid p50 under 20 ms. semantic and hybrid are skipped,
with a note, when the `semantic` extra is not installed. Reports only; exits 0.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from skills_lsp.core.index.skill_index import SkillIndex, load_workspace_index  # noqa: E402
from skills_lsp.core.routing.lexical import select_skills_plain, tokenize  # noqa: E402
from skills_lsp.core.routing.scorer import SelectionPolicy, scorer_for, select_skills  # noqa: E402

P50_TARGET_MS = 1.0
P95_TARGET_MS = 3.0
SCORER_P50_TARGET_MS = {"bm25f": 1.0, "semantic": 20.0, "hybrid": 20.0}


def _generator() -> Any:
    import generate_workspace  # benchmarks/ is on sys.path: these run as scripts

    return generate_workspace


def workspace_for(args: argparse.Namespace) -> Path:
    if args.workspace:
        return Path(args.workspace)
    path = REPO / "benchmarks" / ".workspace" / f"{args.skills}-{args.seed}"
    if not path.is_dir():
        print(f"generating {args.skills} skills into {path} ...", flush=True)
        _generator().generate(path, args.skills, args.seed)
    return path


def make_queries(index: SkillIndex, count: int, seed: int) -> list[str]:
    """Requests built from real skills' descriptions plus filler words, as users write them."""
    rng = random.Random(seed)
    docs = index.skills()
    filler = ["please", "can", "you", "help", "me", "with", "the", "my", "a", "for", "how", "do", "i"]
    queries = []
    for _ in range(count):
        words = tokenize(rng.choice(docs).description) or ["help"]
        picked = rng.sample(words, k=min(len(words), rng.randint(2, 6)))
        picked += rng.sample(filler, k=rng.randint(1, 4))
        rng.shuffle(picked)
        queries.append(" ".join(picked))
    return queries


def latencies(index: SkillIndex, queries: list[str], policy: SelectionPolicy) -> list[float]:
    times = []
    for query in queries:
        start = time.perf_counter()
        select_skills(index, query, policy)
        times.append((time.perf_counter() - start) * 1000)
    return times


def summary(times: list[float]) -> dict[str, float]:
    ordered = sorted(times)
    return {
        "p50_ms": statistics.median(ordered),
        "p95_ms": ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))],
        "max_ms": ordered[-1],
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--skills", type=int, default=20000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workspace", help="an existing workspace (default: generate one)")
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument(
        "--plain-sample", type=int, default=10, help="queries also run through the plain scorer"
    )
    parser.add_argument("--format", choices=["text", "json"], default="text")
    parser.add_argument("--scorers", default="lexical,bm25f,semantic,hybrid", help="comma-separated")
    parser.add_argument("--edits", type=int, default=50, help="edits timed for first-query-after-edit")
    args = parser.parse_args()

    root = workspace_for(args)
    # Skill vectors in the workspace's own cache, where the CLI and the server keep them: an
    # embedding scorer's build is timed cold the first time, from the cache after that (and
    # lsp_latency.py's server finds them there).
    from skills_lsp.core.files.config import Config
    from skills_lsp.core.routing.semantic import VECTOR_FILE, VECTORS
    from skills_lsp.core.rules.check import default_cache_dir

    VECTORS.attach(default_cache_dir([root], Config()) / VECTOR_FILE)
    start = time.perf_counter()
    index = load_workspace_index(root)
    build_s = time.perf_counter() - start
    start = time.perf_counter()
    scorer_for(index, "lexical")
    search_s = time.perf_counter() - start
    queries = make_queries(index, args.queries, args.seed)
    policies = {
        "default (top_k 1, min_score 1.0)": SelectionPolicy(),
        "top_k 10, min_score 0": SelectionPolicy(top_k=10, min_score=0.0),
    }
    results: dict[str, Any] = {
        "workspace": str(root),
        "documents": len(index),
        "index_build_s": build_s,
        "inverted_index_build_s": search_s,
        "queries": len(queries),
        "policies": {},
    }
    for label, policy in policies.items():
        latencies(index, queries, policy)  # warm-up pass: first-touch costs are not per-query latency
        results["policies"][label] = summary(latencies(index, queries, policy))

    sample = queries[: args.plain_sample]
    identical = True
    plain_times = []
    for query in sample:
        for policy in policies.values():
            fast = [(m.score, m.skill.id, str(m.skill.path)) for m in select_skills(index, query, policy)]
            start = time.perf_counter()
            plain = [
                (m.score, m.skill.id, str(m.skill.path)) for m in select_skills_plain(index, query, policy)
            ]
            plain_times.append((time.perf_counter() - start) * 1000)
            identical &= fast == plain
    results["plain_scorer"] = {"sample_queries": len(sample), "identical": identical, **summary(plain_times)}
    results["scorers"] = {
        name: scorer_figures(index, queries, name, args.edits)
        for name in args.scorers.split(",")
        if name and name != "lexical"
    }

    if args.format == "json":
        print(json.dumps(results, indent=2))
        return 0
    print(f"workspace: {root} ({len(index):,} documents)")
    print(f"load_workspace_index (discover + read + parse + index): {build_s:.2f} s")
    print(f"inverted index build:                                  {search_s:.2f} s")
    print(f"select_skills over {len(queries)} queries:")
    for label, figures in results["policies"].items():
        verdict = (
            "PASS" if figures["p50_ms"] < P50_TARGET_MS and figures["p95_ms"] < P95_TARGET_MS else "FAIL"
        )
        print(
            f"  {label:<34} p50 {figures['p50_ms']:.3f} ms  p95 {figures['p95_ms']:.3f} ms  "
            f"max {figures['max_ms']:.3f} ms  {verdict} "
            f"(targets p50 < {P50_TARGET_MS} ms, p95 < {P95_TARGET_MS} ms)"
        )
    plain = results["plain_scorer"]
    print(
        f"plain scorer (the crate's algorithm) on {plain['sample_queries']} queries x 2 policies: "
        f"p50 {plain['p50_ms']:.0f} ms; results identical: {'yes' if identical else 'NO'}"
    )
    for name, figures in results["scorers"].items():
        if "skipped" in figures:
            print(f"{name}: skipped ({figures['skipped']})")
            continue
        target = SCORER_P50_TARGET_MS[name]
        print(f"{name}: build {figures['build_s']:.2f} s")
        for label in ("default policy", "top_k 10, min_score 0", "first query after an edit"):
            f = figures[label]
            verdict = "PASS" if f["p50_ms"] < target else "FAIL"
            print(
                f"  {label:<34} p50 {f['p50_ms']:.3f} ms  p95 {f['p95_ms']:.3f} ms  max {f['max_ms']:.3f} ms"
                f"  {verdict} (target p50 < {target:g} ms)"
            )
    return 0


def scorer_figures(index: SkillIndex, queries: list[str], name: str, edits: int) -> dict[str, Any]:
    """Build time and latencies of one of the scorers beside the crate's."""
    from dataclasses import replace

    from skills_lsp.core.routing.scorer import SCORERS
    from skills_lsp.core.routing.semantic import VECTORS, ScorerUnavailable, semantic_for

    default = SelectionPolicy(scorer=name)  # type: ignore[arg-type]
    try:
        start = time.perf_counter()
        select_skills(index, "warm up", default)
        build_s = time.perf_counter() - start
    except ScorerUnavailable as error:
        return {"skipped": str(error)}
    figures: dict[str, Any] = {"build_s": build_s}
    VECTORS.flush()  # a later run (or lsp_latency.py on this workspace) starts warm
    for label, policy in (
        ("default policy", default),
        ("top_k 10, min_score 0", SelectionPolicy(top_k=10, min_score=0.0, scorer=default.scorer)),
    ):
        latencies(index, queries, policy)
        if SCORERS[name].extra:  # every timed request is embedded, as a new request would be
            semantic_for(index).forget_queries()
        figures[label] = summary(latencies(index, queries, policy))
    # An edit: the same document upserted again as a new object (what a keystroke does).
    docs = index.skills()
    after_edit = []
    for i in range(edits):
        doc = docs[i * 7919 % len(docs)]
        index.upsert(replace(doc, body=doc.body + " "))
        start = time.perf_counter()
        if SCORERS[name].extra:
            semantic_for(index).forget_queries()
        select_skills(index, queries[i % len(queries)], default)
        after_edit.append((time.perf_counter() - start) * 1000)
    figures["first query after an edit"] = summary(after_edit)
    return figures


if __name__ == "__main__":
    raise SystemExit(main())
