"""Checking files on several cores: the file list is cut into small contiguous chunks, checked by
this process and by forked worker processes, which return each chunk's results (each file's
findings and the cache entry it wrote); the results are put back in file order, so the output is
the same, byte for byte, whatever the number of jobs.

Fork, not spawn: a worker starts with the parent's config, manifest and loaded cache already in
memory, and nothing has to be pickled on the way in but the chunk's file names. The parent checks
chunks too (`--jobs 2` is one worker beside it): its own results are never pickled, and two
busy processes share two cores where three did. Where fork does not exist (Windows, macOS's
default) or the work is too small to pay for the processes, files are checked in this process.

With an `Exchange`, the processes also tell each other what they learnt that others may use
(check.py: the references found in each content): the parent's news go with each chunk it hands
a worker, a worker's with the chunk's results.

The workers need not wait for the list: while the parent walks the workspace, `found` hands them
each file as the walk finds it, in chunks (the walk finds files several times faster than a
worker checks them, so it only ever keeps a worker's queue full). When the list is complete,
`results` checks the rest, and a file checked early is not checked again when the list has it as
it was found.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from types import TracebackType
from typing import Any, Generic, Protocol, TypeVar

from skills_lsp.core import forked
from skills_lsp.core.model import SkillFile

MIN_FILES_PER_JOB = 200  # below this a worker costs more than it saves
# Chunks shrink as the list runs out (each a share of what is left), so that whoever is free
# takes the next and all processes finish within a small chunk of each other.
SHARE_PER_JOB = 8
MIN_CHUNK = 20
QUEUED_PER_WORKER = 2  # chunks waiting for a worker, so it never waits for the parent to hand one
# While the walk goes on: workers start once it has found enough files for two jobs, and take
# them in chunks of this many, with more of them queued than later (the walk hands out chunks
# only as it finds files, and some folders hold none: 18-19 chunks checked early on the corpus
# with 2 queued, 20-21 with 6).
EARLY_CHUNK = 40
EARLY_QUEUED_PER_WORKER = 6

# One file's result (check.py: the file's FileCheck and the cache entry it wrote); picklable.
FileResult = TypeVar("FileResult")


class Exchange(Protocol):
    """What the processes of a check tell each other (each has its own copy of it)."""

    def outgoing(self) -> object:
        """What this process learnt since it was last asked (picklable)."""
        ...

    def incoming(self, news: object) -> None:
        """What another process learnt."""
        ...


# Set in the parent before forking; workers inherit them.
_check_one: Callable[[SkillFile], Any] | None = None
_exchange: Exchange | None = None


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


def _run_chunk(files: Sequence[SkillFile], news: object) -> tuple[list[Any], object]:
    """In a worker: the chunk's results, and what the worker learnt meanwhile."""
    assert _check_one is not None
    if _exchange is not None:
        _exchange.incoming(news)
    results = [_check_one(item) for item in files]
    return results, _exchange.outgoing() if _exchange is not None else None


def _same(early: SkillFile | None, item: SkillFile) -> bool:
    """Whether a file checked early is `item` (`root` is left out of SkillFile's equality)."""
    return early is not None and early == item and early.root == item.root


