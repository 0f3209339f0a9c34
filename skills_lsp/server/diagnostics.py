"""Diagnostics: findings as LSP diagnostics, pulled when the client supports it, else published
(debounced after edits). Workspace changes re-publish, or ask pulling clients to refresh."""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time

from lsprotocol import types

from skills_lsp.core.model import Finding, Severity
from skills_lsp.server.base import SkillsLanguageServer
from skills_lsp.server.folder import FileRole, same_file

RULES_URL = "https://github.com/skills-lsp/skills-lsp/blob/main/docs/rules.md"
DEBOUNCE_SECONDS = 0.1
# A skill's findings that rank it over every skill (SK704) follow its quick ones after this pause
# in typing: while it goes on, each keystroke's findings go out without waiting for them.
FULL_AFTER_SECONDS = 0.2
LENS_POLL_SECONDS = 0.005  # how often a skill's publication looks whether the lenses are done
LENS_QUIET_SECONDS = 0.03  # no lens resolved for this long: the editor's burst of resolves is over
LENS_WAIT_SECONDS = 1.0  # a publication waits for the lenses at most this long
REFRESH_SECONDS = 0.3  # asking the client to re-pull everything waits for a pause in typing
_SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFO: types.DiagnosticSeverity.Information,
    Severity.HINT: types.DiagnosticSeverity.Hint,
}
log = logging.getLogger(__name__)


def to_diagnostic(ls: SkillsLanguageServer, lines: list[str], finding: Finding) -> types.Diagnostic:
    return types.Diagnostic(
        range=ls.codec.range_to_client(lines, finding.range),
        message=finding.message,
        severity=_SEVERITY[finding.severity],
        code=finding.code,
        code_description=types.CodeDescription(href=f"{RULES_URL}#{finding.code.lower()}"),
        source="skills-lsp",
    )


def diagnostics_for(ls: SkillsLanguageServer, uri: str) -> list[types.Diagnostic]:
    snapshot = ls.snapshot(uri)
    if snapshot is None:
        return []
    return [to_diagnostic(ls, snapshot.lines, f) for f in snapshot.findings(ls.state)]


def client_pulls(ls: SkillsLanguageServer) -> bool:
    return ls.capability("text_document.diagnostic") is not None


async def settle(ls: SkillsLanguageServer, uri: str) -> None:
    """Score the test queries a queries file's diagnostics report, in steps that leave the event
    loop free for other requests (and for a cancel of this one)."""
    snapshot = ls.snapshot(uri)
    if snapshot is None or snapshot.role is not FileRole.QUERIES:
        return
    # A skill's trigger evals (evals/eval_queries.json) are scored on their own (results_for).
    if same_file(snapshot.path, snapshot.folder.query_path):
        await snapshot.folder.results_async()


async def after_lenses(ls: SkillsLanguageServer, uri: str) -> None:
    """Wait while the editor asks for the code lenses of the folder of a skill file (the test
    queries scored after an edit, then a resolve for every visible lens): the skill's own
    diagnostics (SK704 embeds the sentence being typed and ranks it over every skill, tens of ms
    on the event loop) would otherwise run in the middle, and the lenses not yet answered would
    wait for them. Never longer than LENS_WAIT_SECONDS; then one more turn of the event loop, so
    the requests that waited answer first."""
    snapshot = ls.snapshot(uri)
    if snapshot is None or snapshot.role is not FileRole.SKILL:
        return
    folder = snapshot.folder
    if not folder.lenses_busy(LENS_QUIET_SECONDS):
        return
    deadline = time.monotonic() + LENS_WAIT_SECONDS
    while folder.lenses_busy(LENS_QUIET_SECONDS) and time.monotonic() < deadline:
        await asyncio.sleep(LENS_POLL_SECONDS)
    await asyncio.sleep(0)


async def publish(ls: SkillsLanguageServer, uri: str) -> None:
    """A skill's findings go out in two steps: at once with SK704's last collisions (placed on the
    description as it is now), then, after a pause in typing (FULL_AFTER_SECONDS) and once the
    lenses are answered, again if the typed description, ranked over every skill, changed them.
    The first step runs no model and ranks nothing, so an edit's other findings do not wait."""
    if client_pulls(ls):
        return
    snapshot = ls.snapshot(uri)
    if snapshot is not None and snapshot.role is FileRole.SKILL:
        sent = [to_diagnostic(ls, snapshot.lines, f) for f in snapshot.quick_findings(ls.state)]
        _send(ls, uri, sent, snapshot.version)
        ls.later(f"publish-full:{uri}", FULL_AFTER_SECONDS, lambda: _publish_full(ls, uri, sent))
        return
    await _publish_full(ls, uri, None)


