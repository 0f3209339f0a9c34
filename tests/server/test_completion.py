"""Completion: frontmatter keys of the profile not yet present, boolean and enum values,
`allowed-tools` from the tool manifest (string and list forms, never a listed tool again) and
paths of the skill's bundled files."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsp_helpers import Doc, index_ends, opened, reindexed, unique
from lsprotocol import types
from pytest_lsp import LanguageClient

pytestmark = pytest.mark.asyncio(loop_scope="session")

MANIFEST_TOOLS = {
    "Bash",
    "Read",
    "Write",
    "Grep",
    "code_search",
    "read_file",
    "list_directory",
    "ticket_search",
    "ticket_update",
    "user_lookup",
    "geocode",
    "weather_api",
}


async def complete(client: LanguageClient, doc: Doc, position: types.Position) -> list[types.CompletionItem]:
    result = await client.text_document_completion_async(
        types.CompletionParams(text_document=types.TextDocumentIdentifier(doc.uri), position=position)
    )
    assert isinstance(result, types.CompletionList), result
    return list(result.items)


def labels(items: list[types.CompletionItem]) -> set[str]:
    return {i.label for i in items}


def item(items: list[types.CompletionItem], label: str) -> types.CompletionItem:
    return next(i for i in items if i.label == label)


def skill(name: str, *frontmatter: str, body: str = "# Title\n") -> str:
    lines = [
        "---",
        f"name: {name}",
        "description: Tests completion. Use when the user asks to test completion.",
        *frontmatter,
        "---",
        "",
        body,
    ]
    return "\n".join(lines)


async def test_keys_of_the_profile_not_already_present(client: LanguageClient, workspace: Path) -> None:
    name = unique("zz-keys")
    text = skill(name, "license: MIT", "co")
    async with opened(client, workspace / "skills" / name / "SKILL.md", text) as doc:
        items = await complete(client, doc, doc.position("co\n", after=2))
    assert labels(items) == {"compatibility", "metadata", "allowed-tools"}
    compat = item(items, "compatibility")
    assert compat.kind == types.CompletionItemKind.Property
    assert compat.detail == "agentskills"
    assert isinstance(compat.documentation, types.MarkupContent)
    assert compat.documentation.kind == types.MarkupKind.Markdown
    assert compat.documentation.value.startswith("Environment requirements, 1-500 characters")
    start, end = doc.position("co\n"), doc.position("co\n", after=2)
    assert compat.text_edit == types.TextEdit(types.Range(start, end), "compatibility: ")


async def test_required_keys_say_so(client: LanguageClient, workspace: Path) -> None:
    name = unique("zz-keys")
    text = f"---\nname: {name}\n\n---\n"
    async with opened(client, workspace / "skills" / name / "SKILL.md", text) as doc:
        items = await complete(client, doc, types.Position(2, 0))
    assert labels(items) == {"description", "license", "compatibility", "metadata", "allowed-tools"}
    assert item(items, "description").detail == "agentskills (required)"
    assert item(items, "license").detail == "agentskills"


async def test_booleans_after_a_boolean_key_in_a_flat_skill(client: LanguageClient, workspace: Path) -> None:
    name = unique("zz-flat")
    text = skill(name, "trigger: ")
    async with opened(client, workspace / ".skills" / f"{name}.md", text) as doc:
        items = await complete(client, doc, doc.position("trigger: ", after=9))
    assert [i.label for i in items] == ["true", "false"]
    true = item(items, "true")
    assert true.kind == types.CompletionItemKind.Value
    assert true.detail == "trigger"
    assert isinstance(true.documentation, types.MarkupContent)
    assert "Only `true` or `false`" in true.documentation.value


async def test_enum_values_with_the_claude_code_profile(client: LanguageClient, workspace: Path) -> None:
    name = unique("zz-enum")
    text = skill(name, "context: ")
    path = workspace / "skills" / name / "SKILL.md"

    async def configure(profile: str | None) -> None:
        before = index_ends(client)
        client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"skillsLsp": {"profile": profile}})
        )
        await reindexed(client, before)

    async with opened(client, path, text) as doc:
        at = doc.position("context: ", after=9)
        assert await complete(client, doc, at) == []  # `context` is no field of agentskills
        await configure("claude-code")
        try:
            items = await complete(client, doc, at)
            assert [i.label for i in items] == ["fork"]
            assert item(items, "fork").detail == "context"
        finally:
            await configure(None)
        assert await complete(client, doc, at) == []


async def test_allowed_tools_in_the_string_form(client: LanguageClient, workspace: Path) -> None:
    name = unique("zz-tools")
    text = skill(name, "allowed-tools: Bash(git:*) Re")
    async with opened(client, workspace / "skills" / name / "SKILL.md", text) as doc:
        items = await complete(client, doc, doc.position("Re\n", after=2))
    assert labels(items) == MANIFEST_TOOLS - {"Bash"}  # `Bash(git:*)` lists Bash
    read = item(items, "Read")
    assert read.kind == types.CompletionItemKind.Function
    assert read.detail == "claude-code"
    assert isinstance(read.documentation, types.MarkupContent)
    assert read.documentation.value == "Read a file from the workspace."
    assert read.text_edit == types.TextEdit(
        types.Range(doc.position("Re\n"), doc.position("Re\n", after=2)), "Read"
    )


async def test_allowed_tools_never_offers_a_listed_tool(client: LanguageClient, workspace: Path) -> None:
    name = unique("zz-tools")
    text = skill(name, "allowed-tools: Bash(git:*) Read ")
    async with opened(client, workspace / "skills" / name / "SKILL.md", text) as doc:
        items = await complete(client, doc, doc.position("Read ", after=5))
    assert labels(items) == MANIFEST_TOOLS - {"Bash", "Read"}
    assert all(i.text_edit and i.text_edit.range.start == i.text_edit.range.end for i in items)  # type: ignore[union-attr]


async def test_allowed_tools_as_list_items_in_a_flat_skill(client: LanguageClient, workspace: Path) -> None:
    name = unique("zz-flat")
    text = skill(name, "allowed-tools:", "  - geocode", "  - ")
    async with opened(client, workspace / ".skills" / f"{name}.md", text) as doc:
        items = await complete(client, doc, doc.position("  - \n", after=4))
        assert labels(items) == MANIFEST_TOOLS - {"geocode"}
        doc.replace("  - \n", "  - we\n")
        items = await complete(client, doc, doc.position("  - we\n", after=6))
        assert labels(items) == MANIFEST_TOOLS - {"geocode"}
        weather = item(items, "weather_api")
        assert isinstance(weather.text_edit, types.TextEdit)
        assert weather.text_edit.range == types.Range(
            doc.position("  - we", after=4), doc.position("  - we", after=6)
        )


async def test_bundled_files_after_a_link(client: LanguageClient, workspace: Path) -> None:
    path = workspace / "skills" / "pdf-form-filling" / "SKILL.md"
    text = path.read_text(encoding="utf-8") + "\nSee [the forms guide](references/"
    async with opened(client, path, text) as doc:
        end = doc.position("](references/", after=len("](references/"))
        items = await complete(client, doc, end)
        assert [i.label for i in items] == ["references/FORMS.md"]
        forms = items[0]
        assert forms.kind == types.CompletionItemKind.File
        assert forms.text_edit == types.TextEdit(
            types.Range(doc.position("](references/", after=2), end), "references/FORMS.md"
        )


async def test_bundled_files_after_a_bare_folder_prefix(client: LanguageClient, workspace: Path) -> None:
    path = workspace / "skills" / "pdf-form-filling" / "SKILL.md"
    text = path.read_text(encoding="utf-8") + "\nRun scripts/"
    async with opened(client, path, text) as doc:
        items = await complete(client, doc, doc.position("Run scripts/", after=len("Run scripts/")))
    assert [i.label for i in items] == ["scripts/fill_form.py", "scripts/list_fields.py"]


async def test_bundled_files_after_emoji_use_client_units(client: LanguageClient, workspace: Path) -> None:
    path = workspace / "skills" / "pdf-form-filling" / "SKILL.md"
    text = path.read_text(encoding="utf-8") + "\n🚀 数据 [表](references/F"
    async with opened(client, path, text) as doc:
        end = doc.position("[表](references/F", after=len("[表](references/F"))
        items = await complete(client, doc, end)
        assert [i.label for i in items] == ["references/FORMS.md"]
        assert items[0].text_edit == types.TextEdit(
            types.Range(doc.position("[表](", after=4), end), "references/FORMS.md"
        )
        start = {"utf-16": 10, "utf-8": 18, "utf-32": 9}[doc.encoding]
        assert isinstance(items[0].text_edit, types.TextEdit)
        assert items[0].text_edit.range.start.character == start


async def test_references_list_items_in_a_flat_skill(client: LanguageClient, workspace: Path) -> None:
    name = unique("zz-flat")
    text = skill(name, "references:", "  - references/w")
    async with opened(client, workspace / ".skills" / f"{name}.md", text) as doc:
        items = await complete(client, doc, doc.position("references/w", after=len("references/w")))
    assert [i.label for i in items] == ["references/weather-codes.json"]


async def test_nothing_in_plain_body_text_or_other_files(client: LanguageClient, workspace: Path) -> None:
    path = workspace / "skills" / "pdf-form-filling" / "SKILL.md"
    async with opened(client, path) as doc:
        assert await complete(client, doc, doc.position("# Filling PDF forms", after=5)) == []
    async with opened(client, workspace / "README.md") as doc:
        result = await client.text_document_completion_async(
            types.CompletionParams(
                text_document=types.TextDocumentIdentifier(doc.uri), position=doc.position("skills/", after=7)
            )
        )
        assert result is None
