"""The stats of many paths, made by a child interpreter on another core.

An editor's first answers come from a saved index before its 45,000 folders and files are
statted (store.load_saved_workspace_index). Statted by a thread of the server, they cost more
than they take: at every stat the thread and the event loop hand the GIL to and fro, which made
the first lenses 0.5-1 s later, not 0.2 s sooner. A child started with `-I -S` imports nothing
but `os`, `sys` and `array`, reads the paths on its stdin, and answers on its stdout.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from array import array
from collections.abc import Sequence

_CHUNK = 2000  # paths written to the child at a time
# The children running, so that a server shutting down can stop them (stop_all), and whether it is.
_running: set[subprocess.Popen[bytes]] = set()
_running_lock = threading.Lock()
_stopping = threading.Event()

_CHILD = """
import os, sys
from array import array
mtimes, sizes = array("q"), array("q")
for path in sys.stdin.buffer.read().split(b"\\0"):
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        mtimes.append(-1)
        sizes.append(-1)
    else:
        mtimes.append(info.st_mtime_ns)
        sizes.append(info.st_size)
sys.stdout.buffer.write(mtimes.tobytes() + sizes.tobytes())
"""


def stats_in_child(paths: Sequence[str]) -> tuple[array[int], array[int]] | None:
    """(mtime in ns, size) of each of `paths` (-1 and -1 for one that cannot be statted), as two
    arrays in the order of `paths`; None when no child could give them (then stat them here)."""
    if not paths or not sys.executable or _stopping.is_set():
        return None
    with _running_lock:
        if _stopping.is_set():
            return None
        try:
            child = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", _CHILD],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
        except (OSError, ValueError, subprocess.SubprocessError):
            return None
        _running.add(child)
    assert child.stdin is not None and child.stdout is not None
    try:
        with child.stdin:
            # A chunk at a time: the paths whole, as text and as bytes, were 7 MB more at the
            # server's peak (45,000 paths).
            for start in range(0, len(paths), _CHUNK):
                chunk = os.fsencode("\0".join(paths[start : start + _CHUNK]))
                child.stdin.write(chunk if start + _CHUNK >= len(paths) else chunk + b"\0")
        answer = child.stdout.read()  # written once every path is read and statted
    except (OSError, ValueError):  # the child ended early (killed, out of memory)
        answer = b""
    finally:
        child.stdout.close()
        returncode = child.wait()
        with _running_lock:
            _running.discard(child)
    width = array("q").itemsize * len(paths)
    if returncode != 0 or len(answer) != 2 * width:
        return None
    mtimes, sizes = array("q"), array("q")
    mtimes.frombytes(answer[:width])
    sizes.frombytes(answer[width:])
    return mtimes, sizes


def stop_all() -> None:
    """Kill the children running, and start no other (a server shutting down: its shutdown must
    not wait for 45,000 stats, nor a hung network folder's)."""
    with _running_lock:
        _stopping.set()
        running = list(_running)
    for child in running:
        if child.poll() is None:
            child.kill()


def stopped() -> bool:
    """Whether stop_all was called: the stats are not to be made here either."""
    return _stopping.is_set()
