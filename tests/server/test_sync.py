"""Document and workspace sync: didOpen/didChange/didSave/didClose, watched files (created,
changed, deleted on disk), file-watch registration and configuration changes."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from lsp_helpers import (
    Doc,
    codes,
    execute,
    index_ends,
    opened,
    publications,
    pulls,
    refreshes_code_lenses,
    reindexed,
    unique,
    wait_for,
)
from lsprotocol import types
from pytest_lsp import LanguageClient

pytestmark = pytest.mark.asyncio(loop_scope="session")

TRANSLATE_CASE = 11  # "Translate this paragraph into Japanese", expects no skill
TRANSLATOR = """---
name: {name}
description: Translate a paragraph into Japanese. Use when asked to translate a paragraph into Japanese.
---

# Translate into Japanese

Translate the paragraph into Japanese.
"""


def watched(client: LanguageClient, path: Path, change: types.FileChangeType) -> None:
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(changes=[types.FileEvent(uri=path.as_uri(), type=change)])
    )


@contextmanager
def on_disk(client: LanguageClient, path: Path, text: str) -> Iterator[Path]:
    """A file created on disk (and announced), deleted (and announced) afterwards."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    watched(client, path, types.FileChangeType.Created)
    try:
        yield path
    finally:
        path.unlink()
        if path.name == "SKILL.md":
            path.parent.rmdir()
        watched(client, path, types.FileChangeType.Deleted)


async def case_title(client: LanguageClient, queries: Doc, case: int) -> str:
    found = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(queries.uri))
    )
    assert found is not None
    resolved = await client.code_lens_resolve_async(found[case])
    assert resolved.command is not None
    return resolved.command.title


async def until_title(client: LanguageClient, queries: Doc, case: int, pattern: str) -> str:
    title = ""

    async def matches() -> bool:
        nonlocal title
        title = await case_title(client, queries, case)
        return re.search(pattern, title) is not None

    async def wait() -> None:
        while not await matches():
            await asyncio.sleep(0.02)

    try:
        await asyncio.wait_for(wait(), 3.0)
    except asyncio.TimeoutError:
        raise AssertionError(f"lens {case} never matched {pattern!r}; last: {title!r}") from None
    return title


# --- documents -------------------------------------------------------------------------------


async def test_open_change_save_close(client: LanguageClient, workspace: Path) -> None:
    path = workspace / "skills" / "broken-name-mismatch" / "SKILL.md"
    async with opened(client, path) as doc:
        assert "SK401" in codes(await doc.diagnostics())
        # Two edits in one didChange, sent last first as editors do.
        doc.edit(
            [
                types.TextEdit(doc.range("Broken_Name"), "broken-name-mismatch"),
                types.TextEdit(doc.range("licence"), "license"),
            ]
        )
        assert codes(await doc.diagnostics(until=lambda ds: "SK401" not in codes(ds))) == ["SK501", "SK505"]
        count = len(doc.published())
        doc.save()
        if not pulls(client):  # a save re-publishes the buffer's diagnostics
            await wait_for(lambda: len(doc.published()) > count, "diagnostics published on save")
            assert codes(doc.published()[-1].diagnostics) == ["SK501", "SK505"]
        # A whole-document change works too.
        doc.set_text(path.read_text(encoding="utf-8"))
        assert "SK401" in codes(await doc.diagnostics(until=lambda ds: "SK401" in codes(ds)))
    if not pulls(client):  # closing clears the published diagnostics
        assert list(publications(client, doc.uri)[-1].diagnostics) == []
    assert path.read_text(encoding="utf-8").startswith("---\nname: Broken_Name\n")  # never written


async def test_a_change_right_before_close_leaves_no_diagnostics(
    client: LanguageClient, workspace: Path
) -> None:
    if pulls(client):
        pytest.skip("a pulling client asks for diagnostics itself")
    path = workspace / "skills" / "broken-name-mismatch" / "SKILL.md"
    async with opened(client, path) as doc:
        await doc.diagnostics()
        doc.replace("licence", "license")
    await asyncio.sleep(0.3)
    assert list(publications(client, doc.uri)[-1].diagnostics) == []


