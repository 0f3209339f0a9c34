"""Completion: frontmatter keys and values, allowed-tools from the tool manifest, bundled files."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types

from skills_lsp.core.assist.completion import Suggestion, complete
from skills_lsp.core.parse.frontmatter import parse_text
from skills_lsp.server.state import FileRole

if TYPE_CHECKING:
    from skills_lsp.server.app import SkillsLanguageServer

_KINDS = {
    "field": types.CompletionItemKind.Property,
    "value": types.CompletionItemKind.Value,
    "tool": types.CompletionItemKind.Function,
    "file": types.CompletionItemKind.File,
}


def register(server: SkillsLanguageServer) -> None:
    @server.feature(
        types.TEXT_DOCUMENT_COMPLETION, types.CompletionOptions(trigger_characters=[" ", "/", "-", "("])
    )
    def completion(ls: SkillsLanguageServer, params: types.CompletionParams) -> types.CompletionList | None:
        uri = params.text_document.uri
        path = ls.path_of(uri)
        folder = ls.state.folder_for(path) if path is not None else None
        if path is None or folder is None or folder.role(path) is not FileRole.SKILL:
            return None
        lines = ls.lines_of(uri)
        doc = parse_text(ls.workspace.get_text_document(uri).source)
        position = ls.codec.from_client(lines, params.position)
        profile = ls.state.profile_for(folder, path)
        suggestions = complete(doc, position, profile, folder.manifest.registry, path.parent)
        return types.CompletionList(is_incomplete=False, items=[_item(ls, lines, s) for s in suggestions])


def _item(ls: SkillsLanguageServer, lines: list[str], s: Suggestion) -> types.CompletionItem:
    text = s.insert_text if s.insert_text is not None else s.label
    return types.CompletionItem(
        label=s.label,
        kind=_KINDS[s.kind],
        detail=s.detail or None,
        documentation=types.MarkupContent(types.MarkupKind.Markdown, s.documentation)
        if s.documentation
        else None,
        text_edit=types.TextEdit(ls.codec.range_to_client(lines, s.replace), text) if s.replace else None,
        insert_text=None if s.replace else text,
    )
