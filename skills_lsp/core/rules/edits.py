"""Text-edit builders for fixes: each returns edits that a rule's quick fix applies."""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable, Iterator, Sequence

from skills_lsp.core import schema
from skills_lsp.core.model import Applicability, FileChange, Finding, Fix, Position, Range, TextEdit
from skills_lsp.core.parse.frontmatter import Document, YamlNode, YamlPair

NAME_MAX = schema.max_length("name")


def replace(title: str, rng: Range, text: str, applicability: Applicability = Applicability.SAFE) -> Fix:
    return Fix(title, (TextEdit(rng, text),), applicability)


_PLAIN_SAFE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9 _.,/()*+=@-]*")
# Plain scalars that YAML 1.1 or 1.2 would read as something other than a string.
_NOT_A_STRING = re.compile(
    r"(?i:null|~|true|false|yes|no|on|off|y|n)"
    r"|[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?"
    r"|0x[0-9a-fA-F_]+|0o[0-7_]+|0b[01_]+|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)"
    r"|[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}.*|[0-9]+(?::[0-5]?[0-9])+(?:\.[0-9]*)?"
)


def yaml_string(text: str) -> str:
    """`text` as a YAML scalar that every parser reads back as this same string: plain when
    that is safe, else double-quoted (JSON escapes are valid YAML)."""
    if _PLAIN_SAFE.fullmatch(text) and not text.endswith(" ") and not _NOT_A_STRING.fullmatch(text):
        return text
    return json.dumps(text, ensure_ascii=False)


def suggest_name(name: str, unicode: bool = False) -> str:
    """A valid name for `name`: lowercase kebab-case, at most 64 characters; ASCII only unless
    `unicode` (the skills-ref reading, which accepts Unicode letters and digits)."""
    if unicode:
        folded = unicodedata.normalize("NFKC", name).lower()
        slug = "-".join(w for w in re.split(r"[^\w]|_", folded) if w)
    else:
        decomposed = unicodedata.normalize("NFKD", name)
        ascii_only = "".join(c for c in decomposed if not unicodedata.combining(c))
        slug = re.sub(r"[^a-z0-9]+", "-", ascii_only.lower()).strip("-")
    slug = slug[:NAME_MAX].rstrip("-")
    return slug or "skill"


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def pair_lines(doc: Document, pair: YamlPair) -> Range:
    """Whole lines holding a pair (top-level or nested), including the line break after it."""
    start = pair.key.range.start.line
    end = pair.value.range.end.line
    key_indent = pair.key.range.start.character
    # Following lines indented deeper than the key belong to its value (e.g. a list under `key:`).
    close = doc.close_line if doc.close_line is not None else len(doc.lines)
    while end + 1 < close and doc.lines[end + 1].strip() and _indent(doc.lines[end + 1]) > key_indent:
        end += 1
    return Range(Position(start, 0), Position(end + 1, 0))


_BLOCK_SCALAR = re.compile(r"(?:^\s*|:[ \t]+|-[ \t]+)[|>][0-9+-]*[ \t]*$")


def _scan(line: str, quote: str) -> tuple[int, str]:
    """One YAML line read from inside `quote` ('', "'" or '"'): (where its comment starts, -1
    for none; the quote still open at its end). Quotes open only where a value starts; `''`
    and `\\"` are escapes."""
    i, indent = 0, len(line) - len(line.lstrip(" \t"))
    while i < len(line):
        char = line[i]
        if quote == "'":
            if char == "'":
                if line[i + 1 : i + 2] == "'":
                    i += 1  # '' is a quote inside single quotes
                else:
                    quote = ""
        elif quote == '"':
            if char == "\\":
                i += 1
            elif char == '"':
                quote = ""
        elif char in "'\"":
            before = line[:i].rstrip(" \t")
            if i == indent or (before.endswith((":", "-", ",", "[", "{", "?")) and line[i - 1] in " \t[{,"):
                quote = char
        elif char == "#" and (i == 0 or line[i - 1] in " \t"):
            return i, quote
        i += 1
    return -1, quote


def comment_of(line: str) -> str | None:
    """The comment on one YAML line read on its own (`# ...`), if any."""
    start = _scan(line, "")[0]
    return line[start:].rstrip() if start >= 0 else None


def yaml_comments(lines: Sequence[str], first: int = 0) -> Iterator[tuple[int, int, str]]:
    """(line number, column, text) of each comment in YAML `lines` (numbered from `first`).
    Quoted values that span lines and block scalars (`|`, `>`) are text, not comments."""
    quote, block = "", -1  # block: the indent of a line that opened a block scalar
    for number, line in enumerate(lines, first):
        depth = len(line) - len(line.lstrip(" \t"))
        if block >= 0 and (not line.strip() or depth > block):
            continue  # a block scalar's content
        block = -1
        start, quote = _scan(line, quote)
        if start >= 0:
            yield number, start, line[start:].rstrip()
        code = line[:start] if start >= 0 else line
        if not quote and _BLOCK_SCALAR.search(code):
            block = depth


