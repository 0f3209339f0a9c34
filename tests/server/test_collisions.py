"""Why a skill will not be picked, live: SK704 (another skill competes for the requests its
description is for) follows the description as it is typed; the hover on `description` shows
each runtime's listing budget; a skill's `evals/eval_queries.json` gets lenses and SK702."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_lsp
from lsp_helpers import index_ends, initialize_examples, opened, pull, pulls, unique, wait_for
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from skills_lsp.core.rules.listing import RUNTIMES
from skills_lsp.server.folder import load_folder

pytestmark = pytest.mark.asyncio(loop_scope="session")

CSV = (
    "Profiles and cleans messy CSV files - detects the delimiter and encoding, reports empty and "
    "inconsistent columns, trims whitespace, normalises dates to ISO 8601, unifies null markers and "
    "removes duplicate rows. Use when the user shares a CSV export with mixed date formats or duplicates."
)
GARDEN = "Plans vegetable gardens: what to sow each month and how often to water. Use for allotments."
# Words no skill of the session's workspace holds (other tests add skills to it): no rival.
ALONE = "Tunes zithers and glockenspiels for xylophonists."


def own_description(workspace: Path) -> str:
    text = (workspace / "skills" / "csv-data-cleaning" / "SKILL.md").read_text(encoding="utf-8")
    return next(line for line in text.splitlines() if line.startswith("description: "))[13:]


def body(workspace: Path) -> str:
    """csv-data-cleaning's body: the workspace routes with adk-skill's lexical formula, which
    divides by the body's size, so a rival competes only with a body like its own."""
    text = (workspace / "skills" / "csv-data-cleaning" / "SKILL.md").read_text(encoding="utf-8")
    return text.split("\n---\n", 1)[1]


def codes(found: list[types.Diagnostic]) -> list[str]:
    return sorted(str(d.code) for d in found)


def sk704(found: list[types.Diagnostic]) -> list[types.Diagnostic]:
    return [d for d in found if d.code == "SK704"]


async def test_a_collision_appears_and_goes_as_the_description_is_typed(
    client: LanguageClient, workspace: Path
) -> None:
    name = unique("zz-rival")
    text = f"---\nname: {name}\ndescription: {GARDEN}\n---\n{body(workspace)}"
    async with opened(client, workspace / "skills" / name / "SKILL.md", text) as doc:
        assert sk704(await doc.diagnostics()) == []
        # Typing a description that says what csv-data-cleaning says: the two now compete.
        doc.replace(GARDEN, CSV)
        found = sk704(await doc.diagnostics(until=lambda ds: bool(sk704(ds))))
        assert len(found) == 1
        (collision,) = found
        assert "`csv-data-cleaning`" in collision.message
        assert collision.message.startswith('Requests like "')
        assert " against " in collision.message and "for this skill" in collision.message
        assert collision.range == doc.range(CSV)
        assert collision.severity in (types.DiagnosticSeverity.Warning, types.DiagnosticSeverity.Information)
        # Typing it back apart: the collision goes with the very next analysis.
        doc.replace(CSV, GARDEN)
        assert sk704(await doc.diagnostics(until=lambda ds: not sk704(ds))) == []


async def test_an_edit_publishes_at_once_with_the_last_collision_kept(
    client: LanguageClient, workspace: Path
) -> None:
    """Each edit's findings go out without waiting for SK704's ranking over every skill: the
    first publication of the new version already has the collision found before (on today's
    description), so it never blinks out while typing, and the ranked one follows."""
    if pulls(client):
        pytest.skip("a pulling client asks for the whole set itself")
    name = unique("zz-kept")
    text = f"---\nname: {name}\ndescription: {CSV}\n---\n{body(workspace)}"
    async with opened(client, workspace / "skills" / name / "SKILL.md", text) as doc:
        await doc.diagnostics(until=lambda ds: bool(sk704(ds)))
        doc.replace(CSV, CSV + " Handles TSV too.")
        await doc.diagnostics(until=lambda ds: bool(sk704(ds)))
        mine = [p for p in doc.published() if p.version == doc.version]
        (collision,) = sk704(list(mine[0].diagnostics))
        assert collision.range == doc.range(CSV + " Handles TSV too.")
        # Every publication of this version names the rival: none is a quick one without it.
        assert all(sk704(list(p.diagnostics)) for p in mine)
        # Typed apart: the quick publication still shows the last ranking, the next one drops it.
        doc.replace(CSV + " Handles TSV too.", ALONE)
        await doc.diagnostics(until=lambda ds: not sk704(ds))
        steps = [p for p in doc.published() if p.version == doc.version]
        assert len(steps) == 2 and sk704(list(steps[0].diagnostics)) and not sk704(list(steps[1].diagnostics))
        assert [d for d in steps[0].diagnostics if d.code != "SK704"] == list(steps[1].diagnostics)


