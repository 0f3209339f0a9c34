"""Relative file references in a Markdown body, with their ranges.

Finds links and images (`[text](references/x.md)`, reference-style `[text][ref]` with its
`[ref]: references/x.md` definition) and bare bundled-file paths (`scripts/run.py`,
`references/...`, `assets/...`, also inside inline code) outside code blocks. Used by the
reference rules, and by the server for document links and go-to-definition.

The body is read by a CommonMark parser (markdown-it-py), so what is code and what is a link
is what every Markdown renderer shows: fences of backticks or tildes, longer fences around
shorter ones, fences inside lists and block quotes, indented code blocks, code spans that hide
link syntax, and reference-style links all come out right. markdown-it gives block tokens line
ranges but inline tokens no columns, so the parser's own link-destination helper is wrapped to
record where each destination it accepted starts and ends; those offsets into a block's text are
mapped back to the source line and column.

Parsing is the cost (markdown-it-py is pure Python), so a body is cut at lines where every
block before has ended (`_top_level_starts`), and only the pieces that may hold a reference are
parsed, each alone: the same blocks, found for a fraction of the text. A body with a `]:` is cut
too: every piece's blocks are read (definitions included) before any piece's links are resolved,
as one parse reads them. A piece that is one plain paragraph, or one single-line list item, does
not go through markdown-it's block parser at all (`_simple_blocks`): its text is what that
parser would give, and only its inline text is parsed, when it has a bracket.
"""

from __future__ import annotations

import re
import threading
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from itertools import accumulate, islice
from types import SimpleNamespace
from typing import Any, Literal, NamedTuple
from urllib.parse import unquote

from markdown_it import MarkdownIt
from markdown_it import helpers as md_helpers
from markdown_it.rules_block import StateBlock
from markdown_it.rules_inline import StateInline

from skills_lsp.core.model import BUNDLE_DIRS, Range
from skills_lsp.core.parse.frontmatter import Document

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


# --- the parser, instrumented ---------------------------------------------------------------


class _Recording(threading.local):
    """What the parser accepted during one `find_references` call (per thread: the server may
    check documents from several threads)."""

    def __init__(self) -> None:
        # (text parsed, start, end) of every link destination accepted, in parse order
        self.destinations: list[tuple[str, int, int]] = []
        self.link_spans: list[tuple[int, int]] = []  # whole links in the inline text being parsed
        self.definitions: list[tuple[int, str, int, int]] = []  # (first line, text, start, end)
        self.used: set[str] = set()  # the destinations that reference-style links resolve to


_RECORDING = _Recording()


def _parse_destination(text: str, pos: int, maximum: int) -> Any:
    result = md_helpers.parseLinkDestination(text, pos, maximum)
    if result.ok:
        _RECORDING.destinations.append((text, pos, result.pos))
    return result


_LINK_TOKENS = ("link_open", "image")
_InlineRule = Callable[[StateInline, bool], bool]


def _recording_link_rule(rule: _InlineRule, attribute: str) -> _InlineRule:
    """`link` / `image` that keep the destination they parsed when they produce a link."""

    def wrapped(state: StateInline, silent: bool) -> bool:
        mark, start, first_token = len(_RECORDING.destinations), state.pos, len(state.tokens)
        matched = rule(state, silent)
        recorded = _RECORDING.destinations
        if silent or not matched:  # a look-ahead, or no link: whatever it parsed does not count
            del recorded[mark:]
            return matched
        _RECORDING.link_spans.append((start, state.pos))
        # An inline destination is the first one recorded since `mark`; when the `(...)` form
        # failed and the link is reference-style after all, that record is not its own.
        # the link's own token (a pending text token may be pushed before it)
        opened = next((t for t in state.tokens[first_token:] if t.type in _LINK_TOKENS), None)
        written = opened.attrGet(attribute) if opened is not None else None
        inline = False
        if len(recorded) > mark:
            text, dest_start, dest_end = recorded[mark]
            own = md_helpers.parseLinkDestination(text, dest_start, dest_end)
            inline = text is state.src and written == state.md.normalizeLink(own.str)
            if not inline:
                del recorded[mark]
        if not inline and isinstance(written, str):
            _RECORDING.used.add(written)
        return matched

    return wrapped


_BlockRule = Callable[[StateBlock, int, int, bool], bool]


