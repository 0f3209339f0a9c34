"""Checking files on several cores: chunks of the file list go to forked worker processes,
which return each file's findings (and the cache entry they wrote); the results are put back in
file order, so the output is the same, byte for byte, whatever the number of jobs.

Files of one `group` (check.py: the same size, so every byte-identical copy of a file) go to the
same chunk and are checked one after the other, so a worker can hand one parse to all copies.
Groups are dealt to chunks by number, which spreads big and small files over every chunk.

Fork, not spawn: a worker starts with the parent's config, manifest and loaded cache already in
memory, and nothing has to be pickled on the way in. Where fork does not exist (Windows, macOS's
default) or the work is too small to pay for the processes, files are checked in this process.
"""

from __future__ import annotations

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


def _chunks(groups: Sequence[int], count: int) -> list[list[int]]:
    """The positions of the files, in `count` chunks: a group's files in one chunk, together,
    each chunk in group order (and file order within a group)."""
    chunks: list[list[int]] = [[] for _ in range(count)]
    for position in sorted(range(len(groups)), key=lambda i: (groups[i], i)):
        chunks[groups[position] % count].append(position)
    return [chunk for chunk in chunks if chunk]


def check_in_parallel(
    files: Sequence[SkillFile],
    check_one: Callable[[SkillFile], FileResult],
    jobs: int,
    progress: Callable[[int, int], None] | None = None,
    groups: Sequence[int] | None = None,
) -> list[FileResult]:
    """`check_one` of every file, over up to `jobs` processes; the results in the order of
    `files`. `groups` (one number a file, >= 0): files of a group are checked together."""
    global _check_one
    jobs = min(jobs, len(files) // MIN_FILES_PER_JOB)
    serial = jobs <= 1 or "fork" not in multiprocessing.get_all_start_methods()
    count = 1 if serial else jobs * CHUNKS_PER_JOB
    chunks = _chunks(groups if groups is not None else [0] * len(files), count) if files else []
    results: list[Any] = [None] * len(files)
    done = 0

    def collect(chunk: list[int], chunk_results: list[FileResult]) -> None:
        nonlocal done
        for position, result in zip(chunk, chunk_results, strict=True):
            results[position] = result
        done += len(chunk)
        if progress is not None:
            progress(done, len(files))

    if serial:
        for chunk in chunks:
            for start in range(0, len(chunk), 200):  # progress every 200 files
                part = chunk[start : start + 200]
                collect(part, [check_one(files[i]) for i in part])
        return results
    _check_one = check_one
    try:
        context = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
            work = [[files[i] for i in chunk] for chunk in chunks]
            for chunk, chunk_results in zip(chunks, pool.map(_run_chunk, work), strict=True):
                collect(chunk, chunk_results)
        return results
    finally:
        _check_one = None
