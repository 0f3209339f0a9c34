"""Position-preserving frontmatter parser.

A skill file is `---`, YAML, `---`, then Markdown. This module splits the file, parses the YAML
into a small node tree where every key, value and list item keeps its source range, and records
every structural problem (bad YAML, duplicate keys, missing delimiter, ...) as a `Problem` with a
position instead of raising. The parser never raises on any input and its work is bounded.

YAML is read with libyaml's event parser (through PyYAML), the same parser serde_yaml 0.9 wraps
in adk-skill, so what we accept and refuse matches that crate. The tree is built from events by
an explicit stack, not recursion.
"""

from __future__ import annotations

import errno
import math
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

import yaml

from skills_lsp.core.model import Position, Problem, Range

try:  # libyaml C parser: ~20x faster than the pure-Python one; same grammar.
    _Loader: type = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - PyYAML built without libyaml
    _Loader = yaml.SafeLoader

MAX_FILE_BYTES = 4 * 1024 * 1024
MAX_FRONTMATTER_CHARS = 64 * 1024
MAX_NESTING = 64
# Nodes visited when expanding aliases into plain values: a "billion laughs" frontmatter would
# otherwise expand exponentially.
MAX_EXPANDED_NODES = 10_000

BOM = "\ufeff"

# The kinds of problem found here. Each is the name of the rule that reports it (rules/structure.py
# holds their codes, severities and documentation), so the parser knows no rule codes.
P_NO_FRONTMATTER = "no-frontmatter"
P_UNCLOSED = "unclosed-frontmatter"
P_YAML_SYNTAX = "yaml-syntax"
P_UNQUOTED_COLON = "unquoted-colon"
P_DUPLICATE_KEY = "duplicate-key"
P_NOT_MAPPING = "frontmatter-not-mapping"
P_EMPTY = "empty-frontmatter"
P_FILE_TOO_LARGE = "file-too-large"
P_FRONTMATTER_TOO_LARGE = "frontmatter-too-large"
P_TOO_COMPLEX = "frontmatter-too-complex"
P_NOT_UTF8 = "not-utf8"
P_MULTIPLE_DOCUMENTS = "multiple-documents"
PROBLEM_KINDS = (
    P_NO_FRONTMATTER,
    P_UNCLOSED,
    P_YAML_SYNTAX,
    P_UNQUOTED_COLON,
    P_DUPLICATE_KEY,
    P_NOT_MAPPING,
    P_EMPTY,
    P_FILE_TOO_LARGE,
    P_FRONTMATTER_TOO_LARGE,
    P_TOO_COMPLEX,
    P_NOT_UTF8,
    P_MULTIPLE_DOCUMENTS,
)

NodeKind = Literal["scalar", "sequence", "mapping", "alias"]


@dataclass(eq=False, slots=True)
class YamlNode:
    """A YAML node with its source range.

    `value` is the scalar's text (after YAML unquoting/folding) for scalars, a list of nodes for
    sequences and a list of pairs for mappings. `raw` is the exact source text of a scalar.
    """

    kind: NodeKind
    range: Range
    value: Any
    style: str | None = None  # scalar style: None (plain), "'", '"', "|", ">"
    flow: bool = False  # collection written in flow style ([a, b] / {a: b})
    tag: str | None = None  # explicit tag as resolved by the parser, e.g. tag:yaml.org,2002:str
    anchor: str | None = None
    target: YamlNode | None = None  # for aliases: the anchored node

    @property
    def is_scalar(self) -> bool:
        return self.kind == "scalar"

    @property
    def items(self) -> list[YamlNode]:
        return self.value if self.kind == "sequence" else []

    @property
    def pairs(self) -> list[YamlPair]:
        return self.value if self.kind == "mapping" else []

    @property
    def text(self) -> str | None:
        """The scalar's string value, or None for collections."""
        return self.value if self.kind == "scalar" else None

    @property
    def is_null(self) -> bool:
        return self.kind == "scalar" and self.style is None and self.value in _NULLS


@dataclass(eq=False, slots=True)
class YamlPair:
    key: YamlNode
    value: YamlNode

    @property
    def name(self) -> str:
        """The key as text ('' for a non-scalar key)."""
        return self.key.value if self.key.kind == "scalar" else ""

    @property
    def range(self) -> Range:
        return Range(self.key.range.start, max(self.key.range.end, self.value.range.end))


