"""The server's index leaves out what `check` leaves out (.gitignore, .ignore), on a full load and
as files change on disk; an ignore file changed on disk makes the folder be indexed again."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsp_helpers import execute, index_ends, reindexed, unique
from lsprotocol import types
from pytest_lsp import LanguageClient

pytestmark = pytest.mark.asyncio(loop_scope="session")

TRANSLATOR = """---
name: {name}
description: Translate a paragraph into Japanese. Use when asked to translate a paragraph into Japanese.
---

# Translate into Japanese
"""
QUERY = "translate this paragraph into Japanese"


def announce(client: LanguageClient, path: Path, change: types.FileChangeType) -> None:
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(changes=[types.FileEvent(uri=path.as_uri(), type=change)])
    )


async def top(client: LanguageClient) -> str:
    found = await execute(client, "skillsLsp.scoreQuery", QUERY)
    return str(found[0]["name"]) if found else ""


async def test_ignored_skills_stay_out_until_the_ignore_file_goes(
    client: LanguageClient, workspace: Path
) -> None:
    name = unique("zz-ignored")
    ignore = workspace / ".ignore"  # .gitignore works the same; .ignore keeps other tests' copy clean
    skill = workspace / "skills" / name / "SKILL.md"
    before = index_ends(client)
    ignore.write_text("skills/zz-ignored-*/\n", encoding="utf-8")
    announce(client, ignore, types.FileChangeType.Created)
    await reindexed(client, before)
    try:
        skill.parent.mkdir(parents=True)
        skill.write_text(TRANSLATOR.format(name=name), encoding="utf-8")
        announce(client, skill, types.FileChangeType.Created)
        assert await top(client) != name  # created in an ignored folder: not indexed
        before = index_ends(client)
        ignore.unlink()
        announce(client, ignore, types.FileChangeType.Deleted)
        await reindexed(client, before)
        assert await top(client) == name  # the folder indexed again without the ignore file
    finally:
        ignore.unlink(missing_ok=True)
        skill.unlink(missing_ok=True)
        if skill.parent.is_dir():
            skill.parent.rmdir()
        announce(client, skill, types.FileChangeType.Deleted)
    assert await top(client) != name


async def test_git_info_exclude_changed_on_disk_reindexes_the_folder(
    client: LanguageClient, workspace: Path
) -> None:
    """`.git/info/exclude` is an ignore file too (discovery honours it): a change to it is
    watched and indexes the folder again, as a .gitignore change does."""
    name = unique("zz-excluded")
    skill = workspace / "skills" / name / "SKILL.md"
    exclude = workspace / ".git" / "info" / "exclude"
    skill.parent.mkdir(parents=True)
    skill.write_text(TRANSLATOR.format(name=name), encoding="utf-8")
    announce(client, skill, types.FileChangeType.Created)
    try:
        assert await top(client) == name
        before = index_ends(client)
        exclude.parent.mkdir(parents=True)
        exclude.write_text("skills/zz-excluded-*/\n", encoding="utf-8")
        announce(client, exclude, types.FileChangeType.Created)
        await reindexed(client, before)
        assert await top(client) != name
    finally:
        before = index_ends(client)
        exclude.unlink(missing_ok=True)
        for folder in (exclude.parent, exclude.parent.parent):
            if folder.is_dir():
                folder.rmdir()
        announce(client, exclude, types.FileChangeType.Deleted)
        await reindexed(client, before)
        skill.unlink(missing_ok=True)
        skill.parent.rmdir()
        announce(client, skill, types.FileChangeType.Deleted)
    assert await top(client) != name