async def _publish_full(ls: SkillsLanguageServer, uri: str, sent: list[types.Diagnostic] | None) -> None:
    """Every finding, published unless it is what `sent` already showed."""
    await after_lenses(ls, uri)
    await settle(ls, uri)
    found = diagnostics_for(ls, uri)
    if found != sent:
        _send(ls, uri, found, ls.workspace.get_text_document(uri).version)


def _send(ls: SkillsLanguageServer, uri: str, found: list[types.Diagnostic], version: int | None) -> None:
    ls.text_document_publish_diagnostics(
        types.PublishDiagnosticsParams(uri=uri, diagnostics=found, version=version)
    )


def schedule(ls: SkillsLanguageServer, uri: str, delay: float = DEBOUNCE_SECONDS) -> None:
    """Publish after a short pause, so a burst of keystrokes costs one analysis."""
    if not client_pulls(ls):
        ls.later(f"publish:{uri}", delay, lambda: publish(ls, uri))


def refresh_all(ls: SkillsLanguageServer, edited: str | None = None, pulled_only: bool = False) -> None:
    """Something every document may depend on changed (a skill, the manifest, the queries). The
    other open documents wait for a pause in typing (REFRESH_SECONDS), as pulling clients are
    asked to: re-scoring a test-query file's 100 requests after every keystroke in a skill kept
    that skill's own diagnostics waiting. `edited` keeps its own, shorter debounce. `pulled_only`:
    only a pulling client is asked (the caller publishes the others itself)."""
    if client_pulls(ls):
        if ls.capability("workspace.diagnostics.refresh_support", False):
            _pull_again_after_a_pause(ls)
        return
    if pulled_only:
        return
    for uri in ls.open_uris():
        if uri != edited:
            schedule(ls, uri, REFRESH_SECONDS)


def clear(ls: SkillsLanguageServer, uri: str) -> None:
    ls.forget_changes(uri)
    ls.cancel(f"publish:{uri}")
    ls.cancel(f"publish-full:{uri}")
    if not client_pulls(ls):
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))


def quick_pull(ls: SkillsLanguageServer, uri: str) -> list[types.Diagnostic] | None:
    """What a pull of a skill being typed in answers: its quick findings (SK704's last collisions,
    as `publish` sends first), when the client can be asked to pull again; that refresh follows a
    pause in typing (REFRESH_SECONDS, past FULL_AFTER_SECONDS), and the pull it brings ranks the
    description over every skill. None: answer with every finding now."""
    if not ls.capability("workspace.diagnostics.refresh_support", False):
        return None  # no later pull would bring the ranked findings
    if not ls.changed_within(uri, FULL_AFTER_SECONDS):
        return None
    snapshot = ls.snapshot(uri)
    if snapshot is None or snapshot.role is not FileRole.SKILL:
        return None
    _pull_again_after_a_pause(ls)
    return [to_diagnostic(ls, snapshot.lines, f) for f in snapshot.quick_findings(ls.state)]


def _pull_again_after_a_pause(ls: SkillsLanguageServer) -> None:
    """Ask a pulling client to pull every document again once typing pauses (REFRESH_SECONDS)."""
    ls.later("diagnostic-refresh", REFRESH_SECONDS, lambda: ls.workspace_diagnostic_refresh(None))


def register(server: SkillsLanguageServer) -> None:
    @server.feature(
        types.TEXT_DOCUMENT_DIAGNOSTIC,
        types.DiagnosticOptions(
            identifier="skills-lsp", inter_file_dependencies=True, workspace_diagnostics=False
        ),
    )
    async def pull(
        ls: SkillsLanguageServer, params: types.DocumentDiagnosticParams
    ) -> types.DocumentDiagnosticReport:
        uri = params.text_document.uri
        items = quick_pull(ls, uri)
        if items is None:
            await settle(ls, uri)
            items = diagnostics_for(ls, uri)
        result_id = hashlib.sha1(repr([(d.code, d.range, d.message) for d in items]).encode()).hexdigest()
        if params.previous_result_id == result_id:
            return types.RelatedUnchangedDocumentDiagnosticReport(result_id=result_id)
        return types.RelatedFullDocumentDiagnosticReport(items=items, result_id=result_id)
