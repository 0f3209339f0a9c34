"""Completion: frontmatter keys and values, allowed-tools from the tool manifest, bundled files."""

from __future__ import annotations

from lsprotocol import types

from skills_lsp.core.assist.completion import Suggestion, complete
from skills_lsp.server.base import SkillsLanguageServer

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
    async def completion(
        ls: SkillsLanguageServer, params: types.CompletionParams
    ) -> types.CompletionList | None:
        # Asked while the folder loads, it waits for the load (as hover does): the profile and the
        # tool manifest are the folder's, and an empty answer would not be asked again.
        snapshot = await ls.ready_skill_snapshot(params.text_document.uri)
        if snapshot is None:
            return None
        folder, lines = snapshot.folder, snapshot.lines
        position = ls.codec.from_client(lines, params.position)
        profile = ls.state.profile_for(folder, snapshot.path)
        suggestions = complete(
            snapshot.doc, position, profile, folder.manifest.registry, snapshot.path.parent
        )
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
