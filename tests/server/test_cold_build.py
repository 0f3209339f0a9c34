"""A large folder's cold load made in a child process (server/cold_build.py): the same folder
as the server's own load, and anything amiss with the child (it fails, is killed, ends without
finishing, leaves a damaged index) logged, with the server loading the folder itself.

Real parts: a real child process (`python -m skills_lsp.server.cold_build`, or a command that
fails as a broken child would), real files, a cache folder of the test's own."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from skills_lsp.core.index.store import DOCUMENTS_FILE
from skills_lsp.core.routing.queries import QueryCase
from skills_lsp.server import cold_build
from skills_lsp.server.folder import Folder
from skills_lsp.server.state import State

SKILLS = 40


@pytest.fixture(autouse=True)
def not_stopping() -> Iterator[None]:
    """stop_all marks the process as shutting down: the next test's loads must not see it."""
    yield
    cold_build._stopping.clear()


def write_workspace(root: Path) -> Path:
    for number in range(SKILLS):
        folder = root / ".claude" / "skills" / f"skill-{number:02d}"
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(
            f"---\nname: skill-{number:02d}\ndescription: Files expense report number {number} for the "
            f"finance team. Use when asked about report {number}.\n---\n\n# Skill {number}\n\nSteps.\n",
            encoding="utf-8",
        )
    return root  # no config file: the index is kept in XDG_CACHE_HOME, which each test sets


def answers(folder: Folder) -> object:
    """What a start-up's first answers come from: the documents, and the routing of some queries."""
    folder.cases = [
        QueryCase(query=f"expense report number {n} for finance", expect=(f"skill-{n:02d}",))
        for n in range(0, SKILLS, 7)
    ]
    folder.changed()
    results = [([(m.skill.name, m.score) for m in r.matches], r.passed, r.reason) for r in folder.results()]
    documents = [(d.name, str(d.path), d.description, d.body) for d in folder.index]
    return documents, results


def load(root: Path, cache: Path, monkeypatch: pytest.MonkeyPatch, child_from: int) -> Folder:
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    monkeypatch.setenv(cold_build.CHILD_FROM_VARIABLE, str(child_from))
    return state().load_folder(root)


def state() -> State:
    made = State()
    made.settings["scorer"] = "bm25f"  # as a client's settings give it
    return made


def test_a_folder_indexed_in_a_child_process_is_the_folder_loaded_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    root = write_workspace(tmp_path / "ws")
    caplog.set_level(logging.INFO, logger=cold_build.__name__)
    here = answers(load(root, tmp_path / "cache-here", monkeypatch, child_from=10_000))
    assert "indexed in a child process" not in caplog.text
    reports: list[tuple[int, str]] = []
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache-child"))
    monkeypatch.setenv(cold_build.CHILD_FROM_VARIABLE, "1")
    folder = state().load_folder(root, lambda percentage, what: reports.append((percentage, what)))
    assert "indexed in a child process" in caplog.text
    assert answers(folder) == here
    assert reports and any("files" in what for _, what in reports)  # the child's progress, passed on
    assert sorted(tmp_path.glob("cache-child/**/index-bm25f.bin"))  # saved by the child


