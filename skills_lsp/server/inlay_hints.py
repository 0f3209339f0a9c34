"""Inlay hint: after `description`, what the skill costs in every conversation's catalog."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types

from skills_lsp.core.assist.outline import catalog_cost
from skills_lsp.core.parse.frontmatter import parse_text
from skills_lsp.server.state import FileRole

if TYPE_CHECKING:
    from skills_lsp.server.app import SkillsLanguageServer


def register(server: SkillsLanguageServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_INLAY_HINT)
    def inlay_hints(ls: SkillsLanguageServer, params: types.InlayHintParams) -> list[types.InlayHint] | None:
        uri = params.text_document.uri
        path = ls.path_of(uri)
        folder = ls.state.folder_for(path) if path is not None else None
        if path is None or folder is None or folder.role(path) is not FileRole.SKILL:
            return None
        cost = catalog_cost(parse_text(ls.workspace.get_text_document(uri).source), str(path))
        if cost is None:
            return None
        position, tokens = cost
        lines = ls.lines_of(uri)
        client_position = ls.codec.to_client(lines, position)
        if not (params.range.start.line <= client_position.line <= params.range.end.line):
            return None
        return [
            types.InlayHint(
                position=client_position,
                label=f"≈{tokens} tokens in the catalog",
                padding_left=True,
                tooltip="Every conversation pays for each skill's name, description and location.",
            )
        ]
