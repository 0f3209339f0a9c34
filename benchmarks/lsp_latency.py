#!/usr/bin/env python3
"""Time the real ``skills-lsp`` language server over stdio, the way an editor feels it.

Usage::

    python benchmarks/lsp_latency.py [--skills 20000] [--seed 1] [--workspace DIR] [--keep]
        [--edits 100] [--completions 100] [--lens-rounds 20] [--timeout 60] [--index-timeout 600]
        [--no-pull] [--server-cmd "python -m skills_lsp serve --stdio"] [--scorer S] [--format text|json]

Steps:

1. Find or make the workspace, as ``bench_check.py`` does: ``--workspace DIR`` uses DIR as it is;
   otherwise ``benchmarks/.workspace/<skills>-<seed>`` is reused when it exists, else generated there
   (and deleted at the end unless ``--keep``). Every file is read once, untimed, to warm the OS page cache.
2. Before any server starts, write two files at the workspace root (removed again at the end):
   ``skill-queries.yaml`` with 100 routing cases (each query is the first sentence of a skill's
   description, expecting that skill) and, when the workspace has none, ``skill-tools.yaml`` so that
   ``allowed-tools`` completion has tools to offer. A test-query file that is already there is left alone:
   the cases go to ``skill-queries.lsp-bench.yaml`` instead, named through ``initializationOptions``.
3. Session 1 ("push"), a client that advertises ``window.workDoneProgress`` and no pull diagnostics:
   * initial indexing: from sending ``initialize`` to the ``$/progress`` report of kind ``end``;
   * ``didChange`` -> ``textDocument/publishDiagnostics`` for that URI and version, over ``--edits``
     one-character edits of the description of one open SKILL.md (one edit at a time). The server waits
     0.1 s before publishing, so the figure is given raw and minus that debounce;
   * completion, ``--completions`` requests after ``allowed-tools: `` and as many at a key position
     (an empty frontmatter line);
   * code lens of the test-query file: ``textDocument/codeLens`` and a ``codeLens/resolve`` for every lens
     (sent together, as editors resolve the visible ones), timed from the request to the last answer.
     First right after opening the file (the first run of the test queries; a completion request sent
     behind it shows whether the server answers anything meanwhile), then ``--lens-rounds`` times with
     nothing changed, then ``--lens-rounds`` times right after a one-character edit of the skill (so
     every test query is run again): the last is the figure held against the target;
   * peak RSS: ``VmHWM`` of ``/proc/<server pid>/status`` at the end of the session.
4. Session 2 ("pull"), a client that advertises pull diagnostics: indexing again, then ``didChange``
   followed at once by ``textDocument/diagnostic``, timed from the ``didChange`` to the answer.
5. Report the figures and PASS/FAIL against the targets (diagnostics p95 < 30 ms, completion p95
   < 20 ms, code lens p95 < 150 ms, peak RSS < 500 MB), and what the server wrote on stderr or sent as
   error/warning messages.

Percentiles are nearest-rank. Each figure also gives the CPU time per operation of the server (from
``/proc/<pid>/stat``, whole phase divided by operations, debounced publications included) and of this
client, which runs pygls in the same process and is part of every latency measured. Every wait is
bounded (``--timeout`` per request, ``--index-timeout`` for indexing); a server that is stuck is killed.
SIGTERM and Ctrl-C stop the servers and remove the files written.

Exit status: 0 whatever the figures; 1 if the server cannot be started, dies, times out or answers a
request with an error; 2 on bad arguments; 130 when interrupted.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import shlex
import shutil
import signal
import statistics
import sys
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import generate_workspace  # benchmarks/ is on sys.path: these run as scripts
from lsprotocol import types
from pygls.lsp.client import LanguageClient
from pygls.uris import from_fs_path

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
DEFAULT_WORKSPACES = BENCH_DIR / ".workspace"
QUERY_FILE = "skill-queries.yaml"
QUERY_FILE_FALLBACK = "skill-queries.lsp-bench.yaml"
TOOL_MANIFEST = "skill-tools.yaml"
HEADER = "# Written by benchmarks/lsp_latency.py"

DEBOUNCE_S = 0.1  # skills_lsp/server/diagnostics.py DEBOUNCE_SECONDS
QUERY_CASES = 100
MAX_EDITED_CANDIDATES = 3000  # files read at most while looking for the skill to edit
WARMUP = 5
TARGET_DIAGNOSTICS_MS = 30.0
TARGET_COMPLETION_MS = 20.0
TARGET_CODE_LENS_MS = 150.0
TARGET_RSS_BYTES = 500 * 1000 * 1000  # 500 MB
TYPED = "quarterly reports and audit logs "  # typed into the description, one character per edit

# Tools the generator writes into `allowed-tools` plus a few host tools, for the manifest this script writes.
EXTRA_TOOLS = {
    "Read": "Read a file from the workspace.",
    "Write": "Create or overwrite a file in the workspace.",
    "Edit": "Replace text in a file.",
    "Grep": "Search file contents with a regular expression.",
    "Glob": "List files matching a glob pattern.",
    "Bash": "Run a shell command; `Bash(git:*)` limits it to one program.",
    "WebFetch": "Fetch a URL and return its content.",
    "WebSearch": "Search the web.",
    "TodoWrite": "Keep a task list.",
    "Task": "Start a sub-agent.",
    "code_search": "Search the indexed codebase for symbols, strings and config keys.",
    "read_file": "Return the text of one file, optionally a line range.",
    "list_directory": "List the entries of a directory.",
    "ticket_search": "Search the ticket tracker by text, label or reporter.",
    "ticket_update": "Set labels, priority, assignee or a comment on a ticket.",
    "user_lookup": "Find a person in the company directory.",
    "geocode": "Turn a place name into coordinates.",
    "weather_api": "Current conditions and forecast for coordinates.",
}

T = TypeVar("T")


class BenchError(Exception):
    """A problem of the benchmark itself or its inputs (exit status 1)."""


class ServerFailed(Exception):
    """The server died, timed out or answered with an error."""


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# ----------------------------------------------------------------------------------------------------
# Workspace and fixtures
# ----------------------------------------------------------------------------------------------------


def prepare_workspace(args: argparse.Namespace) -> tuple[Path, bool, dict[str, Any] | None]:
    """(workspace, generated by this run, generator manifest or None)."""
    try:
        workspace, created, manifest, _seconds = generate_workspace.prepare_workspace(
            args.workspace, DEFAULT_WORKSPACES, args.skills, args.seed, log
        )
    except generate_workspace.WorkspaceError as exc:
        raise BenchError(str(exc)) from None
    return workspace, created, manifest


def prime_page_cache(workspace: Path) -> tuple[int, int]:
    """Read every file once, so that indexing does not wait for the disk. Returns (files, bytes)."""
    files = size = 0
    for dirpath, _dirnames, filenames in os.walk(workspace):
        for name in filenames:
            with contextlib.suppress(OSError), open(os.path.join(dirpath, name), "rb") as fh:
                size += len(fh.read())
                files += 1
    return files, size


def frontmatter(text: str) -> dict[str, Any] | None:
    """The frontmatter mapping of a skill file, or None."""
    import yaml

    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        return None
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        return None
    try:
        data = yaml.safe_load("\n".join(lines[1:end]))
    except yaml.YAMLError:
        return None
    return data if isinstance(data, dict) else None


@dataclass
class Skill:
    path: Path
    name: str
    description: str
    text: str
    body_lines: int | None = None


def candidate_paths(workspace: Path, manifest: dict[str, Any] | None) -> tuple[list[Path], Counter[str]]:
    """Skill files that are valid per the generator's manifest (or every SKILL.md without a manifest),
    and how often each name occurs in the workspace."""
    if manifest is not None and isinstance(manifest.get("files"), list):
        files = manifest["files"]
        names = Counter(str(f.get("name")) for f in files)
        paths = [
            workspace / f["path"]
            for f in files
            if f.get("mistake") is None and f.get("layout") in ("agentskills", "adk") and not f.get("crlf")
        ]
        return paths, names
    paths = []
    for dirpath, dirnames, filenames in os.walk(workspace):
        dirnames.sort()
        if "SKILL.md" in filenames:
            paths.append(Path(dirpath, "SKILL.md"))
    return paths, Counter()


def read_skill(path: Path) -> Skill | None:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    if "\r" in text or text.startswith("\ufeff"):
        return None
    data = frontmatter(text)
    if data is None:
        return None
    name, description = data.get("name"), data.get("description")
    if not isinstance(name, str) or not isinstance(description, str) or not description.strip():
        return None
    return Skill(path, name, " ".join(description.split()), text)


def query_from(description: str) -> str:
    sentence = description.split(". ")[0].rstrip(".")
    return " ".join(sentence.split()[:16])


def pick_query_skills(paths: list[Path], names: Counter[str], count: int) -> list[Skill]:
    """`count` skills spread evenly over the workspace, with names that occur once."""
    chosen: list[Skill] = []
    if not paths:
        return chosen
    step = max(1, len(paths) // count)
    seen: set[str] = set()
    for offset in range(step):
        for i in range(offset, len(paths), step):
            skill = read_skill(paths[i])
            if skill is None or skill.name in seen or names.get(skill.name, 1) > 1:
                continue
            seen.add(skill.name)
            chosen.append(skill)
            if len(chosen) == count:
                return chosen
    return chosen


def pick_edited_skill(workspace: Path, paths: list[Path], manifest: dict[str, Any] | None) -> Skill:
    """A valid agentskills SKILL.md of about median length, preferably with `allowed-tools`."""
    lengths: dict[Path, int] = {}
    if manifest is not None:
        for f in manifest.get("files", []):
            if isinstance(f.get("body_lines"), int):
                lengths[workspace / f["path"]] = f["body_lines"]
    fallback: Skill | None = None
    for path in paths[:MAX_EDITED_CANDIDATES]:
        size = lengths.get(path)
        if path.name != "SKILL.md" or (size is not None and not 120 <= size <= 260):
            continue
        skill = read_skill(path)
        if skill is None:
            continue
        skill.body_lines = size
        if any(_tools_line(line) for line in skill.text.split("\n")[:40]):
            return skill
        if fallback is None:
            fallback = skill
    if fallback is None:
        fallback = next((s for s in map(read_skill, paths) if s is not None), None)
    if fallback is None:
        raise BenchError("no valid skill with frontmatter found in the workspace")
    return fallback


def _tools_line(line: str) -> bool:
    """`allowed-tools: X ...` (a scalar value on the key's line)."""
    return line.startswith("allowed-tools: ") and bool(line.split(":", 1)[1].strip())


def query_file_text(skills: list[Skill]) -> str:
    out = [
        f"{HEADER} (and removed by it): each query is the first sentence of a skill's",
        "# description, expecting that skill.",
        "cases:",
    ]
    for skill in skills:
        out.append(f"  - query: {json.dumps(query_from(skill.description))}")
        out.append(f"    expect: {json.dumps(skill.name)}")
    return "\n".join(out) + "\n"


def tool_manifest_text(gen_tools: Sequence[str]) -> str:
    tools = dict(EXTRA_TOOLS)
    for name in gen_tools:
        tools.setdefault(name, f"The {name} tool.")
    out = [f"{HEADER} (and removed by it).", "tools:"]
    for name, description in tools.items():
        out += [f"  - name: {name}", f"    description: {json.dumps(description)}"]
    return "\n".join(out) + "\n"


@dataclass
class Fixtures:
    edited: Skill
    query_path: Path
    query_cases: int
    init_options: dict[str, Any]
    written: list[Path] = field(default_factory=list)

    def remove(self) -> None:
        for path in self.written:
            with contextlib.suppress(OSError):
                path.unlink()
        self.written.clear()


def _ours(path: Path) -> bool:
    """A file this script wrote (left behind by a run that was killed)."""
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.readline().startswith(HEADER)
    except (OSError, UnicodeDecodeError):
        return False


def write_fixtures(workspace: Path, manifest: dict[str, Any] | None) -> Fixtures:
    paths, names = candidate_paths(workspace, manifest)
    edited = pick_edited_skill(workspace, paths, manifest)
    cases = pick_query_skills(paths, names, QUERY_CASES)
    if not cases:
        raise BenchError("no skills to build test queries from")
    init_options: dict[str, Any] = {}
    query_path = workspace / QUERY_FILE
    if query_path.exists() and not _ours(query_path):
        query_path = workspace / QUERY_FILE_FALLBACK
        init_options["queryFile"] = QUERY_FILE_FALLBACK
    fixtures = Fixtures(edited, query_path, len(cases), init_options)
    query_path.write_text(query_file_text(cases), encoding="utf-8")
    fixtures.written.append(query_path)
    tools_path = workspace / TOOL_MANIFEST
    others = [workspace / f"skill-tools.{ext}" for ext in ("yaml", "yml", "json")]
    if not any(p.exists() and not _ours(p) for p in others):
        gen_tools: Sequence[str] = ()
        with contextlib.suppress(BenchError, AttributeError, OSError):
            gen_tools = generate_workspace.TOOLS
        tools_path.write_text(tool_manifest_text(gen_tools), encoding="utf-8")
        fixtures.written.append(tools_path)
    return fixtures


# ----------------------------------------------------------------------------------------------------
# The client
# ----------------------------------------------------------------------------------------------------


def utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


@dataclass
class OpenDoc:
    uri: str
    lines: list[str]
    version: int = 1

    @property
    def text(self) -> str:
        return "\n".join(self.lines)

    def position(self, line: int, column: int) -> types.Position:
        return types.Position(line, utf16_len(self.lines[line][:column]))

    def insert(self, line: int, column: int, text: str) -> types.TextDocumentContentChangePartial:
        """Insert `text` (code points; "\\n" allowed) at (line, column); return the change."""
        at = self.position(line, column)
        head, tail = self.lines[line][:column], self.lines[line][column:]
        new = (head + text + tail).split("\n")
        self.lines[line : line + 1] = new
        self.version += 1
        return types.TextDocumentContentChangePartial(range=types.Range(at, at), text=text)


@dataclass
class Publish:
    uri: str
    version: int | None
    count: int
    at: float
    seq: int


class Session:
    """One server process and one client, with everything the server sends recorded."""

    def __init__(
        self,
        label: str,
        argv: list[str],
        root: Path,
        *,
        pull: bool,
        init_options: dict[str, Any],
        timeout: float,
    ) -> None:
        self.label = label
        self.argv = argv
        self.root = root
        self.pull = pull
        self.init_options = init_options
        self.timeout = timeout
        self.client = LanguageClient("skills-lsp-latency-bench", "1")
        self.pid: int | None = None
        self.killed = False  # by this script, after it stopped answering
        self.process: asyncio.subprocess.Process | None = None
        self.exited: asyncio.Task[int] | None = None
        self.stderr_lines: list[str] = []
        self._stderr_task: asyncio.Task[None] | None = None
        self.messages: list[dict[str, Any]] = []
        self.problems: list[str] = []
        self.progress: list[dict[str, Any]] = []
        self.indexing_end: asyncio.Future[float] | None = None
        self.started = 0.0  # when `initialize` was sent (perf_counter)
        self.publishes: list[Publish] = []
        self._waiters: list[tuple[Callable[[Publish], bool], asyncio.Future[Publish]]] = []
        self.refreshes: Counter[str] = Counter()
        self.sync_kind = types.TextDocumentSyncKind.Incremental
        self._register()

    # --- what the server sends ------------------------------------------------------------------

    def _register(self) -> None:
        client = self.client

        @client.feature(types.WINDOW_WORK_DONE_PROGRESS_CREATE)
        def create_progress(params: types.WorkDoneProgressCreateParams) -> None:
            self.progress.append({"at": time.perf_counter(), "token": str(params.token), "kind": "create"})

        @client.feature(types.PROGRESS)
        def on_progress(params: types.ProgressParams) -> None:
            value = params.value
            if not isinstance(value, dict):
                value = client.protocol._converter.unstructure(value)
            now = time.perf_counter()
            entry = {"at": now, "token": str(params.token), **(value if isinstance(value, dict) else {})}
            self.progress.append(entry)
            if entry.get("kind") == "end" and self.indexing_end is not None and not self.indexing_end.done():
                self.indexing_end.set_result(now)

        @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def on_publish(params: types.PublishDiagnosticsParams) -> None:
            publish = Publish(
                params.uri, params.version, len(params.diagnostics), time.perf_counter(), len(self.publishes)
            )
            self.publishes.append(publish)
            for predicate, future in list(self._waiters):
                if not future.done() and predicate(publish):
                    future.set_result(publish)

        @client.feature(types.WINDOW_LOG_MESSAGE)
        def on_log(params: types.LogMessageParams) -> None:
            self.messages.append(
                {"method": "window/logMessage", "type": int(params.type), "text": params.message}
            )

        @client.feature(types.WINDOW_SHOW_MESSAGE)
        def on_show(params: types.ShowMessageParams) -> None:
            self.messages.append(
                {"method": "window/showMessage", "type": int(params.type), "text": params.message}
            )

        def refresh(method: str) -> None:
            @client.feature(method)
            def on_refresh(params: Any) -> None:
                self.refreshes[method] += 1

        for method in (
            types.WORKSPACE_CODE_LENS_REFRESH,
            types.WORKSPACE_DIAGNOSTIC_REFRESH,
            types.WORKSPACE_INLAY_HINT_REFRESH,
            types.WORKSPACE_SEMANTIC_TOKENS_REFRESH,
        ):
            refresh(method)

        @client.feature(types.CLIENT_REGISTER_CAPABILITY)
        def on_register(params: types.RegistrationParams) -> None:
            self.refreshes[types.CLIENT_REGISTER_CAPABILITY] += 1

        @client.feature(types.WORKSPACE_CONFIGURATION)
        def on_configuration(params: types.ConfigurationParams) -> list[Any]:
            return [None for _ in params.items]

        session = self

        def report_server_error(error: Exception, source: Any) -> None:
            session.problems.append(
                f"client-side protocol error ({getattr(source, '__name__', source)}): {error}"
            )

        client.report_server_error = report_server_error  # type: ignore[method-assign]

    # --- waiting --------------------------------------------------------------------------------

    async def bounded(self, awaitable: Awaitable[T], what: str, timeout: float | None = None) -> T:
        """Await `awaitable`, failing if the server exits first or it takes longer than the timeout."""
        task: asyncio.Future[T] = asyncio.ensure_future(awaitable)
        limit = self.timeout if timeout is None else timeout
        waiting: set[asyncio.Future[Any]] = {task}
        if self.exited is not None:
            waiting.add(self.exited)
        done, _ = await asyncio.wait(waiting, timeout=limit, return_when=asyncio.FIRST_COMPLETED)
        if task in done:
            try:
                return task.result()
            except Exception as exc:
                raise ServerFailed(f"{what}: {type(exc).__name__}: {exc}") from exc
        task.cancel()
        if self.exited is not None and self.exited.done():
            raise ServerFailed(f"{what}: the server exited with status {self.exited.result()}")
        raise ServerFailed(f"{what}: no answer within {limit:g} s")

    def next_publish(self, predicate: Callable[[Publish], bool]) -> asyncio.Future[Publish]:
        future: asyncio.Future[Publish] = asyncio.get_running_loop().create_future()
        self._waiters.append((predicate, future))
        future.add_done_callback(lambda f: self._waiters.remove((predicate, future)))
        return future

    def published_after(self, uri: str, seq: int) -> asyncio.Future[Publish]:
        """The next publication for `uri`, whatever its version, from number `seq` on."""
        return self.next_publish(lambda p: p.uri == uri and p.seq >= seq)

    def published(self, uri: str, version: int) -> asyncio.Future[Publish]:
        return self.next_publish(lambda p: p.uri == uri and p.version == version)

    # --- lifecycle ------------------------------------------------------------------------------

    def capabilities(self) -> types.ClientCapabilities:
        text_document = types.TextDocumentClientCapabilities(
            synchronization=types.TextDocumentSyncClientCapabilities(did_save=True),
            completion=types.CompletionClientCapabilities(context_support=True),
            code_lens=types.CodeLensClientCapabilities(),
            publish_diagnostics=types.PublishDiagnosticsClientCapabilities(
                version_support=True, code_description_support=True
            ),
            diagnostic=types.DiagnosticClientCapabilities(related_document_support=True)
            if self.pull
            else None,
        )
        workspace = types.WorkspaceClientCapabilities(
            workspace_folders=True,
            code_lens=types.CodeLensWorkspaceClientCapabilities(refresh_support=True),
            diagnostics=types.DiagnosticWorkspaceClientCapabilities(refresh_support=True)
            if self.pull
            else None,
        )
        return types.ClientCapabilities(
            workspace=workspace,
            text_document=text_document,
            window=types.WindowClientCapabilities(work_done_progress=True),
            general=types.GeneralClientCapabilities(position_encodings=[types.PositionEncodingKind.Utf16]),
        )

    async def _drain_stderr(self, stream: asyncio.StreamReader) -> None:
        while True:
            line = await stream.readline()
            if not line:
                return
            self.stderr_lines.append(line.decode("utf-8", "replace").rstrip("\n"))

    async def start(
        self, index_timeout: float, on_initialized: Callable[[], None] | None = None
    ) -> dict[str, Any]:
        """Start the server, initialize, and wait for the end of initial indexing. `on_initialized`
        runs right after `initialized` is sent (to open documents while the server indexes)."""
        try:
            await self.client.start_io(*self.argv, cwd=str(REPO_ROOT))
        except OSError as exc:
            raise ServerFailed(f"cannot start {shlex.join(self.argv)}: {exc}") from exc
        process = self.client._server
        if process is None:
            raise ServerFailed("the client did not start a server process")
        self.process = process
        self.pid = process.pid
        self.exited = asyncio.ensure_future(process.wait())
        if process.stderr is not None:
            self._stderr_task = asyncio.ensure_future(self._drain_stderr(process.stderr))
        self.indexing_end = asyncio.get_running_loop().create_future()
        uri = from_fs_path(str(self.root)) or self.root.as_uri()
        params = types.InitializeParams(
            capabilities=self.capabilities(),
            process_id=os.getpid(),
            client_info=types.ClientInfo(name="skills-lsp-latency-bench", version="1"),
            root_uri=uri,
            workspace_folders=[types.WorkspaceFolder(uri=uri, name=self.root.name)],
            initialization_options=self.init_options or None,
        )
        started = self.started = time.perf_counter()
        result = await self.bounded(self.client.initialize_async(params), "initialize")
        answered = time.perf_counter()
        sync = result.capabilities.text_document_sync
        kind = sync.change if isinstance(sync, types.TextDocumentSyncOptions) else sync
        if kind is not None:
            self.sync_kind = types.TextDocumentSyncKind(kind)
        self.client.initialized(types.InitializedParams())
        if on_initialized is not None:
            on_initialized()
        ended = await self.bounded(self.indexing_end, "initial indexing ($/progress end)", index_timeout)
        end_message = next(
            (p.get("message") for p in reversed(self.progress) if p.get("kind") == "end"), None
        )
        return {
            "initialize_response_s": answered - started,
            "indexing_s": ended - started,
            "end_message": end_message,
            "rss_after_indexing_bytes": proc_status(self.pid).get("VmRSS"),
        }

    async def stop(self) -> int | None:
        """Shut down politely; kill the server if it does not go. Returns its exit status."""
        process = self.process
        if process is None:
            return None
        if process.returncode is None:
            try:
                await asyncio.wait_for(self.client.shutdown_async(None), 10)
                self.client.exit(None)
                await asyncio.wait_for(process.wait(), 10)
            except Exception as exc:
                self.problems.append(
                    f"shutdown/exit did not stop the server ({type(exc).__name__}); killed it"
                )
                self.killed = True
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(process.wait(), 10)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.client.stop(), 10)
        if self._stderr_task is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._stderr_task, 5)
        return process.returncode

    async def force_stop(self) -> None:
        """Kill the server if it still runs (after a failure or an interruption) and reap it."""
        process = self.process
        if process is None:
            return
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(process.wait(), 10)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.client.stop(), 5)

    # --- documents ------------------------------------------------------------------------------

    def open(self, path: Path, text: str) -> OpenDoc:
        uri = from_fs_path(str(path)) or path.as_uri()
        doc = OpenDoc(uri, text.split("\n"))
        item = types.TextDocumentItem(uri=uri, language_id=_language(path), version=doc.version, text=text)
        self.client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=item))
        return doc

    def change(self, doc: OpenDoc, change: types.TextDocumentContentChangePartial) -> None:
        event: types.TextDocumentContentChangeEvent = change
        if self.sync_kind == types.TextDocumentSyncKind.Full:
            event = types.TextDocumentContentChangeWholeDocument(text=doc.text)
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=doc.uri, version=doc.version),
                content_changes=[event],
            )
        )


