"""The crate's index read on several processes: the same documents, in the same order, as one
process; a child that fails costs time, never a document."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from skills_lsp.core import forked
from skills_lsp.core.index import skill_index
from skills_lsp.core.index.skill_index import (
    SkillDocument,
    load_skill_index,
    load_workspace_index,
    read_crate_document,
    read_documents,
    read_each,
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


@pytest.fixture
def children(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many children each forked read started (a test that forks nothing proves nothing)."""
    started: list[int] = []
    start = forked.start

    def counting(work: Any) -> Any:
        started.append(1)
        return start(work)

    monkeypatch.setattr(forked, "start", counting)
    return started


@needs_fork
def test_forked_reading_equals_one_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, children: list[int]
) -> None:
    write_tree(tmp_path, 1300)
    one = load_skill_index(tmp_path, jobs=1)
    assert len(one) == 1300 - 14 - 14 + 1  # the unreadable ones out, AGENTS.md in
    assert not children
    assert as_data(load_skill_index(tmp_path, jobs=2)) == as_data(one)
    assert len(children) == 1  # one child walked and read the last of `.skills/`'s entries
    monkeypatch.setattr(skill_index, "MIN_PATHS_PER_JOB", 100)  # runs of 100+: several children
    paths = skill_index.discover_instruction_files(tmp_path)
    in_one = as_data(read_documents(paths, read_crate_document, jobs=1))
    for jobs in (3, 5):
        assert as_data(read_documents(paths, read_crate_document, jobs=jobs)) == in_one
    assert len(children) == 1 + 2 + 4
    assert as_data(load_workspace_index(tmp_path, jobs=2)) == as_data(load_workspace_index(tmp_path, jobs=1))


def write_edges(root: Path) -> None:
    """Files the crate's two walks find outside `.skills/`, sorting before and after it, and the
    walks' rules inside it (files directly in it, support folders, ignored folders, a link)."""
    files = {
        ".agents/AGENTS.md": "# Before .skills\n",
        ".claude/skills/c.md": "---\nname: claude-skill\ndescription: Under .claude/skills.\n---\nbody\n",
        ".skills/a-top.md": "---\nname: top\ndescription: Directly in .skills.\n---\nbody\n",
        ".skills/s00010/references/AGENTS.md": "# Found by the convention walk only\n",
        ".skills/s00011/node_modules/AGENTS.md": "# Found by the skill walk only\n",
        ".skills/s00012/scripts/x.md": "---\nname: skipped\ndescription: A support folder.\n---\n",
        # under `.skills/` every file is read strictly (a frontmatter, or skipped); these share
        # their names with files outside `.skills/` that sort before and after them
        ".skills/zz/CLAUDE.MD": "---\nname: claude\ndescription: A convention file only.\n---\n",
        ".skills/zz/AGENTS.md": "---\nname: agents\ndescription: Between the others.\n---\n",
        "AGENTS.md": "# After .skills\n",
        "SOUL.md": "# At the root\n",
        "pkg/SOUL.md": "# Not at the root: skipped\n",
        "zz/CLAUDE.md": "# Last\n",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    (root / ".skills" / "link.md").symlink_to(root / ".skills" / "a-top.md")


@needs_fork
@pytest.mark.parametrize("spelling", ["absolute", "."])
def test_a_walk_shared_with_a_child_finds_and_orders_as_one_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, children: list[int], spelling: str
) -> None:
    write_tree(tmp_path, 60)
    write_edges(tmp_path)
    monkeypatch.setattr(skill_index, "MIN_PATHS_PER_JOB", 10)
    root: str | Path = tmp_path
    if spelling == ".":
        monkeypatch.chdir(tmp_path)
        root = "."
    one = as_data(load_skill_index(root, jobs=1))
    assert not children
    assert as_data(load_skill_index(root, jobs=2)) == one
    assert len(children) == 1
    names = [d["name"] for d in one]
    assert {"claude-skill", "top", "agents", "soul"} <= set(names) and "skipped" not in names
    assert names.count("agents") == 3 and names.count("claude") == 2
    start = forked.start

    def failing(work: Any) -> Any:  # a child that fails: stopped and reaped, no result
        result = start(work)
        return lambda wanted: result(False)

    monkeypatch.setattr(forked, "start", failing)
    assert as_data(load_skill_index(root, jobs=2)) == one


