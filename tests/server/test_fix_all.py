"""`source.fixAll.skills-lsp`: every safe fix of a buffer in one action, offered when the client asks
for that kind (VS Code's `editor.codeActionsOnSave`, Neovim's `vim.lsp.buf.code_action({context =
{only = {"source.fixAll"}}, apply = true})`); the same text `skills-lsp check --fix` writes."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from lsp_helpers import Doc, codes, opened, unique
from lsprotocol import types
from pytest_lsp import LanguageClient

from skills_lsp.core.model import SkillFile
from skills_lsp.core.rules.check import check_paths, load_manifest
from skills_lsp.core.rules.fixing import fix_file
from skills_lsp.core.workspace.settings import resolve_config

pytestmark = pytest.mark.asyncio(loop_scope="session")
FIX_ALL = "source.fixAll.skills-lsp"


async def source_actions(client: LanguageClient, doc: Doc, only: list[str] | None) -> list[types.CodeAction]:
    result = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(doc.uri),
            range=types.Range(types.Position(0, 0), types.Position(0, 0)),
            context=types.CodeActionContext(diagnostics=[], only=only),
        )
    )
    found = list(result or [])
    assert all(isinstance(a, types.CodeAction) for a in found)
    return found  # type: ignore[return-value]


def fix_all_of(found: list[types.CodeAction]) -> types.CodeAction:
    matches = [a for a in found if a.kind == FIX_ALL]
    assert len(matches) == 1, [(a.kind, a.title) for a in found]
    return matches[0]


def cli_fixed(workspace: Path, path: Path, tmp_path: Path) -> str:
    """What `check --fix` makes of the file (on a copy of the workspace)."""
    copy = tmp_path / "copy"
    shutil.copytree(workspace, copy)
    target = copy / path.relative_to(workspace)
    config, _ = resolve_config([copy])
    result = check_paths([copy], config=config)
    manifest, _ = load_manifest(copy, config)
    item = next(f for f in result.files if Path(f.path) == target)
    fixed = fix_file(SkillFile(item.path, item.kind, item.root), config=config, manifest=manifest)
    assert fixed is not None
    return fixed.after.decode("utf-8")


async def test_the_kind_is_advertised(client: LanguageClient) -> None:
    result: types.InitializeResult = client.init_result  # type: ignore[attr-defined]
    provider = result.capabilities.code_action_provider
    assert isinstance(provider, types.CodeActionOptions)
    assert FIX_ALL in [str(k) for k in provider.code_action_kinds or []]


@pytest.mark.parametrize("only", [["source.fixAll"], [FIX_ALL], ["source"]])
async def test_fix_all_applies_the_safe_fixes_as_check_fix_does(
    client: LanguageClient, workspace: Path, tmp_path: Path, only: list[str]
) -> None:
    path = workspace / "skills" / "broken-name-mismatch" / "SKILL.md"
    expected = cli_fixed(workspace, path, tmp_path)
    async with opened(client, path) as doc:
        before = codes(await doc.diagnostics())
        assert "SK501" in before  # safe: the list becomes a string
        action = fix_all_of(await source_actions(client, doc, only))
        assert action.edit is not None and action.edit.changes is not None
        assert list(action.edit.changes) == [doc.uri]
        doc.edit(action.edit.changes[doc.uri])
        assert doc.text == expected
        after = codes(await doc.diagnostics(until=lambda ds: "SK501" not in codes(ds)))
        # The unsafe fixes (renames, a tool's spelling) are left to the author.
        assert after == ["SK204", "SK205", "SK208", "SK401", "SK505"]
        assert await source_actions(client, doc, only) == []  # nothing safe is left


async def test_fix_all_keeps_crlf_line_breaks_and_comments(client: LanguageClient, workspace: Path) -> None:
    name = unique("zz-crlf")
    text = (
        f"---\r\nname: {name}  # keep me\r\n"
        "description: Use when: the user asks  # and me\r\n"
        "allowed-tools:\r\n  - Read  # a tool\r\n  - Grep\r\n---\r\n\r\nSee `scripts\\run.py`.\r\n"
    )
    async with opened(client, workspace / "skills" / name / "SKILL.md", text) as doc:
        # The colon hides the rest of the frontmatter: SK501 shows only once SK104 is fixed, and
        # fixAll fixes it too (rounds, as `check --fix`).
        assert {"SK104", "SK606"} <= set(codes(await doc.diagnostics()))
        action = fix_all_of(await source_actions(client, doc, ["source.fixAll"]))
        assert action.edit is not None and action.edit.changes is not None
        doc.edit(action.edit.changes[doc.uri])
        assert "\n" not in doc.text.replace("\r\n", "")
        assert doc.text.startswith(f"---\r\nname: {name}  # keep me\r\n")  # the first line is untouched
        for comment in ("# and me", "# a tool"):
            assert comment in doc.text
        assert 'description: "Use when: the user asks"' in doc.text
        assert "See `scripts/run.py`." in doc.text
        found = await doc.diagnostics(until=lambda ds: "SK104" not in codes(ds))
        assert codes(found) == ["SK603"]  # scripts/run.py does not exist: not a fix of this file


async def test_fix_all_is_offered_only_when_asked_for(client: LanguageClient, workspace: Path) -> None:
    async with opened(client, workspace / "skills" / "broken-yaml" / "SKILL.md") as doc:
        await doc.diagnostics()
        assert [a.kind for a in await source_actions(client, doc, ["quickfix"])] == []
        assert all(a.kind != FIX_ALL for a in await source_actions(client, doc, None))
        assert fix_all_of(await source_actions(client, doc, ["source.fixAll"])).title


async def test_nothing_to_fix_is_no_action(client: LanguageClient, workspace: Path) -> None:
    async with opened(client, workspace / "skills" / "csv-data-cleaning" / "SKILL.md") as doc:
        assert await doc.diagnostics() == []
        assert await source_actions(client, doc, ["source.fixAll"]) == []


async def test_fix_all_leaves_suppressed_findings_alone(client: LanguageClient, workspace: Path) -> None:
    path = workspace / "skills" / "broken-yaml" / "SKILL.md"
    text = path.read_text(encoding="utf-8")
    line = next(ln for ln in text.splitlines() if ln.startswith("description:"))
    silenced = text.replace(line, f"{line}  # skills-lsp: ignore[SK104]")
    async with opened(client, path, silenced) as doc:
        assert codes(await doc.diagnostics()) == []
        assert await source_actions(client, doc, ["source.fixAll"]) == []
