"""Inlay hint: after the description, what the skill costs in every conversation's catalog."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from lsp_helpers import Doc, opened, unique
from lsprotocol import types
from pytest_lsp import LanguageClient

pytestmark = pytest.mark.asyncio(loop_scope="session")

P = types.Position
LABEL = re.compile(r"^≈(\d+) tokens in the catalog$")


async def hints(client: LanguageClient, doc: Doc, first: int = 0, last: int = 200) -> list[types.InlayHint]:
    result = await client.text_document_inlay_hint_async(
        types.InlayHintParams(
            text_document=types.TextDocumentIdentifier(doc.uri), range=types.Range(P(first, 0), P(last, 0))
        )
    )
    return list(result or [])


def tokens(hint: types.InlayHint) -> int:
    assert isinstance(hint.label, str)
    match = LABEL.match(hint.label)
    assert match, hint.label
    return int(match.group(1))


async def test_the_catalog_cost_follows_the_description(client: LanguageClient, workspace: Path) -> None:
    path = workspace / "skills" / "pdf-form-filling" / "SKILL.md"
    async with opened(client, path) as doc:
        [hint] = await hints(client, doc)
        description = doc.text.split("\n")[2]
        assert description.startswith("description: ")
        assert hint.position == P(2, len(description))
        assert hint.padding_left is True
        assert hint.tooltip == "Every conversation pays for each skill's name, description and location."
        # About four characters a token, name, description and location included.
        entry = len("pdf-form-filling") + len(description) + len(str(path))
        assert entry / 4 < tokens(hint) < entry / 4 + 40


async def test_a_longer_description_costs_more(client: LanguageClient, workspace: Path) -> None:
    name = unique("zz-hint")
    text = f"---\nname: {name}\ndescription: Hints. Use when asked.\n---\n"
    async with opened(client, workspace / "skills" / name / "SKILL.md", text) as doc:
        [before] = await hints(client, doc)
        doc.replace("Hints.", "Hints" + " word" * 100 + ".")
        [after] = await hints(client, doc)
    assert tokens(after) - tokens(before) in (124, 125, 126)  # 500 more characters
    assert after.position == P(2, len(doc.text.split("\n")[2]))


async def test_a_folded_description_ends_on_its_last_line(client: LanguageClient, workspace: Path) -> None:
    async with opened(client, workspace / "skills" / "broken-references" / "SKILL.md") as doc:
        [hint] = await hints(client, doc)
    assert hint.position == P(15, 83)
    assert tokens(hint) > 1167 / 4


async def test_the_position_counts_emoji_in_client_units(client: LanguageClient, workspace: Path) -> None:
    name = unique("zz-hint")
    text = f'---\nname: {name}\ndescription: "🚀 数据 rockets. Use when asked."\n---\n'
    async with opened(client, workspace / "skills" / name / "SKILL.md", text) as doc:
        [hint] = await hints(client, doc)
        assert hint.position == doc.position('asked."', after=7)
        assert hint.position.character == {"utf-16": 45, "utf-8": 51, "utf-32": 44}[doc.encoding]


async def test_only_the_requested_range_gets_hints(client: LanguageClient, workspace: Path) -> None:
    async with opened(client, workspace / "skills" / "pdf-form-filling" / "SKILL.md") as doc:
        assert await hints(client, doc, first=10, last=40) == []
        assert len(await hints(client, doc, first=2, last=2)) == 1


async def test_no_hint_without_description_or_in_other_files(client: LanguageClient, workspace: Path) -> None:
    name = unique("zz-hint")
    async with opened(client, workspace / "skills" / name / "SKILL.md", f"---\nname: {name}\n---\n") as doc:
        assert await hints(client, doc) == []
    async with opened(client, workspace / "README.md") as doc:
        assert await hints(client, doc) == []
