"""Code actions: the validator's fixes as quick fixes, `Create missing file` for a broken
reference and `Add tool to manifest` for an unknown tool."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types

from skills_lsp.core.model import Finding, Range
from skills_lsp.server.diagnostics import findings_for, to_diagnostic

if TYPE_CHECKING:
    from skills_lsp.server.app import SkillsLanguageServer


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
        lines = ls.lines_of(uri)
        actions: list[types.CodeAction] = []
        offered: dict[tuple[str, tuple[object, ...]], types.CodeAction] = {}
        for finding in findings_for(ls, uri):
            diagnostic = to_diagnostic(ls, lines, finding)
            if not _overlaps(diagnostic.range, params.range):
                continue
            tied = [_matching(diagnostic, list(params.context.diagnostics))]
            for fix in finding.fixes:
                same = offered.get((fix.title, fix.edits))
                if same is not None:  # two findings (SK204, SK205) offer the same rename: one action
                    same.diagnostics = [*(same.diagnostics or []), *tied]
                    continue
                edits = [
                    types.TextEdit(ls.codec.range_to_client(lines, e.range), e.new_text) for e in fix.edits
                ]
                action = types.CodeAction(
                    title=fix.title,
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=list(tied),
                    edit=types.WorkspaceEdit(changes={uri: edits}),
                    is_preferred=len(finding.fixes) == 1,
                )
                offered[(fix.title, fix.edits)] = action
                actions.append(action)
            extra = _create_file(ls, uri, lines, finding) if finding.code == "SK603" else None
            extra = extra or (_add_tool(ls, uri, lines, finding) if finding.code == "SK505" else None)
            if extra is not None:
                extra.diagnostics = tied
                actions.append(extra)
        return actions or None


def _text_at(lines: list[str], rng: Range) -> str:
    return (
        lines[rng.start.line][rng.start.character : rng.end.character] if rng.start.line < len(lines) else ""
    )


def _can_create(ls: SkillsLanguageServer) -> bool:
    operations = ls.capability("workspace.workspace_edit.resource_operations", []) or []
    return types.ResourceOperationKind.Create in operations


def _create_file(
    ls: SkillsLanguageServer, uri: str, lines: list[str], finding: Finding
) -> types.CodeAction | None:
    path = ls.path_of(uri)
    if path is None or not _can_create(ls):
        return None
    from urllib.parse import unquote

    target = (path.parent / unquote(_text_at(lines, finding.range))).resolve()
    return types.CodeAction(
        title=f"Create missing file {target.name}",
        kind=types.CodeActionKind.QuickFix,
        edit=types.WorkspaceEdit(
            document_changes=[
                types.CreateFile(uri=target.as_uri(), options=types.CreateFileOptions(ignore_if_exists=True))
            ]
        ),
    )


def _add_tool(
    ls: SkillsLanguageServer, uri: str, lines: list[str], finding: Finding
) -> types.CodeAction | None:
    from skills_lsp.core.rules.tools import tool_name

    path = ls.path_of(uri)
    folder = ls.state.folder_for(path) if path is not None else None
    if folder is None:
        return None
    name = tool_name(_text_at(lines, finding.range))
    manifest = folder.manifest.path or folder.root / folder.config.tool_manifest
    entry = f'  - name: {name}\n    description: ""\n'
    target = Path(manifest)
    if target.is_file():
        text = target.read_text(encoding="utf-8")
        count = text.count("\n")
        prefix = "" if text.endswith("\n") or not text else "\n"
        at = (
            types.Position(count, 0)
            if text.endswith("\n") or not text
            else types.Position(count, len(text.split("\n")[-1]))
        )
        edit = types.WorkspaceEdit(
            changes={target.as_uri(): [types.TextEdit(types.Range(at, at), prefix + entry)]}
        )
    elif _can_create(ls):
        start = types.Position(0, 0)
        edit = types.WorkspaceEdit(
            document_changes=[
                types.CreateFile(uri=target.as_uri()),
                types.TextDocumentEdit(
                    text_document=types.OptionalVersionedTextDocumentIdentifier(
                        uri=target.as_uri(), version=None
                    ),
                    edits=[types.TextEdit(types.Range(start, start), "tools:\n" + entry)],
                ),
            ]
        )
    else:
        return None
    return types.CodeAction(
        title=f"Add tool {name} to {target.name}", kind=types.CodeActionKind.QuickFix, edit=edit
    )
