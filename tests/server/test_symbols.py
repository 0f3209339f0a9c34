"""Document symbols: the frontmatter with its keys, and the Markdown headings nested by level."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from lsp_helpers import Doc, opened, unique
from lsprotocol import types
from pytest_lsp import LanguageClient

pytestmark = pytest.mark.asyncio(loop_scope="session")

P = types.Position
R = types.Range


async def symbols(client: LanguageClient, doc: Doc) -> list[types.DocumentSymbol]:
    result = await client.text_document_document_symbol_async(
        types.DocumentSymbolParams(text_document=types.TextDocumentIdentifier(doc.uri))
    )
    assert result is not None
    assert all(isinstance(s, types.DocumentSymbol) for s in result)
    return list(result)  # type: ignore[arg-type]


def tree(found: Sequence[types.DocumentSymbol] | None) -> list[object]:
    return [(s.name, s.kind, tree(s.children)) if s.children else (s.name, s.kind) for s in found or []]


def contains(outer: types.Range, inner: types.Range) -> bool:
    return (outer.start.line, outer.start.character) <= (inner.start.line, inner.start.character) and (
        inner.end.line,
        inner.end.character,
    ) <= (outer.end.line, outer.end.character)


def check_nesting(found: Sequence[types.DocumentSymbol] | None) -> None:
    """The spec: selectionRange inside range, children inside their parent."""
    for symbol in found or []:
        assert contains(symbol.range, symbol.selection_range), symbol.name
        for child in symbol.children or []:
            assert contains(symbol.range, child.range), (symbol.name, child.name)
        check_nesting(symbol.children)


async def test_frontmatter_keys_and_headings(client: LanguageClient, workspace: Path) -> None:
    async with opened(client, workspace / "skills" / "pdf-form-filling" / "SKILL.md") as doc:
        found = await symbols(client, doc)
    key, ns, heading = types.SymbolKind.Property, types.SymbolKind.Namespace, types.SymbolKind.String
    assert tree(found) == [
        (
            "frontmatter",
            ns,
            [
                ("name", key),
                ("description", key),
                ("license", key),
                ("compatibility", key),
                ("metadata", key),
                ("allowed-tools", key),
            ],
        ),
        (
            "Filling PDF forms",
            heading,
            [
                ("Step 1: Check that the PDF really is a fillable form", heading),
                ("Step 2: Build the field map", heading),
                ("Step 3: Fill the form", heading),
                ("Step 4: Verify", heading),
                ("Troubleshooting", heading),
            ],
        ),
    ]
    check_nesting(found)
    frontmatter, title = found
    assert frontmatter.range.start == P(0, 0) and frontmatter.range.end.line == 9
    children = frontmatter.children or []
    name = children[0]
    assert name.selection_range == R(P(1, 0), P(1, 4))
    assert name.detail == "pdf-form-filling"
    assert children[4].detail == "mapping"
    assert title.selection_range.start == P(11, 0)
    steps = title.children or []
    assert steps[0].range.start == P(17, 0) and steps[0].range.end.line == 33


async def test_headings_in_code_blocks_are_not_symbols(client: LanguageClient, workspace: Path) -> None:
    name = unique("zz-symbols")
    text = (
        f"---\nname: {name}\ndescription: Symbols. Use when asked.\n---\n\n"
        "# Top\n\n```bash\n# not a heading\n```\n\n### Deep\n\n## Second\n"
    )
    async with opened(client, workspace / "skills" / name / "SKILL.md", text) as doc:
        found = await symbols(client, doc)
    heading = types.SymbolKind.String
    assert tree(found)[1:] == [("Top", heading, [("Deep", heading), ("Second", heading)])]
    check_nesting(found)


async def test_symbols_with_emoji_use_client_units(client: LanguageClient, workspace: Path) -> None:
    name = unique("zz-symbols")
    text = f"---\nname: {name}\ndescription: Symbols. Use when asked.\n---\n\n# 🚀 数据\n\nBody.\n"
    async with opened(client, workspace / "skills" / name / "SKILL.md", text) as doc:
        found = await symbols(client, doc)
    assert found[1].name == "🚀 数据"
    width = {"utf-16": 7, "utf-8": 13, "utf-32": 6}[doc.encoding]
    assert found[1].selection_range == R(P(5, 0), P(5, width))
    check_nesting(found)


async def test_broken_frontmatter_still_has_headings(client: LanguageClient, workspace: Path) -> None:
    async with opened(client, workspace / "skills" / "broken-yaml" / "SKILL.md") as doc:
        found = await symbols(client, doc)
    assert found[0].name == "frontmatter"
    h = types.SymbolKind.String
    assert tree(found[1:]) == [("Writing a changelog entry", h, [("Steps", h), ("Checks", h)])]
    check_nesting(found)


async def test_other_files_have_no_symbols(client: LanguageClient, workspace: Path) -> None:
    async with opened(client, workspace / "README.md") as doc:
        assert await symbols(client, doc) == []
