"""Work in a forked child process, on the second core of a machine that has one idle.

A fork starts the child with everything the parent holds (documents, config, tables), so nothing is
pickled on the way in; the child's result comes back pickled through a pipe. Only where fork is safe:
Linux, and no thread but the calling one (a fork copies only that thread, and a lock another one
holds would stay held in the child). Anything amiss in the child (an exception, a kill, no answer)
reaches the caller as None, and the caller does the work itself: a child can cost time, never a
wrong answer.
"""

from __future__ import annotations

import math
import os
import pickle
import signal
import sys
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


def idle_jobs() -> int:
    """The CPUs this process may run on that the last minute left idle, counting this process's
    own, up to MAX_JOBS. A second process pays only on an idle CPU: at 16,000 skills on 2 CPUs the
    bm25f build took 2.75-2.92 s wall with 2 against 4.09-4.24 s with 1 on a quiet machine, but
    11.5 s against 8.9 s under a load average of 5."""
    try:
        idle = cpus() - os.getloadavg()[0]
    except (AttributeError, OSError):  # pragma: no cover - no load average (Windows)
        idle = cpus() - 1.0
    return max(1, min(cpus(), MAX_JOBS, 1 + math.floor(idle + 0.5)))


def may_fork() -> bool:
    """Whether a forked child may do part of the work: Linux, and no thread but this one."""
    if not sys.platform.startswith("linux") or not hasattr(os, "fork"):
        return False
    threading = sys.modules.get("threading")
    return threading is None or threading.active_count() == 1


def start(work: Callable[[], Result]) -> Callable[[bool], Result | None]:
    """`work()` started in a forked child process. The function returned waits for its result
    (None if the child failed); or, given False, stops the child and returns None at once (the
    caller failed: no child is left running). Call `may_fork()` first."""
    read, write = os.pipe()
    try:
        pid = os.fork()
    except OSError:  # no process to be had (a limit): the caller does the work itself
        os.close(read)
        os.close(write)
        return lambda wanted: None
    if pid == 0:  # pragma: no cover - the child, which never returns (coverage does not see it)
        status = 1
        try:
            os.close(read)
            with os.fdopen(write, "wb") as out:
                out.write(pickle.dumps(work(), protocol=pickle.HIGHEST_PROTOCOL))
            status = 0
        finally:
            os._exit(status)
    os.close(write)

    def result(wanted: bool) -> Result | None:
        if not wanted:
            os.kill(pid, signal.SIGKILL)
            os.close(read)
            os.waitpid(pid, 0)
            return None
        with os.fdopen(read, "rb") as received:
            data = received.read()
        _, status = os.waitpid(pid, 0)
        if status != 0 or not data:
            return None
        loaded: Result = pickle.loads(data)
        return loaded

    return result
