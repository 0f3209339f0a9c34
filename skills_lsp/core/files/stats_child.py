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
from array import array
from collections.abc import Sequence

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
    if not paths or not sys.executable:
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
    width = array("q").itemsize * len(paths)
    if returncode != 0 or len(answer) != 2 * width:
        return None
    mtimes, sizes = array("q"), array("q")
    mtimes.frombytes(answer[:width])
    sizes.frombytes(answer[width:])
    return mtimes, sizes


_CHUNK = 2000  # paths written to the child at a time