def _recording_reference_rule(rule: _BlockRule) -> _BlockRule:
    """The `[label]: destination` rule, keeping where each definition's destination is."""

    def wrapped(state: StateBlock, start_line: int, end_line: int, silent: bool) -> bool:
        mark = len(_RECORDING.destinations)
        matched = rule(state, start_line, end_line, silent)
        found = _RECORDING.destinations[mark:]
        del _RECORDING.destinations[mark:]
        if matched and not silent and found:
            text, dest_start, dest_end = found[-1]
            _RECORDING.definitions.append((start_line, text, dest_start, dest_end))
        return matched

    return wrapped


def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark")
    # A pure function of the URL, called twice per link (by the link rule, then to tell a
    # link's own destination): each result is kept.
    md.normalizeLink = lru_cache(maxsize=4096)(md.normalizeLink)  # type: ignore[method-assign]
    # Only the block structure is parsed in one go; each inline text is parsed by
    # `find_references` itself, so it knows which block the recorded offsets belong to.
    md.core.ruler.disable(["inline", "text_join"])
    md.inline.ruler.disable(["emphasis"])  # emphasis never changes what is a link or code
    md.inline.ruler2.disable(["emphasis"])
    md.helpers = SimpleNamespace(  # type: ignore[assignment]
        parseLinkLabel=md_helpers.parseLinkLabel,
        parseLinkDestination=_parse_destination,
        parseLinkTitle=md_helpers.parseLinkTitle,
    )
    for name, attribute in (("link", "href"), ("image", "src")):
        rule = md.inline.ruler.__rules__[md.inline.ruler.__find__(name)]
        md.inline.ruler.at(name, _recording_link_rule(rule.fn, attribute), {"alt": list(rule.alt)})
    reference = md.block.ruler.__rules__[md.block.ruler.__find__("reference")]
    md.block.ruler.at("reference", _recording_reference_rule(reference.fn), {"alt": list(reference.alt)})
    return md


_MD = _parser()


# --- offsets in a block's text -> source positions ------------------------------------------


class _BlockText:
    """Maps offsets in the text markdown-it parsed for a block (container markers and
    indentation removed, one line per source line) back to source line and column."""

    def __init__(self, text: str, first_line: int, source: list[str]) -> None:
        self.starts: list[int] = []
        self.columns: list[int] = []
        offset = 0
        for index, part in enumerate(text.split("\n")):
            self.starts.append(offset)
            offset += len(part) + 1
            line_number = first_line + index
            line = source[line_number] if line_number < len(source) else ""
            if line.endswith(part):
                column = len(line) - len(part)
            else:  # trailing blanks stripped (a paragraph's last line, a heading's closing #s)
                found = line.find(part)
                column = found if found >= 0 else max(len(line) - len(part), 0)
            self.columns.append(column)
        self.first_line = first_line

    def position(self, offset: int) -> tuple[int, int]:
        index = bisect_right(self.starts, offset) - 1
        return self.first_line + index, self.columns[index] + offset - self.starts[index]


def _link(text: str, start: int, end: int, block: _BlockText, body_start: int) -> Reference | None:
    raw = text[start:end]
    target = _clean_link(raw)
    if not target or (_SCHEME.match(target) and not _DRIVE.match(target)):
        return None
    line, col = block.position(start + (1 if raw.startswith("<") else 0))
    return Reference(target, Range.of(body_start + line, col, body_start + line, col + len(target)), "link")


def _merged(spans: list[tuple[int, int]]) -> tuple[list[int], list[int]]:
    """Starts and ends of the union of `spans` (a link may hold an image), sorted."""
    starts: list[int] = []
    ends: list[int] = []
    for start, end in sorted(spans):
        if ends and start <= ends[-1]:
            ends[-1] = max(ends[-1], end)
        else:
            starts.append(start)
            ends.append(end)
    return starts, ends


def _inside(spans: tuple[list[int], list[int]], offset: int) -> bool:
    starts, ends = spans
    at = bisect_right(starts, offset) - 1
    return at >= 0 and offset < ends[at]


_BARE_STARTS = tuple(folder + sep for folder in BUNDLE_DIRS for sep in "/\\")
_BLANK_LINE = re.compile(r"\n[ \t]*(?:\n|\Z)")