# --- files changed on disk -------------------------------------------------------------------


async def test_watched_file_registration(client: LanguageClient) -> None:
    registrations: list[types.Registration] = client.registrations  # type: ignore[attr-defined]
    caps = client.capabilities
    dynamic = bool(
        caps
        and caps.workspace
        and caps.workspace.did_change_watched_files
        and caps.workspace.did_change_watched_files.dynamic_registration
    )
    watch = [r for r in registrations if r.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES]
    if not dynamic:
        assert watch == []
        return
    assert len(watch) == 1
    options = watch[0].register_options
    globs = {w["globPattern"] for w in options["watchers"]}  # type: ignore[index]
    assert {"**/SKILL.md", "**/skill-tools.{yaml,yml,json}", "**/skill-queries.{yaml,yml,json}"} <= globs
    # A skill's evals and git's own exclude list change what the server reports, like .gitignore.
    assert {"**/evals/eval_queries.json", "**/evals/*.json", "**/.git/info/exclude"} <= globs


async def test_a_skill_created_on_disk_joins_the_index(client: LanguageClient, workspace: Path) -> None:
    name = unique("zz-disk")
    path = workspace / "skills" / name / "SKILL.md"
    async with opened(client, workspace / "skill-queries.yaml", language_id="yaml") as queries:
        assert await case_title(client, queries, TRANSLATE_CASE) == "✓ no skill selected · lexical"
        before = client.refreshes["codeLens"]  # type: ignore[attr-defined]
        with on_disk(client, path, TRANSLATOR.format(name=name)):
            await until_title(client, queries, TRANSLATE_CASE, f"^✗ {name} ")
            found = await queries.diagnostics(until=lambda ds: len(ds) > 1)
            assert f"expected no skill, but `{name}` is selected" in " ".join(d.message for d in found)
            if refreshes_code_lenses(client):
                await wait_for(lambda: client.refreshes["codeLens"] > before, "a code-lens refresh")  # type: ignore[attr-defined]
            # Changed on disk: renamed.
            path.write_text(TRANSLATOR.format(name=name + "-v2"), encoding="utf-8")
            watched(client, path, types.FileChangeType.Changed)
            await until_title(client, queries, TRANSLATE_CASE, f"^✗ {name}-v2 ")
        await until_title(client, queries, TRANSLATE_CASE, "^✓ no skill selected · lexical$")
        assert codes(await queries.diagnostics(until=lambda ds: len(ds) == 1)) == ["SK702"]


async def test_score_query_finds_a_skill_created_on_disk(client: LanguageClient, workspace: Path) -> None:
    name = unique("zz-disk")
    path = workspace / "skills" / name / "SKILL.md"
    with on_disk(client, path, TRANSLATOR.format(name=name)):

        async def first() -> str:
            result = await execute(client, "skillsLsp.scoreQuery", "translate this paragraph into Japanese")
            return str(result[0]["name"]) if result else ""

        found = ""
        for _ in range(50):
            found = await first()
            if found == name:
                break
            await asyncio.sleep(0.02)
        assert found == name


async def test_a_manifest_changed_on_disk_updates_tools(client: LanguageClient, workspace: Path) -> None:
    manifest = workspace / "skill-tools.yaml"
    original = manifest.read_text(encoding="utf-8")
    name = unique("zz-tools")
    text = f"---\nname: {name}\ndescription: Fetches. Use when asked.\nallowed-tools: web_fetch\n---\n\n# F\n"
    async with opened(client, workspace / "skills" / name / "SKILL.md", text) as doc:
        assert codes(await doc.diagnostics()) == ["SK505"]
        try:
            manifest.write_text(
                original + "  - name: web_fetch\n    description: Fetch a URL.\n", encoding="utf-8"
            )
            watched(client, manifest, types.FileChangeType.Changed)
            assert await doc.diagnostics(until=lambda ds: not ds) == []
            hover = await client.text_document_hover_async(
                types.HoverParams(types.TextDocumentIdentifier(doc.uri), doc.position("web_fetch", after=2))
            )
            assert hover is not None and "Fetch a URL." in str(hover.contents)
        finally:
            manifest.write_text(original, encoding="utf-8")
            watched(client, manifest, types.FileChangeType.Changed)
        assert codes(await doc.diagnostics(until=lambda ds: bool(ds))) == ["SK505"]