def kept_comments(doc: Document, rng: Range, indent: str = "") -> str:
    """The comments inside the whole lines of `rng`, one per line: what a fix that rewrites
    those lines puts back, so nothing a user wrote is lost."""
    comments = yaml_comments(doc.lines[rng.start.line : rng.end.line])
    return "".join(f"{indent}{text}{doc.eol}" for _, _, text in comments)


def find_pair(node: YamlNode, key_range: Range) -> YamlPair | None:
    """The pair, anywhere below `node`, whose key is at `key_range`."""
    todo = [node]
    while todo:
        current = todo.pop()
        if current.kind == "sequence":
            todo.extend(current.value)
        elif current.kind == "mapping":
            pairs: list[YamlPair] = current.value
            for pair in pairs:
                if pair.key.range == key_range:
                    return pair
                todo.append(pair.value)
    return None


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


class DeferredFix(Fix):
    """A fix whose edits are built when first read (an editor's code action, `check --fix`).

    `check` reports a fix's title and kind but never prints its edits, and building them (the
    comments of the lines a fix rewrites, say) can cost more than finding the problem. `build`
    must return at least one edit. Sent to another process (`check --jobs`), it goes as a cached
    finding's fix does, with its title and kind but no edits: `fixing.fix_file` checks the file
    again before fixing it."""

    __slots__ = ("_build", "_built")
    _build: Callable[[], tuple[TextEdit, ...]]
    _built: tuple[TextEdit, ...] | None

    def __init__(
        self, title: str, build: Callable[[], tuple[TextEdit, ...]], applicability: Applicability
    ) -> None:
        object.__setattr__(self, "title", title)
        object.__setattr__(self, "applicability", applicability)
        object.__setattr__(self, "changes", ())
        object.__setattr__(self, "_build", build)
        object.__setattr__(self, "_built", None)

    @property
    def edits(self) -> tuple[TextEdit, ...]:
        built: tuple[TextEdit, ...] | None = self._built
        if built is None:
            built = self._build()
            object.__setattr__(self, "_built", built)
        return built

    def detached(self) -> Fix:
        """The fix as a cached finding holds it: title and kind, no edits, and no reference to
        the parsed document the edits would be built from."""
        return Fix(self.title, (), self.applicability)

    def __reduce__(
        self,
    ) -> tuple[type[Fix], tuple[str, tuple[TextEdit, ...], Applicability, tuple[FileChange, ...]]]:
        return (Fix, (self.title, (), self.applicability, ()))


def detach_fixes(finding: Finding) -> Finding:
    """`finding` without its deferred fixes' documents (`DeferredFix.detached`), for results
    kept for a whole run, which would otherwise keep every file's parse alive."""
    if not any(isinstance(fix, DeferredFix) for fix in finding.fixes):
        return finding
    fixes = tuple(fix.detached() if isinstance(fix, DeferredFix) else fix for fix in finding.fixes)
    # The constructor, not `dataclasses.replace`, which reads the class's fields on every call.
    return Finding(finding.path, finding.code, finding.severity, finding.message, finding.range, fixes)


def has_edits(fix: Fix) -> bool:
    """Whether `fix` edits its own file, without building a deferred fix's edits."""
    return isinstance(fix, DeferredFix) or bool(fix.edits)


def move_under_metadata(doc: Document, pair: YamlPair) -> Fix | None:
    """Delete a top-level pair and add it as a string entry of `metadata` (edits built when read)."""
    text = scalar_or_join(pair.value)
    if text is None:
        return None
    metadata = doc.get("metadata")
    if metadata is not None:
        if any(p.name == pair.name for p in metadata.value.pairs):
            return None  # `metadata` has that key already: moving it would make a duplicate (SK105)
        value = metadata.value
        if not (value.kind == "mapping" and not value.flow and value.pairs) and not value.is_null:
            return None
    # Unsafe: a runtime that read the key at the top level no longer sees it there.
    return DeferredFix(
        f"Move `{pair.name}` under `metadata`",
        lambda: _move_edits(doc, pair, text, metadata),
        Applicability.UNSAFE,
    )


def _move_edits(doc: Document, pair: YamlPair, text: str, metadata: YamlPair | None) -> tuple[TextEdit, ...]:
    eol = doc.eol
    entry = f"{yaml_string(pair.name)}: {json.dumps(text, ensure_ascii=False)}{eol}"
    lines = pair_lines(doc, pair)
    delete = TextEdit(lines, kept_comments(doc, lines))  # its comments stay where they were
    if metadata is None:
        add = insert_before_close(doc, f"metadata:{eol}  {entry}")
    elif metadata.value.is_null:
        add = TextEdit(Range.point(metadata.key.range.start.line + 1, 0), f"  {entry}")
    else:  # a block mapping with entries (move_under_metadata refuses any other value)
        indent = " " * metadata.value.pairs[0].key.range.start.character
        last_line = pair_lines(doc, metadata.value.pairs[-1]).end.line
        add = TextEdit(Range.point(last_line, 0), f"{indent}{entry}")
    return tuple(sorted([delete, add], key=lambda e: e.range.start))
