"""The document and workspace lifecycle: settings, initial indexing (with progress), edits,
saves, watched files, workspace folders and configuration changes."""

from __future__ import annotations

import asyncio
import logging
import uuid
from pathlib import Path
from typing import Any

from lsprotocol import types

from skills_lsp.core.files.ignore import IGNORE_FILES
from skills_lsp.server import codelens, cold_build, diagnostics
from skills_lsp.server.base import SkillsLanguageServer
from skills_lsp.server.folder import FileRole, Folder

log = logging.getLogger(__name__)
CONFIG_SECTION = "skillsLsp"
# The VS Code client watches the same globs (vscode-extension/src/selector.ts `watchGlobs`); its
# unit test reads this tuple and fails when the two differ.
WATCHED = (
    "**/SKILL.md",
    "**/.skills/**/*.md",
    "**/.claude/skills/**/*.md",
    "**/{AGENTS,AGENT,CLAUDE,GEMINI,COPILOT,SKILLS,SOUL}.md",
    "**/skill-tools.{yaml,yml,json}",
    "**/skill-queries.{yaml,yml,json}",
    "**/evals/eval_queries.json",  # trigger evals: lenses and SK702
    "**/evals/*.json",  # evals.json too, which the skill's own check reads
    "**/{pyproject.toml,skills-lsp.toml}",
    "**/{.gitignore,.ignore}",
    "**/.git/info/exclude",  # git's own ignore list, which discovery honours as .gitignore
)


def _settings(value: Any) -> dict[str, Any]:
    if isinstance(value, dict):
        inner = value.get(CONFIG_SECTION, value)
        return dict(inner) if isinstance(inner, dict) else {}
    return {}


def folder_roots(ls: SkillsLanguageServer) -> list[Path]:
    roots = [ls.path_of(f.uri) for f in ls.workspace.folders.values()]
    if not roots and ls.workspace.root_uri:
        roots = [ls.path_of(ls.workspace.root_uri)]
    return [r for r in roots if r is not None and r.is_dir()]


async def index_folders(ls: SkillsLanguageServer, roots: list[Path], trust_saved: bool = False) -> None:
    """Index folders in a worker thread, reporting work-done progress when the client can.
    `trust_saved`: a folder's saved index serves its first answers before its files are checked
    (State.load_folder); once they are out, the check runs, and a folder that changed since is
    loaded again and served anew. The progress ends once every folder is checked."""
    ls.state.indexing.update(roots)  # documents opened meanwhile wait for their folder's load
    try:
        await _index_folders(ls, roots, trust_saved)
    finally:
        ls.indexing_done(roots)


async def _index_folders(ls: SkillsLanguageServer, roots: list[Path], trust_saved: bool) -> None:
    token: str | None = None
    if roots and ls.capability("window.work_done_progress", False):
        token = str(uuid.uuid4())
        try:
            await ls.work_done_progress.create_async(token)
            ls.work_done_progress.begin(
                token, types.WorkDoneProgressBegin(title="Indexing skills", percentage=0)
            )
        except Exception:  # the client refused a progress token: index without one
            token = None
    loop = asyncio.get_running_loop()
    sent = 0  # the last percentage reported: reports only go forward

    def report(percentage: int, message: str) -> None:
        nonlocal sent
        if token is not None and percentage > sent:
            sent = percentage
            ls.work_done_progress.report(
                token, types.WorkDoneProgressReport(message=message, percentage=percentage)
            )

    for number, root in enumerate(roots):

        def progress(percentage: int, message: str, number: int = number) -> None:
            # Called from the loading thread: the report goes out from the event loop.
            overall = (100 * number + percentage) // len(roots)
            loop.call_soon_threadsafe(report, overall, message)

        try:
            await asyncio.to_thread(ls.state.load_folder, root, progress, trust_saved)
        except cold_build.Stopped:  # the server is shutting down: nothing more to load
            return
        finally:
            ls.indexing_done([root])
        # No await between: waiting requests run once this coroutine yields, after their documents.
        serve_waiting(ls, root)
        report(round(100 * (number + 1) / len(roots)), root.name)
    # The folders that answered from their saved index are checked once every folder is served.
    for root in roots:
        folder = ls.state.folders.get(str(root))
        if folder is None or await saved_index_holds(folder):
            continue
        if cold_build.stopping():
            return
        if ls.state.folders.get(str(root)) is not folder:  # removed, or loaded again meanwhile
            log.info("%s changed since its index was saved, and is no longer served as checked", root)
            continue
        # Changed since its index was saved (files edited while no editor ran): its first answers
        # came from what was saved; read what changed and answer again.
        log.info("%s changed since its index was saved: loading it again", root)
        try:
            await asyncio.to_thread(ls.state.load_folder, root)
        except cold_build.Stopped:
            return
        serve_waiting(ls, root)
    if token is not None:
        count = sum(len(f.index) for f in ls.state.folders.values())
        ls.work_done_progress.end(token, types.WorkDoneProgressEnd(message=f"{count} skills indexed"))


