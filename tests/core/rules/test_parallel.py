"""`check_in_parallel`: results in file order, and workers that leave the parent's objects to it."""

from __future__ import annotations

import gc
import itertools
import multiprocessing
import os
import time

import pytest

from skills_lsp.core.model import FileKind, SkillFile
from skills_lsp.core.rules.parallel import (
    EARLY_CHUNK,
    MIN_CHUNK,
    MIN_FILES_PER_JOB,
    ParallelCheck,
    _chunks,
    check_in_parallel,
)


def _freeze_count(item: SkillFile) -> tuple[str, int]:
    return item.path, gc.get_freeze_count()


@pytest.mark.skipif(not hasattr(gc, "freeze"), reason="no gc.freeze")
def test_workers_find_the_parents_objects_frozen_and_the_parent_gets_them_back() -> None:
    files = [SkillFile(f"s{i:05}/SKILL.md", FileKind.AGENT_SKILL, ".") for i in range(2 * MIN_FILES_PER_JOB)]
    assert gc.get_freeze_count() == 0
    results = check_in_parallel(files, _freeze_count, jobs=2)
    assert [path for path, _ in results] == [item.path for item in files]  # in file order
    # A worker's collections skip what it inherited (and so never copy those pages).
    assert all(count > len(files) for _, count in results)
    assert gc.get_freeze_count() == 0  # the parent's own objects are collectable again


def test_a_parent_that_froze_objects_itself_keeps_them_frozen() -> None:
    files = [SkillFile(f"s{i:05}/SKILL.md", FileKind.AGENT_SKILL, ".") for i in range(2 * MIN_FILES_PER_JOB)]
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        check_in_parallel(files, _freeze_count, jobs=2)
        assert gc.get_freeze_count() >= frozen
    finally:
        gc.unfreeze()


def _checked_by(item: SkillFile) -> tuple[str, int]:
    return item.path, os.getpid()


def test_the_parent_checks_chunks_beside_its_workers_and_results_keep_file_order() -> None:
    files = [SkillFile(f"s{i:05}/SKILL.md", FileKind.AGENT_SKILL, ".") for i in range(5 * MIN_FILES_PER_JOB)]
    seen: list[tuple[int, int]] = []
    results = check_in_parallel(
        files, _checked_by, jobs=3, progress=lambda done, total: seen.append((done, total))
    )
    assert [path for path, _ in results] == [item.path for item in files]
    pids = {pid for _, pid in results}
    assert os.getpid() in pids and len(pids) > 1  # `--jobs 3`: this process and (up to) two workers
    assert seen[-1] == (len(files), len(files))
    assert [done for done, _ in seen] == sorted({done for done, _ in seen})


def test_chunks_cover_the_files_in_order_and_shrink_towards_the_end() -> None:
    files = [SkillFile(f"s{i:05}/SKILL.md", FileKind.AGENT_SKILL, ".") for i in range(16_000)]
    chunks = _chunks(files, 2)
    assert [item for chunk in chunks for item in chunk] == files
    sizes = [len(chunk) for chunk in chunks]
    assert all(size >= after for size, after in itertools.pairwise(sizes))
    assert sizes[0] <= len(files) // 16 and max(sizes[-2:]) <= 2 * MIN_CHUNK


def _fails(item: SkillFile) -> None:
    if item.path.endswith("00150/SKILL.md"):
        raise ValueError("bad file")


def test_an_error_in_a_chunk_reaches_the_caller() -> None:
    files = [SkillFile(f"s{i:05}/SKILL.md", FileKind.AGENT_SKILL, ".") for i in range(3 * MIN_FILES_PER_JOB)]
    with pytest.raises(ValueError, match="bad file"):
        check_in_parallel(files, _fails, jobs=2)
    assert gc.get_freeze_count() == 0


def _checked_as(item: SkillFile) -> tuple[str, str, int]:
    return item.path, item.kind.value, os.getpid()


