"""Relative file references in a Markdown body, with their ranges.

Finds inline links and images (`[text](references/x.md)`) and bare bundled-file paths
(`scripts/run.py`, `references/...`, `assets/...`, also inside inline code) outside fenced code
blocks. Used by the reference rules, and by the server for document links and go-to-definition.

The body is scanned with whole-text regexes (a per-line Python loop was the slowest part of
checking a large workspace); only matches are mapped back to line and column.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from typing import Literal
from urllib.parse import unquote

from skills_lsp.core.model import BUNDLE_DIRS, Range
from skills_lsp.core.parse.frontmatter import Document

# Patterns start with a literal so the regex engine can skip ahead; candidates for bare paths
# are found with str.find, which is much faster than a pattern with a leading look-behind.
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})", re.MULTILINE)
# Link text may hold one level of brackets; excluding `[` elsewhere keeps each match attempt
# short, so a body full of `[` scans in linear time.
_LINK = re.compile(
    r"\[(?:[^\[\]\\\n]|\\.|\[[^\[\]\\\n]*\])*\]"
    r"\(\s*(<[^>\n]*>|[^\s()]+(?:\([^\s()]*\)[^\s()]*)*)(?:\s+(?:\"[^\"\n]*\"|'[^'\n]*'))?\s*\)"
)
_BARE_TAIL = re.compile(r"[/\\][^\s`'\"()<>\[\]{}|*,;]+")
_PATH_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_/.\\-")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_DRIVE = re.compile(r"^[A-Za-z]:[\\/]")
_TRAILING = ".:!?)"


@dataclass(frozen=True, slots=True)
class Reference:
    target: str  # the path as written (fragment and query removed)
    range: Range  # where the path is written
    kind: Literal["link", "path"]

    @property
    def path(self) -> str:
        """The file path meant: link destinations are URL-encoded (`my%20file.md`)."""
        return unquote(self.target) if self.kind == "link" else self.target


def _clean_link(raw: str) -> str:
    """A link destination as a path: angle brackets, fragment and query removed."""
    if raw.startswith("<") and raw.endswith(">"):
        raw = raw[1:-1]
    for sep in ("#", "?"):
        raw = raw.split(sep, 1)[0]
    return raw


def _inside(spans: list[tuple[int, int]], starts: list[int], offset: int) -> bool:
    """Whether `offset` falls in one of the sorted, non-overlapping `spans`."""
    at = bisect_right(starts, offset) - 1
    return at >= 0 and offset < spans[at][1]


def _fence_lines(text: str) -> list[re.Match[str]]:
    """Fence lines (```` ``` ```` or `~~~`, up to 3 spaces in), found from the fence characters."""
    found: list[re.Match[str]] = []
    for mark in ("```", "~~~"):
        pos = text.find(mark)
        while pos >= 0:
            line_start = text.rfind("\n", 0, pos) + 1
            match = _FENCE.match(text, line_start)
            if match is not None and match.start(1) == pos:
                found.append(match)
            end = text.find("\n", pos)
            if end < 0:
                break
            pos = text.find(mark, end)
    found.sort(key=lambda m: m.start())
    return found


def _fenced_spans(text: str) -> list[tuple[int, int]]:
    """Offsets covered by fenced code blocks (an unclosed fence runs to the end)."""
    spans: list[tuple[int, int]] = []
    opener: re.Match[str] | None = None
    for match in _fence_lines(text):
        if opener is None:
            opener = match
        elif match.group(1)[0] == opener.group(1)[0] and len(match.group(1)) >= len(opener.group(1)):
            spans.append((opener.start(), match.end()))
            opener = None
    if opener is not None:
        spans.append((opener.start(), len(text)))
    return spans


def find_references(doc: Document) -> list[Reference]:
    start_line = doc.body_start_line
    lines = doc.lines[start_line:]
    text = "\n".join(lines)
    if "/" not in text and "\\" not in text and "](" not in text:
        return []
    starts = [0]
    for text_line in lines[:-1]:
        starts.append(starts[-1] + len(text_line) + 1)
    fenced = _fenced_spans(text) if "```" in text or "~~~" in text else []
    fence_starts = [a for a, _ in fenced]

    def in_fence(offset: int) -> bool:
        return _inside(fenced, fence_starts, offset)

    def position(offset: int) -> tuple[int, int]:
        index = bisect_right(starts, offset) - 1
        return start_line + index, offset - starts[index]

    refs: list[Reference] = []
    covered: list[tuple[int, int]] = []
    for match in _LINK.finditer(text):
        if in_fence(match.start()):
            continue
        covered.append(match.span())
        raw = match.group(1)
        target = _clean_link(raw)
        if not target or (_SCHEME.match(target) and not _DRIVE.match(target)):
            continue
        line, col = position(match.start(1) + (1 if raw.startswith("<") else 0))
        refs.append(Reference(target, Range.of(line, col, line, col + len(target)), "link"))
    covered_starts = [a for a, _ in covered]
    for offset, target in _bare_paths(text):
        if in_fence(offset) or _inside(covered, covered_starts, offset):
            continue
        line, col = position(offset)
        refs.append(Reference(target, Range.of(line, col, line, col + len(target)), "path"))
    refs.sort(key=lambda r: r.range.start)
    return refs


def _bare_paths(text: str) -> list[tuple[int, str]]:
    """(offset, path) of `scripts/...`, `references/...`, `assets/...` not inside another path."""
    found: list[tuple[int, str]] = []
    for folder in BUNDLE_DIRS:
        pos = text.find(folder)
        while pos >= 0:
            # The folder must start a path token; a leading `./` is allowed (not part of the target).
            dot_slash = text.startswith("./", pos - 2) and (pos < 3 or text[pos - 3] not in _PATH_CHARS)
            if pos and text[pos - 1] in _PATH_CHARS and not dot_slash:
                pos = text.find(folder, pos + 1)
                continue
            tail = _BARE_TAIL.match(text, pos + len(folder))
            if tail is not None:
                target = text[pos : tail.end()].rstrip(_TRAILING)
                if not target.endswith(("/", "\\")) and len(target) > len(folder) + 1:
                    found.append((pos, target))
            pos = text.find(folder, pos + 1)
    return found
