"""Code actions: the validator's fixes as quick fixes tied to their diagnostics, `Create missing
file` for SK603 (where the client can create files), `Add tool to manifest` for SK505; applying
a fix and sending the change makes its diagnostic go away."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_lsp
from lsp_helpers import Doc, apply_edits, codes, initialize_examples, opened, unique
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def actions(
    client: LanguageClient, doc: Doc, rng: types.Range, diagnostics: list[types.Diagnostic]
) -> list[types.CodeAction]:
    result = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(doc.uri),
            range=rng,
            context=types.CodeActionContext(diagnostics=[d for d in diagnostics if overlaps(d.range, rng)]),
        )
    )
    found = list(result or [])
    assert all(isinstance(a, types.CodeAction) for a in found)
    return found  # type: ignore[return-value]


def overlaps(a: types.Range, b: types.Range) -> bool:
    return not ((a.end.line, a.end.character) < (b.start.line, b.start.character)) and not (
        (b.end.line, b.end.character) < (a.start.line, a.start.character)
    )


def titled(found: list[types.CodeAction], title: str) -> types.CodeAction:
    matches = [a for a in found if a.title == title]
    assert matches, f"no action {title!r} in {[a.title for a in found]}"
    return matches[0]


def only(diagnostics: list[types.Diagnostic], code: str) -> types.Diagnostic:
    matches = [d for d in diagnostics if d.code == code]
    assert len(matches) == 1
    return matches[0]


async def apply_fix(doc: Doc, action: types.CodeAction) -> None:
    """Apply a quick fix's edit to the open document, as an editor does (one didChange)."""
    assert action.edit is not None and action.edit.changes is not None
    assert list(action.edit.changes) == [doc.uri]
    doc.edit(action.edit.changes[doc.uri])


async def test_name_fixes_are_tied_to_their_diagnostics(client: LanguageClient, workspace: Path) -> None:
    async with opened(client, workspace / "skills" / "broken-name-mismatch" / "SKILL.md") as doc:
        found = await doc.diagnostics()
        name = doc.range("Broken_Name")
        result = await actions(client, doc, name, found)
    assert sorted(a.title for a in result) == [
        "Rename to `broken-name`",
        "Set name to `broken-name-mismatch`",
    ]
    rename = next(a for a in result if a.title == "Rename to `broken-name`")
    assert {str(d.code) for d in rename.diagnostics or []} == {"SK204", "SK205"}  # one action, both
    assert all(a.kind == types.CodeActionKind.QuickFix and a.is_preferred for a in result)
    tied = {str(d.code) for a in result for d in a.diagnostics or []}
    assert tied == {"SK204", "SK205", "SK208"}
    # The client's own diagnostic objects come back, so editors can match them.
    sk208 = titled(result, "Set name to `broken-name-mismatch`")
    assert list(sk208.diagnostics or []) == [only(found, "SK208")]
    edit = types.TextEdit(name, "broken-name-mismatch")
    assert sk208.edit is not None and sk208.edit.changes is not None
    assert {uri: list(edits) for uri, edits in sk208.edit.changes.items()} == {doc.uri: [edit]}


async def test_applying_rename_to_license_removes_sk401(client: LanguageClient, workspace: Path) -> None:
    async with opened(client, workspace / "skills" / "broken-name-mismatch" / "SKILL.md") as doc:
        found = await doc.diagnostics()
        result = await actions(client, doc, doc.range("licence"), found)
        fix = titled(result, "Rename to `license`")
        assert list(fix.diagnostics or []) == [only(found, "SK401")]
        await apply_fix(doc, fix)
        assert "\nlicense: MIT\n" in doc.text and "licence: MIT" not in doc.text
        after = await doc.diagnostics(until=lambda ds: "SK401" not in codes(ds))
        assert codes(after) == ["SK204", "SK205", "SK208", "SK501", "SK505"]


async def test_applying_rename_removes_sk204_and_sk205(client: LanguageClient, workspace: Path) -> None:
    async with opened(client, workspace / "skills" / "broken-name-mismatch" / "SKILL.md") as doc:
        found = await doc.diagnostics()
        fix = titled(await actions(client, doc, doc.range("Broken_Name"), found), "Rename to `broken-name`")
        await apply_fix(doc, fix)
        assert "name: broken-name\n" in doc.text
        after = await doc.diagnostics(until=lambda ds: "SK204" not in codes(ds))
        assert codes(after) == ["SK208", "SK401", "SK501", "SK505"]


async def test_applying_quote_the_value_removes_sk104(client: LanguageClient, workspace: Path) -> None:
    async with opened(client, workspace / "skills" / "broken-yaml" / "SKILL.md") as doc:
        found = await doc.diagnostics()
        fix = titled(await actions(client, doc, only(found, "SK104").range, found), "Quote the value")
        await apply_fix(doc, fix)
        assert 'description: "Use this skill when: the user asks for a changelog entry' in doc.text
        assert await doc.diagnostics(until=lambda ds: "SK104" not in codes(ds)) == []


async def test_applying_the_list_to_string_fix(client: LanguageClient, workspace: Path) -> None:
    async with opened(client, workspace / "skills" / "broken-name-mismatch" / "SKILL.md") as doc:
        found = await doc.diagnostics()
        sk501 = only(found, "SK501")
        fix = titled(await actions(client, doc, sk501.range, found), "Write as a space-separated string")
        await apply_fix(doc, fix)
        assert 'allowed-tools: "Bash(git:*) Read grep"\n---\n' in doc.text
        after = await doc.diagnostics(until=lambda ds: "SK501" not in codes(ds))
        sk505 = only(after, "SK505")
        assert sk505.range == doc.range("grep")


