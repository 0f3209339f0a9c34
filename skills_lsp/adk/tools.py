"""On-demand skill tools for an ADK agent: `use_skill`, `read_reference` and `run_script`.

- `use_skill(name)`: its description carries the core's `<available_skills>` catalog; it returns
  the skill's instructions (its body) and its resources as paths relative to the skill folder.
- `read_reference(skill, path)`: a file of that skill only (no absolute path, no `..`, no symlink
  leading outside the skill folder), UTF-8 text, capped.
- `run_script(skill, script, args)`: `skills_lsp.adk.sandbox.run_script` on that skill's `scripts/`.

Every refusal or failure is returned as `{"error": "..."}` so the model sees it; nothing raises
into the runner. Results never contain a host path.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext
from google.genai import types

from skills_lsp.adk.loader import load_adk_skills_report
from skills_lsp.adk.sandbox import DEFAULT_LIMITS, Limits, ScriptRefused, resolve_skill_file
from skills_lsp.adk.sandbox import run_script as sandbox_run_script
from skills_lsp.core.engine.catalog import SkillCatalog, skill_directory
from skills_lsp.core.index.skill_index import SkillDocument, SkillIndex, read_workspace_document
from skills_lsp.core.model import FileKind
from skills_lsp.core.parse.frontmatter import read_limited

SkillSource = SkillIndex | str | os.PathLike[str] | Sequence[str | os.PathLike[str]]

DEFAULT_MAX_REFERENCE_CHARS = 100_000

USE_SKILL_INTRO = (
    "Load a skill's instructions and the list of its files (scripts/, references/, assets/) by "
    "name. Call it before following a skill. The skills available are:"
)


def skill_index(source: SkillSource, profile: str | None = None) -> SkillIndex:
    """A `SkillIndex` as is, or the skills under roots that load for ADK (validated by the core,
    like `load_adk_skills_report`; a skill with an error finding is left out)."""
    if isinstance(source, SkillIndex):
        return source
    roots = [source] if isinstance(source, (str, os.PathLike)) else list(source)
    report = load_adk_skills_report(roots, profile)
    # The very files the loader accepted: matching by name could pick a rejected namesake.
    documents = [
        document
        for path in report.loaded
        if (document := read_workspace_document(Path(path), FileKind.AGENT_SKILL)) is not None
    ]
    return SkillIndex(documents)


def _error(message: str) -> dict[str, Any]:
    return {"error": message}


def _string_schema(description: str) -> types.Schema:
    return types.Schema(type=types.Type.STRING, description=description)


class _SkillTool(BaseTool):
    """A tool over one skill index, declared with an explicit schema."""

    def __init__(self, name: str, description: str, index: SkillIndex) -> None:
        super().__init__(name=name, description=description)
        self.index = index

    def _document(self, args: dict[str, Any], key: str = "skill") -> SkillDocument | dict[str, Any]:
        name = args.get(key)
        if not isinstance(name, str) or not name.strip():
            return _error(f"Missing argument {key!r}: the name of a skill.")
        document = self.index.find_by_name(name)
        if document is None:
            known = ", ".join(sorted(d.name for d in self.index)) or "(none)"
            return _error(f"Unknown skill {name!r}. Available skills: {known}.")
        return document

    def _directory(self, document: SkillDocument) -> Path | dict[str, Any]:
        directory = skill_directory(document)
        if directory is None:
            return _error(f"Skill {document.name!r} has no folder of its own (no files to use).")
        return directory

    def _skill_folder(self, args: dict[str, Any]) -> tuple[SkillDocument, Path] | dict[str, Any]:
        """The named skill and its folder, or the error result to give the model."""
        found = self._document(args)
        if isinstance(found, dict):
            return found
        directory = self._directory(found)
        if isinstance(directory, dict):
            return directory
        return found, directory

    def _declare(self, properties: dict[str, types.Schema], required: list[str]) -> types.FunctionDeclaration:
        return types.FunctionDeclaration(
            name=self.name,
            description=self.description,
            parameters=types.Schema(type=types.Type.OBJECT, properties=properties, required=required),
        )


class UseSkillTool(_SkillTool):
    """`use_skill(name)`: the skill's instructions and resources; the catalog in its description."""

    def __init__(self, index: SkillIndex) -> None:
        catalog = SkillCatalog(index)
        # No <location>: the model loads a skill by name, and host paths stay out of the prompt.
        super().__init__("use_skill", f"{USE_SKILL_INTRO}\n{catalog.to_prompt(locations=False)}", index)
        self.catalog = catalog

    def _get_declaration(self) -> types.FunctionDeclaration:
        return self._declare(
            {"name": _string_schema("The skill's name, as in <available_skills>.")}, ["name"]
        )

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        found = self._document(args, "name")
        if isinstance(found, dict):
            return found
        loaded = self.catalog.load_skill(found.name)
        if loaded is None:  # pragma: no cover - the name was just found in the index
            return _error(f"Unknown skill {found.name!r}.")
        return {
            "skill": found.name,
            "description": found.description,
            "instructions": loaded.instructions,
            "resources": list(loaded.resources),
        }


