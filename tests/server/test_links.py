"""Document links and go-to-definition for the relative paths a skill's body mentions."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsp_helpers import Doc, opened
from lsprotocol import types
from pytest_lsp import LanguageClient

pytestmark = pytest.mark.asyncio(loop_scope="session")

START = types.Range(types.Position(0, 0), types.Position(0, 0))


async def links(client: LanguageClient, doc: Doc) -> list[types.DocumentLink]:
    result = await client.text_document_document_link_async(
        types.DocumentLinkParams(text_document=types.TextDocumentIdentifier(doc.uri))
    )
    return list(result or [])


async def definition(
    client: LanguageClient, doc: Doc, position: types.Position
) -> list[types.Location] | None:
    result = await client.text_document_definition_async(
        types.DefinitionParams(text_document=types.TextDocumentIdentifier(doc.uri), position=position)
    )
    assert result is None or isinstance(result, list)
    return [r for r in result if isinstance(r, types.Location)] if result is not None else None


async def test_links_to_existing_bundled_files(client: LanguageClient, workspace: Path) -> None:
    skill = workspace / "skills" / "broken-references"
    async with opened(client, skill / "SKILL.md") as doc:
        found = await links(client, doc)
        assert [(link.range, link.target) for link in found] == [
            # A backslash path still leads to the file (SK606 asks for `/`).
            (doc.range("scripts\\run.py"), (skill / "scripts" / "run.py").as_uri()),
            (doc.range("references/CHECKLIST.md"), (skill / "references" / "CHECKLIST.md").as_uri()),
            (
                doc.range("assets/templates/deep/report.md"),
                (skill / "assets" / "templates" / "deep" / "report.md").as_uri(),
            ),
        ]  # not references/MISSING.md (missing), nor the path inside the code block


async def test_links_to_scripts_references_and_assets(client: LanguageClient, workspace: Path) -> None:
    skill = workspace / "skills" / "pdf-form-filling"
    async with opened(client, skill / "SKILL.md") as doc:
        found = await links(client, doc)
        targets = [link.target for link in found]
        assert targets == [
            (skill / "assets" / "field_map.example.json").as_uri(),
            (skill / "references" / "FORMS.md").as_uri(),
            (skill / "scripts" / "fill_form.py").as_uri(),
            (skill / "scripts" / "list_fields.py").as_uri(),
        ]
        assert found[1].range == doc.range("references/FORMS.md")


async def test_links_in_a_flat_skill_resolve_from_its_folder(client: LanguageClient, workspace: Path) -> None:
    async with opened(client, workspace / ".skills" / "weather-lookup.md") as doc:
        found = await links(client, doc)
        assert [(link.range, link.target) for link in found] == [
            (
                doc.range("references/weather-codes.json", occurrence=1),
                (workspace / ".skills" / "references" / "weather-codes.json").as_uri(),
            )
        ]


async def test_link_ranges_after_emoji(client: LanguageClient, workspace: Path) -> None:
    path = workspace / "skills" / "broken-references" / "SKILL.md"
    text = path.read_text(encoding="utf-8") + "\n🚀 数据 [清单](references/CHECKLIST.md)\n"
    async with opened(client, path, text) as doc:
        found = await links(client, doc)
        last = found[-1]
        assert last.range == doc.range("references/CHECKLIST.md", occurrence=1)
        start = {"utf-16": 11, "utf-8": 21, "utf-32": 10}[doc.encoding]
        assert last.range.start.character == start


async def test_definition_of_a_reference(client: LanguageClient, workspace: Path) -> None:
    skill = workspace / "skills" / "broken-references"
    async with opened(client, skill / "SKILL.md") as doc:
        inside = doc.position("references/CHECKLIST.md", after=5)
        found = await definition(client, doc, inside)
        assert found == [types.Location((skill / "references" / "CHECKLIST.md").as_uri(), START)]
        end = doc.position("references/CHECKLIST.md", after=len("references/CHECKLIST.md"))
        assert await definition(client, doc, end) == found
        assert await definition(client, doc, doc.position("references/MISSING.md", after=3)) is None
        assert await definition(client, doc, doc.position("Step 1: Get both documents")) is None


async def test_no_links_in_files_the_server_does_not_serve(client: LanguageClient, workspace: Path) -> None:
    async with opened(client, workspace / "README.md") as doc:
        assert await links(client, doc) == []
        inside = doc.position("skills/pdf-form-filling/SKILL.md", after=3)
        assert await definition(client, doc, inside) is None


async def test_a_reference_a_symlink_takes_outside_is_flagged_and_not_followed(
    client: LanguageClient, workspace: Path, tmp_path: Path
) -> None:
    # references/guide.md looks like the skill's own file; a symbolic link makes it the host's.
    secret = tmp_path / "host-secret.md"
    secret.write_text("not the skill's\n", encoding="utf-8")
    skill = workspace / "skills" / f"symlinked-{tmp_path.name[-12:].lower().replace('_', '-')}"
    (skill / "references").mkdir(parents=True)
    (skill / "references" / "guide.md").symlink_to(secret)
    (skill / "references" / "own.md").write_text("the skill's\n", encoding="utf-8")
    text = (
        f"---\nname: {skill.name}\ndescription: Use when testing links.\n---\n\n"
        "Read [guide](references/guide.md) and [own](references/own.md).\n"
    )
    (skill / "SKILL.md").write_text(text, encoding="utf-8")
    try:
        async with opened(client, skill / "SKILL.md") as doc:
            found = await links(client, doc)
            assert [link.target for link in found] == [(skill / "references" / "own.md").as_uri()]
            assert await definition(client, doc, doc.position("references/guide.md", after=3)) in (None, [])
            diagnostics = await doc.diagnostics(until=lambda ds: any(d.code == "SK611" for d in ds))
            flagged = [d for d in diagnostics if d.code == "SK611"]
            assert len(flagged) == 1 and flagged[0].range == doc.range("references/guide.md")
            assert str(secret) in flagged[0].message
    finally:
        for path in (skill / "references" / "guide.md", skill / "references" / "own.md", skill / "SKILL.md"):
            path.unlink()
        (skill / "references").rmdir()
        skill.rmdir()
