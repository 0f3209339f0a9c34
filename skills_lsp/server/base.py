"""The server object the feature modules share: pygls' LanguageServer plus our state, a snapshot
of each open document, the position codec and debounce timers. It imports no feature module, so
the features (and `app`, which registers them) sit above it."""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import math
import sys
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO
from urllib.parse import unquote

from pygls import IS_WASM
from pygls.io_ import StdoutWriter, run_async
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from skills_lsp._version import __version__
from skills_lsp.core.model import Finding
from skills_lsp.core.parse.frontmatter import Document, parse_text, split_lines
from skills_lsp.server import cold_build, generated_code
from skills_lsp.server.folder import FileRole, Folder
from skills_lsp.server.positions import Codec
from skills_lsp.server.protocol import SkillsProtocol
from skills_lsp.server.state import State
from skills_lsp.server.stdio import ChunkedStdinReader

log = logging.getLogger("skills_lsp.server")


@dataclass
class Snapshot:
    """One version of one document, with what every handler starts from. The text is parsed at
    most once per version; findings are computed once per version and state generation (they
    depend on the rest of the folder: other skills, the manifest, the test queries)."""

    uri: str
    version: int | None
    path: Path
    folder: Folder
    role: FileRole
    text: str
    lines: list[str]
    _doc: Document | None = None
    _findings: tuple[int, list[Finding]] | None = field(default=None, repr=False)

    @property
    def doc(self) -> Document:
        """The buffer parsed (a skill file's frontmatter and body)."""
        if self._doc is None:
            self._doc = parse_text(self.text)
        return self._doc

    def findings(self, state: State) -> list[Finding]:
        if self._findings is None or self._findings[0] != state.generation:
            self._findings = (state.generation, state.findings(self.path, self.text, self._skill_doc()))
        return self._findings[1]

    def quick_findings(self, state: State) -> list[Finding]:
        """`findings`, or when they are not made yet, the quick ones (State.findings(quick=True))."""
        if self._findings is not None and self._findings[0] == state.generation:
            return self._findings[1]
        return state.findings(self.path, self.text, self._skill_doc(), quick=True)

    def _skill_doc(self) -> Document | None:
        """The parse State.findings is given: a skill file's (others parse their own way)."""
        return self.doc if self.role is FileRole.SKILL else None


