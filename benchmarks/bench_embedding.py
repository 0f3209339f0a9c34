"""What the embedding model costs: skills embedded from cold, a warm start from the vector cache,
and one request's vector.

    python benchmarks/bench_embedding.py [--skills 500] [--corpus DIR] [--model minilm,wordllama]
                                         [--format text|json]

Skills come from `--corpus` (real SKILL.md files, the first N by a hash of their path, as in
bench_routing.py) or else from benchmarks/generate_workspace.py. For each model: the model's load
time, the time to embed every skill's routing text from cold (`semantic`'s build, nothing cached;
target for minilm: 500 skills in 10 s on the 2-core machine), the warm start (a new process's
cache read from the vectors file, then the same build: nothing embedded), and p50/p95 of one
request's vector (the part of a query that grows with the model, not with the pool). Each phase
runs in a child process so that caches and peak RSS are its own. Reports only; exits 0.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
COLD_TARGET_S = 10.0  # 500 skills, minilm


def _child(phase: str, model: str, skills: int, corpus: str, cache: str) -> dict[str, Any]:
    """One phase in a fresh interpreter: its figures as JSON on stdout."""
    code = f"""
import json, resource, statistics, sys, time
sys.path.insert(0, {str(REPO / "benchmarks")!r}); sys.path.insert(0, {str(REPO)!r})
from pathlib import Path
from bench_routing import corpus_skills
from skills_lsp.core.index.skill_index import SkillIndex, load_workspace_index
from skills_lsp.core.routing.embedding import load_model
from skills_lsp.core.routing.semantic import VECTORS, SemanticSearch
out = {{}}
if {corpus!r}:
    docs = corpus_skills(Path({corpus!r}), {skills}, set())
else:
    import generate_workspace, tempfile
    target = Path(tempfile.mkdtemp()) / "ws"
    generate_workspace.generate(target, {skills} + {skills} // 10 + 20, 3)
    docs = [d for d in load_workspace_index(target) if d.kind.value != "convention"][: {skills}]
start = time.perf_counter(); model = load_model({model!r}); out["load_s"] = time.perf_counter() - start
if {phase!r} == "warm":
    start = time.perf_counter(); VECTORS.attach(Path({cache!r}))
    out["cache_read_s"] = time.perf_counter() - start
start = time.perf_counter(); search = SemanticSearch(SkillIndex(docs), model)
out["build_s"] = time.perf_counter() - start
out["embedded"] = VECTORS.misses
if {phase!r} == "cold":
    VECTORS.attach(Path({cache!r})); VECTORS.flush()
    requests = [d.description[:120] for d in docs[:200]]
    times = []
    for r in requests:
        search.forget_queries()
        t = time.perf_counter(); search.query_vector(r); times.append(1000 * (time.perf_counter() - t))
    times.sort()
    out["query_vector_p50_ms"] = statistics.median(times)
    out["query_vector_p95_ms"] = times[int(0.95 * (len(times) - 1))]
out["skills"] = len(docs)
out["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
"""
    env = {**os.environ, "SKILLS_LSP_EMBEDDING_MODEL": model}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "failed"}
    figures: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--skills", type=int, default=500)
    parser.add_argument("--corpus", default="", help="a folder of real SKILL.md files")
    parser.add_argument("--model", default="minilm,wordllama")
    parser.add_argument("--format", choices=["text", "json"], default="text")
    args = parser.parse_args()
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="skills-lsp-embed-") as scratch:
        for model in [m for m in args.model.split(",") if m]:
            cache = str(Path(scratch) / f"{model}.npz")
            cold = _child("cold", model, args.skills, args.corpus, cache)
            warm = _child("warm", model, args.skills, args.corpus, cache)
            results[model] = {"cold": cold, "warm": warm}
    if args.format == "json":
        print(json.dumps(results, indent=2))
        return 0
    source = f"real skills from {args.corpus}" if args.corpus else "synthetic skills"
    print(f"{args.skills} {source}, {os.cpu_count()} CPUs\n")
    print(
        f"{'model':<10} {'load s':>7} {'cold build s':>13} {'warm build s':>13} {'cache read s':>13} "
        f"{'query p50 ms':>13} {'p95 ms':>7} {'RSS MiB':>8}  target"
    )
    for model, r in results.items():
        cold, warm = r["cold"], r["warm"]
        if "error" in cold or "error" in warm:
            print(f"{model:<10} skipped: {cold.get('error') or warm.get('error')}")
            continue
        verdict = ""
        if model == "minilm":
            scaled = cold["build_s"] * 500 / max(cold["skills"], 1)
            verdict = f"500 cold <= {COLD_TARGET_S:g} s: {'pass' if scaled <= COLD_TARGET_S else 'FAIL'}"
        print(
            f"{model:<10} {cold['load_s']:>7.2f} {cold['build_s']:>13.2f} {warm['build_s']:>13.3f} "
            f"{warm['cache_read_s']:>13.3f} {cold['query_vector_p50_ms']:>13.2f} "
            f"{cold['query_vector_p95_ms']:>7.2f} {cold['peak_rss_mib']:>8.0f}  {verdict}"
        )
        if warm["embedded"]:
            print(f"  note: the warm start embedded {warm['embedded']} texts (expected none)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
