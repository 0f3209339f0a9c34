"""Skill and instruction files: kept in the folder's index; checked by every rule, SK701 (a name
another skill has) included, as `skills-lsp check` checks them."""

from __future__ import annotations

from pathlib import Path

from skills_lsp.core.errors import ScorerUnavailable
from skills_lsp.core.files.discovery import kind_of
from skills_lsp.core.index.skill_index import document_from_text
from skills_lsp.core.model import FileKind, Finding, Range, SkillFile
from skills_lsp.core.parse.frontmatter import Document, parse_text
from skills_lsp.core.routing.overlap import collisions_for
from skills_lsp.core.rules.check import named_skill, workspace_findings
from skills_lsp.core.rules.registry import RuleContext, Target
from skills_lsp.core.rules.validate import check_document, collision_findings, enabled_rules
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
    context = result.context
    return result.findings + _workspace_findings(folder, path, context) + _collisions(folder, path, context)


def _collisions(folder: Folder, path: Path, ctx: RuleContext) -> list[Finding]:
    """SK704: the skills that compete with this one for the requests its description is for,
    ranked over the folder's index (which holds this buffer's text: every scorer follows it)."""
    if ctx.kind is FileKind.CONVENTION or not any(
        rule.target is Target.COLLISION for rule in enabled_rules(ctx.profile, folder.config)
    ):
        return []
    described = ctx.get("description")
    document = folder.index.find_by_path(path)
    if described is None or document is None:
        return []
    try:
        found = collisions_for(folder.index, document, folder.scorer, folder.config.accepted_overlaps())
    except ScorerUnavailable:  # pragma: no cover - folder.scorer falls back to one always installed
        return []
    rivalries = [c.rivalry(described.value.range) for c in found]
    return collision_findings(path, rivalries, ctx.profile, folder.config)


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
