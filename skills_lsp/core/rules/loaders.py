"""SK0xx: problems in the files skills-lsp reads besides skills (config, tool manifest, test
queries). The loaders report them, on those files; these entries document the codes and let
`select`/`ignore` and severities name them."""

from __future__ import annotations

from collections.abc import Iterator

from skills_lsp.core.model import Severity
from skills_lsp.core.rules.registry import Report, RuleContext, rule

E = Severity.ERROR


@rule("SK001", "invalid-config", E, "The skills-lsp configuration is invalid")
def invalid_config(ctx: RuleContext) -> Iterator[Report]:
    """`[tool.skills-lsp]` in pyproject.toml or `skills-lsp.toml` has a TOML error, an unknown
    key, an unknown profile or rule code, or a value of the wrong type. The finding points at the
    config file; the rest of the configuration still applies. Reported by the config loader."""
    return iter(())


@rule("SK002", "invalid-tool-manifest", E, "The tool manifest is invalid")
def invalid_tool_manifest(ctx: RuleContext) -> Iterator[Report]:
    """The tool manifest (`skill-tools.yaml`, or `tool-manifest` in `[tool.skills-lsp]`) is not
    valid YAML or JSON, or does not match `schema/tool-registry.schema.json`: a top-level `tools:`
    list of `{name, description?, parameters?, source?}`. A tool listed twice is a warning.
    Reported by the manifest loader, on the manifest file."""
    return iter(())


@rule("SK003", "invalid-test-queries", E, "The test-query file is invalid")
def invalid_test_queries(ctx: RuleContext) -> Iterator[Report]:
    """The test-query file (`skill-queries.yaml`, or `query-file` in `[tool.skills-lsp]`) is not
    valid YAML or JSON, or does not match `schema/skill-queries.schema.json`: `cases:` of `query`
    and `expect` (a skill name, a list of names, or `none`) with optional `top_k`, `min_score`,
    `include_tags`, `exclude_tags` and `margin`, and optional shared `defaults`. Cases with
    problems are skipped; the others still run. Reported by the query-file loader."""
    return iter(())


@rule("SK004", "adk-rejects-skill", E, "Google ADK cannot load this skill")
def adk_rejects_skill(ctx: RuleContext) -> Iterator[Report]:
    """Only `skills_lsp.adk.load_adk_skills` reports it: ADK's own `Frontmatter` model rejects a
    value our profile accepts (the finding points at that field), a second skill has a name already
    loaded (ADK's `SkillToolset` refuses duplicates, so the first wins), or a resource symlink
    resolves outside the skill (left out, as a warning). Strict loading raises on it; lenient
    loading skips the skill and reports it."""
    return iter(())