async def test_a_fix_after_emoji_edits_the_right_characters(client: LanguageClient, workspace: Path) -> None:
    name = unique("zz-fix")
    description = '"🚀 数据 tools. Use when asked."'
    text = f"---\nname: {name}\ndescription: {description}\nallowed-tools: 🚀 Raed\n---\n\n# Tools\n"
    async with opened(client, workspace / "skills" / name / "SKILL.md", text) as doc:
        found = await doc.diagnostics()
        assert codes(found) == ["SK505", "SK505"]
        raed = next(d for d in found if "Raed" in d.message)
        assert raed.range == doc.range("Raed")
        fix = titled(await actions(client, doc, raed.range, found), "Change to `Read`")
        await apply_fix(doc, fix)
        assert "allowed-tools: 🚀 Read\n" in doc.text
        after = await doc.diagnostics(until=lambda ds: len(ds) == 1)
        assert "`🚀`" in after[0].message


async def test_create_missing_file_for_sk603(client: LanguageClient, workspace: Path) -> None:
    path = workspace / "skills" / "broken-references" / "SKILL.md"
    missing = path.parent / "references" / "MISSING.md"
    async with opened(client, path) as doc:
        found = await doc.diagnostics()
        sk603 = only(found, "SK603")
        result = await actions(client, doc, sk603.range, found)
        assert [a.title for a in result] == ["Create missing file MISSING.md"]
        create = result[0]
        assert create.kind == types.CodeActionKind.QuickFix
        assert list(create.diagnostics or []) == [sk603]
        assert create.edit is not None and create.edit.changes is None
        assert list(create.edit.document_changes or []) == [
            types.CreateFile(uri=missing.as_uri(), options=types.CreateFileOptions(ignore_if_exists=True))
        ]
        # Do what the editor does, then the next keystroke re-checks the file.
        missing.write_text("", encoding="utf-8")
        try:
            doc.replace("# API changelog", "# API change log")
            after = await doc.diagnostics(until=lambda ds: "SK603" not in codes(ds))
            assert codes(after) == ["SK303", "SK403", "SK605", "SK606"]
        finally:
            missing.unlink()


async def test_add_tool_to_manifest_for_sk505(client: LanguageClient, workspace: Path) -> None:
    manifest = workspace / "skill-tools.yaml"
    async with opened(client, workspace / "skills" / "broken-name-mismatch" / "SKILL.md") as doc:
        found = await doc.diagnostics()
        sk505 = only(found, "SK505")
        result = await actions(client, doc, sk505.range, found)
        titles = [a.title for a in result]  # SK501 covers the list, so its fix is offered too
        assert titles == [
            "Write as a space-separated string",
            "Change to `Grep`",
            "Add tool grep to skill-tools.yaml",
        ]
        assert list(titled(result, "Change to `Grep`").diagnostics or []) == [sk505]
        add = result[2]
        assert add.kind == types.CodeActionKind.QuickFix
        assert list(add.diagnostics or []) == [sk505]
        assert add.edit is not None and add.edit.changes is not None
        assert list(add.edit.changes) == [manifest.as_uri()]
        edits = list(add.edit.changes[manifest.as_uri()])
        original = manifest.read_text(encoding="utf-8")
        end = types.Position(original.count("\n"), 0)
        assert edits == [types.TextEdit(types.Range(end, end), '  - name: grep\n    description: ""\n')]
        # The editor applies it in a buffer of the manifest; the tool is then known.
        async with opened(client, manifest, language_id="yaml") as buffer:
            buffer.edit(edits)
            assert buffer.text == apply_edits(original, edits, buffer.encoding)
            assert await buffer.diagnostics() == []
            after = await doc.diagnostics(until=lambda ds: "SK505" not in codes(ds))
            assert codes(after) == ["SK204", "SK205", "SK208", "SK401", "SK501"]


async def test_no_actions_away_from_diagnostics(client: LanguageClient, workspace: Path) -> None:
    async with opened(client, workspace / "skills" / "broken-name-mismatch" / "SKILL.md") as doc:
        found = await doc.diagnostics()
        assert await actions(client, doc, doc.range("# Pull request review summary"), found) == []


# --- a client that cannot create files -------------------------------------------------------


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[sys.executable, "-m", "skills_lsp", "serve", "--stdio"]),
)
async def no_create_client(lsp_client: LanguageClient, workspace: Path) -> AsyncIterator[None]:
    capabilities = client_capabilities("visual_studio_code")
    assert capabilities.workspace and capabilities.workspace.workspace_edit
    capabilities.workspace.workspace_edit.resource_operations = []
    await initialize_examples(lsp_client, workspace, capabilities)
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio(loop_scope="function")
async def test_no_create_file_action_without_resource_operations(
    no_create_client: LanguageClient, workspace: Path
) -> None:
    client = no_create_client
    path = workspace / "skills" / "broken-references" / "SKILL.md"
    doc = Doc(client, path.as_uri(), path.read_text(encoding="utf-8"))
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(doc.uri, "markdown", 1, doc.text))
    )
    rng = doc.range("references/MISSING.md")
    result = await actions(client, doc, rng, [])
    assert result == []
    # Adding a tool to an existing manifest needs no resource operation.
    name = unique("zz-nocreate")
    skill = workspace / "skills" / name / "SKILL.md"
    text = f"---\nname: {name}\ndescription: Tools. Use when asked.\nallowed-tools: Fetch\n---\n"
    other = Doc(client, skill.as_uri(), text)
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(other.uri, "markdown", 1, text))
    )
    titles = [a.title for a in await actions(client, other, other.range("Fetch"), [])]
    assert titles == ["Add tool Fetch to skill-tools.yaml"]