def test_files_found_during_the_walk_are_checked_once_unless_the_list_has_them_otherwise() -> None:
    found = [SkillFile(f"s{i:05}/SKILL.md", FileKind.AGENT_SKILL, ".") for i in range(4 * MIN_FILES_PER_JOB)]
    calls: list[str] = []

    def check_one(item: SkillFile) -> tuple[str, str, int]:
        calls.append(item.path)  # in this process only: a worker's calls land in its own copy
        return _checked_as(item)

    with ParallelCheck(check_one, jobs=2) as run:
        for item in reversed(found):  # a walk finds files in its own order, not the list's
            run.found(item)
        assert run.pool is not None and run.sent >= 2 * EARLY_CHUNK  # workers started meanwhile
        early = {item.path for chunk in run.chunks for item in chunk}
        # The list: a file the walk found is listed with another layout (or another root), one
        # is left out, and one it never found is added.
        changed = found[-1]  # the first found, so handed to a worker early
        assert changed.path in early
        files = [
            *found[:-2],
            SkillFile(changed.path, FileKind.FLAT_SKILL, "."),
            SkillFile("t/SKILL.md", FileKind.AGENT_SKILL, "."),
        ]
        results = run.results(files)
    assert [(path, kind) for path, kind, _ in results] == [(item.path, item.kind.value) for item in files]
    # None of what a worker checked early is checked again here, but for the changed file.
    assert not (early - {changed.path}) & set(calls)
    assert calls.count(changed.path) <= 1
    assert any(pid != os.getpid() for _, _, pid in results)
    assert gc.get_freeze_count() == 0


def test_a_walk_that_finds_few_files_starts_no_worker() -> None:
    files = [SkillFile(f"s{i:05}/SKILL.md", FileKind.AGENT_SKILL, ".") for i in range(MIN_FILES_PER_JOB)]
    with ParallelCheck(_checked_by, jobs=2) as run:
        for item in files:
            run.found(item)
        assert run.pool is None
        results = run.results(files)
    assert {pid for _, pid in results} == {os.getpid()}


def test_an_error_in_an_early_chunk_reaches_the_caller_and_stops_the_workers() -> None:
    files = [SkillFile(f"s{i:05}/SKILL.md", FileKind.AGENT_SKILL, ".") for i in range(3 * MIN_FILES_PER_JOB)]
    with pytest.raises(ValueError, match="bad file"), ParallelCheck(_fails, jobs=2) as run:
        for item in files:
            run.found(item)
        run.results(files)
    assert run.pool is None and gc.get_freeze_count() == 0


class _Seen:
    """An exchange of the paths each process checked: it records what it heard from the others."""

    def __init__(self) -> None:
        self.fresh: list[str] = []
        self.heard: list[str] = []

    def outgoing(self) -> object:
        news, self.fresh = self.fresh, []
        return news

    def incoming(self, news: object) -> None:
        assert isinstance(news, list)
        self.heard.extend(news)


_SEEN = _Seen()


def _telling(item: SkillFile) -> tuple[str, int, int]:
    """Checks `item`, telling the others; returns how much this process had heard by then."""
    time.sleep(0.0005)  # long enough for the worker to take chunks after the parent's first
    _SEEN.fresh.append(item.path)
    return item.path, os.getpid(), len(_SEEN.heard)


def test_the_processes_tell_each_other_what_they_learnt() -> None:
    files = [SkillFile(f"s{i:05}/SKILL.md", FileKind.AGENT_SKILL, ".") for i in range(5 * MIN_FILES_PER_JOB)]
    _SEEN.fresh, _SEEN.heard = [], []
    with ParallelCheck(_telling, jobs=2, exchange=_SEEN) as run:
        results = run.results(files)
    here = {path for path, pid, _ in results if pid == os.getpid()}
    there = {path for path, pid, _ in results if pid != os.getpid()}
    assert here and there
    assert set(_SEEN.heard) == there  # every worker chunk's news reached the parent, once each
    assert len(_SEEN.heard) == len(there)
    # and the worker heard the parent's: its later chunks were checked knowing some of them
    assert max(heard for _, pid, heard in results if pid != os.getpid()) > 0


def test_one_job_asks_for_no_files_during_the_walk() -> None:
    with ParallelCheck(_checked_by, jobs=1) as one, ParallelCheck(_checked_by, jobs=2) as two:
        assert not one.starts_early
        assert two.starts_early == ("fork" in multiprocessing.get_all_start_methods())