async def test_the_rival_sees_the_new_competitor_without_being_edited(
    client: LanguageClient, workspace: Path
) -> None:
    csv_skill = workspace / "skills" / "csv-data-cleaning" / "SKILL.md"
    name = unique("zz-copycat")
    async with opened(client, csv_skill) as rival:
        assert sk704(await rival.diagnostics()) == []
        text = f"---\nname: {name}\ndescription: {GARDEN}\n---\n{body(workspace)}"
        async with opened(client, workspace / "skills" / name / "SKILL.md", text) as doc:
            await doc.diagnostics()
            # Word for word what csv-data-cleaning says of itself.
            doc.replace(GARDEN, own_description(workspace))
            await doc.diagnostics(until=lambda ds: bool(sk704(ds)))
            # csv-data-cleaning's own requests now have a rival: its diagnostics say so.
            found = sk704(await rival.diagnostics(until=lambda ds: bool(sk704(ds))))
            assert any(f"`{name}`" in d.message for d in found)
        # The competitor closed unsaved: it left the index, and the collision with it.
        await rival.diagnostics(until=lambda ds: not sk704(ds))


async def test_an_accepted_pair_is_not_reported(client: LanguageClient, workspace: Path) -> None:
    name = unique("zz-accepted")
    config = workspace / "skills-lsp.toml"
    before = config.read_text(encoding="utf-8")
    text = f"---\nname: {name}\ndescription: {CSV}\n---\n{body(workspace)}"
    async with opened(client, workspace / "skills" / name / "SKILL.md", text) as doc:
        await doc.diagnostics(until=lambda ds: bool(sk704(ds)))
        try:
            config.write_text(before + f'overlap = [["{name}", "csv-data-cleaning"]]\n', encoding="utf-8")
            _changed(client, config)
            await doc.diagnostics(until=lambda ds: not sk704(ds), timeout=15)
        finally:
            config.write_text(before, encoding="utf-8")
            _changed(client, config)
        await doc.diagnostics(until=lambda ds: bool(sk704(ds)), timeout=15)


def _changed(client: LanguageClient, path: Path) -> None:
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=path.as_uri(), type=types.FileChangeType.Changed)]
        )
    )


async def test_the_description_hover_shows_each_runtime_budget(
    client: LanguageClient, workspace: Path
) -> None:
    async with opened(client, workspace / "skills" / "csv-data-cleaning" / "SKILL.md") as doc:
        result = await client.text_document_hover_async(
            types.HoverParams(
                types.TextDocumentIdentifier(doc.uri), doc.position("Profiles and cleans", after=3)
            )
        )
        assert result is not None and isinstance(result.contents, types.MarkupContent)
        text = result.contents.value
        assert text.startswith("**description**: ")
        assert "Claude Code: " in text and "of 8,000 characters" in text
        assert "Codex: " in text
        assert "**listed in full**" in text
        assert "https://code.claude.com/docs/en/skills" in text


async def test_a_long_description_hover_says_what_each_runtime_keeps(
    client: LanguageClient, workspace: Path
) -> None:
    name = unique("zz-long")
    long = ("Handles one more very particular task with great care. " * 40).strip()
    text = f"---\nname: {name}\ndescription: {long}\n---\n# Long\n"
    async with opened(client, workspace / "skills" / name / "SKILL.md", text) as doc:
        result = await client.text_document_hover_async(
            types.HoverParams(types.TextDocumentIdentifier(doc.uri), doc.position("Handles one", after=2))
        )
        assert result is not None and isinstance(result.contents, types.MarkupContent)
        hover = result.contents.value
        assert hover.startswith(f"**description**: {len(long):,} characters")
        # Each entry is capped: Claude Code at 1,536 characters, Codex at 1,024.
        assert f"**description cut to 1,536 of {len(long):,} characters**" in hover
        assert f"**description cut to 1,024 of {len(long):,} characters**" in hover


