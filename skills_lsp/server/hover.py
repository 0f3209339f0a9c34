"""Hover: field docs, tool descriptions, test-query rankings and how a skill's queries rank it."""

from __future__ import annotations

import os

from lsprotocol import types

from skills_lsp.core.assist.hover import hover_text, listing_hover
from skills_lsp.core.model import Position, Range
from skills_lsp.core.parse.frontmatter import when_to_use
from skills_lsp.core.routing.queries import QueryResult, expecting, explain_case
from skills_lsp.core.rules.listing import ListedSkill, place, runtimes_for
from skills_lsp.server.base import SkillsLanguageServer
from skills_lsp.server.folder import FileRole


def register(server: SkillsLanguageServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def hover(ls: SkillsLanguageServer, params: types.HoverParams) -> types.Hover | None:
        # Async: hovers that show test-query results score them in steps a cancel can interrupt.
        snapshot = await ls.ready_snapshot(params.text_document.uri)
        if snapshot is None:
            return None
        folder, lines, role = snapshot.folder, snapshot.lines, snapshot.role
        position = ls.codec.from_client(lines, params.position)
        found: tuple[str, Range] | None = None
        if role is FileRole.QUERIES:
            for case in folder.cases_for(snapshot.path):
                if case.range.start.line <= position.line <= case.range.end.line:
                    text = explain_case(folder.index, case, scorer=folder.scorer, compare=folder.comparable())
                    if folder.scorer_problem:
                        text += f"\n\n_{folder.scorer_problem}; shown with {folder.scorer}._"
                    found = text, case.range
                    break
        elif role is FileRole.SKILL:
            doc = snapshot.doc
            profile = ls.state.profile_for(folder, snapshot.path)
            found = hover_text(doc, position, profile, folder.manifest.registry)
            name = doc.get("name")
            if found is None and name is not None and _inside(name.value.range, position):
                results = await folder.results_async()
                found = _name_hover(results, str(name.value.value)), name.value.range
            described = doc.get("description")
            if found is None and described is not None and _inside(described.value.range, position):
                me = ListedSkill(
                    str(name.value.value).strip() if name is not None else "",
                    str(described.value.value).strip(),
                    os.path.abspath(snapshot.path),
                    when_to_use(doc),
                )
                # The other skills summed up once while they do not change: O(log n) per hover.
                # Only the runtimes of the file's profile, as SK703 checks.
                places = []
                for runtime in runtimes_for(profile.name):
                    base = folder.listing_base(runtime, snapshot.path)
                    placement, needed = place(base, me)
                    places.append((runtime, placement, needed, base.budget))
                found = listing_hover(me, places, profile.name), described.value.range
        if found is None:
            return None
        text, rng = found
        return types.Hover(
            contents=types.MarkupContent(types.MarkupKind.Markdown, text),
            range=ls.codec.range_to_client(lines, rng),
        )


def _inside(rng: Range, position: Position) -> bool:
    return rng.start <= position <= rng.end


def _name_hover(every: list[QueryResult], name: str) -> str:
    results = expecting(every, name)
    if not results:
        return f"**{name}**\n\nNo test query expects this skill."
    lines = [f"**{name}**: {sum(r.passed for r in results)} of {len(results)} test queries pass", ""]
    for r in results:
        names = [m.skill.name for m in r.matches]
        rank = f"rank {names.index(name) + 1}" if name in names else "not ranked"
        mark = "✓" if r.passed else "✗"
        lines.append(f"- {mark} {r.case.query}: {rank}" + (f"; {r.reason}" if not r.passed else ""))
    return "\n".join(lines)
