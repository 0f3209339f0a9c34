"""Document symbols: frontmatter keys and Markdown headings (for a skill opened while its folder
loads, once the load ends: a client asks for them once per version)."""

from __future__ import annotations

from lsprotocol import types

from skills_lsp.core.assist.outline import Symbol, outline
from skills_lsp.server.base import SkillsLanguageServer

_KINDS = {
    "frontmatter": types.SymbolKind.Namespace,
    "key": types.SymbolKind.Property,
    "heading": types.SymbolKind.String,
}


def register(server: SkillsLanguageServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    async def document_symbols(
        ls: SkillsLanguageServer, params: types.DocumentSymbolParams
    ) -> list[types.DocumentSymbol]:
        snapshot = await ls.ready_skill_snapshot(params.text_document.uri)
        if snapshot is None:
            return []
        lines = snapshot.lines

        def convert(symbol: Symbol) -> types.DocumentSymbol:
            return types.DocumentSymbol(
                name=symbol.name or "(empty)",
                kind=_KINDS[symbol.kind],
                range=ls.codec.range_to_client(lines, symbol.range),
                selection_range=ls.codec.range_to_client(lines, symbol.selection),
                detail=symbol.detail or None,
                children=[convert(c) for c in symbol.children] or None,
            )

        return [convert(s) for s in outline(snapshot.doc)]
