"""The process's memory: what a long-running process (the language server) gives back."""

from __future__ import annotations

import ctypes
import ctypes.util
import platform


def trim_heap() -> None:
    """Give the C heap's free memory back to the system (glibc's `malloc_trim`; elsewhere nothing).
    glibc keeps what a burst of allocations freed (onnxruntime's graph optimisation, a folder's
    load) in the process, where it counts against the server's memory for as long as it runs."""
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.malloc_trim(0)
    except (OSError, AttributeError):
        pass
