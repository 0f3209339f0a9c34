"""A large folder's first load, made in a child process that can use both cores.

The server loads a folder in a worker thread, and a process with threads must not fork
(core/forked.py): its cold load read every skill and built the scorer's postings on one core,
where the CLI's reads and bm25f build fork onto the idle ones. So when a folder has no saved
document store and its walk finds at least CHILD_FROM files, a fresh process with one thread
(`python -m skills_lsp.server.cold_build`) makes the folder's index and scorers and saves them in
its cache, as a warm load will find them, and reports how far it got as lines on its stdout.
The server loads the folder's documents as soon as the child has saved them, while the child
builds the scorer, then loads the scorer's saved state. The cold load's memory peak is the
child's, not the server's.

Anything amiss with the child (it cannot start, fails, is killed, ends without saying it is done)
is logged and the server loads the folder itself, as it did before. A damaged store the child
left is read as any damaged store is (checked, never trusted: its files are read again). A child
that never ends (a read of a hung network file) is waited for, as the same load in the server
would be.
"""

from __future__ import annotations

import json
import logging
import math
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from skills_lsp.core import forked
from skills_lsp.core.files import stats_child
from skills_lsp.core.files.cache import CACHE_DIR_NAME
from skills_lsp.core.files.discovery import DEFAULT_MAX_DEPTH, IGNORED_DIRS
from skills_lsp.core.index.store import cached_workspace_files, has_documents, store_dir
from skills_lsp.core.workspace.scorers import folder_cache_dir
from skills_lsp.server.folder import LoadProgress, folder_config, folder_index

log = logging.getLogger(__name__)

# Files found by a folder's walk from which its cold load is made in a child: below, the child's
# start (about 0.5 s of imports) and the warm load after it cost more than the second core saves.
CHILD_FROM = 2000
CHILD_FROM_VARIABLE = "SKILLS_LSP_CHILD_BUILD_FROM"  # another threshold (tests, benchmarks)
# Never with the working folder on its sys.path, as `-m` puts it: the server is often started in
# the folder it serves, and a `logging.py` there would run in the child (-P: Python 3.11+).
COMMAND = (
    [sys.executable, "-P", "-m", "skills_lsp.server.cold_build"]
    if sys.version_info >= (3, 11)
    else [sys.executable, "-c", "import runpy, sys; del sys.path[0]; runpy.run_module("
          "'skills_lsp.server.cold_build', run_name='__main__', alter_sys=True)"]
)  # fmt: skip
STDERR_TAIL = 4000  # characters of a failed child's stderr in the log

_running: set[subprocess.Popen[bytes]] = set()
_running_lock = threading.Lock()
_stopping = threading.Event()  # the server is shutting down: no load goes on in its place


class Stopped(Exception):
    """The server is shutting down while a folder's cold load waits for its child."""


def child_from() -> int:
    """CHILD_FROM, or the number in CHILD_FROM_VARIABLE."""
    try:
        return int(os.environ.get(CHILD_FROM_VARIABLE, "").strip())
    except ValueError:  # unset, or not a number ("²" is a digit int() refuses)
        return CHILD_FROM


@dataclass
class Build:
    """A folder's cold load as `start` left it: `fresh_since` for the server's own load, and the
    child at work, if one is."""

    fresh_since: int | None = None
    child: _Child | None = None

    def wait_indexed(self) -> None:
        """Until the child has saved the folder's documents, or ended; Stopped if the server
        stopped it (the load must not go on in the server then)."""
        if self.child is not None:
            self.child.indexed.wait()
        if _stopping.is_set():
            raise Stopped

    def finish(self) -> None:
        """Until the child has ended (its scorers saved, or it failed: then logged); Stopped as
        for wait_indexed."""
        if self.child is not None:
            self.child.finish()
        if _stopping.is_set():
            raise Stopped

    def close(self) -> None:
        """No child is left running (the server's load failed meanwhile)."""
        if self.child is not None:
            self.child.stop()


def start(root: Path, settings: dict[str, Any], progress: LoadProgress | None = None) -> Build:
    """Start `root`'s cold load in a child process when that is worth it (see the module doc); the
    server's load then calls the Build's `wait_indexed`, `finish` and `close`. `fresh_since` is
    when the folder's walk made here started (time.time_ns(): the load does not walk again), or
    None when none was made (a folder with a store, a small one, no second CPU)."""
    if not sys.platform.startswith("linux") or forked.cpus() < 2 or _stopping.is_set():
        return Build()
    config, _ = folder_config(root, settings)
    cache = store_dir(folder_cache_dir(config, root), root)
    if has_documents(cache) or not has_markdown(root, child_from(), config.max_depth + 1):
        return Build()  # warm, or nearly (the load reads only the files that changed); or small
    if cache.exists():
        log.info("no whole index of %s of this version in %s: indexing it again", root, cache)
    # The child imports what it needs (about 0.5 s) while this process walks the folder.
    child = _Child.start(root, cache)
    started = time.time_ns()
    try:
        ignore = config.ignore_filter(root)
        files = cached_workspace_files(root, config.roots_for(root), config.max_depth, ignore, cache)
    except BaseException:
        if child is not None:
            child.stop()
        raise
    if child is None:
        return Build(started)
    # Fewer files than the markdown count said; or a cache folder that cannot be written (the
    # walk's listing made it, where it could), where the child could save nothing to load.
    if len(files) < child_from() or not (cache.is_dir() and os.access(cache, os.W_OK)):
        child.stop()
        return Build(started)
    request = {"root": os.path.abspath(root), "settings": settings, "fresh_since": started}
    child.follow(json.dumps(request).encode("utf-8"), progress)
    return Build(started, child)


