"""The rule table: every rule is a small function registered with a stable code.

A rule function takes a `RuleContext` and yields `Report`s (a range, a message and optional
fixes); the registry attaches the code and severity. The function's docstring is the rule's
documentation, printed by `skills-lsp rule CODE`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from skills_lsp.core.model import FileKind, Fix, Range, Severity
from skills_lsp.core.parse.frontmatter import Document, YamlPair, read_limited
from skills_lsp.core.parse.tool_manifest import ToolRegistry
from skills_lsp.core.rules.profiles import Profile

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


class Report(NamedTuple):
    range: Range
    message: str
    fixes: tuple[Fix, ...] = ()


@dataclass
class RuleContext:
    """What a rule sees: one parsed file, its layout and profile, and a file-existence probe."""

    path: Path
    doc: Document
    kind: FileKind
    profile: Profile
    exists: Callable[[Path], bool] = field(default=lambda p: p.exists())
    # Reads a file a rule depends on (bounded, regular files only); the cache records its content.
    read: Callable[[Path, int], bytes] = field(default=read_limited)
    tools: ToolRegistry | None = None  # the host's tool manifest, when the workspace has one
    memo: dict[str, Any] = field(default_factory=dict)  # work shared by several rules

    @property
    def skill_dir(self) -> Path:
        return self.path.parent

    def get(self, key: str) -> YamlPair | None:
        return self.doc.get(key)


RuleCheck = Callable[[RuleContext], Iterable[Report]]
# Workspace rules take every file's summary instead of one context (see rules/workspace.py).
AnyCheck = Callable[[Any], Iterable[Any]]


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    severity: Severity
    summary: str
    check: AnyCheck
    fixable: bool = False
    workspace: bool = False  # computed over the whole workspace, not per file

    @property
    def group(self) -> str:
        return GROUPS.get(self.code[:3], "other")

    @property
    def doc(self) -> str:
        import inspect

        return inspect.cleandoc(self.check.__doc__ or self.summary)


RULES: dict[str, Rule] = {}


def json_path(parts: Iterable[Any]) -> str:
    """`.metadata.tools[0]`-style text for a JSON-Schema error path."""
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in parts)


def rule(
    code: str,
    name: str,
    severity: Severity,
    summary: str,
    *,
    fixable: bool = False,
    workspace: bool = False,
) -> Callable[[AnyCheck], AnyCheck]:
    """Register a rule function under `code`."""

    def register(check: AnyCheck) -> AnyCheck:
        if code in RULES:
            raise ValueError(f"rule code {code} registered twice")
        RULES[code] = Rule(code, name, severity, summary, check, fixable, workspace)
        return check

    return register