@dataclass(eq=False, slots=True)
class Document:
    """A parsed skill or instruction file."""

    text: str  # decoded text, BOM removed
    lines: list[str]  # lines without their terminators ("\n" or "\r\n")
    has_bom: bool = False
    cr_line_breaks: bool = False  # CRLF or lone CR line breaks
    open_line: int | None = None  # line of the opening `---`
    close_line: int | None = None  # line of the closing `---`
    root: YamlNode | None = None  # the frontmatter's top node (a mapping when well formed)
    problems: list[Problem] = field(default_factory=list)
    # What later stages work out from the text alone, kept with it (markdown.find_references):
    # the reference rules and the editor's links ask for the same references.
    derived: dict[str, Any] = field(default_factory=dict, repr=False)
    # The text after the closing delimiter's line, where a values-only parse (parse_text with
    # `ranges=False`) did not split it into lines: `lines` then ends at that delimiter.
    rest: str | None = field(default=None, repr=False)

    @property
    def eol(self) -> str:
        """The line break new text should use: the file's own."""
        return "\r\n" if "\r\n" in self.text else ("\r" if self.cr_line_breaks else "\n")

    @property
    def has_frontmatter(self) -> bool:
        return self.open_line is not None

    @property
    def pairs(self) -> list[YamlPair]:
        """Top-level frontmatter entries in source order (duplicates included)."""
        return self.root.pairs if self.root is not None else []

    def get(self, key: str) -> YamlPair | None:
        """The first top-level entry named `key`. The rules ask some 20 times per file: the names
        are indexed once per tree (and again if the tree or its entries change)."""
        pairs = self.pairs
        known: tuple[list[YamlPair], int, dict[str, YamlPair]] | None = self.derived.get("_key_index")
        if known is None or known[0] is not pairs or known[1] != len(pairs):
            index: dict[str, YamlPair] = {}
            for pair in pairs:
                index.setdefault(pair.name, pair)
            known = self.derived["_key_index"] = (pairs, len(pairs), index)
        return known[2].get(key)

    @property
    def keys(self) -> list[str]:
        return [p.name for p in self.pairs]

    @property
    def body_start_line(self) -> int:
        if self.close_line is not None:
            return self.close_line + 1
        if self.open_line is not None:  # unclosed: there is no body we can trust
            return len(self.lines)
        return 0

    @property
    def body_lines(self) -> list[str]:
        return self.lines[self.body_start_line :]

    @property
    def body(self) -> str:
        if self.rest is not None:
            return self.rest.strip()
        return "\n".join(self.body_lines).strip()

    @property
    def frontmatter_range(self) -> Range:
        """The whole block including both delimiters (or the first line when there is none)."""
        if self.open_line is None:
            return self.line_range(0)
        last = self.close_line if self.close_line is not None else len(self.lines) - 1
        return Range.of(self.open_line, 0, last, len(self.lines[last]))

    def line_range(self, line: int) -> Range:
        line = min(max(line, 0), max(len(self.lines) - 1, 0))
        text = self.lines[line] if self.lines else ""
        return Range.of(line, 0, line, len(text))

    def end_position_range(self) -> Range:
        last = max(len(self.lines) - 1, 0)
        col = len(self.lines[last]) if self.lines else 0
        return Range.of(last, col, last, col)

    def plain_data(self) -> Any:
        """The frontmatter as plain Python values (YAML 1.2 core scalars), or None."""
        if self.root is None:
            return None
        return to_python(self.root)


_NULLS = frozenset({"", "~", "null", "Null", "NULL"})
_TRUE = frozenset({"true", "True", "TRUE"})
_FALSE = frozenset({"false", "False", "FALSE"})
_INT = re.compile(r"[-+]?[0-9]+\Z")
_OCT = re.compile(r"0o[0-7]+\Z")
_HEX = re.compile(r"0x[0-9a-fA-F]+\Z")
_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?\Z")
_INF = re.compile(r"[-+]?\.(inf|Inf|INF)\Z")
_NAN = re.compile(r"\.(nan|NaN|NAN)\Z")
_STR_TAG = "tag:yaml.org,2002:str"


def resolve_scalar(node: YamlNode) -> Any:
    """A scalar's value under the YAML 1.2 core schema (quoted scalars are always strings)."""
    text: str = node.value
    if node.style is not None or node.tag == _STR_TAG:
        return text
    if text in _NULLS:
        return None
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    if _INT.match(text):
        return int(text)
    if _OCT.match(text):
        return int(text[2:], 8)
    if _HEX.match(text):
        return int(text[2:], 16)
    if _FLOAT.match(text):
        return float(text)
    if _INF.match(text):
        return -math.inf if text.startswith("-") else math.inf
    if _NAN.match(text):
        return math.nan
    return text


class _ExpansionLimit(Exception):
    pass


def to_python(node: YamlNode, budget: int = MAX_EXPANDED_NODES) -> Any:
    """Convert a node to plain values, expanding aliases, within a node budget.

    Raises nothing: a tree that expands past the budget (an alias bomb) is cut off and the
    over-budget parts become None. `parse_document` has already reported such trees.
    """
    remaining = [budget]

    def convert(n: YamlNode, depth: int) -> Any:
        remaining[0] -= 1
        if remaining[0] < 0 or depth > MAX_NESTING * 2:
            raise _ExpansionLimit
        if n.kind == "alias":
            return convert(n.target, depth + 1) if n.target is not None else None
        if n.kind == "scalar":
            return resolve_scalar(n)
        if n.kind == "sequence":
            return [convert(item, depth + 1) for item in n.value]
        result: dict[Any, Any] = {}
        for pair in n.value:
            key = convert(pair.key, depth + 1)
            if isinstance(key, (list, dict)):
                key = repr(key)
            result[key] = convert(pair.value, depth + 1)
        return result

    try:
        return convert(node, 0)
    except _ExpansionLimit:
        return None


def _expanded_size_exceeds(root: YamlNode, budget: int) -> bool:
    """Count nodes as if aliases were expanded, stopping once the budget is passed."""
    memo: dict[int, int] = {}

    def size(n: YamlNode) -> int:
        # Anchored nodes are memoised so a bomb is measured in linear time.
        key = id(n)
        if key in memo:
            return memo[key]
        if n.kind == "alias":
            total = size(n.target) if n.target is not None else 1
        elif n.kind == "scalar":
            total = 1
        elif n.kind == "sequence":
            total = 1 + sum(size(i) for i in n.value)
        else:
            total = 1 + sum(size(p.key) + size(p.value) for p in n.value)
        total = min(total, budget + 1)
        memo[key] = total
        return total

    return size(root) > budget


def _is_delimiter(line: str) -> bool:
    return line.rstrip() == "---"


def parse_bytes(data: bytes) -> Document:
    """Parse raw file bytes: size guard and strict UTF-8 decoding first."""
    if len(data) > MAX_FILE_BYTES:
        doc = Document(text="", lines=[""])
        doc.problems.append(
            Problem(
                P_FILE_TOO_LARGE,
                f"File is {len(data) / 1048576:.1f} MiB; files over {MAX_FILE_BYTES // 1048576} MiB are "
                "not parsed. Move large content into references/ or assets/.",
                Range.point(0, 0),
            )
        )
        return doc
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        good = data[: exc.start].decode("utf-8", errors="replace").removeprefix(BOM)
        prefix_lines = split_lines(good)
        line, col = len(prefix_lines) - 1, len(prefix_lines[-1])
        doc = parse_text(data.decode("utf-8", errors="replace"))
        doc.problems.insert(
            0,
            Problem(
                P_NOT_UTF8,
                f"File is not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start}); "
                "save it as UTF-8.",
                Range.of(line, col, line, col + 1),
            ),
        )
        return doc
    return parse_text(text)