async def test_a_skills_trigger_evals_get_lenses_and_sk702(client: LanguageClient, workspace: Path) -> None:
    evals = workspace / "skills" / "sql-query-review" / "evals" / "eval_queries.json"
    text = (
        "[\n"
        '  {"query": "Review this SQL migration before we run it in production", "should_trigger": true},\n'
        '  {"query": "Review this SQL query for missing WHERE clauses", "should_trigger": false}\n'
        "]\n"
    )
    async with opened(client, evals, text, language_id="json") as doc:
        found = await doc.diagnostics(until=lambda ds: bool(ds))
        assert codes(found) == ["SK702"]
        assert found[0].range == doc.range('"Review this SQL query for missing WHERE clauses"')
        assert "should not trigger `sql-query-review`" in found[0].message
        lenses = await client.text_document_code_lens_async(
            types.CodeLensParams(types.TextDocumentIdentifier(doc.uri))
        )
        assert lenses is not None and len(lenses) == 2
        resolved = [await client.code_lens_resolve_async(lens) for lens in lenses]
        titles = [lens.command.title for lens in resolved if lens.command is not None]
        assert titles[0].startswith("✓ sql-query-review")
        assert titles[1].startswith("✗ sql-query-review")
        hovered = await client.text_document_hover_async(
            types.HoverParams(types.TextDocumentIdentifier(doc.uri), doc.position("missing WHERE", after=3))
        )
        assert hovered is not None and isinstance(hovered.contents, types.MarkupContent)
        assert hovered.contents.value.startswith("**Review this SQL query for missing WHERE clauses**")
        assert "Expected: not `sql-query-review`" in hovered.contents.value
        # Flip the expectation: both pass.
        doc.replace('WHERE clauses", "should_trigger": false', 'WHERE clauses", "should_trigger": true')
        assert await doc.diagnostics(until=lambda ds: not ds) == []


async def test_the_listing_budget_is_a_live_diagnostic(client: LanguageClient, workspace: Path) -> None:
    """Three unsaved skills with 1,500-character descriptions push Claude Code's listing of the
    workspace past its 8,000 characters: the last in listing order lose their descriptions, and
    shortening one description on screen puts it back."""
    stem = unique("zz-budget")
    long = ("Handles one more very particular reporting task with great care. " * 23)[:1500].strip()
    paths = [workspace / "skills" / f"{stem}-{letter}" / "SKILL.md" for letter in "abc"]

    def claude(found: list[types.Diagnostic]) -> list[types.Diagnostic]:
        return [d for d in found if d.code == "SK703" and d.message.startswith("Claude Code's")]

    texts = [f"---\nname: {p.parent.name}\ndescription: {long}\n---\n# Budget\n" for p in paths]
    async with (
        opened(client, paths[0], texts[0]),
        opened(client, paths[1], texts[1]),
        opened(client, paths[2], texts[2]) as last,
    ):
        found = claude(await last.diagnostics(until=lambda ds: bool(claude(ds))))
        assert len(found) == 1
        assert "listed by name only: its description is dropped" in found[0].message
        assert "of its 8,000 characters" in found[0].message
        assert found[0].range == last.range(long)
        last.replace(long, "Handles one short task.")
        assert claude(await last.diagnostics(until=lambda ds: not claude(ds))) == []


