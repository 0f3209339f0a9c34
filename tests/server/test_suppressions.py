"""Suppressions in the editor: the diagnostics an open buffer gets honour its suppression comments
and `per-file-ignores`, as `skills-lsp check` does; a stale comment is SK005 with a quick fix that
removes it."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsp_helpers import codes, opened, unique
from lsprotocol import types
from pytest_lsp import LanguageClient

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def quick_fixes(
    client: LanguageClient, uri: str, diagnostic: types.Diagnostic
) -> list[types.CodeAction]:
    result = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri),
            range=diagnostic.range,
            context=types.CodeActionContext(diagnostics=[diagnostic]),
        )
    )
    return [a for a in result or [] if isinstance(a, types.CodeAction)]


async def test_a_yaml_comment_silences_its_line(client: LanguageClient, workspace: Path) -> None:
    path = workspace / "skills" / "broken-name-mismatch" / "SKILL.md"
    text = path.read_text(encoding="utf-8")
    silenced = text.replace("name: Broken_Name", "name: Broken_Name  # skills-lsp: ignore[SK204, SK208]")
    async with opened(client, path, silenced) as doc:
        assert codes(await doc.diagnostics()) == ["SK205", "SK401", "SK501", "SK505"]
        # The same comment, on a line of its own, covers the next line.
        doc.replace(
            "name: Broken_Name  # skills-lsp: ignore[SK204, SK208]",
            "# skills-lsp: ignore[SK2]\nname: Broken_Name",
        )
        found = await doc.diagnostics(until=lambda ds: "SK205" not in codes(ds))
        assert codes(found) == ["SK401", "SK501", "SK505"]


BODY = """---
name: {name}
description: Checks links. Use when the user asks to check the links of a page.
---

<!-- skills-lsp-disable-next-line SK603 -->
Read [the guide](references/guide.md) first.

<!-- skills-lsp-disable SK603 -->
Then [the notes](references/notes.md)
and [the list](references/list.md).
<!-- skills-lsp-enable SK603 -->

Last, [the index](references/index.md).
"""


async def test_html_comments_silence_body_findings_and_stale_ones_are_sk005(
    client: LanguageClient, workspace: Path
) -> None:
    name = unique("zz-links")
    async with opened(client, workspace / "skills" / name / "SKILL.md", BODY.format(name=name)) as doc:
        found = await doc.diagnostics()
        assert [(d.code, d.range.start.line) for d in found] == [("SK603", 13)]
        # The reference the first comment covered is gone: the comment silences nothing now.
        doc.replace("Read [the guide](references/guide.md) first.", "Read the guide first.")
        found = await doc.diagnostics(until=lambda ds: "SK005" in codes(ds))
        stale = next(d for d in found if d.code == "SK005")
        assert stale.range.start.line == 5 and stale.severity == types.DiagnosticSeverity.Warning
        assert "no finding of `SK603` to silence" in stale.message
        (remove,) = [
            a
            for a in await quick_fixes(client, doc.uri, stale)
            if a.title == "Remove the suppression comment"
        ]
        assert remove.edit is not None and remove.edit.changes is not None
        doc.edit(remove.edit.changes[doc.uri])
        assert "skills-lsp-disable-next-line" not in doc.text
        found = await doc.diagnostics(until=lambda ds: "SK005" not in codes(ds))
        assert [(d.code, d.range.start.line) for d in found] == [("SK603", 12)]


async def test_a_directive_shown_in_code_is_text(client: LanguageClient, workspace: Path) -> None:
    name = unique("zz-code")
    text = BODY.format(name=name).replace(
        "<!-- skills-lsp-disable-next-line SK603 -->", "```md\n<!-- skills-lsp-disable SK603 -->\n```"
    )
    async with opened(client, workspace / "skills" / name / "SKILL.md", text) as doc:
        found = await doc.diagnostics()
        assert [(d.code, d.range.start.line) for d in found] == [("SK603", 8), ("SK603", 15)]


def config_changed(client: LanguageClient, path: Path) -> None:
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=path.as_uri(), type=types.FileChangeType.Changed)]
        )
    )


async def test_per_file_ignores_apply_in_the_editor(client: LanguageClient, workspace: Path) -> None:
    config = workspace / "skills-lsp.toml"
    before = config.read_text(encoding="utf-8")
    skill = workspace / "skills" / "broken-name-mismatch" / "SKILL.md"
    async with opened(client, skill) as doc:
        assert codes(await doc.diagnostics())[:3] == ["SK204", "SK205", "SK208"]
        config.write_text(before + '\n[per-file-ignores]\n"skills/broken-name-mismatch/**" = ["SK2"]\n')
        try:
            config_changed(client, config)
            found = await doc.diagnostics(until=lambda ds: "SK204" not in codes(ds))
            assert codes(found) == ["SK401", "SK501", "SK505"]
        finally:  # the tests share the server and the workspace
            config.write_text(before, encoding="utf-8")
            config_changed(client, config)
        found = await doc.diagnostics(until=lambda ds: "SK204" in codes(ds))
        assert codes(found)[:3] == ["SK204", "SK205", "SK208"]
