#!/usr/bin/env python3
"""Diff the operations of two OpenAPI/Swagger JSON documents.

Usage: run.py OLD.json NEW.json

Prints one line per change, prefixed with BREAKING or ok:
  removed operations, added operations, newly deprecated operations,
  and parameters or request bodies that became required.
Exits 1 if any breaking change was found.
"""

from __future__ import annotations

import json
import sys

METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")


def operations(doc: dict) -> dict[tuple[str, str], dict]:
    ops = {}
    for path, item in (doc.get("paths") or {}).items():
        shared = item.get("parameters", [])
        for method in METHODS:
            if method in item:
                op = dict(item[method])
                op["parameters"] = shared + op.get("parameters", [])
                ops[(method.upper(), path)] = op
    return ops


def required_params(op: dict) -> set[str]:
    names = {
        f"{p.get('in', '?')}:{p.get('name', '?')}"
        for p in op.get("parameters", [])
        if isinstance(p, dict) and p.get("required")
    }
    if (op.get("requestBody") or {}).get("required"):
        names.add("body")
    return names


def diff(old: dict, new: dict) -> list[tuple[bool, str]]:
    before, after = operations(old), operations(new)
    changes: list[tuple[bool, str]] = []
    for key in sorted(before.keys() - after.keys()):
        changes.append((True, f"removed {key[0]} {key[1]}"))
    for key in sorted(after.keys() - before.keys()):
        changes.append((False, f"added {key[0]} {key[1]}"))
    for key in sorted(before.keys() & after.keys()):
        old_op, new_op = before[key], after[key]
        if new_op.get("deprecated") and not old_op.get("deprecated"):
            changes.append((False, f"deprecated {key[0]} {key[1]}"))
        for name in sorted(required_params(new_op) - required_params(old_op)):
            changes.append((True, f"{key[0]} {key[1]}: '{name}' is now required"))
    return changes


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    docs = []
    for path in argv[1:]:
        try:
            with open(path, encoding="utf-8") as fh:
                docs.append(json.load(fh))
        except (OSError, ValueError) as exc:
            print(f"cannot read {path}: {exc}", file=sys.stderr)
            return 2
    changes = diff(*docs)
    for breaking, text in changes:
        print(f"{'BREAKING' if breaking else 'ok':<8} {text}")
    if not changes:
        print("no operation-level changes")
    return 1 if any(breaking for breaking, _ in changes) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