def has_markdown(root: Path, count: int, max_depth: int = DEFAULT_MAX_DEPTH) -> bool:
    """Whether `root` holds at least `count` markdown files within `max_depth` folders, outside
    those discovery never walks (`.git`, `node_modules`, environments): a bound on what its walk
    finds, made without reading ignore files, and stopping as soon as it is reached."""
    found = 0
    folders = [(os.fspath(root), 0)]
    while folders:
        folder, depth = folders.pop()
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    if entry.name.endswith(".md"):
                        found += 1
                        if found >= count:
                            return True
                    elif (
                        depth < max_depth
                        and entry.name not in SKIPPED
                        and entry.is_dir(follow_symlinks=False)
                    ):
                        folders.append((entry.path, depth + 1))
        except OSError:
            continue
    return False


SKIPPED = frozenset({*IGNORED_DIRS, "__pycache__", ".venv", "venv", "site-packages", CACHE_DIR_NAME})


class _Child:
    """A child process at work: its stdout followed by a thread of its own (progress passed on,
    `indexed` set once it has saved the documents or ended), its stderr in an unnamed file (read
    if it fails: a pipe nobody reads could fill and stop it)."""

    def __init__(self, root: Path, cache: Path, process: subprocess.Popen[bytes], errors: IO[bytes]) -> None:
        self.root = root
        self.cache = cache  # where it saves the folder's index
        self.process = process
        self.errors = errors
        self.indexed = threading.Event()
        self.done = False
        self.saved = False  # the documents were in its cache when it said they were
        self.reader: threading.Thread | None = None

    @classmethod
    def start(cls, root: Path, cache: Path) -> _Child | None:
        errors: IO[bytes] | None = None
        try:
            errors = tempfile.TemporaryFile()  # noqa: SIM115 - closed with the child (stop)
            # A session of its own: stopping it stops the processes it forked (core/forked.py).
            process = subprocess.Popen(
                COMMAND,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=errors,
                start_new_session=True,
                env=_child_environment(),
            )
        except OSError as exc:  # no process, no temporary file (a full or read-only /tmp), no fd
            if errors is not None:
                errors.close()
            log.warning("cannot start a process to index %s (%s); indexing it in the server", root, exc)
            return None
        with _running_lock:
            _running.add(process)
        return cls(root, cache, process, errors)

    def follow(self, request: bytes, progress: LoadProgress | None) -> None:
        """Send the child its work; a thread passes its progress on until it ends."""
        assert self.process.stdin is not None
        try:
            self.process.stdin.write(request)
            self.process.stdin.close()
        except OSError:  # it ended already: its status says how
            pass
        self.reader = threading.Thread(
            target=self._relay, args=(progress,), name="cold-build-relay", daemon=True
        )
        self.reader.start()

    def _relay(self, progress: LoadProgress | None) -> None:
        assert self.process.stdout is not None
        try:
            for line in self.process.stdout:
                try:
                    message = json.loads(line)
                except ValueError:
                    continue
                if isinstance(message, dict):
                    self.done = self.done or message.get("done") is True
                    if message.get("indexed") is True:
                        # Looked at now: once `indexed` is set the server may load and save them.
                        self.saved = has_documents(self.cache)
                        self.indexed.set()
                elif isinstance(message, list) and len(message) == 2 and progress is not None:
                    percentage, what = message
                    if isinstance(percentage, int) and isinstance(what, str):
                        self._report(progress, percentage, what)
        except (OSError, ValueError):  # its stdout closed under us (stop)
            pass
        finally:
            self.indexed.set()

    @staticmethod
    def _report(progress: LoadProgress, percentage: int, what: str) -> None:
        """Pass a report on; one that cannot go out (the server is stopping) stops no reading:
        a child whose stdout is not read would wait on it."""
        try:
            progress(percentage, what)
        except Exception:
            log.debug("a progress report of the indexing process was lost", exc_info=True)

    def finish(self) -> None:
        """Wait for the child's end; say how it ended."""
        if self.reader is not None:
            self.reader.join()
        status = self.process.wait()
        said = self._said()
        self.stop()
        if status == 0 and self.done and self.saved:
            log.info("%s was indexed in a child process", self.root)
            return
        if _stopping.is_set():
            return
        if status < 0:
            how = f"was stopped by signal {-status}"
        elif status > 0:
            how = f"failed (exit status {status})"
        elif self.done:
            how = f"could not save its index in {self.cache} (a full disk?)"
        else:
            how = "ended without saying it was done"
        detail = f":\n{said}" if said else ""
        log.warning("the process indexing %s %s; indexing it in the server%s", self.root, how, detail)

    def stop(self) -> None:
        """Stop it if it still runs, and wait for it (no child is left running)."""
        with _running_lock:
            _running.discard(self.process)
        _kill(self.process)
        self.process.wait()
        if self.reader is not None:
            self.reader.join()
        for stream in (self.process.stdin, self.process.stdout, self.errors):
            if stream is not None and not stream.closed:
                stream.close()

    def _said(self) -> str:
        """The end of what it wrote to its stderr."""
        try:
            self.errors.seek(0)
            return self.errors.read().decode("utf-8", "replace")[-STDERR_TAIL:].strip()
        except (OSError, ValueError):
            return ""


