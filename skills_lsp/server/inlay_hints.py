"""Inlay hint: after `description`, what the skill costs in every conversation's catalog."""

from __future__ import annotations

from lsprotocol import types

from skills_lsp.core.assist.outline import catalog_cost
from skills_lsp.server.base import SkillsLanguageServer


def register(server: SkillsLanguageServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_INLAY_HINT)
    async def inlay_hints(
        ls: SkillsLanguageServer, params: types.InlayHintParams
    ) -> list[types.InlayHint] | None:
        # Waits for a folder still loading: a client asks again only after an edit or a refresh.
        snapshot = await ls.ready_skill_snapshot(params.text_document.uri)
        cost = catalog_cost(snapshot.doc, str(snapshot.path)) if snapshot is not None else None
        if snapshot is None or cost is None:
            return None
        position, tokens = cost
        client_position = ls.codec.to_client(snapshot.lines, position)
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
