"""skills-lsp: validator, engine, language server and CLI for agent skills.

The adk-skill 0.6.0 port keeps the crate's public names (snake_case) and answers. Names are
imported on first use, so `skills-lsp check` does not pay for the engine (numpy) at start-up.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from skills_lsp._version import __version__

_EXPORTS = {
    "skills_lsp.core.engine.catalog": ("SkillCatalog", "to_prompt"),
    "skills_lsp.core.engine.coordinator": (
        "ByName",
        "ByQuery",
        "ByTag",
        "ContextCoordinator",
        "CoordinatorConfig",
        "SkillContext",
        "ValidationMode",
    ),
    "skills_lsp.core.files.discovery": (
        "discover_agent_skills",
        "discover_instruction_files",
        "discover_skill_files",
    ),
    "skills_lsp.core.errors": (
        "IndexError_",
        "InvalidFrontmatter",
        "InvalidSkillsRoot",
        "Io",
        "MissingField",
        "SkillError",
        "Validation",
        "Yaml",
    ),
    "skills_lsp.core.index.skill_index": (
        "SkillDocument",
        "SkillIndex",
        "SkillSummary",
        "load_skill_index",
        "load_skill_index_with_extras",
        "load_workspace_index",
        "normalize_id",
    ),
    "skills_lsp.core.engine.inject": (
        "Content",
        "Part",
        "SkillInjector",
        "SkillInjectorConfig",
        "apply_skill_injection",
        "select_skill_prompt_block",
    ),
    "skills_lsp.core.routing.lexical": ("score_skill",),
    "skills_lsp.core.routing.tokens": ("tokenize",),
    "skills_lsp.core.routing.scorer": ("SelectionPolicy", "SkillMatch", "select_skills"),
    "skills_lsp.core.parse.skill_parser": (
        "ParsedSkill",
        "parse_instruction_markdown",
        "parse_skill_markdown",
    ),
    "skills_lsp.core.parse.tool_manifest": ("StaticToolRegistry", "Tool", "ToolRegistry"),
    "skills_lsp.core.workspace.settings": ("load_tool_manifest",),
}
_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}

__all__ = [
    "ByName",
    "ByQuery",
    "ByTag",
    "Content",
    "ContextCoordinator",
    "CoordinatorConfig",
    "IndexError_",
    "InvalidFrontmatter",
    "InvalidSkillsRoot",
    "Io",
    "MissingField",
    "ParsedSkill",
    "Part",
    "SelectionPolicy",
    "SkillCatalog",
    "SkillContext",
    "SkillDocument",
    "SkillError",
    "SkillIndex",
    "SkillInjector",
    "SkillInjectorConfig",
    "SkillMatch",
    "SkillSummary",
    "StaticToolRegistry",
    "Tool",
    "ToolRegistry",
    "Validation",
    "ValidationMode",
    "Yaml",
    "__version__",
    "apply_skill_injection",
    "discover_agent_skills",
    "discover_instruction_files",
    "discover_skill_files",
    "load_skill_index",
    "load_skill_index_with_extras",
    "load_tool_manifest",
    "load_workspace_index",
    "normalize_id",
    "parse_instruction_markdown",
    "parse_skill_markdown",
    "score_skill",
    "select_skill_prompt_block",
    "select_skills",
    "to_prompt",
    "tokenize",
]


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'skills_lsp' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__


if TYPE_CHECKING:
    from skills_lsp.core.engine.catalog import SkillCatalog, to_prompt
    from skills_lsp.core.engine.coordinator import (
        ByName,
        ByQuery,
        ByTag,
        ContextCoordinator,
        CoordinatorConfig,
        SkillContext,
        ValidationMode,
    )
    from skills_lsp.core.engine.inject import (
        Content,
        Part,
        SkillInjector,
        SkillInjectorConfig,
        apply_skill_injection,
        select_skill_prompt_block,
    )
    from skills_lsp.core.errors import (
        IndexError_,
        InvalidFrontmatter,
        InvalidSkillsRoot,
        Io,
        MissingField,
        SkillError,
        Validation,
        Yaml,
    )
    from skills_lsp.core.files.discovery import (
        discover_agent_skills,
        discover_instruction_files,
        discover_skill_files,
    )
    from skills_lsp.core.index.skill_index import (
        SkillDocument,
        SkillIndex,
        SkillSummary,
        load_skill_index,
        load_skill_index_with_extras,
        load_workspace_index,
        normalize_id,
    )
    from skills_lsp.core.parse.skill_parser import (
        ParsedSkill,
        parse_instruction_markdown,
        parse_skill_markdown,
    )
    from skills_lsp.core.parse.tool_manifest import StaticToolRegistry, Tool, ToolRegistry
    from skills_lsp.core.routing.lexical import score_skill
    from skills_lsp.core.routing.scorer import SelectionPolicy, SkillMatch, select_skills
    from skills_lsp.core.routing.tokens import tokenize
    from skills_lsp.core.workspace.settings import load_tool_manifest
