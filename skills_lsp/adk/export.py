"""The tool manifest (`skill-tools.yaml`) of an ADK agent: what `skills-lsp registry export` writes.

`collect_tools(obj)` takes an ADK agent (`BaseAgent`: an `LlmAgent` or a workflow agent) or a list
of tools and returns one `ExportedTool` per tool name:

- an `LlmAgent`'s `tools`: `BaseTool`s as they are, plain callables through `FunctionTool` (what
  ADK itself does), `BaseToolset`s through `get_tools(None)` (no invocation context: a toolset
  that needs one, or fails, or takes longer than `toolset_timeout`, is skipped with a warning);
- with `sub_agents=True` (the default) the tools of every agent below it too, depth first: the
  manifest lists what the host can bind anywhere in the agent tree, and a skill may be run by any
  of them. An `AgentTool` is one tool (its agent's tools are not the caller's);
- the same name twice is listed once (the first), with a warning if the descriptions differ.

Descriptions are the tool's first paragraph; parameters are the declaration's JSON Schema.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from google.adk.agents.base_agent import BaseAgent
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.base_toolset import BaseToolset
from google.adk.tools.function_tool import FunctionTool


class ExportError(Exception):
    """The object has no tools to export; the message says what it is."""


@dataclass(frozen=True)
class ExportedTool:
    name: str
    description: str
    parameters: dict[str, Any] | None
    agent: str | None  # the agent that declares it (None for a bare list)

    def to_manifest(self, source: str | None) -> dict[str, Any]:
        entry: dict[str, Any] = {"name": self.name}
        if self.description:
            entry["description"] = self.description
        if self.parameters:
            entry["parameters"] = self.parameters
        if source:
            entry["source"] = source
        return entry


@dataclass
class Export:
    tools: list[ExportedTool] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def manifest(self, source: str | None = None) -> dict[str, Any]:
        return {"tools": [tool.to_manifest(source) for tool in self.tools]}


def _first_paragraph(text: str | None) -> str:
    paragraph = (text or "").strip().split("\n\n", 1)[0]
    return " ".join(paragraph.split())


def _lower_types(value: Any) -> Any:
    """A genai `Schema` dump as JSON Schema: `"STRING"` -> `"string"`, recursively."""
    if isinstance(value, Mapping):
        out = {}
        for key, item in value.items():
            if key == "type" and isinstance(item, str):
                out[key] = item.lower()
            else:
                out[key] = _lower_types(item)
        return out
    if isinstance(value, list):
        return [_lower_types(item) for item in value]
    return value


def _parameters(tool: BaseTool) -> dict[str, Any] | None:
    try:
        declaration = tool._get_declaration()
    except Exception:  # a tool whose declaration cannot be built still has a name
        return None
    if declaration is None:
        return None
    if isinstance(declaration.parameters_json_schema, Mapping):
        return dict(declaration.parameters_json_schema)
    if declaration.parameters is not None:
        dumped = declaration.parameters.model_dump(mode="json", exclude_none=True)
        return dict(_lower_types(dumped))
    return None


async def _toolset_tools(toolset: BaseToolset, timeout: float) -> list[BaseTool]:
    try:
        return list(await asyncio.wait_for(toolset.get_tools(None), timeout))
    finally:
        with contextlib.suppress(Exception):  # closing is best effort
            await asyncio.wait_for(toolset.close(), timeout)


class _Collector:
    def __init__(self, sub_agents: bool, toolset_timeout: float) -> None:
        self.sub_agents = sub_agents
        self.toolset_timeout = toolset_timeout
        self.result = Export()
        self._by_name: dict[str, ExportedTool] = {}

    def add(self, tool: BaseTool, agent: str | None) -> None:
        entry = ExportedTool(tool.name, _first_paragraph(tool.description), _parameters(tool), agent)
        seen = self._by_name.get(tool.name)
        if seen is None:
            self._by_name[tool.name] = entry
            self.result.tools.append(entry)
        elif seen.description != entry.description:
            where = f" (agent {agent!r})" if agent else ""
            self.result.warnings.append(
                f"tool {tool.name!r}{where} has the same name as an earlier tool with another description; "
                "kept the first."
            )

    async def tools(self, items: Iterable[Any], agent: str | None) -> None:
        for item in items:
            if isinstance(item, BaseTool):
                self.add(item, agent)
            elif isinstance(item, BaseToolset):
                kind = type(item).__name__
                try:
                    found = await _toolset_tools(item, self.toolset_timeout)
                except Exception as exc:
                    timed_out = isinstance(exc, asyncio.TimeoutError)
                    why = "timed out" if timed_out else f"{type(exc).__name__}: {exc}"
                    where = f" of agent {agent!r}" if agent else ""
                    self.result.warnings.append(f"skipped toolset {kind}{where}: get_tools failed ({why}).")
                    continue
                for tool in found:
                    self.add(tool, agent)
            elif callable(item):
                self.add(FunctionTool(item), agent)
            else:
                kind = type(item).__name__
                self.result.warnings.append(f"skipped {kind!r}: not a tool, toolset or function.")

    async def agent(self, agent: BaseAgent) -> None:
        await self.tools(getattr(agent, "tools", None) or [], agent.name)
        if self.sub_agents:
            for child in agent.sub_agents:
                await self.agent(child)


async def collect_tools_async(obj: Any, *, sub_agents: bool = True, toolset_timeout: float = 10.0) -> Export:
    """The tools of an ADK agent (and its sub-agents) or of a list/tuple of tools."""
    collector = _Collector(sub_agents, toolset_timeout)
    if isinstance(obj, BaseAgent):
        await collector.agent(obj)
        if not collector.result.tools:
            raise ExportError(f"agent {obj.name!r} ({type(obj).__name__}) has no tools.")
    elif isinstance(obj, (list, tuple)):
        await collector.tools(obj, None)
        if not collector.result.tools:
            raise ExportError("the list holds no tools.")
    elif isinstance(obj, (BaseTool, BaseToolset)):
        await collector.tools([obj], None)
    else:
        raise ExportError(
            f"an object of type {type(obj).__name__!r} is neither an ADK agent (BaseAgent, e.g. LlmAgent) "
            "nor a list of tools."
        )
    return collector.result


def collect_tools(obj: Any, *, sub_agents: bool = True, toolset_timeout: float = 10.0) -> Export:
    """`collect_tools_async` in a new event loop (from synchronous code, e.g. the CLI)."""
    return asyncio.run(collect_tools_async(obj, sub_agents=sub_agents, toolset_timeout=toolset_timeout))
