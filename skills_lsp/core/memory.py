"""The process's memory: what a long-running process (the language server) gives back."""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import gc
import platform
from collections.abc import Iterator


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


@contextlib.contextmanager
def long_lived(replacing: bool = False) -> Iterator[None]:
    """For work that makes objects meant to live long (a folder's index: about a million at 16,000
    skills): what exists at its end is frozen (`gc.freeze`), so later collections do not walk
    it again and again, finding nothing. `replacing`: the work replaces what an earlier call
    made (a folder loaded again), which is unfrozen first and collected at the end (one full
    collection), so that it can be freed; otherwise only the young generations are collected
    before the freeze (garbage frozen would never be freed)."""
    if replacing:
        gc.unfreeze()
    try:
        yield
    finally:
        if replacing:
            gc.collect()
        else:
            gc.collect(1)
        gc.freeze()


@contextlib.contextmanager
def no_collection() -> Iterator[None]:
    """For work that makes many objects and no garbage (unpickling a warm index's documents):
    the cycle collector is off meanwhile. It would walk the growing heap again and again (about
    0.1 s of a warm load at 16,000 skills), finding nothing. Not for work that makes garbage in
    cycles (parsing): that would pile up until the end."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        # What was made meanwhile goes straight to the oldest generation (freeze, then unfreeze:
        # two list splices): left young, the next collections walked it all twice, as gen0 then
        # gen1, finding nothing (77 ms of a warm server start at 16,000 skills). Garbage made
        # before waits for the next full collection instead of a young one.
        gc.freeze()
        gc.unfreeze()
        if enabled:
            gc.enable()


def unfreeze() -> None:
    """What `long_lived` froze can be collected again (what it made was dropped)."""
    gc.unfreeze()