@needs_fork
def test_an_interrupt_while_waiting_for_the_walks_child_is_the_interrupt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The child's result function is called once: interrupted in its wait it stops the child
    itself, and a second call would fail on its closed file (an OSError instead of Ctrl-C)."""
    write_tree(tmp_path, 30)
    monkeypatch.setattr(skill_index, "MIN_PATHS_PER_JOB", 10)
    start = forked.start
    calls: list[bool] = []

    def interrupted(work: Any) -> Any:
        result = start(work)

        def waited(wanted: bool) -> Any:
            calls.append(wanted)
            assert len(calls) == 1, "the result function was called twice"
            result(False)  # what an interrupt in the wait does: the child stopped, then raised
            raise KeyboardInterrupt

        return waited

    monkeypatch.setattr(forked, "start", interrupted)
    with pytest.raises(KeyboardInterrupt):
        load_skill_index(tmp_path, jobs=2)
    assert calls == [True]


@needs_fork
def test_a_failed_child_is_read_again_here(tmp_path: Path, children: list[int]) -> None:
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
    assert len(children) == 1


@needs_fork
def test_an_error_in_this_process_leaves_no_child_running(tmp_path: Path, children: list[int]) -> None:
    write_tree(tmp_path, 1100)
    paths = sorted((tmp_path / ".skills").rglob("SKILL.md"))
    parent = os.getpid()
    pids = tmp_path / "pids"

    def slow_in_child_failing_here(path: Path) -> SkillDocument | None:
        if os.getpid() != parent:
            with pids.open("a") as out:
                out.write(f"{os.getpid()}\n")
            time.sleep(1)  # still reading when this process fails
        elif path == paths[100]:
            for _ in range(500):  # fail once the child is reading
                if pids.exists():
                    break
                time.sleep(0.01)
            raise OSError("a disk error here")
        return read_crate_document(path)

    with pytest.raises(OSError, match="a disk error here"):
        read_documents(paths, slow_in_child_failing_here, jobs=2)
    assert len(children) == 1
    (pid,) = {int(line) for line in pids.read_text().split()}
    with pytest.raises(ProcessLookupError):  # stopped and reaped: not even a zombie
        os.kill(pid, 0)


def test_small_trees_and_threads_read_in_this_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, children: list[int]
) -> None:
    """Fewer than MIN_PATHS_PER_JOB paths a process, or another thread running: no fork."""
    write_tree(tmp_path, 40)
    paths = sorted((tmp_path / ".skills").rglob("SKILL.md"))
    assert len(read_documents(paths, read_crate_document, jobs=2)) == 39
    monkeypatch.setattr(skill_index, "MIN_PATHS_PER_JOB", 1)
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert len(read_documents(paths, read_crate_document, jobs=2)) == 39
    finally:
        stop.set()
        thread.join()
    assert not children


@needs_fork
def test_a_root_that_cannot_be_listed_reads_as_in_one_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A root one may enter but not list (mode 0311 for another user): the walk skips its
    listing and still finds `.skills/`, with one job or two."""
    write_tree(tmp_path, 30)
    monkeypatch.setattr(skill_index, "MIN_PATHS_PER_JOB", 10)
    scandir = os.scandir

    def refusing(path: Any = ".") -> Any:
        if os.fspath(path) == str(tmp_path):
            raise PermissionError(13, "Permission denied", str(path))
        return scandir(path)

    monkeypatch.setattr(os, "scandir", refusing)
    one = as_data(load_skill_index(tmp_path, jobs=1))
    assert len(one) == 29  # s00000 unreadable; AGENTS.md at the root not seen
    assert as_data(load_skill_index(tmp_path, jobs=2)) == one


@needs_fork
@pytest.mark.parametrize("jobs", [1, 2])
def test_each_document_is_handed_over_here_as_it_arrives(tmp_path: Path, jobs: int) -> None:
    """`each` runs in this process, once per document, in path order within each run, and a
    document handed over has not been seen by the caller yet (the store spools bodies then)."""
    write_tree(tmp_path, 1100)
    paths = sorted((tmp_path / ".skills").rglob("SKILL.md"))
    here = os.getpid()
    seen: list[tuple[int, Path]] = []
    found = read_each(paths, read_crate_document, jobs, each=lambda doc: seen.append((os.getpid(), doc.path)))
    documents = [doc for doc in found if doc is not None]
    assert [path for _, path in seen] == [doc.path for doc in documents]
    assert {pid for pid, _ in seen} == {here}
