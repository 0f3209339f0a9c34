"""Commands: skillsLsp.scoreQuery, skillsLsp.showIndex and skillsLsp.newSkill; bad arguments are
an error response for that request only."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from lsp_helpers import execute, unique
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

pytestmark = pytest.mark.asyncio(loop_scope="session")


# Every example skill but broken-yaml, whose frontmatter does not parse (so it has no name).
SKILLS = {
    "broken-references",
    "Broken_Name",
    "code-search",
    "csv-data-cleaning",
    "docker-image-audit",
    "git-release-notes",
    "incident-postmortem",
    "pdf-form-filling",
    "sql-query-review",
    "ticket-triage",
    "weather-lookup",
}


def deleted(client: LanguageClient, path: Path) -> None:
    """Tell the server a file is gone (as the editor's file watcher would)."""
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=path.as_uri(), type=types.FileChangeType.Deleted)]
        )
    )


@contextmanager
def removed_afterwards(client: LanguageClient, skill_dir: Path) -> Iterator[None]:
    try:
        yield
    finally:
        if skill_dir.exists():
            shutil.rmtree(skill_dir)
        deleted(client, skill_dir / "SKILL.md")


def names(result: Any) -> list[str]:
    return [entry["name"] for entry in result]


async def test_score_query_ranks_pdf_form_filling_first(client: LanguageClient, workspace: Path) -> None:
    result = await execute(client, "skillsLsp.scoreQuery", "fill a pdf form")
    assert isinstance(result, list) and 1 <= len(result) <= 10
    first = result[0]
    assert set(first) == {"name", "uri", "id", "score", "scorer"} and first["scorer"] == "lexical"
    assert first["name"] == "pdf-form-filling"
    assert first["uri"] == (workspace / "skills" / "pdf-form-filling" / "SKILL.md").resolve().as_uri()
    scores = [entry["score"] for entry in result]
    assert all(isinstance(s, float) for s in scores)
    assert scores == sorted(scores, reverse=True) and scores[0] > scores[-1]


async def test_score_query_in_a_given_folder(client: LanguageClient, workspace: Path) -> None:
    result = await execute(client, "skillsLsp.scoreQuery", workspace.as_uri(), "forecast for Lisbon")
    assert names(result)[0] == "weather-lookup"


async def test_show_index_lists_the_skills(client: LanguageClient, workspace: Path) -> None:
    result = await execute(client, "skillsLsp.showIndex")
    assert isinstance(result, list)
    assert all(set(entry) == {"name", "description", "uri", "kind"} for entry in result)
    skills = {entry["name"]: entry for entry in result if entry["kind"] != "convention"}
    assert set(skills) == SKILLS
    assert skills["weather-lookup"]["kind"] == "flat"
    assert skills["weather-lookup"]["uri"] == (workspace / ".skills" / "weather-lookup.md").resolve().as_uri()
    assert skills["pdf-form-filling"]["kind"] == "agentskill"
    assert skills["pdf-form-filling"]["description"].startswith("Fills in interactive PDF forms")
    conventions = sorted(Path(entry["uri"]).name for entry in result if entry["kind"] == "convention")
    assert conventions == ["AGENTS.md", "CLAUDE.md", "GEMINI.md"]


async def test_new_skill_creates_it_and_indexes_it(client: LanguageClient, workspace: Path) -> None:
    name = unique("zz-new")
    skill_dir = workspace / "skills" / name
    with removed_afterwards(client, skill_dir):
        uri = await execute(client, "skillsLsp.newSkill", name)
        assert uri == (skill_dir / "SKILL.md").resolve().as_uri()
        text = (skill_dir / "SKILL.md").read_text(encoding="utf-8")
        assert text.startswith(f"---\nname: {name}\n")
        assert sorted(p.name for p in skill_dir.iterdir()) == ["SKILL.md", "assets", "references", "scripts"]
        assert name in names(await execute(client, "skillsLsp.showIndex"))
    assert name not in names(await execute(client, "skillsLsp.showIndex"))


async def test_new_skill_in_a_given_folder(client: LanguageClient, workspace: Path) -> None:
    parent = workspace / unique("zz-more-skills")
    name = unique("zz-new")
    parent.mkdir()
    try:
        with removed_afterwards(client, parent / name):
            uri = await execute(client, "skillsLsp.newSkill", name, parent.as_uri())
            assert uri == (parent / name / "SKILL.md").resolve().as_uri()
            assert (parent / name / "SKILL.md").is_file()
    finally:
        shutil.rmtree(parent)


async def test_new_skill_shows_the_document_only_where_supported(
    client: LanguageClient, workspace: Path
) -> None:
    window = client.capabilities.window if client.capabilities else None
    supported = bool(window and window.show_document and window.show_document.support)  # not Neovim 0.7
    name = unique("zz-new")
    shown = len(client.shown_documents)
    with removed_afterwards(client, workspace / "skills" / name):
        uri = await execute(client, "skillsLsp.newSkill", name)
    assert [d.uri for d in client.shown_documents[shown:]] == ([uri] if supported else [])
    assert all(d.take_focus for d in client.shown_documents[shown:])


BAD_CALLS = [
    ("skillsLsp.newSkill", [], "needs a name"),
    ("skillsLsp.newSkill", [42], "needs a name"),
    ("skillsLsp.newSkill", ["Bad_Name"], "not a valid skill name"),
    ("skillsLsp.newSkill", ["pdf-form-filling"], "already exists"),
    ("skillsLsp.scoreQuery", [], "needs a query"),
    ("skillsLsp.noSuchCommand", ["x"], "noSuchCommand"),
]


@pytest.mark.parametrize(
    ("command", "arguments", "message"), BAD_CALLS, ids=[f"{c.split('.')[1]}{a}" for c, a, _ in BAD_CALLS]
)
async def test_bad_arguments_are_an_error_and_the_server_keeps_serving(
    client: LanguageClient, workspace: Path, command: str, arguments: list[Any], message: str
) -> None:
    with pytest.raises(JsonRpcException) as error:
        await execute(client, command, *arguments)
    assert message in str(error.value)
    # The next requests are answered as usual.
    assert names(await execute(client, "skillsLsp.scoreQuery", "fill a pdf form"))[0] == "pdf-form-filling"
    weather = (workspace / ".skills" / "weather-lookup.md").as_uri()
    result = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(weather), position=types.Position(1, 2))
    )
    assert result is not None and "**name**" in str(result.contents)
    assert (workspace / "skills" / "pdf-form-filling" / "SKILL.md").is_file()
    assert not (workspace / "skills" / "Bad_Name").exists()
