"""`check_in_parallel`: results in file order, and workers that leave the parent's objects to it."""

from __future__ import annotations

import gc

import pytest

from skills_lsp.core.model import FileKind, SkillFile
from skills_lsp.core.rules.parallel import MIN_FILES_PER_JOB, check_in_parallel


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
