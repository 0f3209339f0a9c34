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
        done = subprocess.run(
            [sys.executable, "-I", "-S", "-c", _CHILD],
            input=os.fsencode("\0".join(paths)),
            capture_output=True,
            check=False,
        )
    except (OSError, ValueError, subprocess.SubprocessError):
        return None
    width = array("q").itemsize * len(paths)
    if done.returncode != 0 or len(done.stdout) != 2 * width:
        return None
    mtimes, sizes = array("q"), array("q")
    mtimes.frombytes(done.stdout[:width])
    sizes.frombytes(done.stdout[width:])
    return mtimes, sizes