@pytest.mark.parametrize(
    ("program", "logged"),
    [
        ("import sys; sys.stderr.write('cannot index: out of disk'); sys.exit(3)", "failed (exit status 3)"),
        ("import os, signal; os.kill(os.getpid(), signal.SIGKILL)", "was stopped by signal 9"),
        # Killed while the server loads the documents it said were saved (they were not: read here).
        (
            "import os, signal, sys; sys.stdin.read(); print('{\"indexed\": true}', flush=True); "
            "os.kill(os.getpid(), signal.SIGKILL)",
            "was stopped by signal 9",
        ),
        ("import sys; sys.stdin.read(); print('[5, \"half\"]')", "ended without saying it was done"),
        # Done, but nothing saved (a full disk): said, not logged as a success.
        ("import sys; sys.stdin.read(); print('{\"done\": true}')", "could not save its index"),
    ],
)
def test_a_child_that_fails_leaves_the_load_to_the_server(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    program: str,
    logged: str,
) -> None:
    root = write_workspace(tmp_path / "ws")
    here = answers(load(root, tmp_path / "cache-here", monkeypatch, child_from=10_000))
    monkeypatch.setattr(cold_build, "COMMAND", [sys.executable, "-c", program])
    caplog.set_level(logging.INFO, logger=cold_build.__name__)
    folder = load(root, tmp_path / "cache-child", monkeypatch, child_from=1)
    assert logged in caplog.text and "indexing it in the server" in caplog.text
    if "out of disk" in program:
        assert "cannot index: out of disk" in caplog.text  # what the child said
    assert answers(folder) == here
    assert not cold_build._running


def test_a_child_that_cannot_start_leaves_the_load_to_the_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    root = write_workspace(tmp_path / "ws")
    here = answers(load(root, tmp_path / "cache-here", monkeypatch, child_from=10_000))
    monkeypatch.setattr(cold_build, "COMMAND", [str(tmp_path / "no-such-program")])
    folder = load(root, tmp_path / "cache-child", monkeypatch, child_from=1)
    assert "cannot start a process to index" in caplog.text
    assert answers(folder) == here


