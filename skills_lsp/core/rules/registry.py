"""The rule table: every code skills-lsp can report is one entry here, as ruff keeps its rules.

A rule is a small function registered with `@rule`: a stable code and name, a default severity,
a one-line summary, the function's docstring as its documentation (`skills-lsp rule CODE`,
docs/rules.md), the profiles it runs in, the fixes it may offer and how far each can be trusted,
and its target, which says where its findings come from and what the function receives:

- `document`: one parsed file (`RuleContext`); most rules, and those that surface the
  frontmatter parser's problems (their `Problem.kind` is the rule's name).
- `workspace`: every checked file's `NamedSkill` summary (duplicate names).
- `file`: problems a loader recorded about a file that is not a skill (the config, the tool
  manifest, the test queries, ADK's loader, an unreadable file); the loader names the rule.
- `routing`: the outcomes of the routing tests (`RoutingRun`), computed by the routing stage.
- `suppression`: a file's suppression comments and which of them silenced a finding
  (`rules/suppress.py`), once every other rule has reported on the file.
- `collision`: one skill's rivals for its own requests (`Rivalry`), computed by the routing stage
  (core/routing/overlap.py) where a scorer is at hand: the language server.

`rules/validate.py` runs them; nothing else makes a finding with a code of its own.
"""

from __future__ import annotations

import enum
import inspect
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple, Protocol

from skills_lsp.core.model import Applicability, FileKind, Fix, Problem, Range, Severity
from skills_lsp.core.parse.frontmatter import Document, YamlPair, read_limited
from skills_lsp.core.parse.tool_manifest import ToolRegistry
from skills_lsp.core.rules.profiles import PROFILES, Profile

GROUPS = {
    "SK0": "config",
    "SK1": "structure",
    "SK2": "name",
    "SK3": "description",
    "SK4": "fields",
    "SK5": "tools",
    "SK6": "body",
    "SK7": "workspace",
}


class Target(enum.Enum):
    """What a rule function receives, and so where its findings come from."""

    DOCUMENT = "document"  # RuleContext: one parsed skill or instruction file
    WORKSPACE = "workspace"  # WorkspaceRun: every checked file (NamedSkill) and budget variables
    FILE = "file"  # FileProblems: what a loader recorded about a file
    ROUTING = "routing"  # RoutingRun: the routing tests' outcomes
    SUPPRESSION = "suppression"  # SuppressionRun: a file's suppression comments, once used
    COLLISION = "collision"  # Rivalry: a skill another one competes with for a request


class Report(NamedTuple):
    range: Range
    message: str
    fixes: tuple[Fix, ...] = ()
    severity: Severity | None = None  # None: the rule's (a loader may report a lesser one)


@dataclass
class RuleContext:
    """What a document rule sees: one parsed file, its layout and profile, and file probes."""

    path: Path
    doc: Document
    kind: FileKind
    profile: Profile
    # Whether a file a rule depends on exists (given as a string: see body.py's `_folder`).
    exists: Callable[[str], bool] = field(default=lambda p: Path(p).exists())
    # Reads a file a rule depends on (bounded, regular files only); the cache records its content.
    read: Callable[[Path, int], bytes] = field(default=read_limited)
    tools: ToolRegistry | None = None  # the host's tool manifest, when the workspace has one
    manifest_path: Path | None = None  # where that manifest lives (for fixes that add to it)
    memo: dict[str, Any] = field(default_factory=dict)  # work shared by several rules

    @property
    def skill_dir(self) -> Path:
        return self.path.parent

    def get(self, key: str) -> YamlPair | None:
        return self.doc.get(key)

    def problems(self, kind: str) -> Iterator[Report]:
        """The parser's problems of `kind` (a rule's name) as reports."""
        for problem in self.doc.problems:
            if problem.kind == kind:
                yield Report(problem.range, problem.message)


@dataclass(frozen=True)
class FileProblems:
    """What a `file` rule sees: the problems recorded about one file."""

    path: str
    problems: Sequence[Problem]

    def of(self, kind: str) -> Iterator[Report]:
        """The problems of `kind` (a rule's name) as reports, with any lesser severity kept."""
        for problem in self.problems:
            if problem.kind == kind:
                yield Report(problem.range, problem.message, severity=problem.severity)


