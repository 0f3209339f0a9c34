"""`budget`: the skill listing a runtime builds, and the skills it cuts or drops. A group of its
own: its parser needs the runtime table (the rules), which `select` and `index` do not import."""

from __future__ import annotations

import argparse
import json
import os
from typing import TYPE_CHECKING, TextIO

from skills_lsp.cli.common import UsageError, add_root, display, load_index
from skills_lsp.core.rules.listing import RUNTIMES

if TYPE_CHECKING:
    from skills_lsp.cli.common import Subparsers


def register(sub: Subparsers) -> None:
    budget = sub.add_parser(
        "budget", help="render the skill listing a runtime builds and flag each skill it cuts or drops"
    )
    add_root(budget)
    budget.add_argument("--runtime", required=True, choices=tuple(RUNTIMES))
    budget.add_argument(
        "--context-window",
        type=int,
        metavar="TOKENS",
        help="the model's context window in tokens (default: unknown, so the runtime's fallback budget)",
    )
    budget.add_argument(
        "--catalog", action="store_true", help="also print the listing as the runtime writes it"
    )
    budget.add_argument("--format", choices=["text", "json"], default="text")
    budget.set_defaults(func=cmd_budget)


def cmd_budget(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Exit 1 when the runtime cuts any skill, so CI can hold the listing to its budget."""
    from skills_lsp.core.engine.catalog import render_listing, runtime_listing

    if args.context_window is not None and args.context_window <= 0:
        raise UsageError("--context-window takes a number of tokens above 0, e.g. 200000")
    runtime = RUNTIMES[args.runtime]
    listing = runtime_listing(load_index(args), runtime, args.context_window, os.environ)
    if args.format == "json":
        payload = {
            "runtime": runtime.name,
            "budget": listing.budget,
            "needed": listing.needed,
            "used": listing.used,
            "docs": runtime.docs,
            "skills": [
                {
                    "name": p.skill.name,
                    "path": display(p.skill.path),
                    "fate": p.fate.value,
                    "kept": p.kept,
                    "length": len(p.skill.description),
                }
                for p in listing.placements
            ],
        }
        if args.catalog:
            payload["catalog"] = render_listing(listing)
        out.write(json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
        return 1 if listing.cut else 0
    out.write(f"{listing.summary()}\n({runtime.docs})\n")
    for placement in listing.cut:
        out.write(f"{display(placement.skill.path)}: {placement.skill.name}: {placement.describe()}\n")
    if not listing.cut:
        out.write("Every skill is listed with its whole description.\n")
    if args.catalog:
        out.write("\n" + render_listing(listing))
    return 1 if listing.cut else 0