class SkillsLanguageServer(LanguageServer):
    """pygls' server plus our state; handlers are registered by the feature modules."""

    def __init__(self) -> None:
        super().__init__("skills-lsp", __version__, protocol_cls=SkillsProtocol)
        self.state = State()
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._tasks: set[asyncio.Task[object]] = set()  # deferred actions still running
        self._snapshots: dict[str, Snapshot] = {}
        self._changed_at: dict[str, float] = {}  # time.monotonic() of each document's last didChange
        # Set (and replaced by a fresh one) each time a folder's load ends: what requests about a
        # document opened meanwhile wait on (ready_snapshot).
        self._load_ended = asyncio.Event()

    def start_io(self, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
        """pygls' stdio server, reading stdin a chunk at a time (stdio.py) instead of a line at a
        time through its thread pool; the rest as pygls' `_start_io_async` does it."""
        if IS_WASM:
            super().start_io(stdin, stdout)
            return
        self._stop_event = stop_event = threading.Event()
        reader = ChunkedStdinReader(stdin or sys.stdin.buffer, self.thread_pool)
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))

        async def serve() -> None:
            asyncio.get_running_loop().call_later(generated_code.SAVE_AFTER, generated_code.save_kept)
            try:
                await run_async(
                    stop_event=stop_event,
                    reader=reader,
                    protocol=self.protocol,
                    logger=logging.getLogger("pygls.server"),
                    error_handler=self.report_server_error,
                )
            finally:
                # Here, not after asyncio.run: that waits for the loading threads first, and a
                # load waiting for its child would go on (and index the folder in the server).
                cold_build.stop_all()
                try:
                    self.state.save_pending()
                except Exception:  # a cache that cannot be written: nothing kept, as before
                    log.exception("saving what the server keeps between runs failed")

        try:
            asyncio.run(serve())
        except BrokenPipeError:
            log.error("the connection to the client is lost; shutting down")
        except (KeyboardInterrupt, SystemExit):
            pass
        finally:
            cold_build.stop_all()  # a folder's index build in a child must not outlive the server
            self.shutdown()  # type: ignore[no-untyped-call]

    def loading(self, path: Path) -> bool:
        """Whether `path` is in a folder a worker thread is loading and the server does not know
        yet: its document is served once the load ends (sync.index_folders)."""
        return self.state.folder_for(path) is None and any(
            path.is_relative_to(r) for r in self.state.indexing
        )

    def indexing_done(self, roots: Iterable[Path]) -> None:
        """`roots` are loaded, or failed to load: requests waiting for them look again."""
        self.state.indexing.difference_update(roots)
        ended, self._load_ended = self._load_ended, asyncio.Event()
        ended.set()

    async def ready_snapshot(self, uri: str) -> Snapshot | None:
        """snapshot(uri), once the folder it belongs to has loaded: a request about a document
        opened while its folder loads waits for it instead of answering as if it were unknown."""
        path = self.path_of(uri)
        while path is not None and self.loading(path):
            await self._load_ended.wait()
        return self.snapshot(uri)

    async def ready_skill_snapshot(self, uri: str) -> Snapshot | None:
        """skill_snapshot(uri), once the folder it belongs to has loaded."""
        return _skill_only(await self.ready_snapshot(uri))

    def snapshot(self, uri: str) -> Snapshot | None:
        """The document at `uri` as it is now, in a folder the server knows (None otherwise)."""
        path = self.path_of(uri)
        folder = self.state.folder_for(path) if path is not None else None
        if path is None or folder is None:
            return None
        document = self.workspace.get_text_document(uri)
        known = self._snapshots.get(uri)
        role = folder.role(path)
        if (
            known is not None
            and document.version is not None
            and known.version == document.version
            and known.folder is folder
            and known.role is role
        ):
            return known
        text = document.source
        snapshot = Snapshot(uri, document.version, path, folder, role, text, split_lines(text))
        if document.version is not None:  # an open buffer; a closed file is read afresh each time
            self._snapshots[uri] = snapshot
        return snapshot

    def skill_snapshot(self, uri: str) -> Snapshot | None:
        """The snapshot of a skill or instruction file (None for any other document)."""
        return _skill_only(self.snapshot(uri))

    def open_uris(self) -> list[str]:
        """The open documents' URIs as the client spelled them: pygls keys them unquoted
        (`@` for `%40`), and a client may match publications by the string it sent."""
        return [document.uri for document in list(self.workspace.text_documents.values())]

    def is_open(self, uri: str) -> bool:
        return unquote(uri) in self.workspace.text_documents

    def forget(self, uri: str) -> None:
        """The document closed: its snapshot goes with it."""
        self._snapshots.pop(uri, None)

    def cancel(self, key: str) -> None:
        handle = self._timers.pop(key, None)
        if handle is not None:
            handle.cancel()

    def _finished(self, key: str, task: asyncio.Task[object]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("deferred %s failed", key, exc_info=task.exception())

    def mark_changed(self, uri: str) -> None:
        self._changed_at[uri] = time.monotonic()

    def changed_within(self, uri: str, seconds: float) -> bool:
        """Whether the document changed less than `seconds` ago: the user is still typing in it."""
        return time.monotonic() - self._changed_at.get(uri, -math.inf) < seconds

    def forget_changes(self, uri: str) -> None:
        self._changed_at.pop(uri, None)

    def later(self, key: str, delay: float, action: Callable[[], object]) -> None:
        """Run `action` once, `delay` seconds after the last call with this key (a burst of edits
        costs one run); a coroutine it returns runs as a task. Outside the event loop (unit use)
        it runs at once."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            outcome = action()
            if inspect.iscoroutine(outcome):
                asyncio.run(outcome)
            return
        handle = self._timers.pop(key, None)
        if handle is not None:
            handle.cancel()

        def run() -> None:
            self._timers.pop(key, None)
            try:
                outcome = action()
            except Exception:  # one failing action must not stop the others
                log.exception("deferred %s failed", key)
                return
            if inspect.iscoroutine(outcome):  # an action that steps aside for the event loop
                task = loop.create_task(outcome)
                self._tasks.add(task)
                task.add_done_callback(lambda done: self._finished(key, done))

        self._timers[key] = loop.call_later(delay, run)

    @property
    def codec(self) -> Codec:
        return Codec(self.workspace.position_encoding)

    def path_of(self, uri: str) -> Path | None:
        path = to_fs_path(uri)
        return Path(path) if path else None

    def capability(self, dotted: str, default: Any = None) -> Any:
        value: Any = self.client_capabilities
        for part in dotted.split("."):
            value = getattr(value, part, None)
            if value is None:
                return default
        return value

    def report_server_error(self, error: Exception, source: Any) -> None:
        # A failing handler answers its request with an error (pygls does that); log, don't pop up.
        # A body that is not JSON is reported here too, with no request to answer: JSON-RPC wants
        # -32700 with a null id (server/protocol.py).
        if isinstance(error, (json.JSONDecodeError, UnicodeDecodeError)) and isinstance(
            self.protocol, SkillsProtocol
        ):
            self.protocol.send_parse_error(error)
            log.warning("a message that is not JSON: %s", error)
            return
        log.exception("handler failed: %s", error)


def _skill_only(snapshot: Snapshot | None) -> Snapshot | None:
    """`snapshot` when it is of a skill or instruction file, else None."""
    return snapshot if snapshot is not None and snapshot.role is FileRole.SKILL else None