def _may_refer(text: str, start: int = 0, end: int | None = None) -> bool:
    """Whether `text` (or `text[start:end]`, read in place) can hold a reference at all: a link
    needs `](` or a `]:` definition, a bare path its folder and a separator. Plain substring
    tests, far cheaper than a parse; most text has no `]`, `/` or `\\` at all, so those three
    are looked for first."""
    if end is None:
        end = len(text)
    find = text.find
    if find("]", start, end) >= 0 and (find("](", start, end) >= 0 or find("]:", start, end) >= 0):
        return True
    if find("/", start, end) < 0 and find("\\", start, end) < 0:
        return False
    # `_BARE_STARTS`, spelt out: a generator over it costs more than the searches
    return (
        find("scripts/", start, end) >= 0
        or find("references/", start, end) >= 0
        or find("assets/", start, end) >= 0
        or find("scripts\\", start, end) >= 0
        or find("references\\", start, end) >= 0
        or find("assets\\", start, end) >= 0
    )


def _text_to_parse(lines: list[str], text: str | None = None) -> str:
    """The body up to the blank line after the last line that may hold a reference ("" if none);
    `text`: the lines joined by `\n`, if the caller has them so.

    Parsing is the cost (markdown-it-py, pure Python), and what follows that blank line cannot
    change what comes before it: blocks are read top down, no inline construct spans a blank
    line, and a definition that a link above uses holds `]:`, so it is in the part kept."""
    if text is None:
        text = "\n".join(lines)
    if "]:" in text:  # a definition may be used anywhere, by a link with no marker of its own
        return text
    # The last of the other markers: each search reads only the text after the last one found.
    last = text.rfind("](")
    for marker in _BARE_STARTS:
        found = text.rfind(marker, last + 1)
        if found > last:
            last = found
    if last < 0:
        return ""
    blank = _BLANK_LINE.search(text, last)
    return text if blank is None else text[: blank.start()]


def _indent(line: str) -> tuple[int, int]:
    """(column, characters) of a line's leading blanks, tabs to stops of 4 as CommonMark counts."""
    chars = len(line) - len(line.lstrip(" \t"))
    if "\t" not in line[:chars]:
        return chars, chars
    column = 0
    for count, char in enumerate(line):
        if char == " ":
            column += 1
        elif char == "\t":
            column += 4 - column % 4
        else:
            return column, count
    return column, len(line)


def _fence_opening(rest: str) -> tuple[str, int] | None:
    """(marker, length) if `rest` (a line after its indentation) opens a fence."""
    marker = rest[:1]
    if marker not in ("`", "~"):
        return None
    length = len(rest) - len(rest.lstrip(marker))
    if length < 3 or (marker == "`" and "`" in rest[length:]):
        return None
    return marker, length


def _closes(rest: str, marker: str, length: int) -> bool:
    """Whether `rest` (a line after its indentation, indented 0-3) closes a `marker` fence."""
    run = len(rest) - len(rest.lstrip(marker))
    return rest[:1] == marker and run >= length and not rest[run:].strip(" \t")