async def fetch_configuration(ls: SkillsLanguageServer) -> None:
    if not ls.capability("workspace.configuration", False):
        return
    try:
        values = await ls.workspace_configuration_async(
            types.ConfigurationParams(items=[types.ConfigurationItem(section=CONFIG_SECTION)])
        )
    except Exception:
        log.warning("workspace/configuration failed; keeping initializationOptions")
        return
    if values and isinstance(values[0], dict):
        ls.state.settings.update(values[0])


async def watch_files(ls: SkillsLanguageServer) -> None:
    """Ask the client to tell us about files changed outside the editor; without it (or if the
    client refuses) files are re-read on open and save, and may only go stale."""
    if not ls.capability("workspace.did_change_watched_files.dynamic_registration", False):
        return
    watchers = [types.FileSystemWatcher(glob_pattern=g) for g in WATCHED]
    registration = types.Registration(
        id=str(uuid.uuid4()),
        method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
        register_options=types.DidChangeWatchedFilesRegistrationOptions(watchers=watchers),
    )
    try:
        await ls.client_register_capability_async(types.RegistrationParams(registrations=[registration]))
    except Exception as exc:
        log.info("the client did not register file watching (%s); relying on open and save", exc)


async def saved_index_holds(folder: Folder) -> bool:
    """Whether `folder`, if it was loaded as saved without a stat, is still what its files say:
    the stats are made by a child process (core/files/stats_child.py) while the event loop
    answers requests. True for a folder loaded the usual way (checked as it loaded)."""
    check = folder.saved_check
    if check is None:
        return True
    folder.saved_check = None
    log.info("%s: first answers from its saved index; checking its files", folder.root)
    return await asyncio.to_thread(check.holds)


def serve_waiting(ls: SkillsLanguageServer, root: Path) -> None:
    """The open documents of `root`, whose folder was just read from disk: their buffers (maybe
    unsaved, maybe opened while it loaded) win again, and they are served at once, before any
    request waiting on them (base.ready_snapshot) runs. No debounce: nobody is typing, and the
    editor waits for these first diagnostics and lenses."""
    # Lenses and pulled diagnostics asked for while it loaded were answered empty: ask again,
    # first, so that the client's requests arrive while the diagnostics below are computed.
    codelens.refresh(ls, 0.0)
    diagnostics.refresh_all(ls, pulled_only=True)
    for uri in reapply_buffers(ls, root):
        diagnostics.schedule(ls, uri, 0.0)


def ensure_folder(ls: SkillsLanguageServer, path: Path) -> None:
    """Load the folder a document belongs to if indexing has not reached it yet; a document
    outside every workspace folder gets a folder of its own (its skill's directory)."""
    if ls.state.folder_for(path) is not None:
        return
    for root in folder_roots(ls):
        try:
            path.relative_to(root)
        except ValueError:
            continue
        ls.state.load_folder(root)
        return
    ls.state.load_folder(path.parent)


def reapply_buffers(ls: SkillsLanguageServer, root: Path | None = None) -> list[str]:
    """After a folder is re-read from disk, open buffers (maybe unsaved) win again: all of them,
    or those under `root`. The URIs of the open documents of a loaded folder (under `root`)."""
    reapplied: list[str] = []
    for uri in ls.open_uris():
        path = ls.path_of(uri)
        folder = ls.state.folder_for(path) if path is not None else None
        if path is None or folder is None or (root is not None and not path.is_relative_to(root)):
            continue
        if folder.role(path) is not FileRole.CONFIG:  # the load read the config itself
            ls.state.update(path, ls.workspace.get_text_document(uri).source)
        reapplied.append(uri)
    return reapplied


