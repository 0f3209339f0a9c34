"""Document symbols: frontmatter keys and Markdown headings."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types

from skills_lsp.core.assist.outline import Symbol, outline
from skills_lsp.core.parse.frontmatter import parse_text
from skills_lsp.server.state import FileRole

if TYPE_CHECKING:
    from skills_lsp.server.app import SkillsLanguageServer

_KINDS = {
    "frontmatter": types.SymbolKind.Namespace,
    "key": types.SymbolKind.Property,
    "heading": types.SymbolKind.String,
}


def register(server: SkillsLanguageServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    def document_symbols(
        ls: SkillsLanguageServer, params: types.DocumentSymbolParams
    ) -> list[types.DocumentSymbol]:
        uri = params.text_document.uri
        path = ls.path_of(uri)
        folder = ls.state.folder_for(path) if path is not None else None
        if path is None or folder is None or folder.role(path) is not FileRole.SKILL:
            return []
        lines = ls.lines_of(uri)

        def convert(symbol: Symbol) -> types.DocumentSymbol:
            return types.DocumentSymbol(
                name=symbol.name or "(empty)",
                kind=_KINDS[symbol.kind],
                range=ls.codec.range_to_client(lines, symbol.range),
                selection_range=ls.codec.range_to_client(lines, symbol.selection),
                detail=symbol.detail or None,
                children=[convert(c) for c in symbol.children] or None,
            )

        return [convert(s) for s in outline(parse_text(ls.workspace.get_text_document(uri).source))]
