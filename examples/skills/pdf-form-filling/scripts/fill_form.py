#!/usr/bin/env python3
"""Fill a PDF form from a JSON field map, then verify the written file.

Usage: fill_form.py INPUT.pdf FIELD_MAP.json OUTPUT.pdf

FIELD_MAP.json is an object of {field name: value}. Checkboxes take true/false,
radio groups and choice fields take one of their options, text fields take strings.
Keys starting with "_" are treated as comments and ignored.
The input file is never modified. Exit status: 0 ok, 1 invalid map or mismatch, 2 usage/IO.
"""

from __future__ import annotations

import json
import os
import sys

try:
    from pypdf import PdfReader, PdfWriter
except ImportError:  # pragma: no cover - depends on the environment
    sys.exit("pypdf is not installed; run: pip install pypdf")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from list_fields import describe


def check_map(fields: dict[str, dict], mapping: dict[str, object]) -> list[str]:
    problems = []
    for name, value in mapping.items():
        field = fields.get(name)
        if field is None:
            problems.append(f"unknown field {name!r}")
            continue
        kind, options = field["type"], field["options"]
        if kind == "signature":
            problems.append(f"{name!r} is a signature field; it is never filled")
        elif kind == "checkbox" and not isinstance(value, bool):
            problems.append(f"{name!r} is a checkbox; use true or false, not {value!r}")
        elif kind in ("radio", "choice") and options and str(value) not in options:
            problems.append(f"{name!r} must be one of {options}, not {value!r}")
        elif kind == "text" and not isinstance(value, (str, int, float)):
            problems.append(f"{name!r} is a text field; got {type(value).__name__}")
    return problems


def to_pdf_value(field: dict, value: object) -> str:
    if field["type"] == "checkbox":
        on_state = field["options"][0] if field["options"] else "Yes"
        return f"/{on_state}" if value else "/Off"
    if field["type"] == "radio":
        return f"/{value}"
    return str(value)


def main(argv: list[str]) -> int:
    if len(argv) != 4:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    src, map_path, dst = argv[1:]
    if os.path.abspath(src) == os.path.abspath(dst):
        print("refusing to overwrite the input file; choose another output path", file=sys.stderr)
        return 2
    try:
        with open(map_path, encoding="utf-8") as fh:
            mapping = {k: v for k, v in json.load(fh).items() if not k.startswith("_")}
        reader = PdfReader(src)
    except (OSError, ValueError) as exc:
        print(f"cannot read input: {exc}", file=sys.stderr)
        return 2

    fields = {f["name"]: f for f in describe(reader)}
    problems = check_map(fields, mapping)
    if problems:
        print("field map has problems:", file=sys.stderr)
        for problem in problems:
            print(f"  - {problem}", file=sys.stderr)
        return 1

    writer = PdfWriter(clone_from=reader)
    values = {name: to_pdf_value(fields[name], value) for name, value in mapping.items()}
    for page in writer.pages:
        writer.update_page_form_field_values(page, values, auto_regenerate=False)
    writer.set_need_appearances_writer(True)
    with open(dst, "wb") as fh:
        writer.write(fh)

    # Verify by reading the written file back.
    written = {f["name"]: f for f in describe(PdfReader(dst))}
    mismatches = []
    for name, expected in values.items():
        got = written.get(name, {}).get("value")
        want = str(expected).lstrip("/")
        if (got or "") != want:
            mismatches.append(f"{name!r}: expected {want!r}, found {got!r}")
    if mismatches:
        print("verification failed:", file=sys.stderr)
        for line in mismatches:
            print(f"  - {line}", file=sys.stderr)
        return 1
    print(f"verified {len(values)} fields in {dst}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
