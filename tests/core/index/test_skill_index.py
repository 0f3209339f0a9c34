"""The crate's index read on several processes: the same documents, in the same order, as one
process; a child that fails costs time, never a document."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from skills_lsp.core import forked
from skills_lsp.core.index import skill_index
from skills_lsp.core.index.skill_index import (
    SkillDocument,
    load_skill_index,
    load_workspace_index,
    read_crate_document,
    read_documents,
)

needs_fork = pytest.mark.skipif(not forked.may_fork(), reason="forked reading needs Linux and one thread")


def write_tree(root: Path, count: int) -> None:
    """`count` flat skills (some unreadable by the crate), a few convention files, agentskills."""
    for n in range(count):
        folder = root / ".skills" / f"s{n:05d}"
        folder.mkdir(parents=True)
        if n % 97 == 0:
            text = "no frontmatter\n"  # skipped by the crate
        elif n % 89 == 0:
            text = "---\nname: [unclosed\n---\nbody\n"  # a YAML error: skipped
        else:
            # repeated names: the index orders them by path, which the forked runs must keep
            fields = f"name: skill-{n % 300}\ndescription: Does thing {n}. Ünïcödé\ntags: [t{n % 7}]"
            text = f"---\n{fields}\n---\n# Body {n}\n"
        (folder / "SKILL.md").write_text(text, encoding="utf-8")
    (root / "AGENTS.md").write_text("# Project rules\n", encoding="utf-8")
    for n in range(3):
        skill = root / "skills" / f"agent-{n}"
        skill.mkdir(parents=True)
        (skill / "SKILL.md").write_text(
            f"---\nname: agent-{n}\ndescription: An agentskills skill.\n---\nBody\n", encoding="utf-8"
        )


def as_data(docs: object) -> list[dict[str, object]]:
    assert isinstance(docs, (list, skill_index.SkillIndex))
    return [{**d.to_json(), "kind": d.kind, "when": d.when_to_use, "is_path": type(d.path)} for d in docs]


@needs_fork
def test_forked_reading_equals_one_process(tmp_path: Path) -> None:
    write_tree(tmp_path, 1300)
    one = load_skill_index(tmp_path, jobs=1)
    assert len(one) == 1300 - 14 - 14 + 1  # the unreadable ones out, AGENTS.md in
    for jobs in (2, 3):
        assert as_data(load_skill_index(tmp_path, jobs=jobs)) == as_data(one)
    assert as_data(load_workspace_index(tmp_path, jobs=2)) == as_data(load_workspace_index(tmp_path, jobs=1))


@needs_fork
def test_a_failed_child_is_read_again_here(tmp_path: Path) -> None:
    write_tree(tmp_path, 1100)
    paths = sorted((tmp_path / ".skills").rglob("SKILL.md"))
    parent = os.getpid()

    def read_unless_child(path: Path) -> SkillDocument | None:
        if os.getpid() != parent:
            raise RuntimeError("a child that fails")
        return read_crate_document(path)

    assert as_data(read_documents(paths, read_unless_child, jobs=2)) == as_data(
        read_documents(paths, read_crate_document, jobs=1)
    )


def test_small_trees_and_threads_read_in_this_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fewer than MIN_PATHS_PER_JOB paths a process, or another thread running: no fork."""
    write_tree(tmp_path, 40)
    monkeypatch.setattr(forked, "start", lambda work: pytest.fail("forked"))
    paths = sorted((tmp_path / ".skills").rglob("SKILL.md"))
    assert len(read_documents(paths, read_crate_document, jobs=2)) == 39
    monkeypatch.setattr(forked, "may_fork", lambda: False)
    monkeypatch.setattr(skill_index, "MIN_PATHS_PER_JOB", 1)
    assert len(read_documents(paths, read_crate_document, jobs=2)) == 39
