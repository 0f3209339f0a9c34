"""Code lenses: one per test query (resolved to ✓/✗ with the winner), and at the top of a skill
`N test queries: k pass` plus `Score a query...`; refreshed after edits where the client can."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsp_helpers import Doc, execute, opened, refreshes_code_lenses, unique, wait_for
from lsprotocol import types
from pytest_lsp import LanguageClient

pytestmark = pytest.mark.asyncio(loop_scope="session")

CASES = 12


async def lenses(client: LanguageClient, doc: Doc) -> list[types.CodeLens]:
    result = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(doc.uri))
    )
    return list(result or [])


async def titles(client: LanguageClient, doc: Doc) -> list[str]:
    found = []
    for lens in await lenses(client, doc):
        resolved = lens if lens.command is not None else await client.code_lens_resolve_async(lens)
        assert resolved.command is not None
        found.append(resolved.command.title)
    return found


def refreshes(client: LanguageClient) -> int:
    return int(client.refreshes["codeLens"])  # type: ignore[attr-defined]


async def test_one_lens_per_test_query(client: LanguageClient, workspace: Path) -> None:
    async with opened(client, workspace / "skill-queries.yaml", language_id="yaml") as doc:
        found = await lenses(client, doc)
        assert len(found) == CASES
        first = "Fill in the PDF form with the applicant's data from this JSON file"
        assert found[0].range == doc.range(first)
        assert found[10].range == doc.range("Book me a table for two at an Italian restaurant")
        assert all(lens.command is None and lens.data is not None for lens in found)  # resolved lazily
        resolved = [await client.code_lens_resolve_async(lens) for lens in found]
    names = [r.command.title for r in resolved if r.command is not None]
    assert len(names) == CASES
    assert all(t.startswith(("✓ ", "✗ ")) for t in names)
    assert [i for i, t in enumerate(names) if t.startswith("✗")] == [10]
    assert all(t.endswith(" · lexical") for t in names)  # the scorer that produced them
    assert names[0] == "✓ pdf-form-filling (2.826) · runner-up: broken-references (1.470) · lexical"
    # The runner-up is shown even under min_score (1.0 here): it is what the winner beat.
    assert names[10] == (
        "✗ broken-references (1.287) · runner-up: weather-lookup (0.970) · "
        "expected no skill, but `broken-references` is selected · lexical"
    )
    assert names[11] == "✓ no skill selected · lexical"


async def test_query_lenses_follow_edits_of_the_query_file(client: LanguageClient, workspace: Path) -> None:
    async with opened(client, workspace / "skill-queries.yaml", language_id="yaml") as doc:
        before = refreshes(client)
        doc.replace("expect: none", "expect: broken-references")
        if refreshes_code_lenses(client):
            await wait_for(lambda: refreshes(client) > before, "workspace/codeLens/refresh")
        names = await titles(client, doc)
        assert len(names) == CASES
        assert not [t for t in names if t.startswith("✗")]
        # A new case at the end gets a lens of its own.
        new_case = "  - query: Audit our Dockerfile for security problems\n    expect: pdf-form-filling\n"
        doc.edit([types.TextEdit(types.Range(doc.end, doc.end), new_case)])
        names = await titles(client, doc)
        assert len(names) == CASES + 1
        assert names[-1].startswith("✗ docker-image-audit")
    if not refreshes_code_lenses(client):
        await asyncio.sleep(0.05)
        assert refreshes(client) == 0  # never sent to a client that cannot take it


async def test_a_skill_shows_how_its_queries_fare(client: LanguageClient, workspace: Path) -> None:
    async with opened(client, workspace / "skills" / "pdf-form-filling" / "SKILL.md") as doc:
        found = await lenses(client, doc)
        top = types.Range(types.Position(0, 0), types.Position(0, 0))
        assert [lens.range for lens in found] == [top, top]
        queries, score = found
        assert queries.command is None
        resolved = await client.code_lens_resolve_async(queries)
        assert resolved.command is not None
        assert resolved.command.title == "1 test query: 1 pass (lexical)"
        assert score.command is not None
        assert score.command.title == "Score a query..."
        assert score.command.command == "skillsLsp.scoreQuery"
        assert list(score.command.arguments or []) == [doc.uri]


async def test_a_skill_no_query_expects(client: LanguageClient, workspace: Path) -> None:
    async with opened(client, workspace / "skills" / "broken-references" / "SKILL.md") as doc:
        assert await titles(client, doc) == ["0 test queries: 0 pass (lexical)", "Score a query..."]


async def test_a_failing_query_counts_against_its_skill(client: LanguageClient, workspace: Path) -> None:
    async with opened(client, workspace / "skill-queries.yaml", language_id="yaml") as queries:
        queries.replace("expect: none", "expect: weather-lookup")
        async with opened(client, workspace / ".skills" / "weather-lookup.md") as doc:
            assert (await titles(client, doc))[0] == "2 test queries: 1 pass (lexical)"


async def test_editing_a_skill_asks_for_a_refresh(client: LanguageClient, workspace: Path) -> None:
    name = unique("zz-lens")
    text = f"---\nname: {name}\ndescription: Lenses. Use when lensing.\n---\n"
    async with opened(client, workspace / "skills" / name / "SKILL.md", text) as doc:
        before = refreshes(client)
        doc.replace("Lenses.", "Code lenses.")
        if refreshes_code_lenses(client):
            await wait_for(lambda: refreshes(client) > before, "workspace/codeLens/refresh")
        else:
            await asyncio.sleep(0.05)
            assert refreshes(client) == before == 0
        assert await titles(client, doc) == ["0 test queries: 0 pass (lexical)", "Score a query..."]


async def test_other_files_have_no_lenses(client: LanguageClient, workspace: Path) -> None:
    async with opened(client, workspace / "README.md") as doc:
        assert await lenses(client, doc) == []
    async with opened(client, workspace / "skill-tools.yaml", language_id="yaml") as doc:
        assert await lenses(client, doc) == []


async def test_the_score_lens_command_runs_as_sent(client: LanguageClient, workspace: Path) -> None:
    """Clients run a lens's command as it is (Neovim's codelens.run, vscode-languageclient): with no
    query to score, the server says how to give one instead of failing."""
    async with opened(client, workspace / "skills" / "pdf-form-filling" / "SKILL.md") as doc:
        score = (await lenses(client, doc))[1]
        assert score.command is not None
        shown = len(client.messages)
        result = await execute(client, score.command.command, *(score.command.arguments or []))
    assert result == []
    await wait_for(lambda: len(client.messages) > shown, "window/showMessage")
    message = client.messages[-1]
    assert message.type == types.MessageType.Info
    assert "skillsLsp.scoreQuery with the query as its first argument" in message.message


async def test_a_lens_resolved_after_its_case_went_away(client: LanguageClient, workspace: Path) -> None:
    async with opened(client, workspace / "skill-queries.yaml", language_id="yaml") as doc:
        found = await lenses(client, doc)
        assert len(found) == CASES
        last = doc.text.index("  - query: Translate this paragraph")
        doc.edit([types.TextEdit(types.Range(doc.position("  - query: Translate"), doc.end), "")])
        assert len(doc.text) == last
        resolved = await client.code_lens_resolve_async(found[-1])
        assert resolved.command is not None and resolved.command.title == "(test query changed)"
        assert len(await lenses(client, doc)) == CASES - 1
