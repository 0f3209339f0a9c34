"""Time finding body references in process: pieces (`find_references`) against one parse.

Usage::

    python benchmarks/bench_references.py ROOT [--documents 1500] [--seed 7] [--repeat 3]

Reads `--documents` SKILL.md files drawn at random from ROOT (e.g. the public corpus, extracted
outside this repository), parses them once, then times, per document and in CPU time, the
references found by parsing only the pieces of each body that may hold one (what `check` does)
and by one markdown-it-py parse of the whole body (as before the cutting), and checks that both
give the same references. Exit status 1 if they differ.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from collections.abc import Sequence

from skills_lsp.core.parse.frontmatter import Document, parse_bytes
from skills_lsp.core.parse.markdown import _find_references


def load(root: str, count: int, seed: int) -> list[Document]:
    paths = sorted(
        os.path.join(folder, "SKILL.md") for folder, _, names in os.walk(root) if "SKILL.md" in names
    )
    chosen = random.Random(seed).sample(paths, min(count, len(paths)))
    docs = []
    for path in chosen:
        with open(path, "rb") as handle:
            docs.append(parse_bytes(handle.read()))
    return docs


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("root")
    parser.add_argument("--documents", type=int, default=1500)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    docs = load(args.root, args.documents, args.seed)
    for _ in range(args.repeat):
        figures = []
        results = []
        for split in (False, True):
            start = time.process_time()
            results.append([_find_references(doc, split=split) for doc in docs])
            figures.append((time.process_time() - start) / len(docs) * 1000)
        if results[0] != results[1]:
            print("the pieces and one parse found different references", file=sys.stderr)
            return 1
        whole, pieces = figures
        print(f"one parse {whole:.2f} ms/doc, pieces {pieces:.2f} ms/doc, ratio {pieces / whole:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
