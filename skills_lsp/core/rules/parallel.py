"""Checking files on several cores: the file list is cut into small contiguous chunks, checked by
this process and by forked worker processes, which return each chunk's results (each file's
findings and the cache entry it wrote); the results are put back in file order, so the output is
the same, byte for byte, whatever the number of jobs.

Fork, not spawn: a worker starts with the parent's config, manifest and loaded cache already in
memory, and nothing has to be pickled on the way in but the chunk's file names. The parent checks
chunks too (`--jobs 2` is one worker beside it): its own results are never pickled, and two
busy processes share two cores where three did. Where fork does not exist (Windows, macOS's
default) or the work is too small to pay for the processes, files are checked in this process.
"""

from __future__ import annotations

import gc
import multiprocessing
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any, TypeVar

from skills_lsp.core import forked
from skills_lsp.core.model import SkillFile

MIN_FILES_PER_JOB = 200  # below this a worker costs more than it saves
# Chunks shrink as the list runs out (each a share of what is left), so that whoever is free
# takes the next and all processes finish within a small chunk of each other.
SHARE_PER_JOB = 8
MIN_CHUNK = 20
QUEUED_PER_WORKER = 2  # chunks waiting for a worker, so it never waits for the parent to hand one

# One file's result (check.py: the file's FileCheck and the cache entry it wrote); picklable.
FileResult = TypeVar("FileResult")

_check_one: Callable[[SkillFile], Any] | None = None  # set in the parent before forking; workers inherit it


def default_jobs() -> int:
    """The CPUs this process may run on (`check --jobs`' default)."""
    return forked.cpus()


def _chunks(files: Sequence[SkillFile], jobs: int) -> list[Sequence[SkillFile]]:
    chunks: list[Sequence[SkillFile]] = []
    start = 0
    while start < len(files):
        size = max(MIN_CHUNK, (len(files) - start) // (jobs * SHARE_PER_JOB))
        chunks.append(files[start : start + size])
        start += size
    return chunks


def _run_chunk(files: Sequence[SkillFile]) -> list[Any]:
    assert _check_one is not None
    return [_check_one(item) for item in files]


def check_in_parallel(
    files: Sequence[SkillFile],
    check_one: Callable[[SkillFile], FileResult],
    jobs: int,
    progress: Callable[[int, int], None] | None = None,
) -> list[FileResult]:
    """`check_one` of every file, in the order of `files`, over up to `jobs` processes (this one
    included)."""
    global _check_one
    jobs = min(jobs, len(files) // MIN_FILES_PER_JOB)
    if jobs <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        results: list[FileResult] = []
        for done, item in enumerate(files, 1):
            results.append(check_one(item))
            if progress is not None and (done % 200 == 0 or done == len(files)):
                progress(done, len(files))
        return results
    chunks = _chunks(files, jobs)
    done_chunks: list[list[FileResult] | None] = [None] * len(chunks)
    _check_one = check_one
    # What the workers inherit is moved out of the collector's reach first: a worker's full
    # collection would walk every object of the parent (the cache, the file list, imported
    # modules), writing to each one's header, so copying the pages fork had shared.
    frozen = gc.get_freeze_count() == 0
    if frozen:
        gc.freeze()
    try:
        context = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(max_workers=jobs - 1, mp_context=context) as pool:
            queued: dict[int, Future[list[FileResult]]] = {}
            taken = checked = reported = 0
            while taken < len(chunks) or queued:
                for index in [index for index, future in queued.items() if future.done()]:
                    done_chunks[index] = queued.pop(index).result()
                    checked += len(chunks[index])
                # Each worker's queue topped up, then one chunk checked here; at the end, wait.
                while taken < len(chunks) and len(queued) < (jobs - 1) * QUEUED_PER_WORKER:
                    queued[taken] = pool.submit(_run_chunk, chunks[taken])
                    taken += 1
                if taken < len(chunks):
                    done_chunks[taken] = [check_one(item) for item in chunks[taken]]
                    checked += len(chunks[taken])
                    taken += 1
                elif queued:
                    next(iter(queued.values())).exception()  # waits for the oldest
                if progress is not None and checked != reported:
                    progress(checked, len(files))
                    reported = checked
        return [result for chunk in done_chunks if chunk is not None for result in chunk]
    finally:
        _check_one = None
        if frozen:
            gc.unfreeze()