_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def split_lines(text: str) -> list[str]:
    """Split on CRLF, CR or LF: the line model of LSP (and of Python's universal newlines)."""
    if "\r" not in text:
        return text.split("\n")
    return _LINE_BREAK.split(text)


def parse_text(text: str, ranges: bool = True) -> Document:
    """Parse decoded text. Never raises; every problem is recorded in `Document.problems`.

    `ranges=False`: for readers of the values alone (the workspace index): the same tree and
    body, the tree most often without ranges (reading them raises), the body not split into lines
    (`Document.rest`), and the problems of the frontmatter's YAML not looked for. A third less
    work (the tree without ranges: simple_tree, plain_tree)."""
    has_bom = text.startswith(BOM)
    if has_bom:
        text = text[1:]
    head = None if ranges or "\r" in text else _closed_head(text)
    lines = split_lines(text) if head is None else head[0]
    doc = Document(text=text, lines=lines, has_bom=has_bom, cr_line_breaks="\r" in text)
    if head is not None:
        doc.rest = head[1]
    if not lines or not _is_delimiter(lines[0]):
        doc.problems.append(
            Problem(
                P_NO_FRONTMATTER,
                "No frontmatter: the file must start with a `---` line, then YAML with `name` and "
                "`description`, then a closing `---` line.",
                doc.line_range(0),
            )
        )
        return doc
    doc.open_line = 0
    close = next((i for i in range(1, len(lines)) if _is_delimiter(lines[i])), None)
    if close is None:
        doc.problems.append(
            Problem(
                P_UNCLOSED,
                "Frontmatter is not closed: add a line containing only `---` after the YAML.",
                Range.of(0, 0, 0, len(lines[0])),
            )
        )
        return doc
    doc.close_line = close
    yaml_lines = lines[1:close]
    # Every frontmatter line ends with a line break (the closing `---` follows), which matters
    # for block scalars: `|` keeps one final newline.
    source = "".join(f"{ln}\n" for ln in yaml_lines)
    if len(source) > MAX_FRONTMATTER_CHARS:
        doc.problems.append(
            Problem(
                P_FRONTMATTER_TOO_LARGE,
                f"Frontmatter is {len(source)} characters; over {MAX_FRONTMATTER_CHARS} it is not "
                "parsed. Keep metadata short and move content into the body.",
                Range.of(0, 0, 0, len(lines[0])),
            )
        )
        return doc
    if not any(ln.strip() and not ln.lstrip().startswith("#") for ln in yaml_lines):
        doc.problems.append(
            Problem(
                P_EMPTY,
                "Frontmatter is empty: add `name:` and `description:` between the `---` lines.",
                Range.of(0, 0, close, len(lines[close])),
            )
        )
        return doc
    deep = nesting_too_deep(yaml_lines)
    if deep is not None:
        doc.problems.append(
            Problem(
                P_TOO_COMPLEX,
                f"Frontmatter nests deeper than {MAX_NESTING} levels; it is not parsed.",
                Range.of(deep + 1, 0, deep + 1, len(yaml_lines[deep])),
            )
        )
        return doc
    if not ranges:
        doc.root = _plain_root(source)
        if doc.root is not None:
            return doc
    _parse_yaml(doc, source, line_offset=1)
    return doc


def _closed_head(text: str) -> tuple[list[str], str] | None:
    """The lines of `text` (LF line breaks only) up to its frontmatter's closing delimiter, and
    the text after that delimiter's line; None when it has no closed frontmatter (it is split
    whole then, as any text)."""
    end = text.find("\n")
    if end < 0 or not _is_delimiter(text[:end]):
        return None
    lines = [text[:end]]
    while end >= 0:
        start = end + 1
        end = text.find("\n", start)
        line = text[start:] if end < 0 else text[start:end]
        lines.append(line)
        if _is_delimiter(line):
            return lines, "" if end < 0 else text[end + 1 :]
    return None


def _plain_root(source: str) -> YamlNode | None:
    """The tree parse_yaml makes of `source`, without ranges, where it is made without them
    (simple_tree, plain_tree); None where only parse_yaml can tell: tags, anchors, aliases, YAML
    1.2's line breaks, a character YAML forbids, an error."""
    root = simple_tree(source)
    if root is None and not any(c in source for c in _BREAK_STAND_INS):
        root = plain_tree(source)
    return root


_FLOW_OPEN = frozenset("[{")
_FLOW_CLOSE = frozenset("]}")


_QUOTE_OPENERS = frozenset(" \t[{,:")


def _flow_start(line: str) -> int | None:
    """Where a flow collection starts on a block-context line, if one does: right after the
    indentation and any `- `/`? ` markers, or as the value after the first `key: `."""
    rest = line.lstrip(" ")
    at = len(line) - len(rest)
    while len(rest) >= 2 and rest[0] in "-?" and rest[1] in " \t":
        trimmed = rest[2:].lstrip(" \t")
        at += len(rest) - len(trimmed)
        rest = trimmed
    if rest[:1] in ("[", "{"):
        return at
    if rest[:1] in ("'", '"', "#", "|", ">"):
        return None
    for sep in (": ", ":\t"):
        colon = rest.find(sep)
        if colon >= 0:
            value = rest[colon + 2 :].lstrip(" \t")
            if value[:1] in ("[", "{"):
                return at + colon + 2 + (len(rest) - colon - 2 - len(value))
            return None
    return None


