"""Work in a forked child: its result comes back; a failed or stopped child leaves no process."""

from __future__ import annotations

import os
import threading

import pytest

from skills_lsp.core import forked

pytestmark = pytest.mark.skipif(not forked.may_fork(), reason="fork needs Linux and one thread")


def test_the_child_result_comes_back() -> None:
    parent = os.getpid()
    result = forked.start(lambda: (os.getpid() != parent, [1, "two", {"three": 3.0}]))
    assert result(True) == (True, [1, "two", {"three": 3.0}])


def test_a_child_that_raises_gives_none() -> None:
    def fails() -> int:
        raise ValueError("boom")

    assert forked.start(fails)(True) is None


def test_a_stopped_child_is_reaped() -> None:
    def forever() -> None:
        while True:
            pass

    result = forked.start(forever)
    assert result(False) is None
    with pytest.raises(ChildProcessError):
        os.waitpid(-1, os.WNOHANG)  # no child left, running or not


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


def test_without_memfd_a_temporary_file_carries_the_result(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the system has no memfd_create (not Linux), an unnamed temporary file does."""
    monkeypatch.delattr(os, "memfd_create", raising=False)
    assert forked.start(lambda: list(range(100_000)))(True) == list(range(100_000))
