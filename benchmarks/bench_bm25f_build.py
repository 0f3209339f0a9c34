#!/usr/bin/env python3
"""Time the bm25f bulk build on any tree, this checkout against another one, in the same run.

Usage::

    python benchmarks/bench_bm25f_build.py --workspace DIR [--baseline OTHER_CHECKOUT] [--repeats 3]

Each run is a fresh process (``--child``) that loads the tree's skill index through the persistent
store (the store is filled once, untimed, in a cache folder of its own), reads every body, then
times ``Bm25fSearch(index)`` with no cache folder: the bulk build itself, never a saved one. It
reports the build's wall seconds, its CPU seconds (its own and those of the processes it forked,
``children_cpu_s`` apart), the one-minute load average when it started, and how much it raised
this process's peak RSS (``VmHWM``) over the loaded documents. ``--jobs N`` sets how many
processes this checkout's build may use (``Bm25fSearch(index, jobs=N)``; the baseline's build
keeps its own default). With ``--baseline`` the two checkouts alternate (baseline, this one,
baseline, ...), so that both see the same load on a shared machine; each one's postings are
summarised by a digest (vocabulary and its order, postings, lengths), and the digests must agree.
Target (issue 14): 2 s at 15,000 skills. Prints medians and ranges; exits 1 when the digests differ.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
TARGET_S = 2.0


def _memory() -> dict[str, int]:
    """VmHWM and VmRSS of this process, in KiB."""
    found: dict[str, int] = {}
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith(("VmHWM", "VmRSS")):
                found[line.split(":")[0]] = int(line.split()[1])
    return found


def child(workspace: Path, cache: Path, jobs: int | None) -> dict[str, Any]:
    """One timed build in this process (the checkout on sys.path is the one measured)."""
    import numpy as np

    from skills_lsp.core.index.store import load_cached_workspace_index
    from skills_lsp.core.routing.bm25f import Bm25fSearch

    index = load_cached_workspace_index(workspace, cache_dir=cache)
    index.cache_dir = index.frames = None  # build, never load saved postings
    for doc in index:
        _ = doc.body
    before = _memory()
    load = os.getloadavg()[0]
    times, wall = os.times(), time.perf_counter()
    search = Bm25fSearch(index) if jobs is None else Bm25fSearch(index, jobs=jobs)
    done, wall = os.times(), time.perf_counter() - wall
    after = _memory()
    own = done.user + done.system - times.user - times.system
    children = done.children_user + done.children_system - times.children_user - times.children_system
    digest = hashlib.sha256()
    for word, row in sorted(search._vocabulary.items()):
        start, end = int(search._indptr[row]), int(search._indptr[row + 1])
        digest.update(word.encode("utf-8", "surrogatepass") + b"\0")
        digest.update(np.ascontiguousarray(search._base_slots[start:end]).tobytes())
        digest.update(np.ascontiguousarray(search._base_counts[:, start:end]).tobytes())
    for lengths in search._lengths:
        digest.update(bytes(lengths))
    digest.update("\0".join(search._vocabulary).encode("utf-8", "surrogatepass"))  # its order too
    return {
        "skills": len(index),
        "cpu_s": round(own + children, 3),
        "children_cpu_s": round(children, 3),
        "wall_s": round(wall, 3),
        "load_1min": round(load, 2),
        "peak_rss_rise_mib": round((after["VmHWM"] - before["VmRSS"]) / 1024, 1),
        "digest": digest.hexdigest(),
    }


def run(checkout: Path, workspace: Path, cache: Path, jobs: int | None = None) -> dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=str(checkout))
    command = [sys.executable, str(Path(__file__).resolve()), "--child", "--workspace", str(workspace)]
    if jobs is not None:
        command += ["--jobs", str(jobs)]
    done = subprocess.run([*command, "--cache", str(cache)], env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"the run with {checkout} failed:\n{done.stderr}")
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"runs": len(runs), "skills": runs[0]["skills"]}
    for key in ("cpu_s", "children_cpu_s", "wall_s", "peak_rss_rise_mib", "load_1min"):
        values = [r[key] for r in runs]
        out[key] = {"median": statistics.median(values), "min": min(values), "max": max(values)}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Time the bm25f bulk build, against a baseline checkout.")
    parser.add_argument("--workspace", type=Path, required=True, help="the tree to index")
    parser.add_argument("--baseline", type=Path, help="another checkout of skills-lsp to compare with")
    parser.add_argument("--repeats", type=int, default=3, help="timed builds of each checkout (3)")
    parser.add_argument(
        "--jobs", type=int, help="processes this checkout's build may use (default: its own default)"
    )
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--cache", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.workspace, args.cache, args.jobs)))
        return 0
    checkouts = {"this checkout": REPO}
    if args.baseline is not None:
        checkouts = {"baseline": args.baseline.resolve(), **checkouts}
    results: dict[str, list[dict[str, Any]]] = {name: [] for name in checkouts}
    with tempfile.TemporaryDirectory(prefix="bench-bm25f-") as caches:
        for number in range(args.repeats):
            for name, checkout in checkouts.items():
                # One store per checkout: filled by its first run, before that run's timing starts.
                cache = Path(caches) / name.replace(" ", "-")
                jobs = args.jobs if name == "this checkout" else None  # a baseline may not take jobs
                result = run(checkout, args.workspace.resolve(), cache, jobs)
                print(f"{name}, run {number + 1}: {json.dumps(result)}", file=sys.stderr)
                results[name].append(result)
    report = {name: summary(runs) for name, runs in results.items()}
    print(json.dumps(report, indent=2))
    this, this_wall = (report["this checkout"][key]["median"] for key in ("cpu_s", "wall_s"))
    print(f"bm25f build, this checkout: {this_wall:.2f} s wall, {this:.2f} s CPU (medians)")
    print(f"target: {TARGET_S:.0f} s")
    if "baseline" in report:
        base, base_wall = (report["baseline"][key]["median"] for key in ("cpu_s", "wall_s"))
        print(f"baseline: {base_wall:.2f} s wall, {base:.2f} s CPU")
        print(f"this / baseline: {this_wall / base_wall:.2f} wall, {this / base:.2f} CPU")
        digests = {r["digest"] for runs in results.values() for r in runs}
        if len(digests) != 1:
            print("the two checkouts built different postings", file=sys.stderr)
            return 1
        print("identical postings, vocabulary and lengths in every run")
    return 0


if __name__ == "__main__":
    sys.exit(main())
