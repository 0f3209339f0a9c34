"""Skill and instruction files: kept in the folder's index; checked by every rule, SK701 (a name
another skill has) included, as `skills-lsp check` checks them."""

from __future__ import annotations

from pathlib import Path

from skills_lsp.core.files.discovery import kind_of
from skills_lsp.core.index.skill_index import document_from_text
from skills_lsp.core.model import FileKind, Finding, Range, SkillFile
from skills_lsp.core.parse.frontmatter import Document, parse_text
from skills_lsp.core.rules.check import named_skill, workspace_findings
from skills_lsp.core.rules.registry import RuleContext
from skills_lsp.core.rules.validate import check_document
from skills_lsp.core.rules.workspace import NamedSkill
from skills_lsp.server.folder import Folder, Outcome, Role, same_file, served_kind


def update(folder: Folder, path: Path, text: str | None) -> Outcome:
    document = (
        document_from_text(path, text, served_kind(path) or kind_of(path)) if text is not None else None
    )
    if document is None:
        folder.index.remove(path)
    else:
        folder.index.upsert(document)
    return Outcome.CHANGED


def findings(folder: Folder, path: Path, text: str, doc: Document | None) -> list[Finding]:
    result = check_document(
        doc if doc is not None else parse_text(text),
        path,
        kind=served_kind(path) or kind_of(path),
        config=folder.config,
        tools=folder.manifest.registry,
        manifest_path=folder.manifest.path,
    )
    return result.findings + _workspace_findings(folder, path, result.context)


def _workspace_findings(folder: Folder, path: Path, ctx: RuleContext) -> list[Finding]:
    """The workspace rules' findings for this buffer: its name against the other indexed skills
    (what `check` compares over the whole workspace), and its place in each runtime's listing
    with the buffer's description against every other indexed one."""
    if ctx.kind is FileKind.CONVENTION:
        return []
    me = named_skill(ctx, SkillFile(str(path), ctx.kind))
    if me.name is None:
        return []
    # The others' profiles do not matter: the buffer's own decides which runtimes it is checked
    # against, and every other skill is in those listings whatever its profile.
    others = [
        NamedSkill(str(d.path), d.kind, d.name, Range.point(0, 0), d.description)
        for d in folder.index
        if d.kind is not FileKind.CONVENTION and not same_file(d.path, path)
    ]
    found = workspace_findings([me, *others], folder.config, ctx.profile.name)
    return [f for f in found if f.path == str(path)]


ROLE = Role(update, findings)
