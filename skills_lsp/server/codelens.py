"""Code lenses: each test query's result, and at the top of each skill how its queries fare.
Lenses are resolved lazily and refreshed when skills, the manifest or the queries change."""

from __future__ import annotations

from typing import Any

from lsprotocol import types

from skills_lsp.core.model import Range
from skills_lsp.core.routing.queries import QueryResult, expecting
from skills_lsp.server.base import SkillsLanguageServer
from skills_lsp.server.folder import FileRole, same_file

SCORE_QUERY = "skillsLsp.scoreQuery"


REFRESH_SECONDS = 0.3


def refresh(ls: SkillsLanguageServer, delay: float = REFRESH_SECONDS) -> None:
    """Ask the client to re-request lenses once typing pauses (each request re-runs queries)."""
    if ls.capability("workspace.code_lens.refresh_support", False):
        ls.later("code-lens-refresh", delay, lambda: ls.workspace_code_lens_refresh(None))


def case_title(result: QueryResult) -> str:
    mark = "✓" if result.passed else "✗"
    winner = result.winner
    title = f"{mark} {winner.skill.name} ({winner.score:.3f})" if winner else f"{mark} no skill selected"
    runner = result.runner_up
    if runner is not None:
        title += f" · runner-up: {runner.skill.name} ({runner.score:.3f})"
    return title + ("" if result.passed else f" · {result.reason}")


def register(server: SkillsLanguageServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_CODE_LENS)
    def code_lens(ls: SkillsLanguageServer, params: types.CodeLensParams) -> list[types.CodeLens] | None:
        uri = params.text_document.uri
        snapshot = ls.snapshot(uri)
        if snapshot is None:
            return None
        folder, lines, role = snapshot.folder, snapshot.lines, snapshot.role
        if role is FileRole.QUERIES:
            return [
                types.CodeLens(
                    range=ls.codec.range_to_client(lines, case.range), data={"uri": uri, "case": i}
                )
                for i, case in enumerate(folder.cases_for(snapshot.path))
            ]
        if role is not FileRole.SKILL:
            return None
        top = ls.codec.range_to_client(lines, Range.point(0, 0))
        name = snapshot.doc.get("name")
        lenses = [
            types.CodeLens(
                range=top,
                command=types.Command(title="Score a query...", command=SCORE_QUERY, arguments=[uri]),
            )
        ]
        if name is not None and name.value.is_scalar:
            lenses.insert(0, types.CodeLens(range=top, data={"uri": uri, "skill": str(name.value.value)}))
        return lenses

    @server.feature(types.CODE_LENS_RESOLVE)
    async def resolve(ls: SkillsLanguageServer, lens: types.CodeLens) -> types.CodeLens:
        # Async so that scoring every test query (seconds with an embedding scorer) steps aside
        # for the event loop: a $/cancelRequest then ends the request with RequestCancelled.
        if lens.command is not None or not isinstance(lens.data, dict):
            return lens
        data: dict[str, Any] = lens.data
        path = ls.path_of(str(data.get("uri", "")))
        folder = ls.state.folder_for(path) if path is not None else None
        if folder is None:
            lens.command = types.Command("(workspace not indexed)", "")
            return lens
        if "case" in data and path is not None and not same_file(path, folder.query_path):
            results = folder.results_for(path)  # a skill's trigger evals: a few queries
        else:
            results = await folder.results_async()
        if "case" in data:
            index = int(data["case"])
            if index < len(results):
                title = f"{case_title(results[index])} · {folder.scorer}"  # the scorer behind it
            else:
                title = "(test query changed)"
        else:
            mine = expecting(results, str(data.get("skill")))
            passed = sum(r.passed for r in mine)
            noun = "query" if len(mine) == 1 else "queries"
            title = f"{len(mine)} test {noun}: {passed} pass ({folder.scorer})"
        lens.command = types.Command(title, "")
        folder.lens_answered()  # a skill's diagnostics wait for the rest of the burst (diagnostics.py)
        return lens
