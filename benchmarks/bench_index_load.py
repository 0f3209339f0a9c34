"""Time `load_skill_index(ROOT)` (the crate's index: discovery, read, parse) in-process, for one or
more checkouts of skills_lsp, interleaved in each repeat so that a noisy neighbour slows them alike.

Usage::

    python benchmarks/bench_index_load.py ROOT [--repeat 5] [--label NAME=PYTHONPATH ...] [--jobs 1,2]

Each run is a fresh child process (`python -c`) that imports the package from its PYTHONPATH, then
times the call alone (wall, and CPU of that process and the processes it forked), so start-up and
imports are left out, as in the crate's own `load_skill_index` figure (0.78 s on a 14,038-document
tree, ../shared/reference/performance.md; the crate is not on this machine). Prints the median and
range of each, the ratio of CPU medians to the first run, and the wall median against the crate's.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

CHILD = """
import inspect, json, os, sys, time
from skills_lsp.core.index.skill_index import load_skill_index
jobs = json.loads(sys.argv[2])
if jobs is not None and "jobs" not in inspect.signature(load_skill_index).parameters:
    print(json.dumps(None))
    sys.exit()
kwargs = {} if jobs is None else {"jobs": jobs}
before, wall = os.times(), time.perf_counter()
index = load_skill_index(sys.argv[1], **kwargs)
wall, after = time.perf_counter() - wall, os.times()
kinds = ("user", "system", "children_user", "children_system")
cpu = sum(getattr(after, k) - getattr(before, k) for k in kinds)
print(json.dumps({"wall": wall, "cpu": cpu, "docs": len(index)}))
"""
CRATE_SECONDS = (
    0.78  # the crate's load_skill_index on a 14,038-document tree (../shared/reference/performance.md)
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--label", action="append", default=[], help="NAME=PYTHONPATH (default: this checkout as `here`)"
    )
    parser.add_argument(
        "--jobs",
        default="",
        help="comma-separated `jobs` values to run each checkout with (those without the parameter run once, "
        "with their default); empty: each checkout's default",
    )
    args = parser.parse_args()
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    labels = [tuple(item.split("=", 1)) for item in args.label] or [("here", here)]
    choices: list[int | None] = [int(j) for j in args.jobs.split(",") if j] or [None]
    runs: dict[str, list[dict[str, float]]] = {}
    for _ in range(args.repeat):
        for name, path in labels:
            env = dict(os.environ, PYTHONPATH=path)
            # run from the checkout: `python -c` puts the working directory first on sys.path
            for jobs in choices:
                out = subprocess.run(
                    [sys.executable, "-c", CHILD, args.root, json.dumps(jobs)],
                    env=env,
                    cwd=path,
                    check=True,
                    capture_output=True,
                    text=True,
                )
                result = json.loads(out.stdout)
                if result is None:  # a checkout without `jobs`: its default, once
                    if jobs != choices[0]:
                        continue
                    out = subprocess.run(
                        [sys.executable, "-c", CHILD, args.root, "null"],
                        env=env,
                        cwd=path,
                        check=True,
                        capture_output=True,
                        text=True,
                    )
                    result, key = json.loads(out.stdout), name
                else:
                    key = name if jobs is None else f"{name}, jobs {jobs}"
                runs.setdefault(key, []).append(result)
    first = statistics.median(r["cpu"] for r in next(iter(runs.values())))
    header = (
        "run",
        "documents",
        "wall median (s)",
        "wall range (s)",
        "CPU median, children included (s)",
        "CPU range (s)",
        "CPU ratio",
        f"wall x crate ({CRATE_SECONDS} s)",
    )
    print("| " + " | ".join(header) + " |")
    print("|---|---|---|---|---|---|---|---|")
    for name, rows in runs.items():
        wall = sorted(r["wall"] for r in rows)
        cpu = sorted(r["cpu"] for r in rows)
        cells = (
            name,
            f"{int(rows[0]['docs']):,}",
            f"{statistics.median(wall):.2f}",
            f"{wall[0]:.2f}-{wall[-1]:.2f}",
            f"{statistics.median(cpu):.2f}",
            f"{cpu[0]:.2f}-{cpu[-1]:.2f}",
            f"{statistics.median(cpu) / first:.2f}" if first else "n/a",  # a tiny tree: no CPU tick
            f"{statistics.median(wall) / CRATE_SECONDS:.1f}",
        )
        print("| " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
