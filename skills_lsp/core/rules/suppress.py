"""Suppression comments: silence chosen findings in one place of one file, and SK005, the rule that
reports a suppression that silences nothing.

In the frontmatter, a YAML comment:

    name: My_Skill  # skills-lsp: ignore[SK204, SK205]    findings that start on this line
    # skills-lsp: ignore[SK401]                          alone on a line: the next line
    # skills-lsp: ignore-file[SK305]                     the whole file

In the body, an HTML comment on one line (text, not a directive, inside fenced code or a code span):

    <!-- skills-lsp-disable SK603 -->                    from here to a matching enable, or the end
    <!-- skills-lsp-enable SK603 -->                     (a disable before any body text reaches
                                                         back over the frontmatter too)
    <!-- skills-lsp-disable-next-line SK603 -->          the next line
    <!-- skills-lsp-disable-line SK603 -->               this line

Codes are rule codes or prefixes (`SK6`), separated by commas or spaces; none at all means every
code. A finding is silenced when the line it starts on is covered. SK005's own findings are not
silenced by comments (use `ignore` or `per-file-ignores`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from skills_lsp.core.model import Applicability, Finding, Fix, Range, Severity, TextEdit
from skills_lsp.core.parse.frontmatter import Document
from skills_lsp.core.rules.edits import yaml_comments
from skills_lsp.core.rules.registry import RULES, Report, Target, rule

END_OF_FILE = 1 << 30  # a last line past any file's end

YAML_VERBS = ("ignore", "ignore-file")
HTML_VERBS = ("disable", "enable", "disable-next-line", "disable-line")
_YAML_DIRECTIVE = re.compile(r"#\s*skills-lsp\s*:(?P<tail>.*)", re.IGNORECASE)
_YAML_BODY = re.compile(r"\s*(?P<verb>[A-Za-z-]+)(?:\[(?P<codes>[^\]]*)(?P<close>\])?)?(?P<rest>.*)")
_HTML_DIRECTIVE = re.compile(r"<!--\s*skills-lsp-(?P<verb>[A-Za-z-]*)(?P<codes>(?:(?!-->).)*?)\s*-->", re.I)
_HTML_OPENER = re.compile(r"<!--\s*skills-lsp-(?P<verb>[A-Za-z-]*)", re.I)  # with or without its `-->`
_CODE_LIKE = re.compile(r"\s*[A-Za-z]{2}\d")
_CODE = re.compile(r"[^\s,]+")
_FENCE = re.compile(r" {0,3}(?P<fence>`{3,}|~{3,})(?P<info>.*)")


@dataclass(frozen=True)
class Entry:
    """One code of a directive (None: every code) and the lines it covers."""

    code: str | None
    range: Range  # where the code is written (the whole comment when it names none)
    first_line: int
    last_line: int  # inclusive

    def covers(self, finding: Finding) -> bool:
        line = finding.range.start.line
        if not self.first_line <= line <= self.last_line:
            return False
        return self.code is None or finding.code.startswith(self.code)


@dataclass(frozen=True)
class Directive:
    """One suppression comment."""

    style: str  # "yaml" or "html"
    verb: str
    comment: Range  # the comment itself
    delete: Range  # what removing it deletes: the comment and its padding, or its whole line
    entries: tuple[Entry, ...] = ()
    problem: str | None = None  # why it is not a valid directive
    reason: str = ""  # what the author wrote after the codes (kept when codes are removed)

    def render(self, codes: Sequence[str]) -> str:
        """The comment naming only `codes`, with its reason."""
        if self.style == "yaml":
            return f"# skills-lsp: {self.verb}[{', '.join(codes)}]{self.reason}"
        reason = f" -- {self.reason}" if self.reason else ""
        return f"<!-- skills-lsp-{self.verb} {' '.join(codes)}{reason} -->"

    def to_row(self) -> list[Any]:
        return [
            self.style,
            self.verb,
            self.comment.row(),
            self.delete.row(),
            [[e.code, e.range.row(), e.first_line, e.last_line] for e in self.entries],
            self.problem,
            self.reason,
        ]

    @staticmethod
    def from_row(row: list[Any]) -> Directive:
        style, verb, comment, delete, entries, problem, reason = row
        return Directive(
            style,
            verb,
            Range.of(*comment),
            Range.of(*delete),
            tuple(Entry(code, Range.of(*rng), first, last) for code, rng, first, last in entries),
            problem,
            reason,
        )


def _known(code: str) -> bool:
    return any(c.startswith(code) for c in RULES)


def _entries(
    text: str, offset: int, line: int, first: int, last: int, comment: Range
) -> tuple[tuple[Entry, ...], str | None]:
    """The codes written in `text` (starting at column `offset` of `line`)."""
    entries: list[Entry] = []
    for match in _CODE.finditer(text):
        code = match.group().upper()
        rng = Range.of(line, offset + match.start(), line, offset + match.end())
        if not re.fullmatch(r"[A-Z]+\d*", code):
            return (), f"`{match.group()}` is not a rule code; separate codes with commas or spaces."
        entries.append(Entry(code, rng, first, last))
    if not entries:
        entries.append(Entry(None, comment, first, last))
    return tuple(entries), None


def _yaml_directives(doc: Document) -> Iterator[Directive]:
    if doc.open_line is None:
        return
    end = doc.close_line if doc.close_line is not None else len(doc.lines)
    lines = doc.lines[doc.open_line + 1 : end]
    for number, column, text in yaml_comments(lines, doc.open_line + 1):
        match = _YAML_DIRECTIVE.match(text)
        if match is None:
            continue
        line = doc.lines[number]
        comment = Range.of(number, column, number, column + len(text))
        alone = not line[:column].strip()
        if alone:
            delete = Range.of(number, 0, number + 1, 0)
        else:
            delete = Range.of(number, len(line[:column].rstrip()), number, column + len(text))
        body = _YAML_BODY.match(match.group("tail"))
        verb = body.group("verb").lower() if body else ""
        problem: str | None = None
        entries: tuple[Entry, ...] = ()
        if body is None or verb not in YAML_VERBS:
            problem = (
                f"Unknown suppression `{text}`; write `# skills-lsp: ignore[CODE]` or `ignore-file[CODE]`."
            )
        elif body.group("codes") is not None and body.group("close") is None:
            # read as a bare `ignore` it would silence every code on the line
            problem = f"Suppression with an unclosed `[`: write `# skills-lsp: {verb}[CODE, ...]`."
        elif body.group("codes") is None and _CODE_LIKE.match(body.group("rest")):
            problem = f"Put the codes in brackets: `# skills-lsp: {verb}[{body.group('rest').strip()}]`."
        elif body.group("codes") is not None and not body.group("codes").strip():
            problem = f"`{verb}[]` names no code; name one, or write `{verb}` alone for every code."
        else:
            if verb == "ignore-file":
                first, last = 0, END_OF_FILE
            else:
                first = last = number + 1 if alone else number
            codes = body.group("codes") or ""
            start = column + match.start("tail") + body.start("codes") if body.group("codes") else 0
            entries, problem = _entries(codes, start, number, first, last, comment)
        reason = body.group("rest").rstrip() if body is not None else ""
        yield Directive("yaml", verb, comment, delete, entries, problem, reason)


def _code_spans(line: str) -> list[tuple[int, int]]:
    """Column spans of the inline code (backtick runs) on one line."""
    spans: list[tuple[int, int]] = []
    i = 0
    while True:
        start = line.find("`", i)
        if start < 0:
            return spans
        run = len(line[start:]) - len(line[start:].lstrip("`"))
        close = line.find("`" * run, start + run)
        while close >= 0 and line[close + run : close + run + 1] == "`":
            close = line.find("`" * run, close + run + 1)
        if close < 0:
            return spans
        spans.append((start, close + run))
        i = close + run


def _html_delete(line: str, number: int, match: re.Match[str], alone: bool) -> Range:
    """What removing the comment deletes: its whole line when it is alone there, else the comment
    and the blanks that set it apart from the text."""
    if alone:
        return Range.of(number, 0, number + 1, 0)
    before, after = line[: match.start()], line[match.end() :]
    if before.strip():
        return Range.of(number, len(before.rstrip()), number, match.end())
    return Range.of(number, match.start(), number, len(line) - len(after.lstrip()))


def _unknown_verb(verb: str) -> str:
    known = ", ".join(f"`skills-lsp-{v}`" for v in HTML_VERBS)
    return f"Unknown suppression `skills-lsp-{verb}`; use {known}."


def _unterminated(line: str, number: int, spans: Sequence[tuple[int, int]]) -> Iterator[Directive]:
    """Directives opened on `line` but not closed by `-->` there: reported, never obeyed (a
    directive is one line, and guessing where it ends could silence the wrong lines)."""
    closed = [(m.start(), m.end()) for m in _HTML_DIRECTIVE.finditer(line)]
    for match in _HTML_OPENER.finditer(line):
        if any(a <= match.start() < b for a, b in [*spans, *closed]):
            continue
        comment = Range.of(number, match.start(), number, len(line.rstrip()))
        problem = (
            f"Unterminated suppression `{line[match.start() :].rstrip()}`: "
            "end it with `-->` on the same line."
        )
        yield Directive("html", match.group("verb").lower(), comment, comment, (), problem)


def _html_directives(doc: Document) -> Iterator[Directive]:
    if "skills-lsp-" not in doc.text:
        return
    fence: str | None = None
    leading = True  # nothing but blank lines and directives so far in the body
    found: list[Directive] = []
    ends: dict[tuple[int, int], int] = {}  # (directive, entry) of a disable -> its enable's line
    for number in range(doc.body_start_line, len(doc.lines)):
        line = doc.lines[number]
        opener = _FENCE.match(line)
        if fence is not None:
            closes = opener is not None and opener.group("fence").startswith(fence)
            if closes and opener is not None and not opener.group("info").strip():
                fence = None
            continue
        if opener and not (opener.group("fence")[0] == "`" and "`" in opener.group("info")):
            fence = opener.group("fence")
            leading = False
            continue
        spans = _code_spans(line) if "`" in line else []
        matches = [m for m in _HTML_DIRECTIVE.finditer(line) if not any(a <= m.start() < b for a, b in spans)]
        rest = _HTML_DIRECTIVE.sub("", line)
        found.extend(_unterminated(line, number, spans))
        for match in matches:
            comment = Range.of(number, match.start(), number, match.end())
            delete = _html_delete(line, number, match, not rest.strip() and len(matches) == 1)
            verb = match.group("verb").lower()
            if verb not in HTML_VERBS:
                found.append(Directive("html", verb, comment, delete, (), _unknown_verb(match.group("verb"))))
                continue
            first, last = {
                "disable": (0 if leading else number, END_OF_FILE),
                "enable": (number, number),
                "disable-next-line": (number + 1, number + 1),
                "disable-line": (number, number),
            }[verb]
            codes, _, reason = match.group("codes").partition("--")  # `-- why`, as ESLint allows
            entries, problem = _entries(codes, match.start("codes"), number, first, last, comment)
            if verb == "enable" and problem is None:  # it only ends the blocks of earlier disables
                codes = {e.code for e in entries}
                for d, directive in enumerate(found):
                    for i, entry in enumerate(directive.entries):
                        key = (d, i)
                        wanted = None in codes or entry.code in codes
                        if directive.verb == "disable" and key not in ends and wanted:
                            ends[key] = number
                continue
            found.append(Directive("html", verb, comment, delete, entries, problem, reason.strip()))
        if rest.strip():
            leading = False
    for d, directive in enumerate(found):
        entries = tuple(
            Entry(e.code, e.range, e.first_line, ends.get((d, i), e.last_line))
            for i, e in enumerate(directive.entries)
        )
        yield Directive(
            directive.style,
            directive.verb,
            directive.comment,
            directive.delete,
            entries,
            directive.problem,
            directive.reason,
        )


def parse_directives(doc: Document) -> list[Directive]:
    """Every suppression comment of a skill or instruction file, in file order."""
    if "skills-lsp" not in doc.text:
        return []
    return [*_yaml_directives(doc), *_html_directives(doc)]


@dataclass(frozen=True)
class SuppressionRun:
    """What SK005 sees: a file's directives and which of their entries silenced a finding
    (`(directive index, entry index)`)."""

    directives: Sequence[Directive]
    used: frozenset[tuple[int, int]] = field(default_factory=frozenset)


def suppress(
    findings: Iterable[Finding], directives: Sequence[Directive]
) -> tuple[list[Finding], frozenset[tuple[int, int]]]:
    """The findings no directive silences, and the entries that silenced one."""
    kept: list[Finding] = []
    used: set[tuple[int, int]] = set()
    for finding in findings:
        hits = [
            (d, e)
            for d, directive in enumerate(directives)
            if directive.problem is None
            for e, entry in enumerate(directive.entries)
            if entry.covers(finding)
        ]
        if hits:
            used.update(hits)
        else:
            kept.append(finding)
    return kept, frozenset(used)


def _names(codes: Sequence[str | None]) -> str:
    return ", ".join(f"`{c}`" for c in codes if c) or "any code"


@rule(
    "SK005",
    "unused-suppression",
    Severity.WARNING,
    "A suppression comment silences nothing, names an unknown code or is malformed",
    target=Target.SUPPRESSION,
    fixes=[Applicability.SAFE],
)
def unused_suppression(run: SuppressionRun) -> Iterator[Report]:
    """A `# skills-lsp: ignore[...]` or `<!-- skills-lsp-disable ... -->` comment that no longer
    silences any finding (the problem was fixed, or the code is wrong), names a code that no rule
    has, or is not a directive skills-lsp understands. A stale suppression would hide the next
    real problem on that line. The safe fix deletes the comment, or only the codes that are not
    needed. A comment cannot silence this rule itself; use `ignore` or `per-file-ignores`.
    Suppression syntax: README, "Suppressing findings"."""
    for d, directive in enumerate(run.directives):
        if directive.problem is not None:
            yield Report(directive.comment, directive.problem)
            continue
        unknown = [e for e in directive.entries if e.code is not None and not _known(e.code)]
        unused = [e for i, e in enumerate(directive.entries) if (d, i) not in run.used and e not in unknown]
        stale = unknown + unused
        if not stale:
            continue
        delete = Fix("Remove the suppression comment", (TextEdit(directive.delete, ""),))
        if len(stale) == len(directive.entries):
            what = "; ".join(
                part
                for part in (
                    f"unknown rule code {_names([e.code for e in unknown])}" if unknown else "",
                    f"no finding of {_names([e.code for e in unused])} to silence" if unused else "",
                )
                if part
            )
            yield Report(directive.comment, f"Unused suppression: {what}.", (delete,))
            continue
        keep = [e.code for e in directive.entries if e not in stale and e.code is not None]
        trim = Fix(
            f"Remove {_names([e.code for e in stale])} from the suppression",
            (TextEdit(directive.comment, directive.render(keep)),),
        )
        for entry in stale:
            reason = "unknown rule code" if entry in unknown else "no finding of it to silence"
            yield Report(entry.range, f"Unused suppression of `{entry.code}`: {reason}.", (trim,))
