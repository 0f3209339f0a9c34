"""A warm `select` answered from a scorer's saved state (core/routing/quick.py): it prints what a
full `select` over a fresh cache prints, and any change to what the state rests on (a skill
edited, added or removed, the config, a damaged, cut or foreign file) sends it back to the full
path, which saves the state again."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from skills_lsp.cli import engine, main
from skills_lsp.core.files import frames
from skills_lsp.core.files.cache import CACHE_DIR_NAME, cache_dir_for, store_dir
from skills_lsp.core.index import store
from skills_lsp.core.routing import quick, warm
from skills_lsp.core.routing.scorer import SCORERS

SCORER_NAMES = [
    "lexical",
    "bm25f",
    pytest.param(
        "hybrid",
        marks=pytest.mark.skipif(not SCORERS["hybrid"].available(), reason="needs the semantic extra"),
    ),
]
QUERIES = ["review a pull request and fix the failing tests", "convert a pdf form", "zzqx"]


def skill(name: str, description: str, body: str = "") -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n\n# {name}\n\n{body}\n"


SKILLS = {
    "pdf-forms": ("Fill and convert PDF forms. Use when a pdf form needs filling.", "Read the pdf first."),
    "code-review": ("Review a pull request and suggest fixes. Use for code review.", "Check the tests."),
    "test-fixer": ("Fix failing tests in a repository. Use when tests fail.", "Run pytest, read failures."),
    "docker-build": ("Build docker images securely. Use for Dockerfiles.", "Scan the image."),
    "release-notes": ("Write release notes from merged pull requests.", "Group by label."),
}


@pytest.fixture
def trusting(monkeypatch: pytest.MonkeyPatch) -> None:
    """Stamps made just before a run are trusted (every file a test writes is that recent)."""
    for module in (frames, store, quick, warm):
        monkeypatch.setattr(module, "RACY_NS", 0)


@pytest.fixture
def full_runs(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """How many `select` runs loaded the index (were not answered from the saved state)."""
    calls: list[int] = []
    load = engine.load_index

    def counting(*args: object, **kwargs: object) -> object:
        calls.append(1)
        return load(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(engine, "load_index", counting)
    yield calls


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Five skills in `ws`, the working folder `tmp_path` (paths print relative to it), and a
    user cache of this test's own."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    ws = tmp_path / "ws"
    for name, (description, body) in SKILLS.items():
        write(ws / "skills" / name / "SKILL.md", skill(name, description, body))
    return ws


def write(path: Path, text: str) -> None:
    """Write `path` with an mtime in the past that differs from any earlier one (a clock as
    coarse as a filesystem's would otherwise keep it; a future one is never trusted)."""
    old = path.stat().st_mtime_ns if path.exists() else 0
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    mtime = max(old + 1_000_000_000, time.time_ns() - 100_000_000_000)
    os.utime(path, ns=(mtime, mtime))


def select(query: str, scorer: str, *options: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["select", query, "--root", "ws", "--scorer", scorer, "--format", "json", *options], out, err)
    return code, out.getvalue(), err.getvalue()


def cold(
    query: str, scorer: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *options: str
) -> tuple[int, str, str]:
    """The same `select` over an empty cache (one never used again), in a copy of the workspace
    without its cache folder (one beside a config file is the workspace's own), made at the same
    relative path (paths print relative to the working folder)."""
    fresh = tmp_path / f"cold-{len(list(tmp_path.glob('cold-*')))}"
    shutil.copytree(tmp_path / "ws", fresh / "ws", ignore=shutil.ignore_patterns(CACHE_DIR_NAME))
    monkeypatch.setenv("XDG_CACHE_HOME", str(fresh / "cache"))
    monkeypatch.chdir(fresh)
    try:
        return select(query, scorer, *options)
    finally:
        monkeypatch.chdir(tmp_path)
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def saved_state(ws: Path, scorer: str) -> Path:
    return store_dir(cache_dir_for([ws], None), "ws") / warm.FILE.format(scorer, "ascii")


@pytest.mark.parametrize("scorer", SCORER_NAMES)
@pytest.mark.usefixtures("trusting")
def test_a_warm_select_prints_what_a_cold_one_prints(
    scorer: str, workspace: Path, full_runs: list[int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for query in QUERIES:
        select(query, scorer)  # the full path, which saves the state
    before = len(full_runs)
    for query in QUERIES:
        assert select(query, scorer) == cold(query, scorer, tmp_path, monkeypatch), query
    # The warm runs loaded no index (the cold ones, in caches of their own, did).
    assert len(full_runs) == before + len(QUERIES)
    assert saved_state(workspace, scorer).is_file()


EDITS = ["edit in place", "add a skill", "remove a skill", "add a config", "ignore a folder"]


def edit(ws: Path, what: str) -> None:
    if what == "edit in place":
        write(
            ws / "skills" / "pdf-forms" / "SKILL.md", skill("pdf-forms", "Review pull requests of pdf code.")
        )
    elif what == "add a skill":
        write(ws / "skills" / "reviewer" / "SKILL.md", skill("reviewer", "Review a pull request in depth."))
    elif what == "remove a skill":
        (ws / "skills" / "code-review" / "SKILL.md").unlink()
    elif what == "add a config":
        write(ws / "skills-lsp.toml", "max-depth = 1\n")
    else:
        write(ws / ".gitignore", "skills/test-fixer/\n")
        write(ws / ".git" / "HEAD", "ref: refs/heads/main\n")


@pytest.mark.parametrize("what", EDITS)
@pytest.mark.parametrize("scorer", SCORER_NAMES)
@pytest.mark.usefixtures("trusting")
def test_after_an_edit_the_full_path_answers_then_saves_again(
    scorer: str,
    what: str,
    workspace: Path,
    full_runs: list[int],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    query = QUERIES[0]
    select(query, scorer)
    select(query, scorer)
    assert len(full_runs) == 1
    edit(workspace, what)
    expected = cold(query, scorer, tmp_path, monkeypatch)
    runs = len(full_runs)
    assert select(query, scorer) == expected
    assert len(full_runs) == runs + 1  # the saved state did not hold
    assert select(query, scorer) == expected
    assert len(full_runs) == runs + 1  # and was saved again


@pytest.mark.usefixtures("trusting")
def test_a_damaged_cut_or_foreign_state_is_not_used(
    workspace: Path, full_runs: list[int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    query = QUERIES[0]
    expected = cold(query, "bm25f", tmp_path, monkeypatch)
    select(query, "bm25f")
    file = saved_state(workspace, "bm25f")
    whole = file.read_bytes()
    key = warm.frame_key("bm25f", "ascii")
    head_at = len(frames.MAGIC) + 4 + len(key)
    tail = head_at + 40 + int.from_bytes(whole[head_at : head_at + 8], "little")  # after the payload
    assert 0 < tail < len(whole)
    damaged = {
        "a byte of the head": lambda data: data[: tail - 9] + bytes([data[tail - 9] ^ 1]) + data[tail - 8 :],
        "every byte of the postings": lambda data: data[:tail] + bytes(b ^ 0xFF for b in data[tail:]),
        "cut short": lambda data: data[:-1],
    }
    for name, damage in damaged.items():
        file.write_bytes(damage(whole))
        runs = len(full_runs)
        assert select(query, "bm25f") == expected, name
        assert len(full_runs) == runs + 1, name
        assert file.read_bytes() == whole, name  # saved again, as it was
    monkeypatch.setattr(warm, "FORMAT", warm.FORMAT + 1)
    runs = len(full_runs)
    assert select(query, "bm25f") == expected
    assert len(full_runs) == runs + 1


def test_stamps_too_recent_to_trust_are_never_saved(workspace: Path, full_runs: list[int]) -> None:
    """Without `trusting`, a file written just now is in the racy window: every run is full (a
    change in the same clock tick as the save could keep a file's stamp)."""
    os.utime(workspace / "skills" / "pdf-forms" / "SKILL.md")
    for _ in range(2):
        select(QUERIES[0], "lexical")
    assert len(full_runs) == 2
    assert not saved_state(workspace, "lexical").exists()


@pytest.mark.usefixtures("trusting")
def test_requests_the_saved_state_cannot_answer_take_the_full_path(
    workspace: Path, full_runs: list[int]
) -> None:
    select(QUERIES[0], "lexical")
    select(QUERIES[0], "lexical")
    assert len(full_runs) == 1
    for options in (["--explain"], ["--include-tags", "x"], ["--exclude-tags", "x"], ["--crate"]):
        runs = len(full_runs)
        select(QUERIES[0], "lexical", *options)
        assert len(full_runs) == runs + 1, options
    runs = len(full_runs)
    select(QUERIES[0], "lexical", "--tokenizer", "unicode")  # a state of its own, saved now
    select(QUERIES[0], "lexical", "--tokenizer", "unicode")
    assert len(full_runs) == runs + 1


@pytest.mark.parametrize("child_share", [0.5, 1.0])
@pytest.mark.skipif(not warm._may_fork(), reason="the stats are shared with a child process on Linux only")
def test_stats_shared_with_a_child_process_see_every_change(
    child_share: float, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The last `child_share` of the paths is stat'ed by a child process (half for lexical and
    bm25f, all for hybrid): a change in either part, or a path gone, is a no."""
    monkeypatch.setattr(warm, "PARALLEL_STATS", 0)
    # Run after tests/server, this process still has its session-wide servers' asyncio child
    # watcher threads, and may_fork says no; forking here is safe (the child only stats and ends
    # with os._exit), and the child's share is what this test is for.
    monkeypatch.setattr(warm, "_may_fork", lambda: True)
    paths = []
    for n in range(6):
        write(tmp_path / f"f{n}", "x" * n)
        paths.append(str(tmp_path / f"f{n}"))
    paths.append(str(tmp_path))  # a directory: its mtime only

    def stamps() -> tuple[list[int], list[int]]:
        infos = [os.stat(p) for p in paths]
        return [i.st_mtime_ns for i in infos], [i.st_size for i in infos[:-1]] + [-1]

    def hold(mtimes: list[int], sizes: list[int]) -> bool:
        return warm.stats(paths, mtimes, sizes, child_share)()

    mtimes, sizes = stamps()
    assert hold(mtimes, sizes)
    for changed in (0, 5):  # the parent's part (for a share under 1), the child's
        assert not hold([m + (i == changed) for i, m in enumerate(mtimes)], sizes)
        assert not hold(mtimes, [s + (i == changed) for i, s in enumerate(sizes)])
    os.unlink(paths[4])
    assert not hold(mtimes, sizes)
    write(tmp_path / "f4", "xxxx")  # back, with a new mtime
    assert not hold(mtimes, sizes)
    assert hold(*stamps())


@pytest.mark.parametrize("scorer", SCORER_NAMES)
@pytest.mark.usefixtures("trusting")
def test_a_warm_select_with_shared_stats_answers_and_sees_an_edit(
    scorer: str, workspace: Path, full_runs: list[int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(warm, "PARALLEL_STATS", 0)  # a child process for any number of paths
    query = QUERIES[0]
    select(query, scorer)
    assert select(query, scorer) == cold(query, scorer, tmp_path, monkeypatch)
    edit(workspace, "edit in place")  # a file: in the child's half (files come after directories)
    expected = cold(query, scorer, tmp_path, monkeypatch)
    runs = len(full_runs)
    assert select(query, scorer) == expected
    assert len(full_runs) == runs + 1


@pytest.mark.parametrize("scorer", SCORER_NAMES)
@pytest.mark.usefixtures("trusting")
def test_names_and_paths_beyond_ascii_print_as_a_cold_run_prints_them(
    scorer: str, workspace: Path, full_runs: list[int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Names, paths and the vocabulary are kept as UTF-8 (file names that are not UTF-8 with their
    bytes escaped, as os.fsdecode gives them) and read back the same."""
    write(
        workspace / "skills" / "données" / "SKILL.md",
        skill("données", "Convertir un formulaire pdf données."),
    )
    write(workspace / "skills" / "数据库" / "SKILL.md", skill("shu-ju-ku", "数据库 pdf form tables."))
    odd = os.fsencode(workspace / "skills") + b"/odd-\xff"
    os.makedirs(odd + b"/x", exist_ok=True)
    (tmp_path / "odd.md").write_text(skill("odd-name", "An odd pdf form folder."), encoding="utf-8")
    os.replace(tmp_path / "odd.md", odd + b"/SKILL.md")
    mtime = time.time_ns() - 100_000_000_000
    os.utime(odd + b"/SKILL.md", ns=(mtime, mtime))
    shown = []
    for query, options in (
        ("convert a pdf form données", ("--top-k", "10", "--min-score", "0")),
        ("数据库 pdf", ("--tokenizer", "unicode")),
    ):
        select(query, scorer, *options)
        runs = len(full_runs)
        printed = select(query, scorer, *options)
        assert printed == cold(query, scorer, tmp_path, monkeypatch, *options)
        assert len(full_runs) == runs + 1  # the cold one only
        shown.append(printed[1])
    assert "odd-\\\\xff" in shown[0] and "données" in shown[0], shown[0]  # JSON of `odd-\\xff`
    assert "数据库" in shown[1], shown[1]


@pytest.mark.parametrize("scorer", SCORER_NAMES)
def test_a_warm_select_imports_no_parser_and_no_index(scorer: str, workspace: Path) -> None:
    """The warm path's point is what it does not load: the index, the parser, YAML, discovery
    (a name imported from skill_index once brought them all, 0.1 s, into every warm select)."""
    past = time.time_ns() - 200_000_000_000
    for folder in [workspace, *(p for p in workspace.rglob("*") if p.is_dir())]:
        os.utime(folder, ns=(past, past))  # old enough to be trusted by a process of its own
    query = QUERIES[0]
    full = select(query, scorer)  # the full path, which saves the state
    command = ["select", query, "--root", "ws", "--scorer", scorer, "--format", "json"]
    warm_run = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "skills_lsp", *command],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (warm_run.returncode, warm_run.stdout) == full[:2]
    loaded = {line.rsplit("|", 1)[-1].strip() for line in warm_run.stderr.splitlines()}
    heavy = {"skills_lsp.core.index.skill_index", "skills_lsp.core.parse.frontmatter", "yaml", "pathspec"}
    assert not heavy & loaded