def nesting_too_deep(yaml_lines: list[str]) -> int | None:
    """Line index where nesting passes MAX_NESTING, found without parsing; None if shallow.

    libyaml's work grows faster than linearly with depth (and PyYAML's C composer overflows the
    stack), so deep input is refused before parsing. Only brackets of flow collections count:
    inside quoted or plain scalars they are text.
    """
    if not any("[" in line or "{" in line for line in yaml_lines) and (
        sum(line.count("-") + line.count("?") for line in yaml_lines) <= MAX_NESTING
    ):
        return None  # no flow collection, and too few markers in all to nest deeply
    depth = 0
    for index, line in enumerate(yaml_lines):
        if depth == 0:
            if "[" not in line and "{" not in line and line.count("-") + line.count("?") <= MAX_NESTING:
                continue  # no flow collection starts here, and too few markers to nest deeply
            stripped = line.lstrip(" ")
            dashes = 0
            rest = stripped
            while len(rest) >= 2 and rest[0] in "-?" and rest[1] in " \t":  # "- - - x"
                dashes += 1
                rest = rest[2:].lstrip(" \t")
            if dashes > MAX_NESTING:
                return index
            start = _flow_start(line)
            if start is None:
                continue
        else:
            start = 0
        quote = ""
        previous = " "
        for ch in line[start:]:
            if quote:
                if ch == quote:
                    quote = ""
            elif ch in "'\"" and previous in _QUOTE_OPENERS:
                quote = ch
            elif ch == "#" and previous in " \t":
                break
            elif ch in _FLOW_OPEN:
                depth += 1
                if depth > MAX_NESTING:
                    return index
            elif ch in _FLOW_CLOSE and depth:
                depth -= 1
            previous = ch
    return None


def _trimmed_end(sl: int, el: int, ec: int, lines: list[str]) -> tuple[int, int]:
    # Block scalars and block collections end at the start of the next line (or after blank
    # lines); point at the last real character instead.
    while el > sl and ec == 0:
        el -= 1
        ec = len(lines[el]) if el < len(lines) else 0
    return el, ec


def _mark_range(start: Any, end: Any, line_offset: int, lines: list[str]) -> Range:
    sl, sc = start.line + line_offset, start.column
    el, ec = _trimmed_end(sl, end.line + line_offset, end.column, lines)
    return Range.of(sl, sc, el, ec)


_MAPPING_VALUES = "mapping values are not allowed"


# YAML 1.1 (libyaml) breaks lines at U+2028, U+2029 and NEL; LSP and YAML 1.2 do not. We parse
# with them swapped for private-use stand-ins so positions follow the editor's lines, then swap
# them back in scalar values.
_BREAK_STAND_INS = {"\u2028": "\ue028", "\u2029": "\ue029", "\x85": "\ue085"}
_TO_STAND_INS = str.maketrans(_BREAK_STAND_INS)
_FROM_STAND_INS = str.maketrans({v: k for k, v in _BREAK_STAND_INS.items()})
# Characters YAML does not allow anywhere (C0/C1 controls but tab and line breaks, DEL, ...).
_NOT_PRINTABLE = re.compile("[^\t\n\r\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def parse_yaml(
    source: str, lines: list[str], line_offset: int, last_line: int, yaml12_line_breaks: bool = True
) -> tuple[YamlNode | None, list[Problem]]:
    """Parse one YAML document into a node tree with ranges (source line N is `lines[N +
    line_offset]`). Syntax errors, a second document and alias bombs come back as problems; the
    tree is returned only when none of those occurred.

    `yaml12_line_breaks` keeps U+2028, U+2029 and NEL as ordinary characters (our reading);
    False keeps libyaml's YAML 1.1 reading, for the adk-skill port."""
    problems: list[Problem] = []
    bad = _NOT_PRINTABLE.search(source)
    if bad is not None:
        line = source.count("\n", 0, bad.start())
        col = bad.start() - (source.rfind("\n", 0, bad.start()) + 1)
        char = f"U+{ord(bad.group()):04X}"
        message = f"Invalid YAML: the control character {char} is not allowed; remove it."
        return None, [
            Problem(P_YAML_SYNTAX, message, Range.of(line + line_offset, col, line + line_offset, col + 1))
        ]
    swapped = yaml12_line_breaks and any(c in source for c in _BREAK_STAND_INS)
    if not swapped and not _NODE_PROPERTY.search(source):
        fast = _composed_tree(source, lines, line_offset)
        if fast is not None:
            return fast, problems
    return _parse_events(source, lines, line_offset, last_line, swapped)


