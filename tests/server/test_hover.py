"""Hover: a key's schema documentation, a tool's manifest description, a test query's ranking
and how the test queries that expect a skill rank it."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsp_helpers import Doc, opened, unique
from lsprotocol import types
from pytest_lsp import LanguageClient

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def hover(client: LanguageClient, doc: Doc, position: types.Position) -> types.Hover | None:
    return await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(doc.uri), position=position)
    )


def markdown(result: types.Hover | None) -> str:
    assert result is not None
    assert isinstance(result.contents, types.MarkupContent)
    assert result.contents.kind == types.MarkupKind.Markdown
    return result.contents.value


async def test_a_key_shows_its_schema_documentation(client: LanguageClient, workspace: Path) -> None:
    async with opened(client, workspace / "skills" / "pdf-form-filling" / "SKILL.md") as doc:
        result = await hover(client, doc, doc.position("license:", after=3))
        assert markdown(result).startswith("**license** (agentskills)\n\nLicense name, or a reference")
        assert result is not None and result.range == doc.range("license")


async def test_an_unknown_key_says_which_profile_has_it(client: LanguageClient, workspace: Path) -> None:
    name = unique("zz-hover")
    text = f"---\nname: {name}\ndescription: Hovers. Use when hovering.\ncontext: fork\n---\n"
    async with opened(client, workspace / "skills" / name / "SKILL.md", text) as doc:
        text = markdown(await hover(client, doc, doc.position("context")))
    assert text.startswith("**context** (agentskills)\n\nNot a field of the agentskills profile")
    assert "claude-code" in text


async def test_a_tool_shows_its_manifest_description(client: LanguageClient, workspace: Path) -> None:
    async with opened(client, workspace / "skills" / "pdf-form-filling" / "SKILL.md") as doc:
        result = await hover(client, doc, doc.position(" Read ", after=2))
        assert markdown(result) == "**Read**\n\nRead a file from the workspace.\n\nSource: `claude-code`"
        assert result is not None and result.range == doc.range("Read", occurrence=0)
        bash = markdown(await hover(client, doc, doc.position("Bash(python3:*)", after=6)))
        assert bash.startswith("**Bash**\n\nRun a shell command")


async def test_a_tool_missing_from_the_manifest_says_so(client: LanguageClient, workspace: Path) -> None:
    async with opened(client, workspace / "skills" / "broken-name-mismatch" / "SKILL.md") as doc:
        result = await hover(client, doc, doc.position("  - grep", after=5))
        assert markdown(result) == "**grep**\n\nNot in the tool manifest."
        assert result is not None and result.range == doc.range("grep", occurrence=0)


async def test_a_list_tool_in_a_flat_skill(client: LanguageClient, workspace: Path) -> None:
    async with opened(client, workspace / ".skills" / "weather-lookup.md") as doc:
        text = markdown(await hover(client, doc, doc.position("  - weather_api", after=6)))
    assert text == (
        "**weather_api**\n\nCurrent conditions and forecast for coordinates.\n\nSource: `agent.tools.weather`"
    )


async def test_a_test_query_shows_its_ranking(client: LanguageClient, workspace: Path) -> None:
    async with opened(client, workspace / "skill-queries.yaml", language_id="yaml") as doc:
        query = "Fill in the PDF form with the applicant's data from this JSON file"
        result = await hover(client, doc, doc.position(query, after=5))
        text = markdown(result)
        expected = f"**{query}**\n\nExpected: `pdf-form-filling` (lexical scorer, min_score 1.0)\n\n"
        expected += "1. **pdf-form-filling** "
        assert text.startswith(expected)
        assert "\n2. **" in text and "\n5. **" in text and "\n6. **" not in text
        assert result is not None and result.range == doc.range(query)


async def test_the_failing_test_query_shows_what_wins(client: LanguageClient, workspace: Path) -> None:
    async with opened(client, workspace / "skill-queries.yaml", language_id="yaml") as doc:
        query = "Book me a table for two at an Italian restaurant"
        text = markdown(await hover(client, doc, doc.position(query)))
    assert "Expected: no skill" in text
    assert "1. **broken-references** 1.287" in text
    assert "(below min_score)" in text


async def test_comments_in_the_query_file_have_no_hover(client: LanguageClient, workspace: Path) -> None:
    async with opened(client, workspace / "skill-queries.yaml", language_id="yaml") as doc:
        assert await hover(client, doc, doc.position("# Routing tests", after=3)) is None


async def test_a_skill_name_shows_how_its_queries_rank_it(client: LanguageClient, workspace: Path) -> None:
    async with opened(client, workspace / "skills" / "pdf-form-filling" / "SKILL.md") as doc:
        result = await hover(client, doc, doc.position("name: pdf-form-filling", after=8))
        text = markdown(result)
        assert text.startswith("**pdf-form-filling**: 1 of 1 test queries pass\n\n")
        assert "- ✓ Fill in the PDF form with the applicant's data from this JSON file: rank 1" in text
        assert result is not None and result.range == doc.range("pdf-form-filling")


async def test_a_skill_no_query_expects(client: LanguageClient, workspace: Path) -> None:
    async with opened(client, workspace / "skills" / "broken-references" / "SKILL.md") as doc:
        text = markdown(await hover(client, doc, doc.position("name: broken-references", after=7)))
    assert text == "**broken-references**\n\nNo test query expects this skill."


async def test_the_body_has_no_hover(client: LanguageClient, workspace: Path) -> None:
    async with opened(client, workspace / "skills" / "pdf-form-filling" / "SKILL.md") as doc:
        assert await hover(client, doc, doc.position("# Filling PDF forms", after=4)) is None


async def test_a_key_shows_which_runtimes_accept_or_warn(client: LanguageClient, workspace: Path) -> None:
    name = unique("zz-runtimes")
    text = f"---\nname: {name}\ndescription: Forks. Use when forking.\ncontext: fork\nlicense: MIT\n---\n"
    # In Claude Code's own skills folder the file gets the claude-code profile.
    async with opened(client, workspace / ".claude" / "skills" / name / "SKILL.md", text) as doc:
        context = markdown(await hover(client, doc, doc.position("context")))
        license_ = markdown(await hover(client, doc, doc.position("license", after=2)))
    assert context.startswith("**context** (claude-code)\n\nClaude Code and VS Code Copilot (experimental")
    assert context.endswith(
        "**Runtimes**\n\n"
        "- ✓ accepts: `claude-code`, `vscode-copilot`\n"
        "- ⚠ warns (SK401): `agentskills`, `adk-rust`, `adk`, `codex`, `gemini-cli`, `convention`\n"
        "- ✗ refuses (SK401 is an error): `skills-ref`"
    )
    assert (
        "- ○ accepts, but its runtime's docs do not list it (ignored): "
        "`claude-code`, `codex`, `gemini-cli`, `vscode-copilot`"
    ) in license_


async def test_a_key_no_profile_knows_is_reported_everywhere(client: LanguageClient, workspace: Path) -> None:
    name = unique("zz-runtimes")
    text = f"---\nname: {name}\ndescription: Authors. Use when authoring.\nauthor: me\n---\n"
    async with opened(client, workspace / ".gemini" / "skills" / name / "SKILL.md", text) as doc:
        result = await hover(client, doc, doc.position("author:"))
    assert markdown(result) == (
        "**author** (gemini-cli)\n\nNot a field of the gemini-cli profile.\n\n**Runtimes**\n\n"
        "- ⚠ warns (SK401): `agentskills`, `adk-rust`, `claude-code`, `adk`, `codex`, `gemini-cli`, "
        "`vscode-copilot`, `convention`\n"
        "- ✗ refuses (SK401 is an error): `skills-ref`"
    )
    assert result is not None and result.range == doc.range("author", occurrence=1)
