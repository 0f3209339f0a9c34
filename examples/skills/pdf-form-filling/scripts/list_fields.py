#!/usr/bin/env python3
"""List the interactive (AcroForm) fields of a PDF as JSON lines.

Usage: list_fields.py INPUT.pdf

Each output line is a JSON object: {"name", "type", "value", "options"}.
Exit status: 0 on success, 1 if the file has no form fields, 2 on usage or read errors.
"""

from __future__ import annotations

import json
import sys

try:
    from pypdf import PdfReader
except ImportError:  # pragma: no cover - depends on the environment
    sys.exit("pypdf is not installed; run: pip install pypdf")


def field_type(field: dict) -> str:
    ft = field.get("/FT")
    flags = int(field.get("/Ff", 0) or 0)
    if ft == "/Tx":
        return "text"
    if ft == "/Btn":
        if flags & (1 << 16):  # pushbutton
            return "button"
        if flags & (1 << 15):  # radio
            return "radio"
        return "checkbox"
    if ft == "/Ch":
        return "choice"
    if ft == "/Sig":
        return "signature"
    return "unknown"


def button_states(field: dict) -> list[str]:
    """The 'on' appearance-state names of a checkbox or radio group.

    pypdf collects the appearance states of a button's widgets under "/_States_".
    """
    states = {str(state).lstrip("/") for state in field.get("/_States_", []) or []}
    states.discard("Off")
    return sorted(states)


def choice_options(field: dict) -> list[str]:
    options = []
    for opt in field.get("/Opt", []) or []:
        opt = opt.get_object() if hasattr(opt, "get_object") else opt
        # An option is either a string or an [export value, display text] pair.
        options.append(str(opt[0] if isinstance(opt, list) else opt))
    return options


def describe(reader: PdfReader) -> list[dict]:
    fields = reader.get_fields() or {}
    out = []
    for name, field in sorted(fields.items()):
        kind = field_type(field)
        if kind == "button":
            continue
        value = field.get("/V")
        value = None if value is None else str(value).lstrip("/")
        options: list[str] = []
        if kind in ("checkbox", "radio"):
            options = button_states(field)
        elif kind == "choice":
            options = choice_options(field)
        out.append({"name": name, "type": kind, "value": value, "options": options})
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    try:
        reader = PdfReader(argv[1])
    except Exception as exc:  # report any read failure plainly
        print(f"cannot read {argv[1]}: {exc}", file=sys.stderr)
        return 2
    root = reader.trailer["/Root"]
    acroform = root.get("/AcroForm")
    if acroform is not None and "/XFA" in acroform.get_object():
        print("warning: this PDF also contains an XFA form; only AcroForm fields are listed", file=sys.stderr)
    fields = describe(reader)
    if not fields:
        print("no form fields found", file=sys.stderr)
        return 1
    for field in fields:
        print(json.dumps(field, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
