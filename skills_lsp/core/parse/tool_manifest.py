"""Tools a host really binds: the `ToolRegistry` protocol and the tool manifest file.

The manifest (`skill-tools.yaml` by default; YAML or JSON) is a top-level `tools:` list of
`{name, description, parameters?, source?}`, described by `schema/tool-registry.schema.json`.
The coordinator, the validator's unknown-tool rule and the server's completion all read it.
A broken manifest never raises: problems come back with positions (rule SK002 reports them).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from skills_lsp.core import schema
from skills_lsp.core.model import Problem, Range, Severity
from skills_lsp.core.parse.frontmatter import (
    YamlNode,
    duplicate_keys,
    duplicate_message,
    node_at,
    parse_yaml_file,
    to_python,
)

MANIFEST_PROBLEM = "invalid-tool-manifest"  # the rule that reports these (SK002)
MANIFEST_SCHEMA = "tool-registry.schema.json"


@dataclass(frozen=True)
class Tool:
    name: str
    description: str = ""
    parameters: Any = None
    source: str | None = None
    range: Range | None = field(default=None, compare=False)  # where the manifest names it


@runtime_checkable
class ToolRegistry(Protocol):
    """What the coordinator asks of a host: exact, case-sensitive lookup by name."""

    def resolve(self, name: str) -> Any | None: ...

    def available_tools(self) -> list[str]: ...


class StaticToolRegistry:
    """A ToolRegistry over a fixed list of tools."""

    def __init__(self, tools: Iterable[Tool | str] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            item = Tool(tool) if isinstance(tool, str) else tool
            self._tools.setdefault(item.name, item)

    def resolve(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def available_tools(self) -> list[str]:
        return list(self._tools)

    def tools(self) -> list[Tool]:
        return list(self._tools.values())

    def __contains__(self, name: object) -> bool:
        return name in self._tools


def load_tool_manifest(path: str | Path) -> tuple[StaticToolRegistry, list[Problem]]:
    """Read a manifest; an unreadable or malformed one gives an empty registry and findings."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        message = f"Cannot read the tool manifest: {exc}."
        return StaticToolRegistry(), [Problem(MANIFEST_PROBLEM, message, Range.point(0, 0))]
    return parse_tool_manifest(text, str(file))


def parse_tool_manifest(text: str, path: str) -> tuple[StaticToolRegistry, list[Problem]]:
    problems: list[Problem] = []

    def problem(message: str, rng: Range) -> None:
        problems.append(Problem(MANIFEST_PROBLEM, message, rng))

    if path.endswith(".json"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            problem(f"Invalid JSON: {exc.msg}.", Range.point(exc.lineno - 1, exc.colno - 1))
            return StaticToolRegistry(), problems
        return _from_data(data, None, path, problems)
    root, yaml_problems = parse_yaml_file(text)
    for p in yaml_problems:
        problem(p.message.replace("Frontmatter", "The manifest"), p.range)
    if root is None or problems:
        return StaticToolRegistry(), problems
    for first, duplicate in duplicate_keys(root):
        problems.append(Problem(MANIFEST_PROBLEM, duplicate_message(first, duplicate), duplicate.range))
    return _from_data(to_python(root), root, path, problems)


def _from_data(
    data: Any, root: YamlNode | None, path: str, problems: list[Problem]
) -> tuple[StaticToolRegistry, list[Problem]]:
    def where(json_path: list[Any]) -> Range:
        return node_at(root, json_path).range if root is not None else Range.point(0, 0)

    validator = schema.validator(MANIFEST_SCHEMA)
    errors = sorted(validator.iter_errors(data), key=lambda e: [str(p) for p in e.absolute_path])
    for error in errors:
        problems.append(Problem(MANIFEST_PROBLEM, f"{error.message}.", where(list(error.absolute_path))))
    tools: list[Tool] = []
    seen: set[str] = set()
    entries = data.get("tools", []) if isinstance(data, dict) else []
    for i, entry in enumerate(entries if isinstance(entries, list) else []):
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str) or not entry["name"].strip():
            continue
        name = entry["name"].strip()
        rng = where(["tools", i, "name"])
        if name in seen:
            problems.append(
                Problem(MANIFEST_PROBLEM, f"Tool `{name}` is listed twice.", rng, severity=Severity.WARNING)
            )
            continue
        seen.add(name)
        description = entry.get("description")
        source = entry.get("source")
        tools.append(
            Tool(
                name,
                description if isinstance(description, str) else "",
                entry.get("parameters"),
                source if isinstance(source, str) else None,
                rng,
            )
        )
    return StaticToolRegistry(tools), problems
