"""Time `load_skill_index(ROOT)` (the crate's index: discovery, read, parse) in-process, for one or
more checkouts of skills_lsp, interleaved in each repeat so that a noisy neighbour slows them alike.

Usage::

    python benchmarks/bench_index_load.py ROOT [--repeat 5] [--label NAME=PYTHONPATH ...]

Each run is a fresh child process (`python -c`) that imports the package from its PYTHONPATH, then
times the call alone (wall and CPU of that process), so start-up and imports are left out, as in
the crate's own `load_skill_index` figure (docs/ref: 0.78 s on a 14,038-document tree). Prints the
median and range of each, and the ratio of CPU medians to the first label (`ratio`).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

CHILD = """
import json, sys, time
from skills_lsp.core.index.skill_index import load_skill_index
wall, cpu = time.perf_counter(), time.process_time()
index = load_skill_index(sys.argv[1])
print(json.dumps({"wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu, "docs": len(index)}))
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--label", action="append", default=[], help="NAME=PYTHONPATH (default: this checkout as `here`)"
    )
    args = parser.parse_args()
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    labels = [tuple(item.split("=", 1)) for item in args.label] or [("here", here)]
    runs: dict[str, list[dict[str, float]]] = {name: [] for name, _ in labels}
    for _ in range(args.repeat):
        for name, path in labels:
            env = dict(os.environ, PYTHONPATH=path)
            out = subprocess.run(
                [sys.executable, "-c", CHILD, args.root], env=env, check=True, capture_output=True, text=True
            )
            runs[name].append(json.loads(out.stdout))
    first = statistics.median(r["cpu"] for r in runs[labels[0][0]])
    header = (
        "run",
        "documents",
        "wall median (s)",
        "wall range (s)",
        "CPU median (s)",
        "CPU range (s)",
        "ratio",
    )
    print("| " + " | ".join(header) + " |")
    print("|---|---|---|---|---|---|---|")
    for name, _ in labels:
        rows = runs[name]
        wall = sorted(r["wall"] for r in rows)
        cpu = sorted(r["cpu"] for r in rows)
        cells = (
            name,
            f"{int(rows[0]['docs']):,}",
            f"{statistics.median(wall):.2f}",
            f"{wall[0]:.2f}-{wall[-1]:.2f}",
            f"{statistics.median(cpu):.2f}",
            f"{cpu[0]:.2f}-{cpu[-1]:.2f}",
            f"{statistics.median(cpu) / first:.2f}",
        )
        print("| " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
