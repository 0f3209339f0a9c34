"""Commands: score a query, show the index, create a skill."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from skills_lsp.core.assist.scaffold import ScaffoldError, scaffold_skill
from skills_lsp.core.errors import ScorerUnavailable
from skills_lsp.core.routing.scorer import SelectionPolicy, select_skills
from skills_lsp.core.workspace.scorers import FALLBACK
from skills_lsp.server import codelens, diagnostics
from skills_lsp.server.base import SkillsLanguageServer

if TYPE_CHECKING:
    from skills_lsp.server.folder import Folder


def _folder(ls: SkillsLanguageServer, uri: Any) -> Folder:
    path = ls.path_of(uri) if isinstance(uri, str) and uri else None
    folder = ls.state.folder_for(path) if path is not None else None
    if folder is None:
        folders = list(ls.state.folders.values())
        if not folders:
            raise ValueError("no workspace folder is indexed yet")
        folder = folders[0]
    return folder


def register(server: SkillsLanguageServer) -> None:
    @server.command(codelens.SCORE_QUERY)
    def score_query(ls: SkillsLanguageServer, *args: Any) -> list[dict[str, Any]]:
        """Arguments: the query, and optionally a URI inside the workspace folder to search."""
        query = next((a for a in args if isinstance(a, str) and not a.startswith("file:")), None)
        if not query:
            if args:  # run from the lens, which cannot ask for text: say how to give one
                message = (
                    "Score a query: run skillsLsp.scoreQuery with the query as its first argument "
                    "(VS Code: the 'Skills: Score Query...' command asks for it)."
                )
                ls.window_show_message(types.ShowMessageParams(type=types.MessageType.Info, message=message))
                return []
            raise ValueError("skillsLsp.scoreQuery needs a query")
        folder = _folder(ls, next((a for a in args if isinstance(a, str) and a.startswith("file:")), None))
        scorer = folder.chosen_scorer()
        try:
            matches = select_skills(folder.index, query, SelectionPolicy(10, 0.0, scorer=scorer))
        except ScorerUnavailable:  # the configured scorer's extra is not installed: as the lenses do
            scorer = FALLBACK
            matches = select_skills(folder.index, query, SelectionPolicy(10, 0.0, scorer=FALLBACK))
        return [
            {
                "name": m.skill.name,
                "uri": Path(m.skill.path).resolve().as_uri(),
                "id": m.skill.id,
                "score": m.score,
                "scorer": scorer,
            }
            for m in matches
        ]

    @server.command("skillsLsp.showIndex")
    def show_index(ls: SkillsLanguageServer, *args: Any) -> list[dict[str, Any]]:
        folder = _folder(ls, args[0] if args else None)
        return [
            {
                "name": d.name,
                "description": d.description,
                "uri": Path(d.path).resolve().as_uri(),
                "kind": d.kind.value,
            }
            for d in folder.index
        ]

    @server.command("skillsLsp.newSkill")
    def new_skill(ls: SkillsLanguageServer, *args: Any) -> str:
        """Arguments: the skill's name, and optionally the URI of the folder to create it in."""
        if not args or not isinstance(args[0], str):
            raise ValueError("skillsLsp.newSkill needs a name")
        parent_uri = args[1] if len(args) > 1 and isinstance(args[1], str) else None
        parent = ls.path_of(parent_uri) if parent_uri else None
        if parent is None:
            folder = _folder(ls, None)
            parent = folder.root / "skills"
        try:
            skill_md = scaffold_skill(args[0], parent)
        except ScaffoldError as exc:
            raise ValueError(str(exc)) from None
        ls.state.update(skill_md, None)
        diagnostics.refresh_all(ls)
        codelens.refresh(ls)
        if ls.capability("window.show_document.support", False):
            ls.window_show_document(
                types.ShowDocumentParams(uri=skill_md.resolve().as_uri(), take_focus=True)
            )
        return skill_md.resolve().as_uri()