def _parse_events(
    source: str, lines: list[str], line_offset: int, last_line: int, swapped: bool
) -> tuple[YamlNode | None, list[Problem]]:
    """The full reading, event by event: every YAML feature, every error as a problem."""
    problems: list[Problem] = []
    if swapped:
        if any(c in source for c in _BREAK_STAND_INS.values()):
            swapped = False  # the stand-ins are in use; fall back to libyaml's reading
        else:
            source = source.translate(_TO_STAND_INS)
    anchors: dict[str, YamlNode] = {}
    # stack of (collection node, pending key for mappings)
    stack: list[tuple[YamlNode, YamlNode | None]] = []
    root: YamlNode | None = None
    documents = 0

    def attach(node: YamlNode) -> None:
        nonlocal root
        if not stack:
            if root is None:
                root = node
            return
        parent, pending = stack[-1]
        if parent.kind == "sequence":
            parent.value.append(node)
        elif pending is None:
            stack[-1] = (parent, node)
        else:
            parent.value.append(YamlPair(pending, node))
            stack[-1] = (parent, None)

    try:
        for event in _events(source):
            if isinstance(event, yaml.DocumentStartEvent):
                documents += 1
                if documents > 1:
                    rng = _mark_range(event.start_mark, event.end_mark, line_offset, lines)
                    problems.append(
                        Problem(
                            P_MULTIPLE_DOCUMENTS,
                            "Frontmatter holds more than one YAML document; keep a single mapping.",
                            rng,
                        )
                    )
                    return None, problems
            elif isinstance(event, yaml.ScalarEvent):
                node = YamlNode(
                    "scalar",
                    _mark_range(event.start_mark, event.end_mark, line_offset, lines),
                    event.value.translate(_FROM_STAND_INS) if swapped else event.value,
                    style=event.style or None,
                    tag=event.tag if event.tag and not any(event.implicit) else None,
                    anchor=event.anchor,
                )
                if event.anchor:
                    anchors[event.anchor] = node
                attach(node)
            elif isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
                kind: NodeKind = "sequence" if isinstance(event, yaml.SequenceStartEvent) else "mapping"
                node = YamlNode(
                    kind,
                    _mark_range(event.start_mark, event.end_mark, line_offset, lines),
                    [],
                    flow=bool(event.flow_style),
                    tag=event.tag if event.tag and not event.implicit else None,
                    anchor=event.anchor,
                )
                if event.anchor:
                    anchors[event.anchor] = node
                attach(node)
                stack.append((node, None))
            elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
                node, _ = stack.pop()
                start = node.range.start
                mark = event.end_mark
                assert mark is not None  # libyaml marks every event
                el, ec = _trimmed_end(start.line, mark.line + line_offset, mark.column, lines)
                node.range = Range(start, max(Position(el, ec), start))
            elif isinstance(event, yaml.AliasEvent):
                rng = _mark_range(event.start_mark, event.end_mark, line_offset, lines)
                attach(
                    YamlNode(
                        "alias",
                        rng,
                        event.anchor,
                        anchor=event.anchor,
                        target=anchors.get(event.anchor or ""),
                    )
                )
    except yaml.MarkedYAMLError as exc:
        problems.append(_syntax_problem(exc, lines, line_offset, max(last_line, line_offset)))
        return None, problems
    except (yaml.YAMLError, RecursionError, MemoryError, ValueError) as exc:  # pragma: no cover
        line = min(line_offset, max(len(lines) - 1, 0))
        problems.append(Problem(P_YAML_SYNTAX, f"Invalid YAML: {exc}", Range.of(line, 0, line, 0)))
        return None, problems
    if root is not None and _expanded_size_exceeds(root, MAX_EXPANDED_NODES):
        problems.append(
            Problem(
                P_TOO_COMPLEX,
                f"Frontmatter aliases expand to more than {MAX_EXPANDED_NODES} nodes; it is not read.",
                root.range,
            )
        )
        return None, problems
    return root, problems


# Where a tag (`!x`), an anchor (`&x`) or an alias (`*x`) may start: after a line start, a space
# or a flow indicator. Text such as `Hello!` or `R&D` does not match; ` *.py` does (a false alarm
# only costs the full reading).
_NODE_PROPERTY = re.compile(r"(?:^|[\s\[{,])[!&*]")


class _Composer(_Loader):  # type: ignore[misc]
    """libyaml's composer without PyYAML's tag resolution, which this module does not use."""

    def resolve(self, kind: Any, value: Any, implicit: Any) -> None:
        return None

    def descend_resolver(self, current_node: Any, current_index: Any) -> None:
        return None

    def ascend_resolver(self) -> None:
        return None


class _ComposedNode(YamlNode):
    """A node of the composed tree: its range is made when first read (most never are)."""

    __slots__ = ("_span",)
    _span: Range | tuple[int, int, int, int] | None

    def __init__(
        self,
        kind: NodeKind,
        span: tuple[int, int, int, int] | None,
        value: Any,
        style: str | None,
        flow: bool,
    ) -> None:
        self.kind = kind
        self._span = span
        self.value = value
        self.style = style
        self.flow = flow
        self.tag = self.anchor = self.target = None

    @property
    def range(self) -> Range:
        span = self._span
        if span is None:
            raise ValueError("a tree from plain_tree() has no ranges")
        if isinstance(span, tuple):
            span = self._span = Range.of(*span)
        return span

    @range.setter
    def range(self, value: Range) -> None:
        self._span = value


def _compose(source: str) -> Any:
    """libyaml's composed node for `source`, None on any error (the full reading reports it)."""
    loader = _Composer(source)
    try:
        return loader.get_single_node()
    except (yaml.YAMLError, RecursionError, MemoryError, ValueError):
        return None
    finally:
        loader.dispose()


def plain_tree(source: str) -> YamlNode | None:
    """The node tree of `source` without ranges, for readers that report no positions (the
    adk-skill port): scalars' text and styles, collections' items, no tags. None when `source`
    needs `parse_yaml`'s full reading: tags, anchors or aliases, a character YAML forbids, a syntax
    error, a second document, or more than MAX_EXPANDED_NODES nodes. Skipping the ranges makes
    the tree for about half the cost (a cold index reads 15,000 frontmatters)."""
    if _NOT_PRINTABLE.search(source) or _NODE_PROPERTY.search(source):
        return None
    return _tree(source, [], 0, ranges=False)


# --- frontmatter of plain lines, read without libyaml --------------------------------------------
#
# Most skills' frontmatter is a few `key: value` lines, a list or a mapping of such values under
# a key, and `[a, b]` lists. Composing those with libyaml and converting its nodes to ours was
# 1.3 s CPU of a 15,000-file cold index (half the reading); simple_tree reads about three
# quarters of real frontmatter (75-78 % of the public corpus's) itself and leaves everything else
# to libyaml (returns None): any character or
# form whose reading is not obvious (tabs, comments, block scalars, escapes, anchors, a value
# that starts with an indicator or holds `: ` or ` #`, deeper nesting). tests/core/parse/
# test_frontmatter_simple.py compares its trees with libyaml's on every form it accepts and on
# generated frontmatter.

