"""Checking files on several cores: contiguous chunks of the file list go to forked worker
processes, which return each file's findings (and the cache entry they wrote); the results are
put back in file order, so the output is the same, byte for byte, whatever the number of jobs.

Fork, not spawn: a worker starts with the parent's config, manifest and loaded cache already in
memory, and nothing has to be pickled on the way in. Where fork does not exist (Windows, macOS's
default) or the work is too small to pay for the processes, files are checked in this process.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any, TypeVar

from skills_lsp.core.model import SkillFile

MIN_FILES_PER_JOB = 200  # below this a worker costs more than it saves
CHUNKS_PER_JOB = 4  # smaller chunks even out files of very different sizes

# One file's result (check.py: the file's FileCheck and the cache entry it wrote); picklable.
FileResult = TypeVar("FileResult")

_check_one: Callable[[SkillFile], Any] | None = None  # set in the parent before forking; workers inherit it


def default_jobs() -> int:
    """The CPUs this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def _run_chunk(files: Sequence[SkillFile]) -> list[Any]:
    assert _check_one is not None
    return [_check_one(item) for item in files]


def check_in_parallel(
    files: Sequence[SkillFile],
    check_one: Callable[[SkillFile], FileResult],
    jobs: int,
    progress: Callable[[int, int], None] | None = None,
) -> list[FileResult]:
    """`check_one` of every file, in the order of `files`, over up to `jobs` processes."""
    global _check_one
    jobs = min(jobs, len(files) // MIN_FILES_PER_JOB)
    results: list[FileResult] = []
    if jobs <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        for done, item in enumerate(files, 1):
            results.append(check_one(item))
            if progress is not None and (done % 200 == 0 or done == len(files)):
                progress(done, len(files))
        return results
    size = -(-len(files) // (jobs * CHUNKS_PER_JOB))
    chunks = [files[i : i + size] for i in range(0, len(files), size)]
    _check_one = check_one
    # What the workers inherit is moved out of the collector's reach first: a worker's full
    # collection would walk every object of the parent (the cache, the file list, imported
    # modules), writing to each one's header, so copying the pages fork had shared.
    frozen = gc.get_freeze_count() == 0
    if frozen:
        gc.freeze()
    try:
        context = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
            for chunk_results in pool.map(_run_chunk, chunks):  # in chunk order
                results.extend(chunk_results)
                if progress is not None:
                    progress(len(results), len(files))
        return results
    finally:
        _check_one = None
        if frozen:
            gc.unfreeze()