def changed(ls: SkillsLanguageServer, uri: str, text: str | None) -> None:
    path = ls.path_of(uri)
    if path is None or ls.loading(path):  # served when its folder's load ends (serve_waiting)
        return
    # The debounce starts when the change arrives, so the index update below (tens of ms at
    # 20,000 skills: the edited skill is embedded again) runs inside it, not before it.
    ls.mark_changed(uri)
    diagnostics.schedule(ls, uri)
    ensure_folder(ls, path)
    role = ls.state.update(path, text)
    if role is FileRole.CONFIG:
        reapply_buffers(ls)
    if role is not FileRole.OTHER:
        diagnostics.refresh_all(ls, edited=uri)
        codelens.refresh(ls)


def register(server: SkillsLanguageServer) -> None:
    @server.feature(types.INITIALIZE)
    def initialize(ls: SkillsLanguageServer, params: types.InitializeParams) -> None:
        ls.state.settings.update(_settings(params.initialization_options))

    @server.feature(types.EXIT)
    def exit_(ls: SkillsLanguageServer, *args: object) -> None:
        # Before pygls ends the connection: a folder's index build in a child stops now, over
        # stdio and over TCP alike (base.start_io also stops them as its loop ends).
        cold_build.stop_all()

    @server.feature(types.INITIALIZED)
    async def initialized(ls: SkillsLanguageServer, params: types.InitializedParams) -> None:
        roots = folder_roots(ls)
        # A document opened while the settings are fetched waits for its folder's load too.
        ls.state.indexing.update(roots)
        try:
            await fetch_configuration(ls)
        finally:
            ls.indexing_done(roots)
        # Documents opened meanwhile are served as each folder's load ends (serve_waiting).
        await index_folders(ls, roots, trust_saved=True)
        await watch_files(ls)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: SkillsLanguageServer, params: types.DidOpenTextDocumentParams) -> None:
        changed(ls, params.text_document.uri, params.text_document.text)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: SkillsLanguageServer, params: types.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        changed(ls, uri, ls.workspace.get_text_document(uri).source)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: SkillsLanguageServer, params: types.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        changed(ls, uri, ls.workspace.get_text_document(uri).source)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: SkillsLanguageServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        path = ls.path_of(uri)
        role = ls.state.update(path, None) if path is not None and ls.state.folder_for(path) else None
        ls.forget(uri)
        diagnostics.clear(ls, uri)  # also drops a publication still pending from the last edit
        if role is not None and role is not FileRole.OTHER:  # the disk version may differ
            diagnostics.refresh_all(ls)
            codelens.refresh(ls)

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    async def watched(ls: SkillsLanguageServer, params: types.DidChangeWatchedFilesParams) -> None:
        touched = False
        reload: list[Path] = []
        for change in params.changes:
            path = ls.path_of(change.uri)
            if path is None or ls.is_open(change.uri):
                continue  # an open buffer is authoritative
            folder = ls.state.folder_for(path)
            if folder is None:
                continue
            if path.name in IGNORE_FILES or path.parts[-3:] == (".git", "info", "exclude"):
                # What discovery leaves out changed: index the folder again.
                if folder.root not in reload:
                    reload.append(folder.root)
                continue
            if folder.ignores(path) and folder.role(path) is FileRole.SKILL:
                continue  # a skill file in an ignored folder stays out, as on a full load
            if ls.state.update(path, None) is FileRole.CONFIG:
                reapply_buffers(ls)  # the folder was re-read from disk: unsaved buffers win again
            touched = True
        if reload:
            await index_folders(ls, reload)
            reapply_buffers(ls)
        if touched or reload:
            diagnostics.refresh_all(ls)
            codelens.refresh(ls)

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    async def folders(ls: SkillsLanguageServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
        for removed in params.event.removed:
            path = ls.path_of(removed.uri)
            if path is not None:
                ls.state.drop_folder(path)
        added = [p for p in (ls.path_of(f.uri) for f in params.event.added) if p is not None and p.is_dir()]
        await index_folders(ls, added, trust_saved=True)
        reapply_buffers(ls)  # open buffers win over what the new folders read from disk
        diagnostics.refresh_all(ls)
        codelens.refresh(ls)

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def configuration(ls: SkillsLanguageServer, params: types.DidChangeConfigurationParams) -> None:
        ls.state.settings.update(_settings(params.settings))
        await fetch_configuration(ls)
        await index_folders(ls, [f.root for f in list(ls.state.folders.values())])
        reapply_buffers(ls)  # re-indexing read the disk
        diagnostics.refresh_all(ls)
        codelens.refresh(ls)
