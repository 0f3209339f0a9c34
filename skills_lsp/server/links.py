"""Document links and go-to-definition for relative references in a skill's body."""

from __future__ import annotations

import os
from pathlib import Path

from lsprotocol import types

from skills_lsp.core.parse.markdown import Reference, find_references
from skills_lsp.server.base import SkillsLanguageServer, Snapshot


def _targets(snapshot: Snapshot) -> list[tuple[Reference, Path]]:
    """The references that name an existing file. One that names a path inside the skill's
    directory but that a symbolic link takes outside it is not followed (SK611 flags it)."""
    found = []
    folder = snapshot.path.parent
    home = folder.resolve()
    for ref in find_references(snapshot.doc):
        written = Path(os.path.normpath(folder / ref.path.replace("\\", "/")))
        target = written.resolve()
        if written.is_relative_to(folder) and not target.is_relative_to(home):
            continue
        if target.is_file():
            found.append((ref, target))
    return found


def register(server: SkillsLanguageServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_DOCUMENT_LINK)
    async def document_links(
        ls: SkillsLanguageServer, params: types.DocumentLinkParams
    ) -> list[types.DocumentLink]:
        # Waits for a folder still loading: a client asks for links once per version.
        snapshot = await ls.ready_skill_snapshot(params.text_document.uri)
        if snapshot is None:
            return []
        return [
            types.DocumentLink(
                range=ls.codec.range_to_client(snapshot.lines, ref.range), target=target.as_uri()
            )
            for ref, target in _targets(snapshot)
        ]

    @server.feature(types.TEXT_DOCUMENT_DEFINITION)
    def definition(ls: SkillsLanguageServer, params: types.DefinitionParams) -> list[types.Location] | None:
        snapshot = ls.skill_snapshot(params.text_document.uri)
        if snapshot is None:
            return None
        position = ls.codec.from_client(snapshot.lines, params.position)
        for ref, target in _targets(snapshot):
            if ref.range.start <= position <= ref.range.end:
                start = types.Position(0, 0)
                return [types.Location(target.as_uri(), types.Range(start, start))]
        return None