def _child_environment() -> dict[str, str]:
    """This process's environment, less PYTHONPATH's empty entries: each stands for the working
    folder, the served one, which -P keeps off sys.path."""
    environment = dict(os.environ)
    if "PYTHONPATH" in environment:
        kept = [entry for entry in environment["PYTHONPATH"].split(os.pathsep) if entry]
        environment["PYTHONPATH"] = os.pathsep.join(kept)
    return environment


def stop_all() -> None:
    """Stop the children still running, and every load waiting for one (the server is shutting
    down: Build's waits raise Stopped, no load is made in the server); and the children that
    check a saved index (core/files/stats_child.py), whose stats no shutdown waits for."""
    _stopping.set()
    stats_child.stop_all()
    with _running_lock:
        running = list(_running)
    for child in running:
        _kill(child)


def stopping() -> bool:
    """Whether the server is shutting down (stop_all was called)."""
    return _stopping.is_set()


def _kill(process: subprocess.Popen[bytes]) -> None:
    """Kill a child and the processes it forked (its session's group), if it still runs."""
    if process.poll() is None:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except OSError:  # gone meanwhile, or not a group leader after all
            process.kill()


# Clock ticks of all CPUs (100 a second each, mostly) below which a wait is too short to tell
# how idle the machine is.
MEASURED_FROM_TICKS = 20


def jobs_after_wait(before: tuple[int, int] | None, after: tuple[int, int] | None) -> int | None:
    """How many processes the build may run, from two forked.cpu_ticks() around this process's
    wait for its request, while the server walked the folder: the CPUs idle meanwhile, and the
    server's own, which waits from now on. The load average counts the minute before: work
    that has just ended (a previous start's, a benchmark's) kept the build to one process with
    the second CPU idle now (at a load average over 1.5 on 2 CPUs). None when the wait was too
    short to tell (the load average decides)."""
    if before is None or after is None or after[1] - before[1] < MEASURED_FROM_TICKS:
        return None
    idle = (os.cpu_count() or 1) * (after[0] - before[0]) / (after[1] - before[1])
    return max(1, math.floor(idle + 1.5))


def main(stdin: IO[str] | None = None, stdout: IO[str] | None = None) -> int:
    """The child: read the request, make the folder's load (saved in its cache), say so."""
    source = stdin or sys.stdin
    out = stdout or sys.stdout
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    waiting = forked.cpu_ticks()  # while the server walks the folder
    request = json.loads(source.read())
    forked.assume_idle_jobs(jobs_after_wait(waiting, forked.cpu_ticks()))
    try:
        return _build(request, out)
    finally:
        forked.assume_idle_jobs(None)


def _build(request: dict[str, Any], out: IO[str]) -> int:
    root = Path(request["root"])
    fresh_since = request.get("fresh_since")

    def progress(percentage: int, what: str) -> None:
        out.write(json.dumps([percentage, what]) + "\n")
        out.flush()

    settings = dict(request.get("settings") or {})
    since = fresh_since if isinstance(fresh_since, int) else None

    def indexed() -> None:  # the documents are saved: the server may load them meanwhile
        out.write(json.dumps({"indexed": True}) + "\n")
        out.flush()

    index = folder_index(root, settings, progress, since, indexed)[3]
    out.write(json.dumps({"done": True, "skills": len(index)}) + "\n")
    out.flush()
    return 0


if __name__ == "__main__":
    status = main()
    sys.stdout.flush()
    sys.stderr.flush()
    # Ended at once, as a forked worker does (forked.py): the interpreter's teardown would free
    # the build's 16,000 documents and postings one object at a time (0.1-0.2 s of a cold start
    # at 16,000 skills) while the server waits for this process's end to load the postings.
    os._exit(status)
