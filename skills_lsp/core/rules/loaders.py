"""SK0xx: problems in the files skills-lsp reads besides skills (config, tool manifest, test
queries) and in what Google ADK's own loader accepts. Each loader records `Problem`s whose kind is
one of these rules' names; `rules.validate.file_findings` turns them into findings here."""

from __future__ import annotations

from collections.abc import Iterator

from skills_lsp.core.model import Severity
from skills_lsp.core.rules.registry import FileProblems, Report, Target, rule

E = Severity.ERROR


@rule(
    "SK001",
    "invalid-config",
    E,
    "The skills-lsp configuration is invalid",
    target=Target.FILE,
    origin="reported by the config loader (files/config.py) on the config file",
)
def invalid_config(file: FileProblems) -> Iterator[Report]:
    """`[tool.skills-lsp]` in pyproject.toml or `skills-lsp.toml` has a TOML error, an unknown
    key, an unknown profile or rule code, or a value of the wrong type. The finding points at the
    config file; the rest of the configuration still applies. Reported by the config loader."""
    yield from file.of("invalid-config")


@rule(
    "SK002",
    "invalid-tool-manifest",
    E,
    "The tool manifest is invalid",
    target=Target.FILE,
    origin="reported by the manifest loader (parse/tool_manifest.py) on the manifest",
)
def invalid_tool_manifest(file: FileProblems) -> Iterator[Report]:
    """The tool manifest (`skill-tools.yaml`, or `tool-manifest` in `[tool.skills-lsp]`) is not
    valid YAML or JSON, or does not match `schema/tool-registry.schema.json`: a top-level `tools:`
    list of `{name, description?, parameters?, source?}`. A tool listed twice is a warning.
    Reported by the manifest loader, on the manifest file."""
    yield from file.of("invalid-tool-manifest")


@rule(
    "SK003",
    "invalid-test-queries",
    E,
    "The test-query file is invalid",
    target=Target.FILE,
    origin="reported by the query-file loader (routing/queries.py) on the test-query file",
)
def invalid_test_queries(file: FileProblems) -> Iterator[Report]:
    """The test-query file (`skill-queries.yaml`, or `query-file` in `[tool.skills-lsp]`) is not
    valid YAML or JSON, or does not match `schema/skill-queries.schema.json`: `cases:` of `query`
    and `expect` (a skill name, a list of names, or `none`) with optional `top_k`, `min_score`,
    `include_tags`, `exclude_tags` and `margin`, and optional shared `defaults`. Cases with
    problems are skipped; the others still run. Reported by the query-file loader."""
    yield from file.of("invalid-test-queries")


@rule(
    "SK004",
    "adk-rejects-skill",
    E,
    "Google ADK cannot load this skill",
    target=Target.FILE,
    origin="reported by skills_lsp.adk.load_adk_skills, on the skill ADK refuses",
)
def adk_rejects_skill(file: FileProblems) -> Iterator[Report]:
    """Only `skills_lsp.adk.load_adk_skills` reports it: ADK's own `Frontmatter` model rejects a
    value our profile accepts (the finding points at that field), a second skill has a name already
    loaded (ADK's `SkillToolset` refuses duplicates, so the first wins), or a resource symlink
    resolves outside the skill (left out, as a warning). Strict loading raises on it; lenient
    loading skips the skill and reports it."""
    yield from file.of("adk-rejects-skill")
