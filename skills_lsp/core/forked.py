"""Work in a forked child process, on the second core of a machine that has one idle.

A fork starts the child with everything the parent holds (documents, config, tables), so nothing
is pickled on the way in; the child's result comes back pickled through a file in memory. Only
where fork is safe: Linux, and no thread but the calling one (a fork copies only that thread, and
a lock another one holds would stay held in the child). Anything amiss in the child (an
exception, a kill, a parent that cannot wait for it) reaches the caller as None, and the caller
does the work itself: a child can cost time, never a wrong answer. (A child that never ends, as
a read of a hung network file would, is waited for, as the same read in the parent would be.)
"""

from __future__ import annotations

import contextlib
import ctypes
import math
import os
import pickle
import signal
import sys
import tempfile
from collections.abc import Callable
from typing import TypeVar

Result = TypeVar("Result")

MAX_JOBS = 2  # more processes than this cost more in start-up and joining than they save (measured on 2 CPUs)


def cpus() -> int:
    """The CPUs this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


# What idle_jobs answers instead of reading the load average (assume_idle_jobs).
_assumed_jobs: int | None = None


def assume_idle_jobs(jobs: int | None) -> None:
    """From now on idle_jobs answers `jobs` (within its bounds), in a process that measured the
    idle CPUs itself (server/cold_build.py); None: the load average again."""
    global _assumed_jobs
    _assumed_jobs = jobs


def cpu_ticks() -> tuple[int, int] | None:
    """(idle, all) clock ticks of the machine's CPUs so far, idle including waits for I/O
    (/proc/stat); None where there is no such file."""
    try:
        with open("/proc/stat", "rb") as stat:
            fields = stat.readline().split()
        ticks = [int(field) for field in fields[1:9]]
    except (OSError, ValueError):
        return None
    if fields[:1] != [b"cpu"] or len(ticks) < 5:
        return None
    return ticks[3] + ticks[4], sum(ticks)


def idle_jobs(limit: int = MAX_JOBS) -> int:
    """The CPUs this process may run on that the last minute left idle, counting this process's
    own, up to `limit`. A second process pays only on an idle CPU: at 16,000 skills on 2 CPUs the
    bm25f build took 2.75-2.92 s wall with 2 against 4.09-4.24 s with 1 on a quiet machine, but
    11.5 s against 8.9 s under a load average of 5."""
    if _assumed_jobs is not None:
        return max(1, min(cpus(), limit, _assumed_jobs))
    try:
        idle = cpus() - os.getloadavg()[0]
    except (AttributeError, OSError):  # pragma: no cover - no load average (Windows)
        idle = cpus() - 1.0
    return max(1, min(cpus(), limit, 1 + math.floor(idle + 0.5)))


def may_fork() -> bool:
    """Whether a forked child may do part of the work: Linux, and no thread but this one."""
    if not sys.platform.startswith("linux") or not hasattr(os, "fork"):
        return False
    threading = sys.modules.get("threading")
    return threading is None or threading.active_count() == 1


def die_with_parent(parent: int) -> None:
    """In a worker process forked from `parent`: be killed when `parent` ends (Linux's
    PR_SET_PDEATHSIG), and end now if it already has. A pool's worker otherwise outlives a
    parent killed outright (SIGKILL, a CI timeout), blocked for ever on a queue its siblings
    keep open. Elsewhere nothing is done (no such call). Linux sends the signal when the thread
    that forked the worker ends: fork workers from the thread that lives as long as the parent
    (check's pool is made from the main thread)."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # gone before the call took effect
        os._exit(1)


_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def _scratch_file() -> int:
    """A file descriptor of an unnamed file, in memory where the system has that (Linux)."""
    if hasattr(os, "memfd_create"):
        return os.memfd_create("skills-lsp-forked", getattr(os, "MFD_CLOEXEC", 0))
    with tempfile.TemporaryFile() as handle:
        return os.dup(handle.fileno())


def start(work: Callable[[], Result]) -> Callable[[bool], Result | None]:
    """`work()` started in a forked child process. The function returned, to be called once,
    waits for its result (None if the child failed); or, given False, stops the child and returns
    None at once (the caller failed: no child is left running). Call `may_fork()` first.

    The child writes its result (tens of MB for a corpus) into a file in memory and exits: through
    a pipe it waited, blocked, until this process was done with its own share and read, 64 KiB at a
    time (0.12-0.37 s under load for bm25f's 37 MB, against 0.03 s from memory)."""
    try:
        scratch = _scratch_file()
    except OSError:  # no file to be had (a limit): the caller does the work itself
        return lambda wanted: None
    parent = os.getpid()
    try:
        pid = os.fork()
    except OSError:  # no process to be had
        os.close(scratch)
        return lambda wanted: None
    if pid == 0:  # pragma: no cover - the child, which never returns (coverage does not see it)
        status = 1
        try:
            die_with_parent(parent)  # may_fork: forked from the main thread, which lives as long
            with os.fdopen(scratch, "wb") as out:
                pickle.dump(work(), out, protocol=pickle.HIGHEST_PROTOCOL)
            status = 0
        finally:
            os._exit(status)

    def result(wanted: bool) -> Result | None:  # called once
        with os.fdopen(scratch, "rb") as received:
            try:
                if not wanted:
                    os.kill(pid, signal.SIGKILL)
                _, status = os.waitpid(pid, 0)
            except (ChildProcessError, ProcessLookupError):  # reaped by another (SIGCHLD ignored)
                return None
            except BaseException:  # interrupted while waiting: the child is stopped first
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
                raise
            if not wanted or status != 0:
                return None
            received.seek(0)  # the child's writes moved the offset both processes share
            try:
                loaded: Result = pickle.load(received)
            except (EOFError, pickle.UnpicklingError):
                return None
        return loaded

    return result
