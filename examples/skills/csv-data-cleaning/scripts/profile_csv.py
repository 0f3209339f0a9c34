#!/usr/bin/env python3
"""Profile a CSV file: encoding, delimiter, ragged rows and per-column statistics.

Usage: profile_csv.py FILE.csv [--delimiter X] [--samples N]
"""

from __future__ import annotations

import argparse
import csv
import io
import re
import sys
from collections import Counter

NULL_TOKENS = {"na", "n/a", "null", "none", "nil", "-", "?", "#n/a"}
INT_RE = re.compile(r"^[+-]?\d+$")
DEC_RE = re.compile(r"^[+-]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?$")
BOOL_VALUES = {"true", "false", "yes", "no", "y", "n", "t", "f"}
DATE_PATTERNS = [
    (re.compile(r"^\d{4}-\d{2}-\d{2}$"), "YYYY-MM-DD"),
    (re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2})?"), "YYYY-MM-DD hh:mm (timestamp)"),
    (re.compile(r"^\d{4}/\d{2}/\d{2}$"), "YYYY/MM/DD"),
    (re.compile(r"^\d{1,2}/\d{1,2}/\d{4}$"), "NN/NN/YYYY (day or month first?)"),
    (re.compile(r"^\d{1,2}\.\d{1,2}\.\d{4}$"), "DD.MM.YYYY"),
    (re.compile(r"^\d{1,2}-\d{1,2}-\d{4}$"), "NN-NN-YYYY (day or month first?)"),
    (re.compile(r"^\d{1,2} [A-Za-z]{3,9} \d{4}$"), "D Month YYYY"),
    (re.compile(r"^[A-Za-z]{3,9} \d{1,2},? \d{4}$"), "Month D, YYYY"),
]


def read_text(path: str) -> tuple[str, str]:
    with open(path, "rb") as fh:
        raw = fh.read()
    if raw.startswith(b"\xef\xbb\xbf"):
        return raw[3:].decode("utf-8"), "utf-8 with BOM"
    try:
        return raw.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        return raw.decode("latin-1"), "not UTF-8; decoded as latin-1 (check accented characters)"


def date_format(value: str) -> str | None:
    for pattern, label in DATE_PATTERNS:
        if pattern.match(value):
            return label
    return None


def infer_type(values: list[str]) -> str:
    if not values:
        return "empty"
    if all(INT_RE.match(v) for v in values):
        return "integer"
    if all(DEC_RE.match(v) for v in values):
        return "decimal"
    if all(v.lower() in BOOL_VALUES for v in values):
        return "boolean"
    if all(date_format(v) for v in values):
        return "date"
    return "text"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file")
    parser.add_argument("--delimiter")
    parser.add_argument("--samples", type=int, default=3)
    args = parser.parse_args(argv[1:])

    text, encoding = read_text(args.file)
    if args.delimiter:
        delimiter = args.delimiter
    else:
        try:
            delimiter = csv.Sniffer().sniff(text[:65536], delimiters=",;\t|").delimiter
        except csv.Error:
            delimiter = ","
    rows = list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter))
    if not rows:
        print("file is empty")
        return 1
    header, data = rows[0], rows[1:]

    print(f"file:      {args.file}")
    print(f"encoding:  {encoding}")
    print(f"delimiter: {delimiter!r}")
    print(f"rows:      {len(data)} (plus header)")
    ragged = [(i + 2, len(r)) for i, r in enumerate(data) if len(r) != len(header)]
    if ragged:
        shown = ", ".join(f"line {ln} has {n}" for ln, n in ragged[:10])
        print(f"ragged:    {len(ragged)} rows differ from the header's {len(header)} fields: {shown}")
    dupes = sum(c - 1 for c in Counter(tuple(r) for r in data).values() if c > 1)
    print(f"duplicates: {dupes} exact duplicate rows")
    lowered = Counter(h.strip().lower() for h in header)
    for name, count in lowered.items():
        if count > 1:
            print(f"warning:   {count} headers are the same apart from case or spaces: {name!r}")
    print()

    for index, name in enumerate(header):
        column = [r[index] if index < len(r) else "" for r in data]
        empty = sum(1 for v in column if v == "")
        null_like = sum(1 for v in column if v.strip().lower() in NULL_TOKENS)
        padded = sum(1 for v in column if v != v.strip())
        present = [v.strip() for v in column if v.strip() and v.strip().lower() not in NULL_TOKENS]
        kind = infer_type(present)
        print(f"[{index}] {name!r}: {kind}")
        print(
            f"    empty={empty} null-like={null_like} distinct={len(set(present))} "
            f"padded-with-whitespace={padded}"
        )
        if kind in ("date", "text"):
            formats = Counter(f for f in (date_format(v) for v in present) if f)
            if formats:
                print("    date formats: " + ", ".join(f"{f} x{n}" for f, n in formats.most_common()))
        samples = list(dict.fromkeys(present))[: args.samples]
        if samples:
            print("    samples: " + ", ".join(repr(s) for s in samples))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