async def test_the_server_passes_its_budget_variable_to_core(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Core reads no environment: the server reads SLASH_COMMAND_TOOL_CHAR_BUDGET when it loads a
    folder, and the live SK703 and the budget hover use it."""
    skill = tmp_path / "skills" / "one" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\nname: one\ndescription: Does one thing. Use when asked.\n---\n# One\n")
    claude = RUNTIMES["claude-code"]
    assert load_folder(tmp_path, {}).listing_base(claude, skill).budget == 8000
    monkeypatch.setenv("SLASH_COMMAND_TOOL_CHAR_BUDGET", "100000")
    folder = load_folder(tmp_path, {})
    assert folder.config.budget_variables == (("SLASH_COMMAND_TOOL_CHAR_BUDGET", "100000"),)
    assert folder.listing_base(claude, skill).budget == 100_000


async def test_the_description_hover_shows_only_the_runtimes_of_the_files_profile(
    client: LanguageClient, workspace: Path
) -> None:
    """A skill in `.github/skills/` has the vscode-copilot profile: its hover speaks of VS Code
    Copilot only, as SK703 does, not of every runtime."""
    name = unique("zz-copilot")
    text = f"---\nname: {name}\ndescription: Plans vegetable gardens month by month.\n---\n# Garden\n"
    async with opened(client, workspace / ".github" / "skills" / name / "SKILL.md", text) as doc:
        result = await client.text_document_hover_async(
            types.HoverParams(types.TextDocumentIdentifier(doc.uri), doc.position("Plans vegetable", after=2))
        )
        assert result is not None and isinstance(result.contents, types.MarkupContent)
        hover = result.contents.value
        assert "VS Code Copilot: " in hover and "(no documented limit)" in hover
        assert "Claude Code" not in hover and "Codex" not in hover


async def test_the_claude_code_hover_counts_when_to_use_with_the_description(
    client: LanguageClient, workspace: Path
) -> None:
    """Claude Code's entry is `description` + `when_to_use`, capped together at 1,536."""
    name = unique("zz-when")
    description = "Plans vegetable gardens month by month."
    when = ("Use when someone asks what to sow, plant or water in their allotment this week. " * 20).strip()
    text = f"---\nname: {name}\ndescription: {description}\nwhen_to_use: {when}\n---\n# Garden\n"
    async with opened(client, workspace / ".claude" / "skills" / name / "SKILL.md", text) as doc:
        result = await client.text_document_hover_async(
            types.HoverParams(types.TextDocumentIdentifier(doc.uri), doc.position("Plans vegetable", after=2))
        )
        assert result is not None and isinstance(result.contents, types.MarkupContent)
        combined = len(description) + 1 + len(when)
        assert f"**description cut to 1,536 of {combined:,} characters**" in result.contents.value


# --- a pulling client that can be asked to pull again ----------------------------------------


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[sys.executable, "-m", "skills_lsp", "serve", "--stdio"]),
)
async def refreshing_client(lsp_client: LanguageClient, workspace: Path) -> AsyncIterator[None]:
    """Neovim's capabilities (diagnostics pulled) plus `workspace.diagnostics.refreshSupport`, as
    VS Code has; counts the server's `workspace/diagnostic/refresh` requests."""
    capabilities = client_capabilities("neovim")
    assert capabilities.workspace is not None
    capabilities.workspace.diagnostics = types.DiagnosticWorkspaceClientCapabilities(refresh_support=True)
    lsp_client.diagnostic_refreshes = 0  # type: ignore[attr-defined]

    def diagnostic_refresh(params: None) -> None:
        lsp_client.diagnostic_refreshes += 1  # type: ignore[attr-defined]

    # pytest-lsp's client answers the refresh itself: count them on the way.
    lsp_client.protocol.fm.features[types.WORKSPACE_DIAGNOSTIC_REFRESH] = diagnostic_refresh

    await initialize_examples(lsp_client, workspace, capabilities)
    await wait_for(lambda: index_ends(lsp_client) >= 1, "the end of the indexing progress")
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio(loop_scope="function")
async def test_a_pull_while_typing_keeps_the_last_collision_and_a_refresh_brings_the_ranked_one(
    refreshing_client: LanguageClient, workspace: Path
) -> None:
    """A pull right after a keystroke answers without ranking the description over every skill:
    SK704's last collisions, placed on the description as it is now, as a publishing client's
    first publication has them. A pause in typing brings `workspace/diagnostic/refresh`, and the
    pull that follows has the ranked findings."""
    client = refreshing_client
    name = unique("zz-pulled")
    text = f"---\nname: {name}\ndescription: {CSV}\n---\n{body(workspace)}"
    async with opened(client, workspace / "skills" / name / "SKILL.md", text) as doc:
        await doc.diagnostics(until=lambda ds: bool(sk704(ds)))
        refreshes = client.diagnostic_refreshes  # type: ignore[attr-defined]
        doc.replace(CSV, ALONE)  # typed apart: ranked, nothing competes any more
        quick = await pull(client, doc.uri)
        (kept,) = sk704(quick)
        assert kept.range == doc.range(ALONE)
        await wait_for(lambda: client.diagnostic_refreshes > refreshes, "a diagnostic refresh")  # type: ignore[attr-defined]
        ranked = await pull(client, doc.uri)
        assert sk704(ranked) == []
        assert [d for d in quick if d.code != "SK704"] == ranked
