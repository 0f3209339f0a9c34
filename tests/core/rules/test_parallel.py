"""`check_in_parallel`: results in file order, and workers that leave the parent's objects to it."""

from __future__ import annotations

import gc
import itertools
import os

import pytest

from skills_lsp.core.model import FileKind, SkillFile
from skills_lsp.core.rules.parallel import MIN_CHUNK, MIN_FILES_PER_JOB, _chunks, check_in_parallel


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