# A key: plain ASCII, and short (libyaml refuses a key of over 1,024 characters; this bound keeps
# far from it).
_SIMPLE_KEY = re.compile(r"([A-Za-z0-9_][A-Za-z0-9_-]{0,127}):(?: +(.*))?\Z")
# Characters simple_tree leaves to libyaml: those YAML forbids (as _NOT_PRINTABLE), and tab
# (separation or text, depending on where), CR, libyaml's YAML 1.1 line breaks (NEL, U+2028,
# U+2029) and the byte-order mark, whose readings depend on where they stand.
_NOT_SIMPLE = re.compile(
    "[^\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]"
)
# A plain scalar may not start with these (YAML's indicators; `-`, `?` and `:` could, followed by
# a non-space, but that reading is left to libyaml).
_INDICATORS = frozenset("-?:,[]{}#&*!|>'\"%@`")
# Inside a flow list an item holding these is read by libyaml: they end the item or may (`,`,
# brackets, `: `, ` #`, quotes), and telling which is its work.
_FLOW_SPECIAL = re.compile("[,\\[\\]{}#:'\"]")


def _simple_node(kind: NodeKind, value: Any, style: str | None = None, flow: bool = False) -> YamlNode:
    return _ComposedNode(kind, None, value, style, flow)


def _simple_scalar(text: str) -> YamlNode | None:
    """A scalar written on one line (trailing spaces already dropped), or None."""
    if not text:
        return _simple_node("scalar", "")
    first = text[0]
    if first in "'\"":
        if len(text) < 2 or text[-1] != first:
            return None
        inner = text[1:-1]
        if first == "'":  # `''` is a quote; a lone one ends the scalar early
            if "'" in inner.replace("''", ""):
                return None
            return _simple_node("scalar", inner.replace("''", "'"), "'")
        if '"' in inner or "\\" in inner:  # escapes: libyaml's
            return None
        return _simple_node("scalar", inner, '"')
    if first in _INDICATORS or ": " in text or " #" in text or text[-1] == ":":
        return None
    return _simple_node("scalar", text)


def _simple_value(text: str) -> YamlNode | None:
    """A key's value written on its line: a scalar, or a flow list of scalars."""
    if text[:1] != "[":
        return _simple_scalar(text)
    if text[-1] != "]":
        return None
    inner = text[1:-1]
    if not inner.strip(" "):
        return _simple_node("sequence", [], flow=True)
    items = []
    for part in inner.split(","):
        item = part.strip(" ")
        if not item:  # `[a, , b]`, `[a,]`: left to libyaml
            return None
        if item[0] in "'\"":
            node = _simple_scalar(item)
        elif item[0] in _INDICATORS or _FLOW_SPECIAL.search(item):
            return None
        else:
            node = _simple_node("scalar", item)
        if node is None:
            return None
        items.append(node)
    return _simple_node("sequence", items, flow=True)


def _simple_children(lines: list[str], at: int) -> tuple[YamlNode | None, int]:
    """The block under a `key:` line whose children start at `lines[at]`: a list of `- value`
    lines, a mapping of `key: value` lines (all at one indentation), or nothing (an empty plain
    scalar). Returns the node (None: not simple) and the index of the line after the block."""
    kind: NodeKind | None = None
    indent = 0
    found: list[Any] = []
    while at < len(lines):
        line = lines[at]
        stripped = line.lstrip(" ")
        if not stripped:
            at += 1
            continue
        width = len(line) - len(stripped)
        is_item = stripped.startswith("- ")
        # A list may stand at its key's own indentation (`tags:` then `- a`); anything else
        # unindented is the next top-level key.
        if width == 0 and not (is_item and kind in (None, "sequence")):
            break
        if kind is None:
            kind, indent = ("sequence" if is_item else "mapping"), width
        if width != indent or is_item != (kind == "sequence"):
            return None, at
        if is_item:
            node = _simple_scalar(stripped[2:].strip(" "))
            if node is None:
                return None, at
            found.append(node)
        else:
            pair = _simple_pair(stripped)
            if pair is None:
                return None, at
            found.append(pair)
        at += 1
    if kind is None:
        return _simple_node("scalar", ""), at
    return _simple_node(kind, found), at


def _simple_pair(line: str) -> YamlPair | None:
    """A `key: value` line (no indentation) whose value is on the line, or None."""
    match = _SIMPLE_KEY.match(line)
    if match is None:
        return None
    value = _simple_value((match[2] or "").rstrip(" "))
    return None if value is None else YamlPair(_simple_node("scalar", match[1]), value)


def simple_tree(source: str) -> YamlNode | None:
    """The tree of frontmatter made of plain `key: value` lines, as plain_tree makes it, or None
    where it is not that simple."""
    if _NOT_SIMPLE.search(source):
        return None
    lines = source.split("\n")
    pairs: list[YamlPair] = []
    at = 0
    while at < len(lines):
        line = lines[at]
        at += 1
        if not line.strip(" "):
            continue
        match = _SIMPLE_KEY.match(line)
        if match is None:
            return None
        text = (match[2] or "").rstrip(" ")
        value: YamlNode | None
        if text:
            value = _simple_value(text)
        else:
            value, at = _simple_children(lines, at)
        if value is None:
            return None
        pairs.append(YamlPair(_simple_node("scalar", match[1]), value))
    if not pairs:
        return None
    root = _simple_node("mapping", pairs)
    # Every node takes a character at least, so only a long source can pass libyaml's bound.
    if len(source) > MAX_EXPANDED_NODES and _node_count(root) > MAX_EXPANDED_NODES:
        return None
    return root


def _node_count(node: YamlNode) -> int:
    if node.kind == "sequence":
        return 1 + sum(map(_node_count, node.value))
    if node.kind == "mapping":
        return 1 + sum(_node_count(p.key) + _node_count(p.value) for p in node.value)
    return 1