class ReadReferenceTool(_SkillTool):
    """`read_reference(skill, path)`: a UTF-8 file inside that skill's folder."""

    def __init__(self, index: SkillIndex, max_chars: int = DEFAULT_MAX_REFERENCE_CHARS) -> None:
        super().__init__(
            "read_reference",
            "Read a file of a skill (e.g. references/guide.md), by the skill's name and the file's "
            "path relative to the skill folder, as listed by use_skill.",
            index,
        )
        self.max_chars = max_chars

    def _get_declaration(self) -> types.FunctionDeclaration:
        return self._declare(
            {
                "skill": _string_schema("The skill's name."),
                "path": _string_schema("The file's path relative to the skill folder."),
            },
            ["skill", "path"],
        )

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        located = self._skill_folder(args)
        if isinstance(located, dict):
            return located
        found, directory = located
        path = args.get("path")
        if not isinstance(path, str):
            return _error("Missing argument 'path': a file path relative to the skill folder.")
        try:
            target = resolve_skill_file(directory, path)
            data = read_limited(target, self.max_chars * 4)
        except ScriptRefused as exc:
            return _error(str(exc))
        except OSError as exc:
            return _error(f"Cannot read {path!r}: {exc.strerror or exc}.")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return _error(f"{path!r} is not a UTF-8 text file.")
        truncated = len(text) > self.max_chars
        return {"skill": found.name, "path": path, "content": text[: self.max_chars], "truncated": truncated}


class RunScriptTool(_SkillTool):
    """`run_script(skill, script, args)`: the sandbox's `run_script` on that skill's `scripts/`."""

    def __init__(
        self,
        index: SkillIndex,
        *,
        timeout: float = 30.0,
        max_output: int = 64_000,
        env_allow: Iterable[str] = (),
        outputs: Path | None = None,
        allow_network: bool = False,
        limits: Limits = DEFAULT_LIMITS,
        sandbox: str | None = None,
    ) -> None:
        super().__init__(
            "run_script",
            "Run a script from a skill's scripts/ folder with a list of arguments (no shell). "
            f"Times out after {timeout:g} s; returns stdout, stderr and the exit code.",
            index,
        )
        self.timeout = timeout
        self.max_output = max_output
        self.env_allow = tuple(env_allow)
        # Set by whoever builds the agent, never by the model: where scripts may write, the network.
        self.outputs = outputs
        self.allow_network = allow_network
        self.limits = limits
        self.sandbox = sandbox

    def _get_declaration(self) -> types.FunctionDeclaration:
        return self._declare(
            {
                "skill": _string_schema("The skill's name."),
                "script": _string_schema("The script's path relative to scripts/ (e.g. build.py)."),
                "args": types.Schema(
                    type=types.Type.ARRAY,
                    items=types.Schema(type=types.Type.STRING),
                    description="The script's arguments, one string each.",
                ),
            },
            ["skill", "script"],
        )

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        located = self._skill_folder(args)
        if isinstance(located, dict):
            return located
        found, directory = located
        script = args.get("script")
        if not isinstance(script, str):
            return _error("Missing argument 'script': a path relative to scripts/.")
        script_args = args.get("args") or []
        if not isinstance(script_args, list):
            return _error("Arguments must be a list of strings, not one string.")
        try:
            result = await asyncio.to_thread(
                sandbox_run_script,
                directory,
                script,
                [str(a) for a in script_args],
                timeout=self.timeout,
                max_output=self.max_output,
                env_allow=self.env_allow,
                outputs=self.outputs,
                allow_network=self.allow_network,
                limits=self.limits,
                sandbox=self.sandbox,
            )
        except ScriptRefused as exc:
            return _error(str(exc))
        except OSError as exc:
            return _error(f"Cannot run {script!r}: {exc.strerror or exc}.")
        response: dict[str, Any] = {
            "skill": found.name,
            "script": script,
            "returncode": result.returncode,
            "stdout": result.stdout,
            "stderr": result.stderr,
            "timed_out": result.timed_out,
            "truncated": result.truncated,
            "isolation": result.isolation,
        }
        if result.warning:
            response["warning"] = result.warning
        if result.timed_out:
            response["error"] = f"Script {script!r} timed out after {self.timeout:g} s and was killed."
        return response


def skill_tools(
    source: SkillSource,
    *,
    scripts: bool = True,
    profile: str | None = None,
    timeout: float = 30.0,
    max_output: int = 64_000,
    env_allow: Iterable[str] = (),
    max_reference_chars: int = DEFAULT_MAX_REFERENCE_CHARS,
    outputs: Path | None = None,
    allow_network: bool = False,
    limits: Limits = DEFAULT_LIMITS,
    sandbox: str | None = None,
) -> list[BaseTool]:
    """`use_skill`, `read_reference` and (unless `scripts=False`) `run_script` over the skills of
    `source`: a `SkillIndex`, or skill roots loaded as `load_adk_skills_report` does. `outputs`,
    `allow_network`, `limits` and `sandbox` configure the script sandbox (see `run_script`)."""
    index = skill_index(source, profile)
    tools: list[BaseTool] = [UseSkillTool(index), ReadReferenceTool(index, max_reference_chars)]
    if scripts:
        tools.append(
            RunScriptTool(
                index,
                timeout=timeout,
                max_output=max_output,
                env_allow=env_allow,
                outputs=outputs,
                allow_network=allow_network,
                limits=limits,
                sandbox=sandbox,
            )
        )
    return tools
