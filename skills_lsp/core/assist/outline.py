"""The outline of a skill file (frontmatter keys, Markdown headings nested by level) and what its
catalog entry costs in every conversation."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from skills_lsp.core.model import Position, Range
from skills_lsp.core.parse.frontmatter import Document

CHARS_PER_TOKEN = 4
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


@dataclass
class Symbol:
    name: str
    kind: Literal["frontmatter", "key", "heading"]
    range: Range
    selection: Range
    detail: str = ""
    children: list[Symbol] = field(default_factory=list)


def outline(doc: Document) -> list[Symbol]:
    """Frontmatter keys (under one `frontmatter` symbol) and Markdown headings, nested by level."""
    symbols: list[Symbol] = []
    if doc.open_line is not None:
        block = doc.frontmatter_range
        keys = [
            Symbol(
                p.name,
                "key",
                p.range,
                p.key.range,
                str(p.value.value)[:60] if p.value.is_scalar else p.value.kind,
            )
            for p in doc.pairs
        ]
        symbols.append(
            Symbol("frontmatter", "frontmatter", block, doc.line_range(block.start.line), children=keys)
        )
    stack: list[tuple[int, Symbol]] = []
    fence = False
    for number in range(doc.body_start_line, len(doc.lines)):
        text = doc.lines[number]
        if text.lstrip().startswith(("```", "~~~")):
            fence = not fence
            continue
        match = None if fence else _HEADING.match(text)
        if match is None or not match.group(2):
            continue
        level = len(match.group(1))
        rng = doc.line_range(number)
        symbol = Symbol(match.group(2), "heading", rng, rng)
        while stack and stack[-1][0] >= level:
            stack.pop()
        (stack[-1][1].children if stack else symbols).append(symbol)
        stack.append((level, symbol))
    _extend_heading_ranges(symbols, doc)
    return symbols


def _extend_heading_ranges(symbols: list[Symbol], doc: Document) -> None:
    """A heading's range runs to the line before the next heading of the same or a higher level."""
    end_line = max(len(doc.lines) - 1, 0)

    def extend(items: list[Symbol], limit: int) -> None:
        headings = [s for s in items if s.kind == "heading"]
        for i, symbol in enumerate(headings):
            last = headings[i + 1].range.start.line - 1 if i + 1 < len(headings) else limit
            last = max(last, symbol.range.start.line)
            symbol.range = Range(symbol.range.start, Position(last, len(doc.lines[last]) if doc.lines else 0))
            extend(symbol.children, last)

    extend(symbols, end_line)


def catalog_cost(doc: Document, location: str) -> tuple[Position, int] | None:
    """Where to show the catalog cost (after the description) and the estimated tokens the
    skill's `<available_skills>` entry costs in every conversation."""
    name = doc.get("name")
    description = doc.get("description")
    if description is None or not description.value.is_scalar:
        return None
    name_text = str(name.value.value) if name is not None and name.value.is_scalar else ""
    entry = (
        f"<skill>\n<name>\n{name_text}\n</name>\n<description>\n{description.value.value}\n</description>\n"
        f"<location>\n{location}\n</location>\n</skill>"
    )
    return description.value.range.end, max(1, round(len(entry) / CHARS_PER_TOKEN))
