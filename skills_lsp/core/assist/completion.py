"""Completion at a position of a parsed document: frontmatter keys and values from the profile's
schema, `allowed-tools` from the tool manifest, bundled files in body links and `references`.
Plain data in and out; the language server turns it into LSP types."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from skills_lsp.core import schema
from skills_lsp.core.model import BUNDLE_DIRS, Position, Range
from skills_lsp.core.parse.allowed_tools import split_tools, tool_name
from skills_lsp.core.parse.frontmatter import Document
from skills_lsp.core.parse.tool_manifest import StaticToolRegistry
from skills_lsp.core.rules.profiles import Profile

SuggestionKind = Literal["field", "value", "tool", "file"]
MAX_FILES = 200

_LIST_ITEM = re.compile(r"^(\s*)-\s*(\S*)$")
_KEY_VALUE = re.compile(r"^([A-Za-z0-9_-]+)\s*:\s*(.*)$")
_KEY_START = re.compile(r"^[A-Za-z0-9_-]*$")
_PARENT_KEY = re.compile(r"^([A-Za-z0-9_-]+)\s*:\s*(#.*)?$")
_PATH_PREFIX = re.compile(r"(?:\]\(|(?<![\w/.-]))((?:\./)?(?:scripts|references|assets)/[^\s()\[\]`'\"]*)$")
_LINK_OPEN = re.compile(r"\]\(([^\s()]*)$")


@dataclass(frozen=True)
class Suggestion:
    label: str
    kind: SuggestionKind
    detail: str = ""
    documentation: str = ""
    insert_text: str | None = None
    replace: Range | None = None  # the text the suggestion replaces (code points)


def in_frontmatter(doc: Document, line: int) -> bool:
    if doc.open_line is None or line <= doc.open_line:
        return False
    return doc.close_line is None or line < doc.close_line


def _listed_tools(doc: Document, line_number: int | None = None) -> set[str]:
    """Tools already named in `allowed-tools`, read from the parsed tree or, while the YAML is
    being typed and does not parse, from the lines themselves."""
    names: set[str] = set()
    pair = doc.get("allowed-tools")
    if pair is not None:
        if pair.value.kind == "scalar":
            names |= {tool_name(t) for t in split_tools(str(pair.value.value))}
        for item in pair.value.items:
            if item.kind == "scalar":
                names.add(tool_name(str(item.value)))
        return names
    start = next((i for i, ln in enumerate(doc.lines) if ln.startswith("allowed-tools")), None)
    if start is None:
        return names
    value = doc.lines[start].split(":", 1)[1] if ":" in doc.lines[start] else ""
    names |= {tool_name(t) for t in split_tools(value)}
    for number in range(start + 1, len(doc.lines)):
        match = _LIST_ITEM.match(doc.lines[number])
        if not match:
            break
        if number != line_number:
            names.add(tool_name(match.group(2)))
    return names


def _tool_suggestions(
    doc: Document, tools: StaticToolRegistry | None, replace: Range, line: int
) -> list[Suggestion]:
    if tools is None:
        return []
    listed = _listed_tools(doc, line)
    return [
        Suggestion(t.name, "tool", t.source or "tool manifest", t.description, replace=replace)
        for t in tools.tools()
        if t.name not in listed
    ]


def _parent_key(doc: Document, line: int, indent: int) -> str | None:
    for number in range(line - 1, (doc.open_line or 0), -1):
        text = doc.lines[number]
        if not text.strip():
            continue
        own = len(text) - len(text.lstrip(" "))
        if own < indent or (own == indent and not text.lstrip().startswith("-")):
            match = _PARENT_KEY.match(text.strip())
            return match.group(1) if match else None
    return None


def _files(skill_dir: Path | None, typed: str) -> list[str]:
    """Files under the skill's bundle folders whose relative path starts with `typed`."""
    if skill_dir is None:
        return []
    typed = typed.removeprefix("./")
    found: list[str] = []
    for sub in BUNDLE_DIRS:
        top = skill_dir / sub
        if top.is_symlink() or not top.is_dir():
            continue
        for current, dirs, files in os.walk(top):
            dirs.sort()
            for name in sorted(files):
                rel = Path(current, name).relative_to(skill_dir).as_posix()
                if rel.startswith(typed):
                    found.append(rel)
                    if len(found) >= MAX_FILES:
                        return found
    return found