async def test_changes_to_open_documents_on_disk_are_ignored(client: LanguageClient, workspace: Path) -> None:
    name = unique("zz-disk")
    path = workspace / "skills" / name / "SKILL.md"
    async with opened(client, workspace / "skill-queries.yaml", language_id="yaml") as queries:
        with on_disk(client, path, TRANSLATOR.format(name=name)):
            await until_title(client, queries, TRANSLATE_CASE, f"^✗ {name} ")
            async with opened(client, path, TRANSLATOR.format(name=name + "-buffer")):
                await until_title(client, queries, TRANSLATE_CASE, f"^✗ {name}-buffer ")
                path.write_text(TRANSLATOR.format(name=name + "-disk"), encoding="utf-8")
                watched(client, path, types.FileChangeType.Changed)  # the open buffer wins
                await asyncio.sleep(0.1)
                assert (await case_title(client, queries, TRANSLATE_CASE)).startswith(f"✗ {name}-buffer ")


# --- configuration ---------------------------------------------------------------------------


async def test_configuration_change_keeps_open_buffers_in_the_index(
    client: LanguageClient, workspace: Path
) -> None:
    name = unique("zz-buffer")
    path = workspace / "skills" / name / "SKILL.md"  # never saved
    async with (
        opened(client, workspace / "skill-queries.yaml", language_id="yaml") as queries,
        opened(client, path, TRANSLATOR.format(name=name)),
    ):
        await until_title(client, queries, TRANSLATE_CASE, f"^✗ {name} ")
        before = index_ends(client)
        settings = types.DidChangeConfigurationParams(settings={"skillsLsp": {}})
        client.workspace_did_change_configuration(settings)
        await reindexed(client, before)
        # The buffer is still open, so the skill still takes the query.
        assert (await case_title(client, queries, TRANSLATE_CASE)).startswith(f"✗ {name} ")


async def test_opening_the_config_file_keeps_open_buffers_in_the_index(
    client: LanguageClient, workspace: Path
) -> None:
    name = unique("zz-buffer")
    path = workspace / "skills" / name / "SKILL.md"  # never saved
    config = workspace / "skills-lsp.toml"  # not on disk either: an editor's new file
    async with (
        opened(client, workspace / "skill-queries.yaml", language_id="yaml") as queries,
        opened(client, path, TRANSLATOR.format(name=name)),
    ):
        await until_title(client, queries, TRANSLATE_CASE, f"^✗ {name} ")
        async with opened(client, config, 'profile = "agentskills"\n', language_id="toml") as toml:
            assert await toml.diagnostics() == []
            # The buffer is still open, so the skill still takes the query.
            assert (await case_title(client, queries, TRANSLATE_CASE)).startswith(f"✗ {name} ")


async def test_workspace_folders_added_and_removed(
    client: LanguageClient, workspace: Path, tmp_path: Path
) -> None:
    other = tmp_path / unique("zz-folder")
    name = unique("zz-elsewhere")
    (other / "skills" / name).mkdir(parents=True)
    (other / "skills" / name / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: Polishes brass lanterns. Use when asked to polish one.\n---\n\n"
        "# Polish a brass lantern\n",
        encoding="utf-8",
    )
    folder = types.WorkspaceFolder(uri=other.as_uri(), name=other.name)
    query = "polish the brass lantern"

    async def first() -> str:
        result = await execute(client, "skillsLsp.scoreQuery", query, other.as_uri())
        return str(result[0]["name"]) if result else ""

    assert await first() != name  # not a folder of the workspace: the first folder answers
    before = index_ends(client)
    client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(types.WorkspaceFoldersChangeEvent(added=[folder], removed=[]))
    )
    await reindexed(client, before)
    assert await first() == name
    client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(types.WorkspaceFoldersChangeEvent(added=[], removed=[folder]))
    )
    for _ in range(50):
        if await first() != name:
            break
        await asyncio.sleep(0.02)
    assert await first() != name
