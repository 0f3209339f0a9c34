"""Relative file references in a Markdown body, with their ranges.

Finds inline links and images (`[text](references/x.md)`) and bare bundled-file paths
(`scripts/run.py`, `references/...`, `assets/...`, also inside inline code) outside fenced code
blocks. Used by the reference rules, and by the server for document links and go-to-definition.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from skills_lsp.core.frontmatter import Document
from skills_lsp.core.model import Range

BUNDLE_DIRS = ("scripts", "references", "assets")

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_LINK = re.compile(r"!?\[(?:[^\]\\]|\\.)*\]\(\s*(<[^>\n]*>|[^\s()]+(?:\([^\s()]*\)[^\s()]*)*)(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\)")
_BARE = re.compile(r"(?<![\w/.\\-])(?:\./)?((?:scripts|references|assets)[/\\][^\s`'\"()<>\[\]{}|*,;]+)")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_TRAILING = ".:!?)"


@dataclass(frozen=True, slots=True)
class Reference:
    target: str  # the path as written (fragment and query removed)
    range: Range  # where the path is written
    kind: Literal["link", "path"]


def _clean_link(raw: str) -> str:
    if raw.startswith("<") and raw.endswith(">"):
        raw = raw[1:-1]
    for sep in ("#", "?"):
        raw = raw.split(sep, 1)[0]
    return raw


def find_references(doc: Document) -> list[Reference]:
    refs: list[Reference] = []
    fence: str | None = None
    start = doc.body_start_line
    for offset, line in enumerate(doc.lines[start:]):
        lineno = start + offset
        opener = _FENCE.match(line)
        if fence is not None:
            if opener and opener.group(1)[0] == fence[0] and len(opener.group(1)) >= len(fence):
                fence = None
            continue
        if opener:
            fence = opener.group(1)
            continue
        covered: list[tuple[int, int]] = []
        for match in _LINK.finditer(line):
            raw = match.group(1)
            covered.append(match.span())
            target = _clean_link(raw)
            if not target or _SCHEME.match(target) and not re.match(r"^[A-Za-z]:[\\/]", target):
                continue
            col = match.start(1) + (1 if raw.startswith("<") else 0)
            refs.append(Reference(target, Range.of(lineno, col, lineno, col + len(target)), "link"))
        for match in _BARE.finditer(line):
            if any(a <= match.start() < b for a, b in covered):
                continue
            target = match.group(1).rstrip(_TRAILING)
            if target.endswith(("/", "\\")) or "/" not in target.replace("\\", "/").rstrip("/"):
                continue
            col = match.start(1)
            refs.append(Reference(target, Range.of(lineno, col, lineno, col + len(target)), "path"))
    return refs
