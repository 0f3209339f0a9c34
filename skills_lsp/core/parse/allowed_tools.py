"""The `allowed-tools` value read as a list of entries: split the way the spec writes it (spaces,
or commas, outside parentheses), each entry with the range where it is written and the tool it
names. The index, the rules, completion and hover all read it here."""

from __future__ import annotations

from skills_lsp.core.model import Range
from skills_lsp.core.parse.frontmatter import Document


def split_tools(text: str, commas_only: bool = False) -> list[str]:
    """Split an allowed-tools string on spaces or commas outside parentheses (`Bash(git log:*)`
    is one entry); `commas_only` splits on commas alone."""
    tools: list[str] = []
    depth = 0
    current = ""
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")" and depth:
            depth -= 1
        if depth == 0 and (ch == "," or (ch.isspace() and not commas_only)):
            if current:
                tools.append(current)
            current = ""
            continue
        current += ch
    if current:
        tools.append(current)
    return tools


def tool_name(entry: str) -> str:
    """The tool an `allowed-tools` entry names: `Bash(git:*)` names `Bash`."""
    return entry.split("(", 1)[0].strip()


def tool_entries(doc: Document) -> list[tuple[str, Range]]:
    """Each `allowed-tools` entry with the range where it is written."""
    pair = doc.get("allowed-tools") if doc.root is not None and doc.root.kind == "mapping" else None
    if pair is None or pair.value.is_null:
        return []
    value = pair.value
    if value.kind == "sequence":
        return [
            (str(i.value).strip(), i.range)
            for i in value.items
            if i.kind == "scalar" and str(i.value).strip()
        ]
    if value.kind != "scalar":
        return []
    entries = split_tools(str(value.value))
    start, end = value.range.start, value.range.end
    if start.line != end.line:
        return [(e, value.range) for e in entries]
    line = doc.lines[start.line]
    found: list[tuple[str, Range]] = []
    at = start.character
    for entry in entries:
        col = line.find(entry, at, end.character)
        if col < 0:
            found.append((entry, value.range))
            continue
        found.append((entry, Range.of(start.line, col, start.line, col + len(entry))))
        at = col + len(entry)
    return found