class RoutingOutcome(Protocol):
    """One routing test's result, as the routing stage reports it."""

    @property
    def passed(self) -> bool: ...

    @property
    def reason(self) -> str: ...

    @property
    def range(self) -> Range: ...


@dataclass(frozen=True)
class RoutingRun:
    """What a `routing` rule sees: every routing test's outcome, and why they did not run with
    the configured scorer, if they did not."""

    outcomes: Sequence[RoutingOutcome]
    fallback: str | None = None


@dataclass(frozen=True)
class Rivalry:
    """What a `collision` rule sees: `rival` scores `rival_score` for `request`, one of the
    skill's own requests, against `score` for the skill itself."""

    rival: str
    request: str
    score: float
    rival_score: float
    range: Range  # where the finding goes: the skill's description


AnyCheck = Callable[[Any], Iterable[Any]]
ALL_PROFILES = tuple(PROFILES)


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    severity: Severity
    summary: str
    check: AnyCheck
    target: Target = Target.DOCUMENT
    # The profiles that run it by default (`extend-select` runs it anywhere).
    profiles: tuple[str, ...] = ALL_PROFILES
    # A profile's own severity for it (skills-ref refuses what others warn about).
    severity_in: Mapping[str, Severity] = field(default_factory=dict)
    fixes: frozenset[Applicability] = frozenset()  # what its fixes may be
    origin: str = ""  # where its findings are produced, in words

    @property
    def group(self) -> str:
        return GROUPS.get(self.code[:3], "other")

    @property
    def doc(self) -> str:
        return inspect.cleandoc(self.check.__doc__ or self.summary)

    @property
    def workspace(self) -> bool:
        return self.target is Target.WORKSPACE

    @property
    def fixable(self) -> bool:
        """Whether it offers fixes (in the editor at least)."""
        return bool(self.fixes)

    def enabled_in(self, profile: str) -> bool:
        return profile in self.profiles

    def severity_for(self, profile: str) -> Severity:
        return self.severity_in.get(profile, self.severity)


RULES: dict[str, Rule] = {}

_ORIGIN = {
    Target.DOCUMENT: "checked in each skill or instruction file",
    Target.WORKSPACE: "checked over every file of the workspace",
    Target.FILE: "reported by a loader, on the file it reads",
    Target.ROUTING: "reported on the test-query file from the routing tests' results",
    Target.SUPPRESSION: "checked on each file's suppression comments after every other rule",
    Target.COLLISION: "reported by the language server on a skill's description, from the scorer",
}


def json_path(parts: Iterable[Any]) -> str:
    """`.metadata.tools[0]`-style text for a JSON-Schema error path."""
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in parts)


def except_in(*names: str) -> tuple[str, ...]:
    """Every profile but `names`."""
    return tuple(p for p in PROFILES if p not in names)


def rule(
    code: str,
    name: str,
    severity: Severity,
    summary: str,
    *,
    target: Target = Target.DOCUMENT,
    profiles: tuple[str, ...] = ALL_PROFILES,
    severity_in: Mapping[str, Severity] | None = None,
    fixes: Iterable[Applicability] = (),
    origin: str | None = None,
) -> Callable[[AnyCheck], AnyCheck]:
    """Register a rule function under `code`."""
    unknown = [p for p in (*profiles, *(severity_in or {})) if p not in PROFILES]
    if unknown:
        raise ValueError(f"rule {code}: unknown profile {unknown[0]!r}")

    def register(check: AnyCheck) -> AnyCheck:
        if code in RULES:
            raise ValueError(f"rule code {code} registered twice")
        RULES[code] = Rule(
            code,
            name,
            severity,
            summary,
            check,
            target,
            profiles,
            dict(severity_in or {}),
            frozenset(fixes),
            origin or _ORIGIN[target],
        )
        return check

    return register


def rule_named(name: str) -> Rule:
    """The rule whose name is `name` (a parser's or loader's problem kind)."""
    for candidate in RULES.values():
        if candidate.name == name:
            return candidate
    raise KeyError(name)