def _language(path: Path) -> str:
    return "yaml" if path.suffix in (".yaml", ".yml") else "markdown"


def proc_status(pid: int | None) -> dict[str, int]:
    """VmHWM, VmRSS (bytes) of a process, from /proc (empty where there is no /proc)."""
    out: dict[str, int] = {}
    if pid is None:
        return out
    try:
        text = Path(f"/proc/{pid}/status").read_text(encoding="ascii")
    except OSError:
        return out
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key in ("VmHWM", "VmRSS", "VmPeak"):
            parts = value.split()
            if parts and parts[0].isdigit():
                out[key] = int(parts[0]) * 1024
    return out


def proc_cpu_s(pid: int | None, children: bool = False) -> float | None:
    """User + system CPU seconds of a process so far, or with `children` of the children it has
    waited for, from /proc (None where there is no /proc)."""
    if pid is None:
        return None
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii")
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    user = 13 if children else 11  # utime, stime; cutime, cstime (proc(5), after the name)
    return (int(fields[user]) + int(fields[user + 1])) / os.sysconf("SC_CLK_TCK")


class CpuMeter:
    """CPU time the server and this client spend over a phase, per operation (10 ms ticks for the
    server, so only the mean over many operations means anything)."""

    def __init__(self, pid: int | None) -> None:
        self.pid = pid
        self.server = proc_cpu_s(pid)
        self.client = time.process_time()

    def per_operation(self, count: int) -> dict[str, float | None]:
        server = proc_cpu_s(self.pid)
        spent = server - self.server if server is not None and self.server is not None else None
        return {
            "server_cpu_ms_mean": None if spent is None else spent * 1000 / count,
            "client_cpu_ms_mean": (time.process_time() - self.client) * 1000 / count,
        }