def test_a_damaged_index_is_made_again_in_a_child(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    root = write_workspace(tmp_path / "ws")
    here = answers(load(root, tmp_path / "cache", monkeypatch, child_from=10_000))
    [documents] = sorted(tmp_path.glob(f"cache/**/{DOCUMENTS_FILE}"))
    documents.write_bytes(documents.read_bytes()[:-100])  # cut short
    caplog.set_level(logging.INFO, logger=cold_build.__name__)
    folder = load(root, tmp_path / "cache", monkeypatch, child_from=1)
    assert "no whole index" in caplog.text and "indexed in a child process" in caplog.text
    assert answers(folder) == here
    # Damaged inside (its checksum fails): taken as whole, the server's load reads the files again.
    data = bytearray(documents.read_bytes())
    data[len(data) // 2] ^= 0xFF
    documents.write_bytes(bytes(data))
    caplog.clear()
    folder = load(root, tmp_path / "cache", monkeypatch, child_from=1)
    assert "indexed in a child process" not in caplog.text
    assert answers(folder) == here


def test_a_small_folder_or_a_warm_one_is_loaded_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    root = write_workspace(tmp_path / "ws")
    caplog.set_level(logging.INFO, logger=cold_build.__name__)
    load(root, tmp_path / "cache", monkeypatch, child_from=SKILLS + 1)  # fewer files than that
    assert "child process" not in caplog.text
    load(root, tmp_path / "cache", monkeypatch, child_from=1)  # warm: nothing to build
    assert "child process" not in caplog.text


def test_no_child_where_the_cache_cannot_be_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    root = write_workspace(tmp_path / "ws")
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder\n", encoding="utf-8")
    caplog.set_level(logging.INFO, logger=cold_build.__name__)
    folder = load(root, blocked / "cache", monkeypatch, child_from=1)  # no folder can be made there
    assert "child process" not in caplog.text and len(folder.index) == SKILLS


def test_the_build_runs_as_many_processes_as_cpus_stood_idle_while_it_waited(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The server walked on one CPU meanwhile: it is free too once the build starts."""
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    assert cold_build.jobs_after_wait((0, 0), (100, 200)) == 2  # the second CPU idle
    assert cold_build.jobs_after_wait((0, 0), (60, 200)) == 2
    assert cold_build.jobs_after_wait((0, 0), (40, 200)) == 1  # busy with other work
    assert cold_build.jobs_after_wait((0, 0), (0, 200)) == 1
    assert cold_build.jobs_after_wait((1000, 5000), (1003, 5010)) is None  # too short to tell
    assert cold_build.jobs_after_wait(None, (100, 200)) is None  # no /proc/stat


def test_markdown_files_are_counted_up_to_the_bound(tmp_path: Path) -> None:
    root = write_workspace(tmp_path / "ws")
    (root / ".git" / "x").mkdir(parents=True)
    for number in range(5):
        (root / ".git" / "x" / f"{number}.md").write_text("not counted\n", encoding="utf-8")
    assert cold_build.has_markdown(root, SKILLS)
    assert not cold_build.has_markdown(root, SKILLS + 1)
    assert not cold_build.has_markdown(root, 1, max_depth=1)  # .claude/skills/skill-NN/SKILL.md


def test_a_child_still_running_when_the_server_stops_is_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = write_workspace(tmp_path / "ws")
    monkeypatch.setattr(cold_build, "COMMAND", [sys.executable, "-c", "import time; time.sleep(600)"])
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv(cold_build.CHILD_FROM_VARIABLE, "1")
    build = cold_build.start(root, {}, None)
    assert build.child is not None and build.child.process.poll() is None
    cold_build.stop_all()  # what the server does as it shuts down (base.start_io)
    with pytest.raises(cold_build.Stopped):  # its output ended with it; no load goes on here
        build.wait_indexed()
    assert build.child.process.wait(timeout=10) < 0
    build.close()
    assert not cold_build._running


def test_a_progress_report_that_cannot_go_out_stops_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    root = write_workspace(tmp_path / "ws")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv(cold_build.CHILD_FROM_VARIABLE, "1")
    caplog.set_level(logging.INFO, logger=cold_build.__name__)

    def closed(percentage: int, what: str) -> None:
        if threading.current_thread().name == "cold-build-relay":  # the child's reports
            raise RuntimeError("Event loop is closed")  # what call_soon_threadsafe says at shutdown

    folder = state().load_folder(root, closed)
    assert "indexed in a child process" in caplog.text and len(folder.index) == SKILLS


@pytest.mark.parametrize("empty_entry", [False, True])
def test_no_module_of_the_served_folder_runs_in_the_child(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, empty_entry: bool
) -> None:
    # An editor starts the server in the folder it serves; `python -m` puts the working folder
    # first on sys.path, so a `logging.py` shipped with 2,000 skills would run in the child.
    root = write_workspace(tmp_path / "ws")
    marker = tmp_path / "ran"
    for name in ("logging.py", "json.py"):
        (root / name).write_text(f"open({str(marker)!r}, 'a').write({name!r})\n", encoding="utf-8")
    monkeypatch.chdir(root)
    if empty_entry:  # `export PYTHONPATH=$PYTHONPATH:/x` with it unset: the empty entry is the working folder
        monkeypatch.setenv("PYTHONPATH", os.pathsep + os.pathsep.join(sys.path))
    caplog.set_level(logging.INFO, logger=cold_build.__name__)
    folder = load(root, tmp_path / "cache", monkeypatch, child_from=1)
    assert "indexed in a child process" in caplog.text and len(folder.index) == SKILLS
    assert not marker.exists()


def test_no_temporary_file_leaves_the_load_to_the_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    root = write_workspace(tmp_path / "ws")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "no-such-folder"))  # a full or read-only /tmp
    folder = load(root, tmp_path / "cache", monkeypatch, child_from=1)
    assert "cannot start a process to index" in caplog.text and len(folder.index) == SKILLS


def test_a_threshold_that_is_no_number_is_ignored(monkeypatch: pytest.MonkeyPatch) -> None:
    for value in ("²", "12a", "", " 7 "):
        monkeypatch.setenv(cold_build.CHILD_FROM_VARIABLE, value)
        assert cold_build.child_from() == (7 if value == " 7 " else cold_build.CHILD_FROM)


def test_stopping_the_child_stops_what_it_forked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The real child forks readers (core/forked.py) that share its stdout: stopping it must not
    # wait for them to end (a hung network read would hold the server's shutdown for ever).
    root = write_workspace(tmp_path / "ws")
    program = "import os, sys, time; sys.stdin.read(); os.fork(); time.sleep(600)"
    monkeypatch.setattr(cold_build, "COMMAND", [sys.executable, "-c", program])
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv(cold_build.CHILD_FROM_VARIABLE, "1")
    build = cold_build.start(root, {}, None)
    assert build.child is not None
    time.sleep(0.5)  # forked
    started = time.monotonic()
    build.close()
    assert time.monotonic() - started < 10
    assert not cold_build._running


def test_the_server_exits_at_once_while_a_child_indexes(tmp_path: Path) -> None:
    """The real server over stdio, its child replaced by one that never finishes: `shutdown` and
    `exit` end it within seconds, and the folder is not indexed in the server meanwhile."""
    root = write_workspace(tmp_path / "ws")
    launcher = tmp_path / "serve_with_slow_child.py"
    launcher.write_text(
        "import sys\n"
        "from skills_lsp.server import app, cold_build\n"
        "cold_build.COMMAND = [sys.executable, '-c', 'import sys, time; sys.stdin.read(); time.sleep(600)']\n"
        "sys.exit(app.main(['--log-level', 'INFO']))\n",
        encoding="utf-8",
    )
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join(sys.path),
        XDG_CACHE_HOME=str(tmp_path / "cache"),
        **{cold_build.CHILD_FROM_VARIABLE: "1"},
    )
    log_file = tmp_path / "server.log"
    with open(log_file, "wb") as errors:
        server = subprocess.Popen(
            [sys.executable, str(launcher)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errors,
            env=env,
        )
    client = _Client(server)
    uri = root.as_uri()
    folders = [{"uri": uri, "name": "ws"}]
    client.send(
        {
            "id": 1,
            "method": "initialize",
            "params": {"processId": None, "rootUri": uri, "capabilities": {}, "workspaceFolders": folders},
        }
    )
    client.send({"method": "initialized", "params": {}})
    deadline = time.monotonic() + 30
    while not _child_of(server.pid):  # the indexing process has started
        assert time.monotonic() < deadline, log_file.read_text(errors="replace")
        time.sleep(0.2)
    client.send({"id": 2, "method": "shutdown"})
    client.send({"method": "exit"})
    try:
        server.wait(timeout=20)
    finally:
        if server.poll() is None:
            server.kill()
    log = log_file.read_text(errors="replace")
    assert server.returncode == 0, log
    assert "indexing it in the server" not in log


class _Client:
    """Just enough of a client: sends framed messages and answers the server's requests (it asks
    for its settings before it loads a folder)."""

    def __init__(self, server: subprocess.Popen[bytes]) -> None:
        self.server = server
        self.writing = threading.Lock()
        threading.Thread(target=self._answer, daemon=True).start()

    def send(self, message: dict[str, object]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        assert self.server.stdin is not None
        with self.writing, contextlib.suppress(OSError):
            self.server.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            self.server.stdin.flush()

    def _answer(self) -> None:
        stream = self.server.stdout
        assert stream is not None
        while header := stream.readline():
            if not header.lower().startswith(b"content-length"):
                continue
            length = int(header.split(b":")[1])
            while stream.readline().strip():  # the rest of the header, to its blank line
                pass
            message = json.loads(stream.read(length))
            if "method" in message and "id" in message:
                items = (message.get("params") or {}).get("items")
                self.send({"id": message["id"], "result": [None] * len(items) if items else None})


def _child_of(pid: int) -> bool:
    """Whether process `pid` has a child (the indexing process) now."""
    # Listed under the thread that started it: the folder's loading thread, not the main one.
    return any(children.read_text().split() for children in Path(f"/proc/{pid}/task").glob("*/children"))
