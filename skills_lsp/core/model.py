"""Plain data types shared by every layer: positions, findings, fixes, file kinds.

Positions are 0-based lines and columns counted in Unicode code points; the language server
converts columns to the client's encoding (UTF-16 by default) at its edge.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

from skills_lsp.core.text import ascii_lower as ascii_lower  # re-exported
from skills_lsp.core.text import ascii_upper as ascii_upper  # re-exported


class Severity(enum.IntEnum):
    """Finding severity; the numbers are LSP's DiagnosticSeverity values."""

    ERROR = 1
    WARNING = 2
    INFO = 3
    HINT = 4

    @property
    def label(self) -> str:
        return self.name.lower()

    @classmethod
    def parse(cls, text: str) -> Severity:
        try:
            return cls[text.strip().upper()]
        except KeyError:
            raise ValueError(f"unknown severity {text!r} (expected error, warning, info or hint)") from None


@dataclass(frozen=True, order=True, slots=True)
class Position:
    line: int
    character: int

    # Made again by its constructor when unpickled (`check --jobs` sends every file's findings
    # back to the parent): a slots dataclass's own __setstate__ calls `fields()` per object.
    def __reduce__(self) -> tuple[type[Position], tuple[int, int]]:
        return (type(self), (self.line, self.character))

    def to_json(self) -> dict[str, int]:
        return {"line": self.line, "character": self.character}


@dataclass(frozen=True, order=True, slots=True)
class Range:
    start: Position
    end: Position

    def __reduce__(self) -> tuple[type[Range], tuple[Position, Position]]:
        return (type(self), (self.start, self.end))  # see Position.__reduce__

    @staticmethod
    def of(line: int, col: int, end_line: int, end_col: int) -> Range:
        return Range(Position(line, col), Position(end_line, end_col))

    def row(self) -> list[int]:
        """The range as `[line, col, end_line, end_col]` (JSON caches); `Range.of(*row)` reads it."""
        return [self.start.line, self.start.character, self.end.line, self.end.character]

    @staticmethod
    def point(line: int, col: int) -> Range:
        return Range(Position(line, col), Position(line, col))

    def to_json(self) -> dict[str, dict[str, int]]:
        return {"start": self.start.to_json(), "end": self.end.to_json()}


@dataclass(frozen=True, slots=True)
class TextEdit:
    range: Range
    new_text: str

    def __reduce__(self) -> tuple[type[TextEdit], tuple[Range, str]]:
        return (type(self), (self.range, self.new_text))  # see Position.__reduce__


class Applicability(enum.Enum):
    """How far a fix can be trusted, as ruff grades them: `safe` keeps what the author meant
    (`check --fix` applies it); `unsafe` may change what a runtime reads (`--unsafe-fixes`);
    `display-only` is offered in the editor alone (it creates or edits another file, or cannot
    clear the finding without a change outside the file, such as renaming the skill's folder)."""

    SAFE = "safe"
    UNSAFE = "unsafe"
    DISPLAY_ONLY = "display-only"


@dataclass(frozen=True, slots=True)
class FileChange:
    """A change to a file other than the finding's own: create it, and/or edit it."""

    path: str
    create: bool = False
    edits: tuple[TextEdit, ...] = ()

    def __reduce__(self) -> tuple[type[FileChange], tuple[str, bool, tuple[TextEdit, ...]]]:
        return (type(self), (self.path, self.create, self.edits))  # see Position.__reduce__


@dataclass(frozen=True, slots=True)
class Fix:
    """A named set of text edits that resolves one finding (a quick fix in the editor)."""

    title: str
    edits: tuple[TextEdit, ...]
    applicability: Applicability = Applicability.SAFE
    changes: tuple[FileChange, ...] = ()  # other files (display-only fixes)

    # See Position.__reduce__; a subclass with another constructor has its own (DeferredFix).
    def __reduce__(
        self,
    ) -> tuple[type[Fix], tuple[str, tuple[TextEdit, ...], Applicability, tuple[FileChange, ...]]]:
        return (type(self), (self.title, self.edits, self.applicability, self.changes))


@dataclass(frozen=True, slots=True)
class Problem:
    """A problem found while reading a file (a parser's or a loader's), before it is a finding: its
    `kind` is the name of the rule that reports it, which gives it a code and a severity."""

    kind: str
    message: str
    range: Range
    data: dict[str, Any] = field(default_factory=dict, compare=False)
    severity: Severity | None = None  # None: the rule's own (a loader may report a lesser one)


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem in one file: what rule, where, how bad, and how to fix it."""

    path: str
    code: str
    severity: Severity
    message: str
    range: Range
    fixes: tuple[Fix, ...] = ()

    def __reduce__(self) -> tuple[type[Finding], tuple[str, str, Severity, str, Range, tuple[Fix, ...]]]:
        return (type(self), (self.path, self.code, self.severity, self.message, self.range, self.fixes))

    def sort_key(self) -> tuple[str, int, int, str]:
        # The start's line and character, not the Position: ints compare in C, where Positions
        # would compare through the dataclass's generated methods (a corpus has 100,000 findings).
        start = self.range.start
        return (self.path, start.line, start.character, self.code)

    def to_json(self) -> dict[str, object]:
        return {
            "path": self.path,
            "code": self.code,
            "severity": self.severity.label,
            "message": self.message,
            "range": self.range.to_json(),
        }


# The folders a skill bundles beside its SKILL.md (agentskills.io), in the spec's order.
BUNDLE_DIRS = ("scripts", "references", "assets")


class FileKind(enum.Enum):
    """How a file is laid out, which decides its default profile."""

    AGENT_SKILL = "agentskill"  # <name>/SKILL.md (agentskills.io)
    FLAT_SKILL = "flat"  # .skills/**/*.md, .claude/skills/**/*.md (adk-skill)
    CONVENTION = "convention"  # AGENTS.md, CLAUDE.md, ...


@dataclass(frozen=True, slots=True)
class SkillFile:
    """A discovered file and the layout it was found in."""

    path: str
    kind: FileKind
    root: str = field(default="", compare=False)
