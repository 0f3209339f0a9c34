"""Text-edit builders for fixes: each returns edits that a rule's quick fix applies."""

from __future__ import annotations

import json
import re
import unicodedata

from skills_lsp.core.frontmatter import Document, YamlNode, YamlPair
from skills_lsp.core.model import Fix, Position, Range, TextEdit

NAME_MAX = 64


def replace(title: str, rng: Range, text: str) -> Fix:
    return Fix(title, (TextEdit(rng, text),))


def yaml_string(text: str) -> str:
    """`text` as a YAML scalar: plain when that is safe, else double-quoted (JSON escapes)."""
    if re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9 _.,/()*+=@-]*", text) and not text.endswith(" "):
        return text
    return json.dumps(text, ensure_ascii=False)


def suggest_name(name: str) -> str:
    """A spec-valid name for `name`: ASCII lowercase kebab-case, at most 64 characters."""
    decomposed = unicodedata.normalize("NFKD", name)
    ascii_only = "".join(c for c in decomposed if not unicodedata.combining(c))
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_only.lower()).strip("-")
    slug = slug[:NAME_MAX].rstrip("-")
    return slug or "skill"


def pair_lines(doc: Document, pair: YamlPair) -> Range:
    """Whole lines holding a top-level pair, including the line break after it."""
    start = pair.key.range.start.line
    end = pair.value.range.end.line
    # A following line that is more indented belongs to the value (e.g. an empty-valued list).
    close = doc.close_line if doc.close_line is not None else len(doc.lines)
    while end + 1 < close and doc.lines[end + 1][:1] in (" ", "\t") and doc.lines[end + 1].strip():
        end += 1
    return Range(Position(start, 0), Position(end + 1, 0))


def insert_before_close(doc: Document, text: str) -> TextEdit:
    line = doc.close_line if doc.close_line is not None else len(doc.lines)
    return TextEdit(Range.point(line, 0), text)


def scalar_or_join(node: YamlNode) -> str | None:
    """The text a value becomes when moved under `metadata` (string values only)."""
    if node.kind == "scalar":
        return str(node.value)
    if node.kind == "sequence" and all(i.kind == "scalar" for i in node.value):
        return ", ".join(str(i.value) for i in node.value)
    return None


def move_under_metadata(doc: Document, pair: YamlPair) -> Fix | None:
    """Delete a top-level pair and add it as a string entry of `metadata`."""
    text = scalar_or_join(pair.value)
    if text is None:
        return None
    entry_key = yaml_string(pair.name)
    metadata = doc.get("metadata")
    delete = TextEdit(pair_lines(doc, pair), "")
    if metadata is None:
        add = insert_before_close(doc, f"metadata:\n  {entry_key}: {json.dumps(text, ensure_ascii=False)}\n")
    elif metadata.value.kind == "mapping" and not metadata.value.flow and metadata.value.pairs:
        first = metadata.value.pairs[0].key.range.start
        last_line = pair_lines(doc, metadata.value.pairs[-1]).end.line
        indent = " " * first.character
        add = TextEdit(
            Range.point(last_line, 0), f"{indent}{entry_key}: {json.dumps(text, ensure_ascii=False)}\n"
        )
    elif metadata.value.is_null:
        line = metadata.key.range.start.line
        add = TextEdit(Range.point(line + 1, 0), f"  {entry_key}: {json.dumps(text, ensure_ascii=False)}\n")
    else:
        return None
    if add.range.start.line == delete.range.end.line and add.range.start < delete.range.start:
        return None  # pragma: no cover - metadata can't end where the moved key starts
    edits = sorted([delete, add], key=lambda e: e.range.start)
    return Fix(f"Move `{pair.name}` under `metadata`", tuple(edits))


def split_tools(text: str) -> list[str]:
    """Split an allowed-tools string on spaces or commas outside parentheses."""
    tools: list[str] = []
    depth = 0
    current = ""
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")" and depth:
            depth -= 1
        if depth == 0 and (ch.isspace() or ch == ","):
            if current:
                tools.append(current)
            current = ""
            continue
        current += ch
    if current:
        tools.append(current)
    return tools