def _file_suggestions(
    skill_dir: Path | None, typed: str, line: int, start: int, end: int
) -> list[Suggestion]:
    rng = Range.of(line, start, line, end)
    return [Suggestion(rel, "file", "bundled file", replace=rng) for rel in _files(skill_dir, typed)]


def complete(
    doc: Document,
    position: Position,
    profile: Profile,
    tools: StaticToolRegistry | None = None,
    skill_dir: Path | None = None,
) -> list[Suggestion]:
    """What to offer at `position` (code points)."""
    line_number = position.line
    if line_number >= len(doc.lines):
        return []
    text = doc.lines[line_number]
    prefix = text[: position.character]
    if not in_frontmatter(doc, line_number):
        if doc.open_line is not None and doc.close_line is None:
            return []
        if line_number <= (doc.close_line if doc.close_line is not None else -1):
            return []
        match = _LINK_OPEN.search(prefix) or _PATH_PREFIX.search(prefix)
        if match is None:
            return []
        typed = match.group(1)
        start = position.character - len(typed)
        return _file_suggestions(skill_dir, typed, line_number, start, position.character)

    item = _LIST_ITEM.match(prefix)
    if item is not None:
        parent = _parent_key(doc, line_number, len(item.group(1)))
        start = position.character - len(item.group(2))
        replace = Range.of(line_number, start, line_number, position.character)
        if parent == "allowed-tools":
            return _tool_suggestions(doc, tools, replace, line_number)
        if parent == "references":
            return _file_suggestions(skill_dir, item.group(2), line_number, start, position.character)
        return []
    if text[: len(text) - len(text.lstrip())] == "":
        pair = _KEY_VALUE.match(prefix)
        if pair is not None:
            key, value = pair.group(1), pair.group(2)
            token = value.rsplit(" ", 1)[-1] if value else ""
            start = position.character - len(token)
            replace = Range.of(line_number, start, line_number, position.character)
            if key == "allowed-tools":
                return _tool_suggestions(doc, tools, replace, line_number)
            return _value_suggestions(profile, key, replace)
        if _KEY_START.match(prefix):
            return _key_suggestions(doc, profile, line_number, len(prefix))
    return []


def _value_suggestions(profile: Profile, key: str, replace: Range) -> list[Suggestion]:
    field_schema = schema.field_schema(profile.name, key)
    if field_schema is None:
        return []
    values: list[str] = []
    if field_schema.get("type") == "boolean":
        values = ["true", "false"]
    values += [str(v) for v in field_schema.get("enum", ())]
    doc = str(field_schema.get("description", ""))
    return [Suggestion(v, "value", key, doc, replace=replace) for v in values]


def _key_suggestions(doc: Document, profile: Profile, line: int, typed: int) -> list[Suggestion]:
    present = {p.name for p in doc.pairs if p.key.range.start.line != line}
    if doc.root is None:  # while the YAML does not parse, read the keys off the lines
        start = (doc.open_line or 0) + 1
        end = doc.close_line if doc.close_line is not None else len(doc.lines)
        for number in range(start, end):
            match = _KEY_VALUE.match(doc.lines[number])
            if match and number != line:
                present.add(match.group(1))
    replace = Range.of(line, 0, line, typed)
    suggestions = []
    for key in profile.fields:
        if key in present:
            continue
        documentation = schema.field_doc(profile.name, key) or ""
        required = " (required)" if key in profile.required else ""
        suggestions.append(
            Suggestion(key, "field", f"{profile.name}{required}", documentation, f"{key}: ", replace)
        )
    return suggestions
