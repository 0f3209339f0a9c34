#!/usr/bin/env python3
"""Write a cleaned copy of a CSV file and report every change.

Usage: clean_csv.py INPUT.csv OUTPUT.csv [--trim] [--nulls] [--dedupe]
                    [--dates COL1,COL2] [--day-first] [--delimiter X]

The output is UTF-8, comma-delimited, with minimal quoting. Values that cannot be parsed
as dates are left unchanged and listed in the report.
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import sys
from collections import Counter
from datetime import datetime

NULL_TOKENS = {"na", "n/a", "null", "none", "nil", "-", "?", "#n/a"}
UNAMBIGUOUS_FORMATS = [
    "%Y-%m-%d",
    "%Y/%m/%d",
    "%Y%m%d",
    "%d.%m.%Y",
    "%d %B %Y",
    "%d %b %Y",
    "%B %d, %Y",
    "%b %d, %Y",
    "%B %d %Y",
    "%b %d %Y",
    "%Y-%m-%dT%H:%M:%S",
    "%Y-%m-%d %H:%M:%S",
    "%Y-%m-%d %H:%M",
]
DAY_FIRST = ["%d/%m/%Y", "%d-%m-%Y", "%d/%m/%y"]
MONTH_FIRST = ["%m/%d/%Y", "%m-%d-%Y", "%m/%d/%y"]


def read_text(path: str) -> str:
    with open(path, "rb") as fh:
        raw = fh.read()
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def parse_date(value: str, day_first: bool) -> str | None:
    formats = UNAMBIGUOUS_FORMATS + (DAY_FIRST if day_first else MONTH_FIRST)
    for fmt in formats:
        try:
            return datetime.strptime(value, fmt).date().isoformat()
        except ValueError:
            continue
    return None


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("input")
    parser.add_argument("output")
    parser.add_argument("--trim", action="store_true")
    parser.add_argument("--nulls", action="store_true")
    parser.add_argument("--dedupe", action="store_true")
    parser.add_argument("--dates", default="", help="comma-separated column names")
    parser.add_argument("--day-first", action="store_true")
    parser.add_argument("--delimiter")
    args = parser.parse_args(argv[1:])

    if os.path.abspath(args.input) == os.path.abspath(args.output):
        print("refusing to overwrite the input; choose another output file", file=sys.stderr)
        return 2

    text = read_text(args.input)
    delimiter = args.delimiter
    if not delimiter:
        try:
            delimiter = csv.Sniffer().sniff(text[:65536], delimiters=",;\t|").delimiter
        except csv.Error:
            delimiter = ","
    rows = list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter))
    if not rows:
        print("input is empty", file=sys.stderr)
        return 1
    header = [h.strip() for h in rows[0]] if args.trim else rows[0]
    date_columns = [c.strip() for c in args.dates.split(",") if c.strip()]
    missing = [c for c in date_columns if c not in header]
    if missing:
        print(f"unknown date column(s): {', '.join(missing)}; headers are {header}", file=sys.stderr)
        return 2
    date_index = {header.index(c) for c in date_columns}

    changes: Counter[str] = Counter()
    duplicates = 0
    unparsed: list[str] = []
    seen: set[tuple[str, ...]] = set()
    out_rows = []
    for line_no, row in enumerate(rows[1:], start=2):
        new_row = []
        row_changes: list[str] = []
        for i, value in enumerate(row):
            original = value
            if args.trim:
                value = value.strip()
            if args.nulls and value.strip().lower() in NULL_TOKENS:
                value = ""
            if i in date_index and value:
                parsed = parse_date(value.strip(), args.day_first)
                if parsed is None:
                    unparsed.append(f"line {line_no}, {header[i]!r}: {value!r}")
                else:
                    value = parsed
            if value != original:
                row_changes.append(header[i] if i < len(header) else f"extra field {i}")
            new_row.append(value)
        key = tuple(new_row)
        if args.dedupe and key in seen:
            duplicates += 1
            continue
        seen.add(key)
        changes.update(row_changes)
        out_rows.append(new_row)

    with open(args.output, "w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(out_rows)

    print(f"wrote {len(out_rows)} rows to {args.output} (input had {len(rows) - 1})")
    for column, count in changes.most_common():
        print(f"  {column}: {count} value(s) changed")
    if duplicates:
        print(f"  {duplicates} duplicate row(s) removed")
    if unparsed:
        print(f"{len(unparsed)} date value(s) could not be parsed and were left unchanged:")
        for item in unparsed[:50]:
            print(f"  {item}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
