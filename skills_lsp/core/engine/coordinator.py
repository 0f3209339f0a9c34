"""adk-skill 0.6.0's ContextCoordinator: pick a skill and bind exactly the tools it names.

`resolve([ByName(...), ByQuery(...), ByTag(...)])` tries each strategy in order and returns the
first `SkillContext` (system instruction, active tools, provenance) or None. In STRICT mode a
skill whose `allowed-tools` names a tool the registry lacks is refused (the "phantom tool"
failure), in PERMISSIVE mode it gets the tools that resolve. FALLBACK, which the crate's design
describes but 0.6.0 lacks, is STRICT and then, when nothing could be resolved, a generalist skill
with whatever of its tools resolve.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from skills_lsp.core.errors import IndexError_, SkillError, Validation
from skills_lsp.core.index.skill_index import SkillIndex
from skills_lsp.core.parse.tool_manifest import ToolRegistry
from skills_lsp.core.routing.scorer import SelectionPolicy, SkillMatch, select_skills


def rust_debug(text: str) -> str:
    """A string as Rust's `{:?}` writes it: quoted, with \\, \", \t, \r, \n and control
    characters escaped (other characters as they are)."""
    out = ['"']
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\n":
            out.append("\\n")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{{{ord(ch):x}}}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


F32_MAX = 3.4028234663852886e38  # the crate's score for a ByName match
DEFAULT_MAX_INSTRUCTION_CHARS = 8000
FALLBACK_TAGS = ("fallback", "generalist")


class ValidationMode(enum.Enum):
    STRICT = "strict"
    PERMISSIVE = "permissive"
    FALLBACK = "fallback"


@dataclass(frozen=True)
class ByName:
    name: str


@dataclass(frozen=True)
class ByQuery:
    query: str


@dataclass(frozen=True)
class ByTag:
    tag: str


ResolutionStrategy = ByName | ByQuery | ByTag


@dataclass
class CoordinatorConfig:
    policy: SelectionPolicy = field(default_factory=SelectionPolicy)
    max_instruction_chars: int = DEFAULT_MAX_INSTRUCTION_CHARS
    validation_mode: ValidationMode = ValidationMode.STRICT
    # FALLBACK mode: the generalist skill's name; None picks the first skill tagged
    # `fallback` or `generalist` (in name order).
    fallback_skill: str | None = None


@dataclass
class SkillContext:
    """What an agent gets: the instruction, the tools it may call, and why this skill won."""

    system_instruction: str
    active_tools: list[Any]
    provenance: SkillMatch

    @property
    def active_tool_names(self) -> list[str]:
        return [getattr(t, "name", t) if not isinstance(t, str) else t for t in self.active_tools]


class ContextCoordinator:
    def __init__(
        self, index: SkillIndex, registry: ToolRegistry, config: CoordinatorConfig | None = None
    ) -> None:
        self.index = index
        self.registry = registry
        self.config = config or CoordinatorConfig()

    def try_resolve(self, match: SkillMatch, permissive: bool | None = None) -> SkillContext:
        """Bind the skill's tools; raises `Validation` (strict, a tool is missing) or `IndexError_`."""
        if permissive is None:
            permissive = self.config.validation_mode is ValidationMode.PERMISSIVE
        active: list[Any] = []
        missing: list[str] = []
        for name in match.skill.allowed_tools:
            tool = self.registry.resolve(name)
            if tool is None:
                missing.append(name)
            else:
                active.append(tool)
        if missing and not permissive:
            listed = ", ".join(rust_debug(m) for m in missing)
            raise Validation(f"Skill '{match.skill.name}' requires tools not in registry: [{listed}]")
        document = self.index.find_by_id(match.skill.id)
        if document is None:
            raise IndexError_(f"Matched skill not found in index: {match.skill.name}")
        names = [getattr(t, "name", t) if not isinstance(t, str) else t for t in active]
        instruction = document.engineer_instruction(self.config.max_instruction_chars, names)
        return SkillContext(instruction, active, match)

    def _first(self, candidates: Iterable[SkillMatch]) -> SkillContext | None:
        for candidate in candidates:
            try:
                return self.try_resolve(candidate)
            except SkillError:
                continue
        return None

    def build_context(self, query: str) -> SkillContext | None:
        return self._first(select_skills(self.index, query, self.config.policy))

    def build_context_by_name(self, name: str) -> SkillContext | None:
        document = self.index.find_by_name(name)
        if document is None:
            return None
        return self._first([SkillMatch(F32_MAX, document.summary())])

    def build_context_by_tag(self, tag: str) -> SkillContext | None:
        policy = SelectionPolicy(
            top_k=1, min_score=0.0, include_tags=[tag], exclude_tags=list(self.config.policy.exclude_tags)
        )
        return self._first(select_skills(self.index, "", policy))

    def resolve(self, strategies: Iterable[ResolutionStrategy]) -> SkillContext | None:
        for strategy in strategies:
            if isinstance(strategy, ByName):
                context = self.build_context_by_name(strategy.name)
            elif isinstance(strategy, ByQuery):
                context = self.build_context(strategy.query)
            else:
                context = self.build_context_by_tag(strategy.tag)
            if context is not None:
                return context
        if self.config.validation_mode is ValidationMode.FALLBACK:
            return self._fallback()
        return None

    def _fallback(self) -> SkillContext | None:
        """The generalist skill, bound permissively so missing tools never hide it."""
        if self.config.fallback_skill is not None:
            document = self.index.find_by_name(self.config.fallback_skill)
        else:
            document = next((d for d in self.index if any(t.lower() in FALLBACK_TAGS for t in d.tags)), None)
        if document is None:
            return None
        try:
            return self.try_resolve(SkillMatch(0.0, document.summary()), permissive=True)
        except SkillError:  # pragma: no cover - permissive binding only fails on a stale index
            return None