_HEADING = re.compile(r"#{1,6}(?:[ \t]|$)")
_BULLET = re.compile(r"[-*+][ \t]+[^ \t]")
_ORDERED = re.compile(r"(\d{1,9})[.)][ \t]+[^ \t]")
_RULE = re.compile(r"([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_ITEM_LEADS = frozenset("-*+0123456789")


def _list_item(line: str) -> re.Match[str] | None:
    """An unindented list item that is not empty (a thematic break such as `- - -` is none)."""
    if line[:1] not in _ITEM_LEADS or _RULE.match(line):
        return None
    return _BULLET.match(line) or _ORDERED.match(line)


def _content_column(line: str) -> int | None:
    """Where an unindented list item's content starts, or None (not an item, or tabs after its
    marker, whose column this does not work out)."""
    item = _list_item(line)
    if item is None or "\t" in line[: item.end()]:
        return None
    return item.end() - 1


def _starts_block(line: str, blank_before: bool, in_item: bool) -> bool:
    """Whether `line`, unindented and outside any fence or HTML block, starts a top-level block
    that everything before it has closed: after a blank line any line does (a list item or a
    block quote needs its indentation or its `>`, a paragraph ends at the blank); without one,
    a line that interrupts a paragraph and ends any list item by being unindented: an ATX
    heading, a fence, a bullet item that is not empty, an ordered one that starts at 1. Inside
    a list item (`in_item`), any unindented item ends the item's paragraph and starts the next."""
    if blank_before:
        return True
    if _HEADING.match(line) or _fence_opening(line) is not None:
        return True
    item = _list_item(line)
    if item is None:
        return False
    return in_item or item.lastindex is None or int(item.group(1)) == 1


_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_PLAIN_LEADS = _LETTERS | frozenset("|")  # with non-ASCII characters: lead no block
_NOT_CODE_LEAD = frozenset(("", "`", "~"))


class _Cuts(NamedTuple):
    starts: list[int]  # lines where a piece starts (0 is implied)
    code: set[int]  # the starts of pieces that are one top-level fenced code block (and blanks)


@lru_cache(maxsize=64)
def _closing_fence(marker: str, length: int) -> re.Pattern[str]:
    """A line that closes a fence of `length` `marker`s (`_closes`, as a pattern over many lines:
    indented 0-3 columns, so by spaces only, as a tab takes the column to 4)."""
    return re.compile(rf"^ {{0,3}}{re.escape(marker)}{{{length},}}[ \t]*$", re.MULTILINE)


def _top_level_starts(lines: list[str], text: str | None = None) -> _Cuts:
    """Lines where the body can be cut in two, each part parsed alone giving the same blocks.

    Such a line starts in column 0 and starts a top-level block (`_starts_block`), unless a
    block that spans blank lines is open at the top level: a fenced code block, or an HTML
    block. Fences are followed here exactly as far as the cut points need: one opened in column
    0 is a top-level fence and ends at its closing fence (the line after it starts a new block,
    and the piece it makes is code); one indented 1-3 columns is either top-level or inside a
    list item, and both readings agree on where it ends as long as no later line is less
    indented than it (else nothing further is cut). A comment (`<!--`) that starts a top-level
    block runs to the line holding `-->`, and the line after starts a new block; any other line
    that may start an HTML block, a carriage return or a NUL (which markdown-it rewrites) stops
    the cutting.

    `text` is the lines joined by `\n` (when the caller has it). The code of a fence opened in
    column 0 is not read line by line: nothing in it but its closing line changes what follows,
    and a search of the text finds that line (a body is about half such code)."""
    cuts = _Cuts([], set())
    if text is None:
        text = "\n".join(lines)
    stopped = "\r" in text or "\0" in text
    if stopped:  # the cutting stops at the first line holding one: read no further
        first = min(at for at in (text.find("\r"), text.find("\0")) if at >= 0)
        lines = lines[: text.count("\n", 0, first)]
        text = "\n".join(lines)
    # A line whose start in `text` is known (the latest closing fence found by a search): the
    # start of a later line is counted from there, with sums in C rather than a loop.
    known_line = known_offset = 0
    numbered = enumerate(lines)
    fence: tuple[str, int] | None = None  # the open fence's marker and length
    fence_indent = 0
    blank = False
    comment = False  # inside a top-level HTML comment block
    closed_top_level = False  # the line before closed a fence or comment block opened in column 0
    code_start: int | None = None  # where the piece of the open top-level fence starts
    # The content column of the list item the last cut started, while every line since is
    # indented that far (so belongs to it): None when the cut started anything else.
    item_indent: int | None = None
    for number, line in numbered:
        if comment:  # an HTML comment block runs to the line holding `-->`, blank lines and all
            if "-->" in line:
                comment, closed_top_level, blank = False, True, False
            continue
        lead = line[:1]
        if fence is None and (lead in _PLAIN_LEADS or lead > "\x7f" or lead == "#"):
            # Most lines: a paragraph's, a cut only after a blank line or a closed fence, never
            # a fence or HTML, unindented so in no list item: what the steps below find, sooner.
            # A heading's is one too, and also cuts where it interrupts a paragraph.
            if blank or closed_top_level or (lead == "#" and _HEADING.match(line)):
                if closed_top_level and code_start is not None:
                    cuts.code.add(code_start)
                if number:
                    cuts.starts.append(number)
            item_indent = code_start = None
            blank = closed_top_level = False
            continue
        if fence is None and lead in _ITEM_LEADS:
            # A list item's line, or a paragraph's (`**bold**`, `2024 ...`), or a thematic break:
            # `_starts_block` and `_content_column`, reading the item once.
            item = _list_item(line)
            # `_starts_block`: an item interrupts a paragraph if bulleted, numbered 1, or in a list
            interrupts = item is not None and (
                item_indent is not None or item.lastindex is None or int(item[1]) == 1
            )
            if blank or closed_top_level or not number or interrupts:
                if closed_top_level and code_start is not None:
                    cuts.code.add(code_start)
                if number:
                    cuts.starts.append(number)
                item_indent = None if item is None or "\t" in line[: item.end()] else item.end() - 1
            else:
                item_indent = None
            code_start = None
            blank = closed_top_level = False
            continue
        if not line:
            blank = True
            continue
        if (
            fence is not None
            and fence_indent == 0
            and lead not in _NOT_CODE_LEAD
            and (lead not in " \t" or (line.startswith("    ") and line.strip(" \t")))
        ):
            # A line of a column-0 fence's code that cannot close it: unindented, or indented
            # 4 or more (`_NOT_CODE_LEAD` holds "", so a blank line is not taken here).
            blank = False
            continue
        column, chars = _indent(line) if lead in " \t" else (0, 0)
        rest = line[chars:]
        if not rest:
            blank = True
            continue
        if fence is not None:
            if column < fence_indent:  # an indented fence's two readings may part here
                return cuts
            if column <= 3 and _closes(rest, *fence):
                fence = None
                closed_top_level = fence_indent == 0
            blank = False
            continue
        in_item = item_indent is not None
        cut = closed_top_level or (column == 0 and (number == 0 or _starts_block(line, blank, in_item)))
        if closed_top_level and code_start is not None:
            cuts.code.add(code_start)
        code_start = None
        if cut:
            if number:
                cuts.starts.append(number)
            item_indent = _content_column(line) if column == 0 else None
        elif item_indent is not None and column < item_indent:
            item_indent = None
        closed_top_level = False
        if column <= 3 and rest[0] == "<":
            if not (cut and column == 0 and rest.startswith("<!--")):
                return cuts
            # A top-level comment block (HTML block type 2): the line after its end starts a
            # new block, as after a closed fence, but it is not code.
            comment = "-->" not in line
            closed_top_level = not comment
            blank = False
            continue
        if column <= 3:
            fence = _fence_opening(rest)
            fence_indent = column
            if cut and column == 0 and fence is not None:
                code_start = number
                code = known_offset + sum(map(len, lines[known_line : number + 1])) + number + 1 - known_line
                closing = _closing_fence(*fence).search(text, code)  # `code`: where the next line starts
                if closing is None:  # it runs to the end
                    break
                known_line = number + 1 + text.count("\n", code, closing.start())
                known_offset = closing.start()
                next(islice(numbered, known_line - number - 1, None), None)  # on to its closing line
                fence, closed_top_level, blank = None, True, False
                continue
        blank = False
    if code_start is not None and not stopped:  # a fence not closed runs to the end: code all the same
        cuts.code.add(code_start)
    return cuts


def _pieces(lines: list[str], text: str) -> list[tuple[int, str]]:
    """(first line, text) of the parts of `text` that may hold a reference, each parseable alone.

    With a `]:` in the text a definition may serve a link anywhere, so a part with a bracket
    is kept too (`[x][ref]`, `[ref]`): its links resolve once every part's blocks are read.

    Most parts are a line or two and very few may refer, so they are not tested one by one: a
    run of parts that are not code is tested whole, and halved only while the half tested may
    refer. What is looked for holds no line break, so a run holds it exactly when one of its
    parts does."""
    definitions = "]:" in text
    count = text.count("\n") + 1
    lines = lines[:count]
    cuts = _top_level_starts(lines, text)
    bounds = [0, *cuts.starts, count]
    # the characters before each line, but for its line breaks: line n starts at before[n] + n
    before = list(accumulate(map(len, lines), initial=0))
    # The parts are bounds[i] to bounds[i + 1]; runs of them that are not code, as (i, j).
    runs: list[tuple[int, int]] = []
    after_code = 0
    for code in sorted(cuts.code):  # a fenced code block: examples, not references
        at = bisect_left(bounds, code)
        if at > after_code:
            runs.append((after_code, at))
        after_code = at + 1
    if after_code < len(bounds) - 1:
        runs.append((after_code, len(bounds) - 1))
    pieces: list[tuple[int, str]] = []
    stack = runs[::-1]
    while stack:
        low, high = stack.pop()
        first, end = bounds[low], bounds[high]
        start, stop = before[first] + first, before[end] + end - 1  # tested in place, not copied
        if not (_may_refer(text, start, stop) or (definitions and text.find("[", start, stop) >= 0)):
            continue
        if high - low == 1:
            # With its line break: a backslash at the end of a piece's last line escapes it, as
            # in one parse of the whole text (a definition's destination `x\\` takes the break).
            pieces.append((first, text[start : stop + 1]))
        else:
            middle = (low + high) // 2
            stack += ((middle, high), (low, middle))
    return pieces


def find_references(doc: Document) -> list[Reference]:
    """The references of `doc`'s body, parsing only the parts of it that may hold one; found
    once per document (kept in `doc.derived`: they depend on its text alone)."""
    found: list[Reference] | None = doc.derived.get(_REFERENCES)
    if found is None:
        found = doc.derived[_REFERENCES] = _find_references(doc, split=True)
    return list(found)


_REFERENCES = "references"  # find_references' key in `Document.derived`


def references_found(doc: Document) -> list[Reference] | None:
    """What `find_references(doc)` found, if it was asked (None if not)."""
    found: list[Reference] | None = doc.derived.get(_REFERENCES)
    return found


def give_references(doc: Document, found: list[Reference]) -> None:
    """Gives `doc` the references found in a document of the very same text (not copied: neither
    changes them), so that `find_references(doc)` answers without reading its body."""
    doc.derived[_REFERENCES] = found


class _Block(NamedTuple):
    content: str  # the text markdown-it gives the block (an inline's, or an HTML block's)
    line: int  # its first line in the body
    html: bool


def _body_text(doc: Document, start_line: int) -> str | None:
    """The body's lines joined by `\n`, as a slice of the document's text where that is the same
    (no CR in it, and its lines the text's): no join of every line of the body. None elsewhere."""
    lines, text = doc.lines, doc.text
    if doc.cr_line_breaks or start_line >= len(lines) or len(text) != sum(map(len, lines)) + len(lines) - 1:
        return None
    return text[sum(map(len, lines[:start_line])) + start_line :]


def _find_references(doc: Document, split: bool) -> list[Reference]:
    start_line = doc.body_start_line
    lines = doc.lines[start_line:]
    text = _text_to_parse(lines, _body_text(doc, start_line))
    if not text:  # most bodies: no parse at all
        return []
    pieces = _pieces(lines, text) if split else [(0, text)]
    recording = _RECORDING
    recording.destinations, recording.link_spans, recording.definitions = [], [], []
    recording.used = set()
    env: dict[str, Any] = {}
    refs: list[Reference] = []
    try:
        # Every piece's blocks first, as one parse reads all definitions before any inline text.
        blocks: list[_Block] = []
        for first, piece in pieces:
            simple = _simple_blocks(piece, first) if split else None
            blocks.extend(simple if simple is not None else _blocks(piece, first, env))
        definitions = bool(env.get("references"))
        for block in blocks:
            _block_references(block, lines, start_line, env, definitions, refs)
        # A definition is a reference where a link uses it: an unused one is not rendered
        # (`1. [Step 1]: [Description]` in a template is one).
        for first, definition, dest_start, dest_end in recording.definitions:
            parsed = md_helpers.parseLinkDestination(definition, dest_start, dest_end)
            if _MD.normalizeLink(parsed.str) not in recording.used:
                continue
            block_text = _BlockText(definition, first, lines)
            found = _link(definition, dest_start, dest_end, block_text, start_line)
            if found is not None:
                refs.append(found)
    finally:
        recording.destinations, recording.link_spans, recording.definitions = [], [], []
        recording.used = set()
    refs.sort(key=lambda r: r.range.start)
    return refs


def _blocks(text: str, first: int, env: dict[str, Any]) -> list[_Block]:
    """The inline and HTML blocks markdown-it reads in `text`, which starts at body line `first`
    (definitions go into `env` and the recording)."""
    recording = _RECORDING
    mark = len(recording.definitions)
    tokens = _MD.parse(text, env)
    recording.definitions[mark:] = [
        (first + line, source, start, end) for line, source, start, end in recording.definitions[mark:]
    ]
    return [
        _Block(token.content, first + token.map[0], token.type == "html_block")
        for token in tokens
        if token.map is not None and token.type in ("inline", "html_block")
    ]


# A line starting with one of these (and not with a fence) starts a paragraph and cannot
# interrupt one: no block (heading, list item, block quote, HTML, fence, break, setext
# underline, indented code) starts with it, and a definition needs a `]:`.
_PARAGRAPH_START = _LETTERS | frozenset("[!`|")
_SIMPLE_ITEM = re.compile(r"(?:[-*+]|\d{1,9}[.)]) (?=[^ \t])")


def _paragraph_line(line: str) -> bool:
    lead = line[:1]
    if lead in _PARAGRAPH_START or lead > "\x7f":  # no block starts with a non-ASCII character
        return not line.startswith("```")
    # `**bold**` and the like: a `*` with no blank after it is no bullet, and unless the line is
    # a thematic break (`** *`), nothing else
    return lead == "*" and line[1:2] not in ("", " ", "\t") and _RULE.match(line) is None


def _heading_text(line: str) -> str | None:
    """The inline text of `line` if it is an ATX heading in column 0, as markdown-it's `heading`
    rule takes it (a closing run of `#` after a blank is dropped), else None."""
    level = len(line) - len(line.lstrip("#"))
    if not 1 <= level <= 6 or line[level : level + 1] not in ("", " ", "\t"):
        return None
    end = max(len(line.rstrip(" \t")), level)
    closing = max(len(line[:end].rstrip("#")), level)
    if closing > level and line[closing - 1] in " \t":
        end = closing
    return line[level:end].strip()


def _simple_blocks(piece: str, first: int) -> list[_Block] | None:
    """The blocks of a piece that is one paragraph, one list item of a single line with a
    paragraph in it, or a heading with or without a paragraph after it, without parsing its
    blocks; None for any other piece.

    Such a paragraph's text is its lines joined and stripped (what markdown-it's paragraph rule
    takes); an item's is the line after its marker and one space, stripped; a heading's is
    `_heading_text`."""
    if "]:" in piece or "\r" in piece or "\0" in piece:
        return None
    lines = piece.rstrip(" \t\n").split("\n")  # a piece's blank lines are at its end
    head = lines[0]
    item = _SIMPLE_ITEM.match(head)
    if item is not None and _RULE.match(head) is None:
        if len(lines) > 1 or not _paragraph_line(head[item.end() :]):
            return None
        return [_Block(head[item.end() :].strip(), first, False)]
    heading = _heading_text(head) if head[:1] == "#" else None
    if heading is not None:
        after = lines[1:]
        if not all(_paragraph_line(line) for line in after):
            return None
        paragraph = [_Block("\n".join(after).strip(), first + 1, False)] if after else []
        return [_Block(heading, first, False), *paragraph]
    if all(_paragraph_line(line) for line in lines):
        return [_Block("\n".join(lines).strip(), first, False)]
    return None


def _block_references(
    block: _Block,
    lines: list[str],
    start_line: int,
    env: dict[str, Any],
    definitions: bool,
    refs: list[Reference],
) -> None:
    """Adds to `refs` the links and bare paths of one inline or HTML block."""
    recording = _RECORDING
    content = block.content
    if not block.html:
        # A link needs a bracket; without definitions, also a `](` or a bare path.
        bracket = "[" in content
        if not (bracket and definitions) and not _may_refer(content):
            return
        recording.destinations, recording.link_spans = [], []
        if bracket:
            _MD.inline.parse(content, _MD, env, [])
        block_text = _BlockText(content, block.line, lines)
        for source, dest_start, dest_end in recording.destinations:
            found = _link(source, dest_start, dest_end, block_text, start_line)
            if found is not None:
                refs.append(found)
        covered = _merged(recording.link_spans)
    elif _may_refer(content):  # raw HTML: its paths count
        block_text = _BlockText(content.rstrip("\n"), block.line, lines)
        covered = ([], [])
    else:
        return
    for offset, target in _bare_paths(content):
        if _inside(covered, offset):
            continue
        line, col = block_text.position(offset)
        refs.append(
            Reference(target, Range.of(start_line + line, col, start_line + line, col + len(target)), "path")
        )


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