# ----------------------------------------------------------------------------------------------------
# Statistics
# ----------------------------------------------------------------------------------------------------


def percentile(values: Sequence[float], pct: float) -> float | None:
    """Nearest-rank percentile."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(pct / 100 * len(ordered)))
    return ordered[rank - 1]


def summary_ms(samples_s: Sequence[float], minus_s: float = 0.0) -> dict[str, Any]:
    ms = [(s - minus_s) * 1000 for s in samples_s]
    return {
        "n": len(ms),
        "p50_ms": percentile(ms, 50),
        "p95_ms": percentile(ms, 95),
        "max_ms": max(ms) if ms else None,
        "mean_ms": statistics.fmean(ms) if ms else None,
    }


# ----------------------------------------------------------------------------------------------------
# Locating things in the edited skill
# ----------------------------------------------------------------------------------------------------


def frontmatter_bounds(lines: list[str]) -> tuple[int, int]:
    if not lines or lines[0].strip() != "---":
        raise BenchError("the edited skill has no frontmatter")
    close = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
    if close is None:
        raise BenchError("the edited skill's frontmatter is not closed")
    return 0, close


def description_end(lines: list[str]) -> tuple[int, int]:
    """(line, column) at the end of the first line holding description text."""
    _, close = frontmatter_bounds(lines)
    for i in range(1, close):
        if lines[i].startswith("description:"):
            value = lines[i].split(":", 1)[1].strip()
            line = i + 1 if value in (">", "|", ">-", "|-", ">+", "|+", "") else i
            return line, len(lines[line])
    raise BenchError("the edited skill has no description line")


# ----------------------------------------------------------------------------------------------------
# Phases
# ----------------------------------------------------------------------------------------------------


@dataclass
class Results:
    figures: dict[str, Any] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)


async def push_session(
    args: argparse.Namespace,
    argv: list[str],
    workspace: Path,
    fixtures: Fixtures,
    results: Results,
    sessions: list[Session],
) -> None:
    session = Session(
        "push", argv, workspace, pull=False, init_options=fixtures.init_options, timeout=args.timeout
    )
    sessions.append(session)
    figures = results.figures
    log(f"[push] starting {shlex.join(argv)} in {workspace} ...")
    try:
        figures["indexing"] = await session.start(args.index_timeout)
        indexing = figures["indexing"]
        log(f"[push] indexed in {indexing['indexing_s']:.2f} s ({indexing['end_message']})")
        skill = session.open(fixtures.edited.path, fixtures.edited.text)
        opened = time.perf_counter()
        first = await session.bounded(session.published(skill.uri, 1), "diagnostics after didOpen")
        figures["did_open_diagnostics_ms"] = (first.at - opened) * 1000
        figures["edited_skill"] = {
            "path": str(fixtures.edited.path),
            "lines": len(skill.lines),
            "diagnostics": first.count,
        }

        await phase_push_diagnostics(session, skill, args.edits, figures)
        await phase_completion(session, skill, args.completions, figures)
        await phase_code_lens(session, skill, fixtures, args.lens_rounds, figures)
    except ServerFailed as exc:
        results.failures.append(f"push session: {exc}")
        log(f"[push] FAILED: {exc}")
    finally:
        status = proc_status(session.pid)
        figures["rss"] = {"peak_bytes": status.get("VmHWM"), "current_bytes": status.get("VmRSS")}
        figures["refresh_requests"] = dict(session.refreshes)
    await session.stop()


def type_one(doc: OpenDoc, index: int) -> types.TextDocumentContentChangePartial:
    line, column = description_end(doc.lines)
    return doc.insert(line, column, TYPED[index % len(TYPED)])


async def phase_push_diagnostics(session: Session, doc: OpenDoc, edits: int, figures: dict[str, Any]) -> None:
    log(f"[push] didChange -> publishDiagnostics x {edits} (+{WARMUP} warm-up) ...")
    samples: list[float] = []
    counts: list[int] = []
    meter: CpuMeter | None = None
    for i in range(WARMUP + edits):
        if i == WARMUP:
            meter = CpuMeter(session.pid)
        change = type_one(doc, i)
        waiter = session.published(doc.uri, doc.version)
        sent = time.perf_counter()
        session.change(doc, change)
        publish = await session.bounded(waiter, f"publishDiagnostics for version {doc.version}")
        if i >= WARMUP:
            samples.append(publish.at - sent)
            counts.append(publish.count)
    figures["diagnostics_push"] = {
        "raw": summary_ms(samples),
        "minus_debounce": summary_ms(samples, DEBOUNCE_S),
        "debounce_ms": DEBOUNCE_S * 1000,
        "diagnostics_per_publish": statistics.median(counts) if counts else None,
        **(meter.per_operation(edits) if meter is not None else {}),
    }


async def phase_completion(session: Session, doc: OpenDoc, requests: int, figures: dict[str, Any]) -> None:
    # Set up: a trailing space after `allowed-tools: ...` (or the line itself) and an empty key line.
    _, close = frontmatter_bounds(doc.lines)
    tools_line = next((i for i in range(1, close) if _tools_line(doc.lines[i])), None)
    if tools_line is None:
        change = doc.insert(close, 0, "allowed-tools: Read \n\n")
        tools_line, key_line = close, close + 1
    else:
        change = doc.insert(close, 0, "\n")
        key_line = close
    waiter = session.published(doc.uri, doc.version)
    session.change(doc, change)
    await session.bounded(waiter, "publishDiagnostics after the completion setup edit")
    if not doc.lines[tools_line].endswith(" "):
        change = doc.insert(tools_line, len(doc.lines[tools_line]), " ")
        waiter = session.published(doc.uri, doc.version)
        session.change(doc, change)
        await session.bounded(waiter, "publishDiagnostics after the completion setup edit")
    positions = {
        "allowed_tools": doc.position(tools_line, len(doc.lines[tools_line])),
        "key": doc.position(key_line, 0),
    }
    log(f"[push] completion x {requests} at each of {', '.join(positions)} (+{WARMUP} warm-up) ...")
    samples: dict[str, list[float]] = {name: [] for name in positions}
    items: dict[str, int] = {}
    labels: dict[str, list[str]] = {}
    meter: CpuMeter | None = None
    for i in range(WARMUP + requests):
        if i == WARMUP:
            meter = CpuMeter(session.pid)
        for name, position in positions.items():
            params = types.CompletionParams(
                text_document=types.TextDocumentIdentifier(uri=doc.uri),
                position=position,
                context=types.CompletionContext(trigger_kind=types.CompletionTriggerKind.Invoked),
            )
            sent = time.perf_counter()
            answer = await session.bounded(
                session.client.text_document_completion_async(params), f"completion ({name})"
            )
            elapsed = time.perf_counter() - sent
            if i >= WARMUP:
                samples[name].append(elapsed)
            if name not in items:
                found = answer.items if isinstance(answer, types.CompletionList) else (answer or [])
                items[name] = len(found)
                labels[name] = [item.label for item in found[:8]]
    figures["completion"] = {
        name: {**summary_ms(samples[name]), "items": items.get(name), "first_labels": labels.get(name)}
        for name in positions
    }
    figures["completion"]["all"] = {
        **summary_ms([s for name in positions for s in samples[name]]),
        **(meter.per_operation(requests * len(positions)) if meter is not None else {}),
    }


async def lens_round(session: Session, uri: str, what: str) -> tuple[int, list[str], asyncio.Future[Any]]:
    """Request the code lenses of `uri` and send a resolve for each one without a command.
    Returns (lenses, titles already there, the future of all the resolves)."""
    identifier = types.TextDocumentIdentifier(uri=uri)
    lenses = await session.bounded(
        session.client.text_document_code_lens_async(types.CodeLensParams(text_document=identifier)),
        f"textDocument/codeLens ({what})",
    )
    lenses = list(lenses or [])
    titles = [lens.command.title for lens in lenses if lens.command is not None]
    pending = [lens for lens in lenses if lens.command is None]
    resolves = asyncio.gather(*(session.client.code_lens_resolve_async(lens) for lens in pending))
    return len(lenses), titles, resolves


async def resolved_titles(session: Session, resolves: asyncio.Future[Any], what: str) -> list[str]:
    resolved = await session.bounded(resolves, f"codeLens/resolve ({what})")
    titles = [lens.command.title for lens in resolved if lens.command is not None]
    if len(titles) != len(resolved):
        raise ServerFailed(f"codeLens/resolve left {len(resolved) - len(titles)} lenses without a command")
    return titles


async def phase_code_lens(
    session: Session, skill: OpenDoc, fixtures: Fixtures, rounds: int, figures: dict[str, Any]
) -> None:
    text = fixtures.query_path.read_text(encoding="utf-8")
    # First lenses, as an editor asks for them right after opening the file: the first run of the test
    # queries. A completion request on the skill is sent behind the resolves, to see whether it waits.
    queries = session.open(fixtures.query_path, text)
    query_publish = session.published(queries.uri, 1)
    log("[push] first code lens of the test-query file ...")
    sent = time.perf_counter()
    count, _, resolves = await lens_round(session, queries.uri, "test-query file, first")
    probe_sent = time.perf_counter()
    probe = await session.bounded(
        session.client.text_document_completion_async(
            types.CompletionParams(
                text_document=types.TextDocumentIdentifier(uri=skill.uri), position=types.Position(1, 0)
            )
        ),
        "completion sent during the first code lens resolve",
    )
    probe_done = time.perf_counter()
    titles = await resolved_titles(session, resolves, "first")
    first_done = time.perf_counter()
    published = await session.bounded(query_publish, "diagnostics of the test-query file")
    figures["code_lens_first"] = {
        "ms": (first_done - sent) * 1000,
        "lenses": count,
        "completion_sent_meanwhile_ms": (probe_done - probe_sent) * 1000,
        "completion_items": len(probe.items if isinstance(probe, types.CompletionList) else (probe or [])),
    }
    figures["query_file_failing_cases"] = published.count
    figures["query_file_publish_after_open_ms"] = (published.at - sent) * 1000
    await asyncio.sleep(DEBOUNCE_S + 0.2)

    log(f"[push] code lens + resolve, nothing changed, x {rounds} ...")
    cached: list[float] = []
    meter = CpuMeter(session.pid)
    for _ in range(rounds):
        sent = time.perf_counter()
        _, _, resolves = await lens_round(session, queries.uri, "test-query file, unchanged")
        await resolved_titles(session, resolves, "unchanged")
        cached.append(time.perf_counter() - sent)

    cached_cpu = meter.per_operation(rounds)
    log(f"[push] edit + code lens + resolve, {fixtures.query_cases} cases x {rounds} rounds (+1 warm-up) ...")
    samples: list[float] = []
    lens_counts: list[int] = []
    passing: int | None = None
    meter = CpuMeter(session.pid)
    for round_ in range(1 + rounds):
        change = type_one(skill, round_)
        skill_published = session.published(skill.uri, skill.version)
        queries_published = session.published_after(queries.uri, len(session.publishes))
        sent = time.perf_counter()
        session.change(skill, change)
        count, _, resolves = await lens_round(session, queries.uri, "test-query file, after an edit")
        titles = await resolved_titles(session, resolves, "after an edit")
        elapsed = time.perf_counter() - sent
        if round_ > 0:
            samples.append(elapsed)
            lens_counts.append(count)
        passing = sum(title.startswith("✓") for title in titles)
        await session.bounded(skill_published, "publishDiagnostics after the code lens edit")
        await session.bounded(queries_published, "publishDiagnostics of the test-query file after an edit")
    figures["code_lens_unchanged"] = {**summary_ms(cached), **cached_cpu}
    figures["code_lens"] = {
        **summary_ms(samples),
        **meter.per_operation(rounds + 1),
        "lenses": max(lens_counts) if lens_counts else None,
        "passing_cases": passing,
    }


async def pull_session(
    args: argparse.Namespace,
    argv: list[str],
    workspace: Path,
    fixtures: Fixtures,
    results: Results,
    sessions: list[Session],
) -> None:
    session = Session(
        "pull", argv, workspace, pull=True, init_options=fixtures.init_options, timeout=args.timeout
    )
    sessions.append(session)
    figures: dict[str, Any] = {}
    results.figures["pull_session"] = figures
    log("[pull] starting a second server, as a pull-diagnostics client ...")
    try:
        figures["indexing"] = await session.start(args.index_timeout)
        log(f"[pull] indexed in {figures['indexing']['indexing_s']:.2f} s")
        doc = session.open(fixtures.edited.path, fixtures.edited.text)

        def request(previous: str | None) -> Awaitable[Any]:
            return session.client.text_document_diagnostic_async(
                types.DocumentDiagnosticParams(
                    text_document=types.TextDocumentIdentifier(uri=doc.uri),
                    identifier="skills-lsp",
                    previous_result_id=previous,
                )
            )

        sent = time.perf_counter()
        report = await session.bounded(request(None), "textDocument/diagnostic after didOpen")
        figures["did_open_diagnostic_ms"] = (time.perf_counter() - sent) * 1000
        previous = getattr(report, "result_id", None)
        log(f"[pull] didChange + textDocument/diagnostic x {args.edits} (+{WARMUP} warm-up) ...")
        samples: list[float] = []
        kinds: Counter[str] = Counter()
        meter: CpuMeter | None = None
        for i in range(WARMUP + args.edits):
            if i == WARMUP:
                meter = CpuMeter(session.pid)
            change = type_one(doc, i)
            sent = time.perf_counter()
            session.change(doc, change)
            report = await session.bounded(request(previous), "textDocument/diagnostic after didChange")
            elapsed = time.perf_counter() - sent
            previous = getattr(report, "result_id", previous)
            if i >= WARMUP:
                samples.append(elapsed)
                kinds[str(getattr(report, "kind", "?"))] += 1
        figures["diagnostics_pull"] = {
            **summary_ms(samples),
            "report_kinds": dict(kinds),
            **(meter.per_operation(args.edits) if meter is not None else {}),
        }
    except ServerFailed as exc:
        results.failures.append(f"pull session: {exc}")
        log(f"[pull] FAILED: {exc}")
    finally:
        status = proc_status(session.pid)
        figures["rss"] = {"peak_bytes": status.get("VmHWM"), "current_bytes": status.get("VmRSS")}
        figures["refresh_requests"] = dict(session.refreshes)
    await session.stop()


# ----------------------------------------------------------------------------------------------------
# Report
# ----------------------------------------------------------------------------------------------------


def server_problems(sessions: list[Session]) -> list[dict[str, Any]]:
    out = []
    for s in sessions:
        serious = [m for m in s.messages if m["type"] <= int(types.MessageType.Warning)]
        out.append(
            {
                "session": s.label,
                "pid": s.pid,
                "exit_status": s.process.returncode if s.process is not None else None,
                "stderr_lines": len(s.stderr_lines),
                "stderr_tail": s.stderr_lines[-40:],
                "error_or_warning_messages": serious[:20],
                "client_side_problems": s.problems,
            }
        )
    return out


def verdicts(figures: dict[str, Any]) -> list[dict[str, Any]]:
    def check(label: str, value: float | None, target: float, unit: str) -> dict[str, Any]:
        return {
            "what": label,
            "value": value,
            "target": target,
            "unit": unit,
            "pass": None if value is None else value < target,
        }

    push = figures.get("diagnostics_push", {})
    pull = figures.get("pull_session", {}).get("diagnostics_pull", {})
    completion = figures.get("completion", {})
    peaks = [
        v
        for v in (
            figures.get("rss", {}).get("peak_bytes"),
            figures.get("pull_session", {}).get("rss", {}).get("peak_bytes"),
        )
        if v is not None
    ]
    return [
        check(
            "diagnostics p95, push (didChange -> publishDiagnostics minus the 100 ms debounce)",
            push.get("minus_debounce", {}).get("p95_ms"),
            TARGET_DIAGNOSTICS_MS,
            "ms",
        ),
        check(
            "diagnostics p95, pull (didChange -> textDocument/diagnostic)",
            pull.get("p95_ms"),
            TARGET_DIAGNOSTICS_MS,
            "ms",
        ),
        check(
            "completion p95, allowed-tools value",
            completion.get("allowed_tools", {}).get("p95_ms"),
            TARGET_COMPLETION_MS,
            "ms",
        ),
        check(
            "completion p95, key position",
            completion.get("key", {}).get("p95_ms"),
            TARGET_COMPLETION_MS,
            "ms",
        ),
        check(
            "code lens + resolve p95, test-query file",
            figures.get("code_lens", {}).get("p95_ms"),
            TARGET_CODE_LENS_MS,
            "ms",
        ),
        check("peak RSS (VmHWM), largest server", max(peaks) if peaks else None, TARGET_RSS_BYTES, "bytes"),
    ]


def _ms(summary: dict[str, Any] | None, cpu: bool = True) -> str:
    if not summary or summary.get("p50_ms") is None:
        return "-"
    p50, p95, top = summary["p50_ms"], summary["p95_ms"], summary["max_ms"]
    text = f"p50 {p50:.1f} ms, p95 {p95:.1f} ms, max {top:.1f} ms (n={summary['n']})"
    if cpu and summary.get("server_cpu_ms_mean") is not None:
        text += f"; CPU per operation: server {summary['server_cpu_ms_mean']:.1f} ms"
        text += f", this client {summary['client_cpu_ms_mean']:.1f} ms"
    return text


def _mib(value: int | None) -> str:
    return "-" if value is None else f"{value / 2**20:,.0f} MiB ({value / 1e6:,.0f} MB)"


def print_text(report: dict[str, Any]) -> None:
    f = report["figures"]
    docs = report.get("documents")
    print(f"workspace: {report['workspace']}" + (f" ({docs:,} documents)" if docs else ""))
    print(f"server:    {report['server_command']}  (python {report['python']}, {report['cpu_count']} CPUs)")
    edited = f.get("edited_skill")
    if edited:
        lines, found = edited["lines"], edited["diagnostics"]
        print(f"edited:    {edited['path']} ({lines} lines, {found} diagnostics on open)")
    print(f"queries:   {report['query_file']} ({report['query_cases']} cases)")
    print()
    idx = f.get("indexing")
    if idx:
        print(
            f"initial indexing (initialize -> $/progress end): {idx['indexing_s']:.2f} s"
            f"  [{idx.get('end_message')};"
            f" initialize answered in {idx['initialize_response_s'] * 1000:.0f} ms;"
            f" RSS then {_mib(idx.get('rss_after_indexing_bytes'))}]"
        )
    pull = f.get("pull_session", {})
    if pull.get("indexing"):
        print(f"initial indexing, second (pull) session:         {pull['indexing']['indexing_s']:.2f} s")
    if "did_open_diagnostics_ms" in f:
        print(f"didOpen -> publishDiagnostics (incl. 100 ms debounce): {f['did_open_diagnostics_ms']:.1f} ms")
    push = f.get("diagnostics_push")
    if push:
        print(f"didChange -> publishDiagnostics, raw:             {_ms({**push['raw'], **push})}")
        print(f"didChange -> publishDiagnostics, minus debounce:  {_ms(push['minus_debounce'], cpu=False)}")
    if pull.get("diagnostics_pull"):
        print(f"didChange -> textDocument/diagnostic (pull):      {_ms(pull['diagnostics_pull'])}")
    completion = f.get("completion")
    if completion:
        for name, title in (("allowed_tools", "allowed-tools value"), ("key", "key position")):
            c = completion[name]
            print(f"completion, {title + ':':<37}{_ms(c)}, {c['items']} items")
        every = completion["all"]
        if every.get("server_cpu_ms_mean") is not None:
            print(
                f"  (CPU per completion: server {every['server_cpu_ms_mean']:.1f} ms,"
                f" this client {every['client_cpu_ms_mean']:.1f} ms)"
            )
    first = f.get("code_lens_first")
    if first:
        print(
            f"first codeLens + resolve {first['lenses']} lenses after opening the test-query file: "
            f"{first['ms']:,.0f} ms"
            f" (a completion sent meanwhile: {first['completion_sent_meanwhile_ms']:,.0f} ms)"
        )
    if f.get("code_lens_unchanged"):
        print(f"codeLens + resolve, nothing changed:              {_ms(f['code_lens_unchanged'])}")
    lens = f.get("code_lens")
    if lens:
        print(f"edit + codeLens + resolve:                        {_ms(lens)}")
        print(f"  ({lens['lenses']} lenses; {lens['passing_cases']} of the cases pass)")
    print(
        f"peak RSS (VmHWM): push session {_mib(f.get('rss', {}).get('peak_bytes'))},"
        f" pull session {_mib(pull.get('rss', {}).get('peak_bytes'))}"
    )
    print()
    for v in report["verdicts"]:
        if v["pass"] is None:
            print(f"SKIP {v['what']}: not measured")
            continue
        word, op = ("PASS", "<") if v["pass"] else ("FAIL", ">=")
        if v["unit"] == "bytes":
            print(f"{word} {v['what']}: {_mib(v['value'])} {op} {v['target'] / 1e6:.0f} MB")
        else:
            print(f"{word} {v['what']}: {v['value']:.1f} ms {op} {v['target']:.0f} ms")
    problems = report["server_problems"]
    print()
    for p in problems:
        noisy = p["stderr_lines"] or p["error_or_warning_messages"] or p["client_side_problems"]
        status = p["exit_status"]
        print(
            f"server ({p['session']} session, pid {p['pid']}, exit status {status}): "
            f"{p['stderr_lines']} stderr lines, {len(p['error_or_warning_messages'])} error/warning messages"
        )
        if noisy:
            for line in p["stderr_tail"][-15:]:
                print(f"  stderr: {line}")
            for m in p["error_or_warning_messages"][:5]:
                print(f"  {m['method']}: {m['text']}")
            for line in p["client_side_problems"]:
                print(f"  client: {line}")
    for failure in report["failures"]:
        print(f"SERVER FAILURE: {failure}")


# ----------------------------------------------------------------------------------------------------
# Main
# ----------------------------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Time the skills-lsp language server over stdio (indexing, diagnostics, completion, "
        "code lens, RSS).",
    )
    parser.add_argument("--skills", type=int, default=20000, help="documents to generate (default 20000)")
    parser.add_argument("--seed", type=int, default=1, help="generator seed (default 1)")
    parser.add_argument(
        "--workspace", type=Path, help="use this existing directory instead of generating one"
    )
    parser.add_argument("--keep", action="store_true", help="keep the workspace generated by this run")
    parser.add_argument("--edits", type=int, default=100, help="measured edits per diagnostics figure (100)")
    parser.add_argument("--completions", type=int, default=100, help="completion requests per position (100)")
    parser.add_argument("--lens-rounds", type=int, default=20, help="code lens rounds (20)")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for any one answer (60)")
    parser.add_argument(
        "--index-timeout", type=float, default=600.0, help="seconds to wait for indexing (600)"
    )
    parser.add_argument("--no-pull", action="store_true", help="skip the second (pull diagnostics) session")
    parser.add_argument(
        "--server-cmd",
        help="command that starts the server, split with shlex (default: this interpreter with "
        "-m skills_lsp serve --stdio, started from the repo root)",
    )
    parser.add_argument(
        "--scorer",
        choices=("lexical", "bm25f", "semantic", "hybrid"),
        help="the server's scorer setting (initializationOptions); default: the workspace config's",
    )
    parser.add_argument("--format", choices=("text", "json"), default="text", help="report format")
    args = parser.parse_args(argv)
    for name in ("skills", "edits", "completions", "lens_rounds"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.timeout <= 0 or args.index_timeout <= 0:
        parser.error("timeouts must be positive")
    return args


async def run(
    args: argparse.Namespace, argv: list[str], workspace: Path, fixtures: Fixtures
) -> tuple[Results, list[Session]]:
    results = Results()
    sessions: list[Session] = []
    task = asyncio.current_task()
    if task is not None:  # SIGTERM cancels the run, so that the servers are stopped and files removed
        with contextlib.suppress(NotImplementedError, RuntimeError):
            asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, task.cancel)
    try:
        await push_session(args, argv, workspace, fixtures, results, sessions)
        if args.no_pull:
            pass
        elif "indexing" not in results.figures:
            log("[pull] skipped: the first server did not finish indexing")
        else:
            await pull_session(args, argv, workspace, fixtures, results, sessions)
    finally:
        for s in sessions:
            await s.force_stop()
    for s in sessions:
        code = s.process.returncode if s.process is not None else None
        if code not in (0, None) and not s.killed:
            results.failures.append(f"{s.label} session: the server exited with status {code}")
    return results, sessions


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    server = (
        shlex.split(args.server_cmd)
        if args.server_cmd
        else [sys.executable, "-m", "skills_lsp", "serve", "--stdio"]
    )
    if not server:
        print("error: --server-cmd is empty", file=sys.stderr)
        return 2
    # SIGTERM runs the clean-up below (the written fixture files, a generated workspace) like Ctrl-C does.
    signal.signal(signal.SIGTERM, _interrupt)
    workspace: Path | None = None
    created = False
    fixtures: Fixtures | None = None
    try:
        workspace, created, manifest = prepare_workspace(args)
        files, size = prime_page_cache(workspace)
        log(f"read {files:,} files ({size / 2**20:,.1f} MiB) to warm the OS page cache")
        fixtures = write_fixtures(workspace, manifest)
        if args.scorer:  # lenses and hovers run the test queries with this scorer
            fixtures.init_options["scorer"] = args.scorer
        log(
            f"wrote {', '.join(p.name for p in fixtures.written)} ({fixtures.query_cases} cases); "
            f"edited skill {fixtures.edited.path.relative_to(workspace)}"
        )
        results, sessions = asyncio.run(run(args, server, workspace, fixtures))
        figures = results.figures
        report = {
            "workspace": str(workspace),
            "documents": manifest["counts"]["documents"] if manifest and "counts" in manifest else None,
            "server_command": shlex.join(server),
            "python": sys.version.split()[0],
            "platform": sys.platform,
            "cpu_count": os.cpu_count(),
            "query_file": str(fixtures.query_path.relative_to(workspace)),
            "query_cases": fixtures.query_cases,
            "targets": {
                "diagnostics_p95_ms": TARGET_DIAGNOSTICS_MS,
                "completion_p95_ms": TARGET_COMPLETION_MS,
                "code_lens_p95_ms": TARGET_CODE_LENS_MS,
                "rss_bytes": TARGET_RSS_BYTES,
            },
            "figures": figures,
            "verdicts": verdicts(figures),
            "server_problems": server_problems(sessions),
            "failures": results.failures,
        }
        if args.format == "json":
            print(json.dumps(report, indent=2, ensure_ascii=False))
        else:
            print_text(report)
        return 1 if results.failures else 0
    except BenchError as exc:
        log(f"error: {exc}")
        return 1
    except (KeyboardInterrupt, asyncio.CancelledError):
        log("interrupted")
        return 130
    finally:
        if fixtures is not None:
            fixtures.remove()
        if created and workspace is not None:
            if args.keep:
                log(f"kept workspace: {workspace}")
            else:
                shutil.rmtree(workspace, ignore_errors=True)
                with contextlib.suppress(OSError):
                    workspace.parent.rmdir()


if __name__ == "__main__":
    sys.exit(main())