def _composed_tree(source: str, lines: list[str], line_offset: int) -> YamlNode | None:
    """The node tree of YAML without tags, anchors or aliases, from libyaml's C composer instead
    of one Python event at a time. It is the tree `_parse_events` builds, ranges included
    (tests/core/parse/test_frontmatter_fast.py compares them); None when the source needs the full
    reading: a syntax error, a second document, or more than MAX_EXPANDED_NODES nodes."""
    return _tree(source, lines, line_offset, ranges=True)


def _tree(source: str, lines: list[str], line_offset: int, ranges: bool) -> YamlNode | None:
    top = _compose(source)
    if top is None:
        return None
    converter = _Converter(lines, line_offset, ranges)
    try:
        root = converter.convert(top)
    except RecursionError:  # pragma: no cover - nesting_too_deep refuses such input first
        return None
    return root if converter.count <= MAX_EXPANDED_NODES else None


class _Converter:
    """libyaml's composed nodes to ours. A class, not a closure that calls itself: that closure
    and its cell are a reference cycle per frontmatter, garbage only the cycle collector frees
    (a cold index reads 15,000 with the collector off)."""

    __slots__ = ("count", "line_offset", "lines", "ranges")

    def __init__(self, lines: list[str], line_offset: int, ranges: bool) -> None:
        self.lines, self.line_offset, self.ranges = lines, line_offset, ranges
        self.count = 0

    def convert(self, node: Any) -> YamlNode:
        self.count += 1
        span: tuple[int, int, int, int] | None = None
        if self.ranges:
            start, end = node.start_mark, node.end_mark
            sl, sc = start.line + self.line_offset, start.column
            el, ec = end.line + self.line_offset, end.column
            if ec == 0 and el > sl:
                el, ec = _trimmed_end(sl, el, ec, self.lines)
            if node.id != "scalar" and el == sl and ec < sc:  # an empty collection ends where it starts
                ec = sc
            span = (sl, sc, el, ec)
        if node.id == "scalar":
            return _ComposedNode("scalar", span, node.value, node.style or None, False)
        convert = self.convert
        if node.id == "sequence":
            items = [convert(item) for item in node.value]
            return _ComposedNode("sequence", span, items, None, bool(node.flow_style))
        pairs = [YamlPair(convert(key), convert(value)) for key, value in node.value]
        return _ComposedNode("mapping", span, pairs, None, bool(node.flow_style))


def _parse_yaml(doc: Document, source: str, line_offset: int) -> None:
    last = (doc.close_line or len(doc.lines)) - 1
    root, problems = parse_yaml(source, doc.lines, line_offset, last)
    doc.problems.extend(problems)
    if root is None:
        return
    doc.root = root
    if root.kind != "mapping":
        what = {"scalar": "a single value", "sequence": "a list", "alias": "an alias"}[root.kind]
        doc.problems.append(
            Problem(
                P_NOT_MAPPING,
                f"Frontmatter is {what}; it must be a mapping of `key: value` lines.",
                root.range,
            )
        )
        return
    _report_duplicates(doc, root)


def _events(source: str) -> Iterator[Any]:
    loader = _Loader(source)
    try:
        while loader.check_event():
            yield loader.get_event()
    finally:
        loader.dispose()


def duplicate_keys(root: YamlNode) -> list[tuple[YamlNode, YamlNode]]:
    """(first key, repeated key) for every key repeated within one mapping of the tree."""
    found: list[tuple[YamlNode, YamlNode]] = []
    todo = [root]
    while todo:
        node = todo.pop()
        if node.kind == "sequence":
            todo.extend(node.value)
            continue
        if node.kind != "mapping":
            continue
        seen: dict[str, YamlNode] = {}
        for pair in node.value:
            todo.append(pair.value)
            if pair.key.kind != "scalar":
                continue
            first = seen.setdefault(pair.key.value, pair.key)
            if first is not pair.key:
                found.append((first, pair.key))
    return found


def duplicate_message(first: YamlNode, key: YamlNode) -> str:
    return (
        f"Duplicate key `{key.value}` (first set on line {first.range.start.line + 1}); "
        "YAML parsers disagree on which value wins. Keep one."
    )


def _report_duplicates(doc: Document, root: YamlNode) -> None:
    for first, key in duplicate_keys(root):
        doc.problems.append(
            Problem(P_DUPLICATE_KEY, duplicate_message(first, key), key.range, {"first": first.range})
        )


_KEY_COLON = re.compile(r"^(\s*(?:-\s+)?)([^\s#'\"][^:#]*?):[ \t]+(\S.*?)\s*$")


def _syntax_problem(exc: yaml.MarkedYAMLError, lines: list[str], line_offset: int, last_line: int) -> Problem:
    mark = exc.problem_mark or exc.context_mark
    line = (mark.line if mark else 0) + line_offset
    col = mark.column if mark else 0
    line = min(line, last_line)
    if line == last_line and mark is not None and mark.line + line_offset > last_line:
        col = len(lines[line])
    text = lines[line] if 0 <= line < len(lines) else ""
    reason = exc.problem or "syntax error"
    if exc.context:
        reason = f"{reason} ({exc.context})"
    if (exc.problem or "").startswith(_MAPPING_VALUES):
        match = _KEY_COLON.match(text)
        key_line = line
        if not (match and ": " in match.group(3)):
            # `: ` on a continuation line of a plain value (`description: Extract tables.` then
            # `  Use when: ...`): the value belongs to the key above it. A lone word before the
            # colon (`  license: MIT`) is more likely a key indented by mistake: left to SK103.
            prose = match is not None and not _KEY_WORD.fullmatch(match.group(2).strip())
            key_line = _continued_from(lines, line, line_offset) if prose else -1
            match = _KEY_COLON.match(lines[key_line]) if key_line >= 0 else None
        if match and match.group(3)[0] not in "'\"|>[{&*!":
            key_text = lines[key_line]
            start = len(match.group(1)) + len(match.group(2)) + 1
            while start < len(key_text) and key_text[start] in " \t":
                start += 1
            value, end_line, end_col = _plain_value_extent(
                lines, key_line, start, last_line, len(match.group(1))
            )
            if ": " in value and end_line >= line:
                return Problem(
                    P_UNQUOTED_COLON,
                    f"The value of `{match.group(2).strip()}` contains `: `, which YAML reads as a new "
                    "key; quote the value.",
                    Range.of(key_line, start, end_line, end_col),
                    {"value": value},
                )
    end = min(col + 1, len(text)) if col < len(text) else col
    return Problem(P_YAML_SYNTAX, f"Invalid YAML: {reason}.", Range.of(line, col, line, end))


