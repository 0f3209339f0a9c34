"""Coordinator tools: a skill's instruction together with exactly the ADK tools it may call.

The core's `ContextCoordinator` resolves the skill's `allowed-tools` against a registry of ADK
tools (name -> `BaseTool` or callable; a callable becomes a `FunctionTool`):
- STRICT: a skill naming a tool the registry lacks is refused (`SkillBindError` says which);
- PERMISSIVE: the skill gets the tools that resolve; the others are left out of the instruction;
- FALLBACK: STRICT, then the generalist skill (tagged `fallback`/`generalist`, or the one named)
  bound permissively.

The instruction names only the bound tools, and the agent gets only those, so the model is never
told of a tool it cannot call.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from google.adk.agents.llm_agent import LlmAgent
from google.adk.agents.readonly_context import ReadonlyContext
from google.adk.models.base_llm import BaseLlm
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.function_tool import FunctionTool

from skills_lsp.adk.tools import SkillSource, skill_index
from skills_lsp.core.engine.coordinator import (
    DEFAULT_MAX_INSTRUCTION_CHARS,
    ByName,
    ByQuery,
    ContextCoordinator,
    CoordinatorConfig,
    ResolutionStrategy,
    ValidationMode,
)
from skills_lsp.core.errors import SkillError
from skills_lsp.core.index.skill_index import SkillIndex
from skills_lsp.core.routing.scorer import SelectionPolicy, SkillMatch

ToolLike = BaseTool | Callable[..., Any]


class SkillBindError(Exception):
    """No skill could be bound; the message says why (unknown skill, missing tools, no match)."""


class AdkToolRegistry:
    """The core's `ToolRegistry` over ADK tools. A registry key must be the tool's own name (the
    name the model calls it by); a callable is wrapped in a `FunctionTool`."""

    def __init__(self, tools: Mapping[str, ToolLike] | list[ToolLike]) -> None:
        self._tools: dict[str, BaseTool] = {}
        items = tools.items() if isinstance(tools, Mapping) else [(None, t) for t in tools]
        for key, value in items:
            tool = value if isinstance(value, BaseTool) else FunctionTool(value)
            if key is not None and key != tool.name:
                raise ValueError(f"Registry key {key!r} names a tool called {tool.name!r}; they must match.")
            self._tools.setdefault(tool.name, tool)

    def resolve(self, name: str) -> BaseTool | None:
        return self._tools.get(name)

    def available_tools(self) -> list[str]:
        return list(self._tools)


@dataclass
class SkillBinding:
    """A bound skill: the system instruction, the ADK tools, and why this skill won."""

    skill: str
    instruction: str
    tools: list[BaseTool]
    provenance: SkillMatch

    @property
    def tool_names(self) -> list[str]:
        return [t.name for t in self.tools]


def _registry(registry: AdkToolRegistry | Mapping[str, ToolLike] | list[ToolLike]) -> AdkToolRegistry:
    return registry if isinstance(registry, AdkToolRegistry) else AdkToolRegistry(registry)


def _why_not(index: SkillIndex, coordinator: ContextCoordinator, name: str) -> str:
    document = index.find_by_name(name)
    if document is None:
        known = ", ".join(sorted(d.name for d in index)) or "(none)"
        return f"Unknown skill {name!r}. Available skills: {known}."
    try:
        coordinator.try_resolve(SkillMatch(0.0, document.summary()))
    except SkillError as exc:
        return str(exc)
    return f"Skill {name!r} could not be bound."  # pragma: no cover - try_resolve succeeded


def bind_skill(
    source: SkillSource,
    registry: AdkToolRegistry | Mapping[str, ToolLike] | list[ToolLike],
    skill: str | None = None,
    *,
    query: str | None = None,
    mode: ValidationMode | str = ValidationMode.STRICT,
    policy: SelectionPolicy | None = None,
    max_instruction_chars: int = DEFAULT_MAX_INSTRUCTION_CHARS,
    fallback_skill: str | None = None,
    profile: str | None = None,
) -> SkillBinding:
    """Bind the skill named `skill` (or the best match for `query`) with the core coordinator.

    Returns the instruction and exactly the resolved tools; raises `SkillBindError` when nothing
    can be bound (an unknown skill, a missing tool in STRICT mode, no match)."""
    if (skill is None) == (query is None):
        raise ValueError("Give exactly one of `skill` (a name) or `query`.")
    index = skill_index(source, profile)
    tools = _registry(registry)
    config = CoordinatorConfig(
        policy=policy or SelectionPolicy(),
        max_instruction_chars=max_instruction_chars,
        validation_mode=ValidationMode(mode),
        fallback_skill=fallback_skill,
    )
    coordinator = ContextCoordinator(index, tools, config)
    strategy: ResolutionStrategy = ByName(skill) if skill is not None else ByQuery(query or "")
    context = coordinator.resolve([strategy])
    if context is None:
        if skill is not None:
            raise SkillBindError(_why_not(index, coordinator, skill))
        raise SkillBindError(f"No skill matches the query {query!r} with all of its tools available.")
    bound = [t for t in context.active_tools if isinstance(t, BaseTool)]
    return SkillBinding(context.provenance.skill.name, context.system_instruction, bound, context.provenance)


def skill_agent(
    binding: SkillBinding,
    *,
    model: str | BaseLlm,
    name: str | None = None,
    **kwargs: Any,
) -> LlmAgent:
    """An `LlmAgent` with the binding's instruction and exactly its tools. The instruction is
    given as a provider, so ADK's `{state}` templating never touches the skill's text."""
    instruction = binding.instruction

    def provide(_context: ReadonlyContext) -> str:
        return instruction

    agent_name = name or "skill_" + "".join(c if c.isalnum() else "_" for c in binding.skill)
    return LlmAgent(
        name=agent_name,
        model=model,
        instruction=provide,
        tools=list(binding.tools),
        **kwargs,
    )
