"""Warm whole processes of two checkouts, interleaved, over one filled cache: re-check and select.

Usage::

    python benchmarks/bench_warm.py ROOT --before DIR --after DIR --cache-home DIR [--repeat 5]
        [--runs re-check,select lexical,select bm25f,select hybrid] [--query "..."]

DIR of `--before` and `--after` are source trees (e.g. two commits unpacked with `git archive`),
put first on PYTHONPATH. `--cache-home` is the XDG_CACHE_HOME both use: fill it first (a `check`
and a `select` per scorer, with either tree; the index and the check cache have the same format),
so every run here is warm (each kind is run once untimed first, in this script's working folder).
Each repeat runs every kind, before then after, and checks that their
outputs are byte-identical. Every figure is one whole process (spawn to reaping; CPU is user +
system from `os.wait4`, peak RSS from it too): median and range per kind and tree.

* ``re-check``: ``check ROOT --format json --exit-zero`` (as bench_corpus.py's re-check)
* ``select S``: ``select QUERY --root ROOT --scorer S --format json``

Exit status: 0 whatever the timings; 1 if a run fails or two outputs differ.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

DEFAULT_QUERY = "review a pull request and suggest fixes for failing tests"


def timed(command: list[str], env: dict[str, str], cwd: str) -> tuple[float, float, float, bytes]:
    """(wall s, CPU s, peak RSS MiB, stdout) of one process."""
    with tempfile.TemporaryFile() as out:
        start = time.perf_counter()
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.DEVNULL, env=env, cwd=cwd)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"failed: {' '.join(command)}")
        out.seek(0)
        return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, out.read()


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("root")
    parser.add_argument("--before", required=True)
    parser.add_argument("--after", required=True)
    parser.add_argument("--cache-home", required=True)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--runs", default="re-check,select lexical,select bm25f")
    parser.add_argument("--query", default=DEFAULT_QUERY)
    args = parser.parse_args()
    commands = {
        "re-check": ["check", args.root, "--format", "json", "--exit-zero"],
        **{
            f"select {s}": ["select", args.query, "--root", args.root, "--scorer", s, "--format", "json"]
            for s in ("lexical", "bm25f", "hybrid", "semantic")
        },
    }
    kinds = [k.strip() for k in args.runs.split(",")]
    rows: dict[tuple[str, str], list[tuple[float, float, float]]] = {}
    with tempfile.TemporaryDirectory() as cwd:
        for kind in kinds:  # once, untimed: what a run saves is keyed by its working folder too
            for tree in (args.before, args.after):
                env = dict(os.environ, PYTHONPATH=tree, XDG_CACHE_HOME=args.cache_home)
                timed([sys.executable, "-m", "skills_lsp", *commands[kind]], env, cwd)
        for _ in range(args.repeat):
            for kind in kinds:
                outputs = []
                for label, tree in (("before", args.before), ("after", args.after)):
                    env = dict(os.environ, PYTHONPATH=tree, XDG_CACHE_HOME=args.cache_home)
                    command = [sys.executable, "-m", "skills_lsp", *commands[kind]]
                    wall, cpu, rss, out = timed(command, env, cwd)
                    rows.setdefault((kind, label), []).append((wall, cpu, rss))
                    outputs.append(out)
                if outputs[0] != outputs[1]:
                    print(f"{kind}: before and after print different output", file=sys.stderr)
                    return 1
    print("| run | tree | wall median (s) | range (s) | CPU median (s) | range (s) | peak RSS (MiB) |")
    print("|---|---|---|---|---|---|---|")
    for (kind, label), timings in rows.items():
        walls, cpus = [t[0] for t in timings], [t[1] for t in timings]
        rss = max(t[2] for t in timings)
        print(
            f"| {kind} | {label} | {statistics.median(walls):.2f} | {min(walls):.2f}-{max(walls):.2f} | "
            f"{statistics.median(cpus):.2f} | {min(cpus):.2f}-{max(cpus):.2f} | {rss:.0f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
