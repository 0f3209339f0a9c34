"""Code actions: the rules' fixes as quick fixes. A fix that creates or edits another file (create
a missing reference, add a tool to the manifest) becomes a workspace edit with those files, when
the client can apply it."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types

from skills_lsp.core.model import Applicability, Fix, TextEdit
from skills_lsp.server.base import SkillsLanguageServer
from skills_lsp.server.diagnostics import to_diagnostic


def _overlaps(a: types.Range, b: types.Range) -> bool:
    return not (a.end.line, a.end.character) < (b.start.line, b.start.character) and not (
        (b.end.line, b.end.character) < (a.start.line, a.start.character)
    )


def _matching(diagnostic: types.Diagnostic, sent: list[types.Diagnostic]) -> types.Diagnostic:
    """The client's own copy of a diagnostic when it sent one (clients match them by identity)."""
    for item in sent:
        if item.code == diagnostic.code and item.range == diagnostic.range:
            return item
    return diagnostic


def register(server: SkillsLanguageServer) -> None:
    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]),
    )
    def code_actions(
        ls: SkillsLanguageServer, params: types.CodeActionParams
    ) -> list[types.CodeAction] | None:
        uri = params.text_document.uri
        snapshot = ls.snapshot(uri)
        if snapshot is None:
            return None
        lines = snapshot.lines
        actions: list[types.CodeAction] = []
        offered: dict[tuple[str, tuple[object, ...]], types.CodeAction] = {}
        for finding in snapshot.findings(ls.state):
            diagnostic = to_diagnostic(ls, lines, finding)
            if not _overlaps(diagnostic.range, params.range):
                continue
            tied = [_matching(diagnostic, list(params.context.diagnostics))]
            in_file = [f for f in finding.fixes if f.applicability is not Applicability.DISPLAY_ONLY]
            for fix in finding.fixes:
                same = offered.get((fix.title, fix.edits))
                if same is not None:  # two findings (SK204, SK205) offer the same rename: one action
                    same.diagnostics = [*(same.diagnostics or []), *tied]
                    continue
                edit = _workspace_edit(ls, uri, lines, fix)
                if edit is None:  # the client cannot apply it (e.g. create a file)
                    continue
                action = types.CodeAction(
                    title=fix.title,
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=list(tied),
                    edit=edit,
                    is_preferred=len(in_file) == 1 and fix is in_file[0],
                )
                offered[(fix.title, fix.edits)] = action
                actions.append(action)
        return actions or None


def _workspace_edit(
    ls: SkillsLanguageServer, uri: str, lines: list[str], fix: Fix
) -> types.WorkspaceEdit | None:
    """The fix as a WorkspaceEdit: edits of this buffer, and the files it creates or edits (None
    when it creates one and the client cannot)."""
    edits = [types.TextEdit(ls.codec.range_to_client(lines, e.range), e.new_text) for e in fix.edits]
    if not fix.changes:
        return types.WorkspaceEdit(changes={uri: edits})
    creates = [c for c in fix.changes if c.create and not Path(c.path).exists()]
    if not creates:
        changes = {uri: edits} if edits else {}
        changes.update({Path(c.path).resolve().as_uri(): _other_file(c.edits) for c in fix.changes})
        return types.WorkspaceEdit(changes=changes)
    if not _can_create(ls):
        return None
    document_changes: list[types.TextDocumentEdit | types.CreateFile] = []
    for change in fix.changes:
        target = Path(change.path).resolve().as_uri()
        if change in creates:
            document_changes.append(
                types.CreateFile(uri=target, options=types.CreateFileOptions(ignore_if_exists=True))
            )
        if change.edits:
            document = types.OptionalVersionedTextDocumentIdentifier(uri=target, version=None)
            document_changes.append(types.TextDocumentEdit(document, _other_file(change.edits)))
    return types.WorkspaceEdit(document_changes=document_changes)


def _other_file(edits: tuple[TextEdit, ...]) -> list[types.TextEdit]:
    """Edits of another file, placed by the rule on its disk text: at its start or its end, which is
    column 0 of an empty last line when the file ends with a line break (a position that reads the
    same in code points and in the client's units)."""
    return [
        types.TextEdit(
            types.Range(
                types.Position(e.range.start.line, e.range.start.character),
                types.Position(e.range.end.line, e.range.end.character),
            ),
            e.new_text,
        )
        for e in edits
    ]


def _can_create(ls: SkillsLanguageServer) -> bool:
    operations = ls.capability("workspace.workspace_edit.resource_operations", []) or []
    return types.ResourceOperationKind.Create in operations