_COMMENT = re.compile(r"[ \t]#")
_KEY_WORD = re.compile(r"[\w.-]+")


def _continued_from(lines: list[str], line: int, first_line: int) -> int:
    """The line of the `key: value` whose plain value `line` continues, or -1: the nearest line
    above indented less than `line`, with only deeper, non-blank, non-comment lines between."""
    indent = len(lines[line]) - len(lines[line].lstrip(" \t"))
    for number in range(line - 1, first_line - 1, -1):
        text = lines[number]
        stripped = text.strip()
        if not stripped or stripped.startswith("#"):
            return -1
        if len(text) - len(text.lstrip(" \t")) < indent:
            return number if _KEY_COLON.match(text) else -1
    return -1


def _plain_value_extent(
    lines: list[str], line: int, start: int, last_line: int, key_indent: int
) -> tuple[str, int, int]:
    """The text of a plain scalar starting at (line, start), folded as YAML folds it, and where
    it ends: continuation lines are those indented deeper than the key; a comment ends it."""
    first = lines[line][start:]
    comment = _COMMENT.search(first)
    if comment:
        piece = first[: comment.start()].rstrip()
        return piece, line, start + len(piece)
    parts = [first.rstrip()]
    end_line, end_col = line, start + len(parts[0])
    for number in range(line + 1, last_line + 1):
        text = lines[number]
        stripped = text.strip()
        indent = len(text) - len(text.lstrip(" \t"))
        if not stripped or indent <= key_indent or stripped.startswith("#"):
            break
        comment = _COMMENT.search(text)
        piece = (text[: comment.start()] if comment else text).strip()
        parts.append(piece)
        end_line, end_col = number, indent + len(piece)
        if comment:
            break
    return " ".join(p for p in parts if p), end_line, end_col


def parse_yaml_file(text: str) -> tuple[YamlNode | None, list[Problem]]:
    """A whole YAML file (a tool manifest, a query file) with the frontmatter's guard rails:
    ranges are file positions; problems never raise."""
    text = text.removeprefix(BOM)
    lines = split_lines(text)
    if len(text) > MAX_FILE_BYTES:
        return None, [Problem(P_FILE_TOO_LARGE, "File is too large to read.", Range.point(0, 0))]
    deep = nesting_too_deep(lines)
    if deep is not None:
        message = f"The file nests deeper than {MAX_NESTING} levels; it is not read."
        return None, [Problem(P_TOO_COMPLEX, message, Range.of(deep, 0, deep, len(lines[deep])))]
    if not any(ln.strip() and not ln.lstrip().startswith("#") for ln in lines):
        return None, [Problem(P_EMPTY, "The file is empty.", Range.point(0, 0))]
    source = "".join(f"{ln}\n" for ln in lines)
    return parse_yaml(source, lines, 0, max(len(lines) - 1, 0))


def node_at(node: YamlNode, path: list[Any]) -> YamlNode:
    """The node a JSON path (keys and list indexes) points at, as deep as the tree allows."""
    for step in path:
        if node.kind == "alias" and node.target is not None:
            node = node.target
        if node.kind == "sequence" and isinstance(step, int) and step < len(node.value):
            node = node.value[step]
        elif node.kind == "mapping":
            match = next((p for p in node.value if p.name == step), None)
            if match is None:
                break
            node = match.value
        else:
            break
    return node


_READ_CHUNK = 1024 * 1024


def read_limited(path: str | os.PathLike[str], limit: int = MAX_FILE_BYTES) -> bytes:
    """A regular file's bytes, at most `limit + 1` of them (so "too large" can still be told).

    Never blocks on a FIFO or device and never reads a huge file whole; raises OSError with a
    clear message for anything that is not a regular file.
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", os.fspath(path))
        return read_open_file(fd, info.st_size, limit + 1)
    finally:
        os.close(fd)


def read_open_file(fd: int, size: int, want: int | None = None) -> bytes:
    """What the open file `fd` holds from its offset on, at most `want` bytes (None: all of it).
    First as many as its stat's `size` says and one more, to see it grew: not `want` at once, as
    a buffered read of 4 MiB maps and unmaps a buffer that size for a 5 KiB file. Then on, as a
    buffered read does, to the end of the file (a read may return less than asked: over 2 GiB,
    network file systems) or `want` bytes."""
    data = os.read(fd, size + 1 if want is None else min(want, size + 1))
    if not data or (want is not None and len(data) >= want):
        return data
    parts = [data]
    total = len(data)
    while want is None or total < want:
        more = os.read(fd, _READ_CHUNK if want is None else min(want - total, _READ_CHUNK))
        if not more:
            break
        parts.append(more)
        total += len(more)
    return data if len(parts) == 1 else b"".join(parts)


def when_to_use(doc: Document) -> str:
    """The frontmatter's `when_to_use` text, trimmed ("" when absent or not text)."""
    pair = doc.get("when_to_use")
    if pair is None or pair.value.kind != "scalar" or pair.value.is_null:
        return ""
    return str(pair.value.value).strip()
