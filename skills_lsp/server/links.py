"""Document links and go-to-definition for relative references in a skill's body."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types

from skills_lsp.core.parse.frontmatter import parse_text
from skills_lsp.core.parse.markdown import Reference, find_references
from skills_lsp.server.state import FileRole

if TYPE_CHECKING:
    from skills_lsp.server.app import SkillsLanguageServer


def _targets(ls: SkillsLanguageServer, uri: str) -> list[tuple[Reference, Path]]:
    path = ls.path_of(uri)
    folder = ls.state.folder_for(path) if path is not None else None
    if path is None or folder is None or folder.role(path) is not FileRole.SKILL:
        return []
    doc = parse_text(ls.workspace.get_text_document(uri).source)
    found = []
    for ref in find_references(doc):
        target = (path.parent / ref.path.replace("\\", "/")).resolve()
        if target.is_file():
            found.append((ref, target))
    return found


def register(server: SkillsLanguageServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_DOCUMENT_LINK)
    def document_links(
        ls: SkillsLanguageServer, params: types.DocumentLinkParams
    ) -> list[types.DocumentLink]:
        uri = params.text_document.uri
        lines = ls.lines_of(uri)
        return [
            types.DocumentLink(range=ls.codec.range_to_client(lines, ref.range), target=target.as_uri())
            for ref, target in _targets(ls, uri)
        ]

    @server.feature(types.TEXT_DOCUMENT_DEFINITION)
    def definition(ls: SkillsLanguageServer, params: types.DefinitionParams) -> list[types.Location] | None:
        uri = params.text_document.uri
        lines = ls.lines_of(uri)
        position = ls.codec.from_client(lines, params.position)
        for ref, target in _targets(ls, uri):
            if ref.range.start <= position <= ref.range.end:
                start = types.Position(0, 0)
                return [types.Location(target.as_uri(), types.Range(start, start))]
        return None