class ParallelCheck(Generic[FileResult]):
    """`check_one` of every file of a list, over up to `jobs` processes (this one included),
    starting on the files `found` hands it before the list is complete. Use it as a context
    manager: leaving it stops the workers."""

    def __init__(
        self, check_one: Callable[[SkillFile], FileResult], jobs: int, exchange: Exchange | None = None
    ) -> None:
        self.check_one = check_one
        self.jobs = jobs
        self.exchange = exchange
        self.can_fork = "fork" in multiprocessing.get_all_start_methods()
        self.found_files: list[SkillFile] = []
        self.sent = 0  # found_files[:sent] are in chunks handed to workers
        # Whether `found` may start workers: with one job (or no fork) the caller need not call it.
        self.starts_early = jobs > 1 and self.can_fork
        # Nothing to start before this many files are found.
        self.next_look = 2 * MIN_FILES_PER_JOB if self.starts_early else sys.maxsize
        self.chunks: list[Sequence[SkillFile]] = []
        self.done: list[list[FileResult] | None] = []
        self.queued: dict[int, Future[tuple[list[FileResult], object]]] = {}
        self.checked = 0
        self.pool: ProcessPoolExecutor | None = None
        self.workers = 0
        self.frozen = False

    def __enter__(self) -> ParallelCheck[FileResult]:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        global _check_one, _exchange
        try:
            if self.pool is not None:
                self.pool.shutdown(wait=True, cancel_futures=True)
        finally:
            self.pool = None
            _check_one = _exchange = None
            if self.frozen:
                gc.unfreeze()
                self.frozen = False

    def found(self, item: SkillFile) -> None:
        """A file the list will have (as far as the caller knows): a worker may check it now."""
        self.found_files.append(item)
        if len(self.found_files) >= self.next_look:
            self.next_look = len(self.found_files) + EARLY_CHUNK // 2
            if self.pool is None:
                self._start(self.jobs)
            self._collect()
            while len(self.queued) < self.workers * EARLY_QUEUED_PER_WORKER and (
                len(self.found_files) - self.sent >= EARLY_CHUNK
            ):
                self._submit(self._add(self.found_files[self.sent : self.sent + EARLY_CHUNK]))
                self.sent += EARLY_CHUNK

    def _start(self, jobs: int) -> None:
        global _check_one, _exchange
        _check_one, _exchange = self.check_one, self.exchange
        # What the workers inherit is moved out of the collector's reach first: a worker's full
        # collection would walk every object of the parent (the cache, the file list, imported
        # modules), writing to each one's header, so copying the pages fork had shared.
        if gc.get_freeze_count() == 0:
            gc.freeze()
            self.frozen = True
        self.workers = jobs - 1
        self.pool = ProcessPoolExecutor(
            max_workers=self.workers,
            mp_context=multiprocessing.get_context("fork"),
            initializer=forked.die_with_parent,
            initargs=(os.getpid(),),
        )

    def _add(self, chunk: Sequence[SkillFile]) -> int:
        self.chunks.append(chunk)
        self.done.append(None)
        return len(self.chunks) - 1

    def _submit(self, index: int) -> None:
        assert self.pool is not None
        news = self.exchange.outgoing() if self.exchange is not None else None
        self.queued[index] = self.pool.submit(_run_chunk, self.chunks[index], news)

    def _collect(self) -> None:
        for index in [index for index, future in self.queued.items() if future.done()]:
            self.done[index], news = self.queued.pop(index).result()
            self.checked += len(self.chunks[index])
            if self.exchange is not None:
                self.exchange.incoming(news)

    def results(
        self, files: Sequence[SkillFile], progress: Callable[[int, int], None] | None = None
    ) -> list[FileResult]:
        """`check_one` of every file, in the order of `files`."""
        jobs = min(self.jobs, len(files) // MIN_FILES_PER_JOB)
        if self.pool is None and (jobs <= 1 or not self.can_fork):
            results: list[FileResult] = []
            for done, item in enumerate(files, 1):
                results.append(self.check_one(item))
                if progress is not None and (done % 200 == 0 or done == len(files)):
                    progress(done, len(files))
            return results
        if self.pool is None:
            self._start(jobs)
        self.next_look = sys.maxsize  # nothing more is found
        # The files handed to workers early that the list has, as found, are not checked again.
        early = len(self.chunks)
        sent = {item.path: item for chunk in self.chunks for item in chunk}
        rest = [item for item in files if not _same(sent.get(item.path), item)]
        for chunk in _chunks(rest, self.workers + 1):
            self._add(chunk)
        taken = early
        reported = 0
        while taken < len(self.chunks) or self.queued:
            self._collect()
            # Each worker's queue topped up, then one chunk checked here; at the end, wait.
            while taken < len(self.chunks) and len(self.queued) < self.workers * QUEUED_PER_WORKER:
                self._submit(taken)
                taken += 1
            if taken < len(self.chunks):
                self.done[taken] = [self.check_one(item) for item in self.chunks[taken]]
                self.checked += len(self.chunks[taken])
                taken += 1
            elif self.queued:
                next(iter(self.queued.values())).exception()  # waits for the oldest
            if progress is not None and self.checked != reported:
                reported = self.checked
                progress(min(reported, len(files)), len(files))
        by_path: dict[str, tuple[SkillFile, FileResult]] = {}
        for index in range(early):
            by_path.update(
                (item.path, (item, result))
                for item, result in zip(self.chunks[index], self.done[index] or (), strict=True)
            )
        checked_here = (result for chunk in self.done[early:] for result in chunk or ())
        ordered: list[FileResult] = []
        for item in files:
            known = by_path.get(item.path)
            ordered.append(known[1] if known is not None and _same(known[0], item) else next(checked_here))
        return ordered


def check_in_parallel(
    files: Sequence[SkillFile],
    check_one: Callable[[SkillFile], FileResult],
    jobs: int,
    progress: Callable[[int, int], None] | None = None,
) -> list[FileResult]:
    """`check_one` of every file, in the order of `files`, over up to `jobs` processes (this one
    included)."""
    with ParallelCheck(check_one, jobs) as run:
        return run.results(files, progress)
