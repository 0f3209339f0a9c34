"""Work in a forked child: its result comes back; a failed, stopped or interrupted child leaves
no process behind; a parent that cannot wait for its child (SIGCHLD ignored) gets None."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest

from skills_lsp.core import forked

pytestmark = pytest.mark.skipif(not forked.may_fork(), reason="fork needs Linux and one thread")


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def pid_of_child(pid_file: Path) -> int:
    for _ in range(500):
        if pid_file.exists() and pid_file.read_text():
            return int(pid_file.read_text())
        time.sleep(0.01)
    raise AssertionError("the child never started")


def forever_after_writing_pid(pid_file: Path) -> None:
    pid_file.write_text(str(os.getpid()))
    while True:
        time.sleep(0.01)


def test_the_child_result_comes_back() -> None:
    parent = os.getpid()
    result = forked.start(lambda: (os.getpid() != parent, [1, "two", {"three": 3.0}]))
    assert result(True) == (True, [1, "two", {"three": 3.0}])


def test_a_child_that_raises_gives_none() -> None:
    def fails() -> int:
        raise ValueError("boom")

    assert forked.start(fails)(True) is None


def test_a_stopped_child_is_reaped(tmp_path: Path) -> None:
    result = forked.start(lambda: forever_after_writing_pid(tmp_path / "pid"))
    pid = pid_of_child(tmp_path / "pid")
    assert result(False) is None
    assert gone(pid)  # killed and reaped: not even a zombie


def test_an_interrupted_wait_stops_the_child(tmp_path: Path) -> None:
    result = forked.start(lambda: forever_after_writing_pid(tmp_path / "pid"))
    pid = pid_of_child(tmp_path / "pid")

    def interrupt(*_: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, 0.2)
    try:
        with pytest.raises(KeyboardInterrupt):
            result(True)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert gone(pid)


def test_a_parent_ignoring_sigchld_gets_none() -> None:
    """With SIGCHLD ignored (a host program's choice) the child is reaped by the system and
    cannot be waited for: None, and the caller does the work itself."""
    previous = signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    try:
        result = forked.start(lambda: 42)
        time.sleep(0.2)
        assert result(True) is None
    finally:
        signal.signal(signal.SIGCHLD, previous)


def test_no_fork_while_another_thread_runs() -> None:
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert not forked.may_fork()
    finally:
        stop.set()
        thread.join()
    assert forked.may_fork()


def test_idle_jobs_is_at_least_one_and_at_most_the_cpus() -> None:
    assert 1 <= forked.idle_jobs() <= min(forked.cpus(), forked.MAX_JOBS)


def test_assumed_jobs_replace_the_load_average_within_the_bounds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(forked, "cpus", lambda: 2)
    monkeypatch.setattr(os, "getloadavg", lambda: (5.0, 5.0, 5.0))
    assert forked.idle_jobs() == 1
    forked.assume_idle_jobs(2)
    try:
        assert forked.idle_jobs() == 2
        assert forked.idle_jobs(limit=1) == 1
        forked.assume_idle_jobs(8)
        assert forked.idle_jobs(limit=4) == 2  # never more than the CPUs
    finally:
        forked.assume_idle_jobs(None)
    assert forked.idle_jobs() == 1


def test_cpu_ticks_count_idle_ticks_among_all() -> None:
    first = forked.cpu_ticks()
    assert first is not None
    sum(range(2_000_000))  # some ticks pass
    second = forked.cpu_ticks()
    assert second is not None
    assert 0 <= first[0] <= first[1] and first[0] <= second[0] and first[1] <= second[1]


def test_without_memfd_a_temporary_file_carries_the_result(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the system has no memfd_create (not Linux), an unnamed temporary file does."""
    monkeypatch.delattr(os, "memfd_create", raising=False)
    assert forked.start(lambda: list(range(100_000)))(True) == list(range(100_000))
