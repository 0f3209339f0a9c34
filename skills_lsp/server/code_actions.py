"""Code actions: the rules' fixes as quick fixes. A fix that creates or edits another file (create
a missing reference, add a tool to the manifest) becomes a workspace edit with those files, when
the client can apply it. `source.fixAll.skills-lsp` applies every safe fix of the buffer at once,
as `skills-lsp check --fix` does, so editors can fix on save."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types

from skills_lsp.core.model import Applicability, Finding, Fix, Position, Range, TextEdit
from skills_lsp.core.parse.frontmatter import BOM, split_lines
from skills_lsp.core.rules.fixing import allowed, fix_text, line_starts
from skills_lsp.server.base import SkillsLanguageServer, Snapshot
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


FIX_ALL = f"{types.CodeActionKind.SourceFixAll.value}.skills-lsp"


def _wanted(kind: str, only: list[str] | None) -> bool:
    """Whether the client asked for actions of `kind` (`only` lists kinds or their parents)."""
    return only is None or any(kind == k or kind.startswith(f"{k}.") for k in only)


def register(server: SkillsLanguageServer) -> None:
    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL]),
    )
    async def code_actions(
        ls: SkillsLanguageServer, params: types.CodeActionParams
    ) -> list[types.CodeAction] | None:
        uri = params.text_document.uri
        snapshot = await ls.ready_snapshot(uri)
        if snapshot is None:
            return None
        only = [str(k) for k in params.context.only] if params.context.only is not None else None
        actions: list[types.CodeAction] = []
        if only is not None and _wanted(FIX_ALL, only):  # asked for by name (on save): it re-checks
            fix_all = _fix_all(ls, snapshot)
            if fix_all is not None:
                actions.append(fix_all)
        if _wanted(types.CodeActionKind.QuickFix.value, only):
            actions.extend(_quick_fixes(ls, snapshot, params))
        return actions or None


def _fix_all(ls: SkillsLanguageServer, snapshot: Snapshot) -> types.CodeAction | None:
    """Every safe fix of the buffer (in rounds, as `check --fix`), as one edit of the lines that
    change; None when there is nothing to fix."""
    if not any(allowed(f, unsafe=False) for finding in snapshot.findings(ls.state) for f in finding.fixes):
        return None
    bom = BOM if snapshot.text.startswith(BOM) else ""
    first_check = [True]

    def check(text: str) -> list[Finding]:
        if first_check[0]:  # the buffer as it is: findings already computed for this version
            first_check[0] = False
            return snapshot.findings(ls.state)
        return ls.state.findings(snapshot.path, bom + text)

    fixed = fix_text(snapshot.text.removeprefix(bom), check)
    if not fixed.applied:
        return None
    edit = _changed_lines(ls, snapshot.text, bom + fixed.text)
    return types.CodeAction(
        title="Fix all auto-fixable problems (skills-lsp)",
        kind=FIX_ALL,
        edit=types.WorkspaceEdit(changes={snapshot.uri: [edit]}),
    )


def _changed_lines(ls: SkillsLanguageServer, old_text: str, new_text: str) -> types.TextEdit:
    """One edit replacing the lines from the first to the last that differ (lines before and
    after stay untouched, so the cursor and folds there do not move). The new text keeps the
    line breaks the fixes wrote (the file's own)."""
    old, new = split_lines(old_text), split_lines(new_text)
    head = 0
    while head < min(len(old), len(new)) - 1 and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < min(len(old), len(new)) - head - 1 and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    new_starts = line_starts(new_text)
    if tail:  # from column 0 of the first changed line to column 0 of the first line kept
        rng = Range(Position(head, 0), Position(len(old) - tail, 0))
        text = new_text[new_starts[head] : new_starts[len(new) - tail]]
    else:  # the change runs to the end of the buffer
        rng = Range(Position(head, 0), Position(len(old) - 1, len(old[-1])))
        text = new_text[new_starts[head] :]
    return types.TextEdit(ls.codec.range_to_client(old, rng), text)


def _quick_fixes(
    ls: SkillsLanguageServer, snapshot: Snapshot, params: types.CodeActionParams
) -> list[types.CodeAction]:
    uri, lines = snapshot.uri, snapshot.lines
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
    return actions


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
