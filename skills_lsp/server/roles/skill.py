"""Skill and instruction files: kept in the folder's index; checked by every rule, SK701 (a name
another skill has) included, as `skills-lsp check` checks them."""

from __future__ import annotations

import os
from pathlib import Path

from skills_lsp.core.errors import ScorerUnavailable
from skills_lsp.core.index.skill_index import document_from_text
from skills_lsp.core.model import FileKind, Finding, Range, SkillFile
from skills_lsp.core.parse.frontmatter import Document, parse_text
from skills_lsp.core.routing.overlap import collisions_for
from skills_lsp.core.rules.check import named_skill, workspace_findings
from skills_lsp.core.rules.listing import ListedSkill, place, runtimes_for
from skills_lsp.core.rules.registry import RuleContext, Target, rule_named
from skills_lsp.core.rules.suppress import parse_directives
from skills_lsp.core.rules.validate import (
    check_document,
    collision_findings,
    enabled_rules,
    finish_findings,
    severity_for,
)
from skills_lsp.core.rules.workspace import NamedSkill, listing_report
from skills_lsp.server.folder import Folder, Outcome, Role, same_file


def update(folder: Folder, path: Path, text: str | None) -> Outcome:
    document = document_from_text(path, text, folder.kind(path)) if text is not None else None
    if document is None:
        folder.index.remove(path)
        folder.kept_collisions.pop(os.path.normpath(path), None)
    else:
        folder.index.upsert(document)
    return Outcome.CHANGED


def findings(folder: Folder, path: Path, text: str, doc: Document | None) -> list[Finding]:
    """As `check` reports them: every rule's, suppression comments and per-file ignores applied."""
    return _findings(folder, path, text, doc, fresh=True)


def quick_findings(folder: Folder, path: Path, text: str, doc: Document | None) -> list[Finding]:
    """`findings`, with SK704's collisions as they were last computed for this buffer (placed on
    today's description): the rest of the findings need not wait while the typed description is
    embedded and ranked over every skill."""
    return _findings(folder, path, text, doc, fresh=False)


def _findings(folder: Folder, path: Path, text: str, doc: Document | None, fresh: bool) -> list[Finding]:
    doc = doc if doc is not None else parse_text(text)
    result = check_document(
        doc,
        path,
        kind=folder.kind(path),
        config=folder.config,
        tools=folder.manifest.registry,
        manifest_path=folder.manifest.path,
    )
    context = result.context
    found = (
        result.findings
        + _workspace_findings(folder, path, context)
        + _collisions(folder, path, context, fresh)
    )
    return finish_findings(found, path, parse_directives(doc), context.profile, folder.config)


def _collisions(folder: Folder, path: Path, ctx: RuleContext, fresh: bool) -> list[Finding]:
    """SK704: the skills that compete with this one for the requests its description is for,
    ranked over the folder's index (which holds this buffer's text: every scorer follows it);
    not `fresh`: the collisions last found for this buffer."""
    if ctx.kind is FileKind.CONVENTION or not any(
        rule.target is Target.COLLISION for rule in enabled_rules(ctx.profile, folder.config)
    ):
        return []
    described = ctx.get("description")
    key = os.path.normpath(path)
    if not fresh:
        found = folder.kept_collisions.get(key, [])
    else:
        document = folder.index.find_by_path(path)
        if described is None or document is None:
            folder.kept_collisions.pop(key, None)
            return []
        try:
            found = collisions_for(folder.index, document, folder.scorer, folder.config.accepted_overlaps())
        except ScorerUnavailable:  # pragma: no cover - folder.scorer falls back to one always installed
            return []
        folder.kept_collisions[key] = found
    if described is None:
        return []
    rivalries = [c.rivalry(described.value.range) for c in found]
    return collision_findings(path, rivalries, ctx.profile, folder.config)


def _workspace_findings(folder: Folder, path: Path, ctx: RuleContext) -> list[Finding]:
    """The workspace rules' findings for this buffer: its name against the other indexed skills
    of that name (what `check` compares over the whole workspace), and its place in each
    runtime's listing against every other indexed skill (SK703)."""
    if ctx.kind is FileKind.CONVENTION:
        return []
    me = named_skill(ctx, SkillFile(str(path), ctx.kind))
    if me.name is None:
        return []
    found = _listing_findings(folder, path, ctx, me)
    others = [
        NamedSkill(str(d.path), d.kind, d.name, Range.point(0, 0))
        for d in folder.index.all_named(me.name)
        if d.kind is not FileKind.CONVENTION and not same_file(d.path, path)
    ]
    if others:  # SK703 over the namesakes alone would be wrong: it comes from _listing_findings
        named = workspace_findings([me, *others], folder.config, ctx.profile.name)
        found += [f for f in named if f.path == str(path) and f.code != LISTING.code]
    return found


LISTING = rule_named("listing-over-budget")  # SK703


def _listing_findings(folder: Folder, path: Path, ctx: RuleContext, me: NamedSkill) -> list[Finding]:
    """SK703 for this buffer: where its description lands in each runtime's listing, placed
    against the other skills summed up once (typing here changes nothing of theirs)."""
    if me.description is None or LISTING not in enabled_rules(ctx.profile, folder.config):
        return []
    entry = ListedSkill(me.name or "", me.description, os.path.abspath(path), me.when_to_use)
    found: list[Finding] = []
    for runtime in runtimes_for(ctx.profile.name):
        base = folder.listing_base(runtime, path)
        placement, needed = place(base, entry)
        report = listing_report(runtime, placement, needed, base.budget, me)
        if report is not None:
            severity = severity_for(LISTING, ctx.profile, folder.config)
            found.append(Finding(str(path), LISTING.code, severity, report.message, report.range))
    return found


ROLE = Role(update, findings, quick_findings)
