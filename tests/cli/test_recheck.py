"""`check`'s saved run (cli/recheck.py): a re-check over an unchanged tree prints the saved output
without checking anything, and after any edit it prints what a cold run prints."""

from __future__ import annotations

import io
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from skills_lsp.cli import check as check_command
from skills_lsp.cli import main, recheck
from skills_lsp.core.files import frames


def skill(name: str, description: str = "Does things. Use when things need doing.", body: str = "") -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n\n# {name}\n\n{body}\n"


@pytest.fixture
def trusting(monkeypatch: pytest.MonkeyPatch) -> None:
    """Stamps made just before a run are trusted (files written by a test are all that recent;
    the default distrusts them, see `test_a_tree_written_just_before_the_run_is_checked_again`)."""
    monkeypatch.setattr(recheck, "RACY_NS", 0)
    monkeypatch.setattr(frames, "RACY_NS", 0)


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """How many runs were checked in full (not answered from the saved run)."""
    calls: list[int] = []
    full = check_command._check

    def counting(*args: object, **kwargs: object) -> int:
        calls.append(1)
        return full(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(check_command, "_check", counting)
    yield calls


def run(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["check", *args], out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def workspace(root: Path) -> Path:
    ws = root / "ws"
    (ws / "skills" / "pdf").mkdir(parents=True)
    (ws / "skills" / "pdf" / "SKILL.md").write_text(
        skill("pdf", body="See [forms](references/forms.md) and [evals](evals/evals.json)."), encoding="utf-8"
    )
    (ws / "skills" / "bad").mkdir()
    (ws / "skills" / "bad" / "SKILL.md").write_text(skill("Bad_Name", description="x"), encoding="utf-8")
    (ws / "skills" / "ok").mkdir()
    (ws / "skills" / "ok" / "SKILL.md").write_text(skill("ok"), encoding="utf-8")
    return ws


def both(ws: Path, cache: Path, *options: str) -> tuple[tuple[int, str, str], tuple[int, str, str]]:
    """(the run with the cache, a cold run)."""
    warm = run(str(ws), "--cache-dir", str(cache), *options)
    cold = run(str(ws), "--no-cache", *options)
    return warm, cold


EDITS = [
    "nothing",
    "edit in place",
    "add a skill",
    "remove a skill",
    "create a referenced file",
    "remove a referenced file",
    "add a test-query file",
    "add a config",
    "change the config",
    "add a .gitignore",
    "add a flat skill",
]


def edit(ws: Path, what: str) -> None:
    if what == "edit in place":
        path = ws / "skills" / "ok" / "SKILL.md"
        text = path.read_text(encoding="utf-8")
        path.write_text(text.replace("Does things", "Does thing"), encoding="utf-8")
    elif what == "add a skill":
        (ws / "skills" / "new").mkdir()
        (ws / "skills" / "new" / "SKILL.md").write_text(skill("new", description="short"), encoding="utf-8")
    elif what == "remove a skill":
        shutil.rmtree(ws / "skills" / "bad")
    elif what == "create a referenced file":
        (ws / "skills" / "pdf" / "references").mkdir()
        (ws / "skills" / "pdf" / "references" / "forms.md").write_text("# Forms\n", encoding="utf-8")
    elif what == "remove a referenced file":
        (ws / "skills" / "pdf" / "references" / "forms.md").unlink()
    elif what == "add a test-query file":
        (ws / "skill-queries.yaml").write_text("cases:\n  - query: 3\n", encoding="utf-8")
    elif what == "add a config":
        (ws / "skills-lsp.toml").write_text('ignore = ["SK101"]\n', encoding="utf-8")
    elif what == "change the config":
        (ws / "skills-lsp.toml").write_text('select = ["SK2"]\n', encoding="utf-8")
    elif what == "add a .gitignore":
        (ws / ".gitignore").write_text("skills/ok/\n", encoding="utf-8")
    elif what == "add a flat skill":
        (ws / ".skills").mkdir()
        (ws / ".skills" / "flat.md").write_text(skill("flat"), encoding="utf-8")


@pytest.mark.usefixtures("trusting")
@pytest.mark.parametrize("output", ["json", "text"])
def test_after_every_edit_the_warm_run_prints_what_a_cold_run_prints(
    tmp_path: Path, counted: list[int], output: str
) -> None:
    ws = workspace(tmp_path)
    cache = tmp_path / "cache"
    first, cold = both(ws, cache, "--format", output)
    assert first == cold and len(counted) == 2
    for what in EDITS:
        edit(ws, what)
        before = len(counted)
        changed, cold = both(ws, cache, "--format", output)
        assert changed == cold, what
        if what != "nothing":
            assert len(counted) == before + 2, f"{what}: the saved run was used"
        again, _ = both(ws, cache, "--format", output)
        assert again == cold, what
        full_runs = 3 if what != "nothing" else 2  # the cold runs, and the first warm run after an edit
        assert len(counted) == before + full_runs, f"{what}: the unchanged re-check was checked in full"


@pytest.mark.usefixtures("trusting")
def test_the_saved_run_is_per_command(
    tmp_path: Path, counted: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = workspace(tmp_path)
    cache = tmp_path / "cache"
    json_run = run(str(ws), "--cache-dir", str(cache), "--format", "json")
    text_run = run(str(ws), "--cache-dir", str(cache))  # another format: checked again
    assert json_run[1] != text_run[1] and len(counted) == 2
    assert run(str(ws), "--cache-dir", str(cache), "--ignore", "SK204") != text_run
    monkeypatch.chdir(ws)  # paths are printed relative to the working folder
    moved = run(".", "--cache-dir", str(cache), "--ignore", "SK204")
    assert moved == run(".", "--no-cache", "--ignore", "SK204")
    monkeypatch.setenv("SLASH_COMMAND_TOOL_CHAR_BUDGET", "100")  # read by the listing rules
    budget = run(".", "--cache-dir", str(cache), "--ignore", "SK204")
    assert budget == run(".", "--no-cache", "--ignore", "SK204")
    assert len(counted) == 7


@pytest.mark.usefixtures("trusting")
def test_the_editor_only_warning_is_written_by_a_saved_run_too(tmp_path: Path, counted: list[int]) -> None:
    ws = workspace(tmp_path)
    cache = tmp_path / "cache"
    first = run(str(ws), "--cache-dir", str(cache), "--extend-select", "sk704")
    second = run(str(ws), "--cache-dir", str(cache), "--extend-select", "sk704")
    assert first == second and "SK704 runs in the editor" in first[2] and len(counted) == 1


def test_a_tree_written_just_before_the_run_is_checked_again(tmp_path: Path, counted: list[int]) -> None:
    ws = workspace(tmp_path)
    cache = tmp_path / "cache"
    first = run(str(ws), "--cache-dir", str(cache))
    second = run(str(ws), "--cache-dir", str(cache))  # a same-tick edit could hide: not trusted
    assert first == second and len(counted) == 2


@pytest.mark.usefixtures("trusting")
@pytest.mark.parametrize("damage", ["truncated", "flipped", "foreign version", "garbage", "empty"])
def test_a_damaged_saved_run_is_never_trusted(tmp_path: Path, counted: list[int], damage: str) -> None:
    ws = workspace(tmp_path)
    cache = tmp_path / "cache"
    first = run(str(ws), "--cache-dir", str(cache), "--format", "json")
    saved = cache / recheck.RUN_FILE
    data = saved.read_bytes()
    if damage == "truncated":
        saved.write_bytes(data[: len(data) // 2])
    elif damage == "flipped":  # a byte of the saved output: the checksum tells
        at = data.rindex(b"SK")
        saved.write_bytes(data[:at] + b"XX" + data[at + 2 :])
    elif damage == "foreign version":
        saved.write_bytes(data.replace(recheck._FRAME_KEY, recheck._FRAME_KEY[:-1] + b"~"))
    elif damage == "garbage":
        saved.write_bytes(os.urandom(len(data)))
    else:
        saved.write_bytes(b"")
    second = run(str(ws), "--cache-dir", str(cache), "--format", "json")
    assert second == first and len(counted) == 2
    assert frames.read_frame(saved, recheck._FRAME_KEY) is not None  # written again, whole


@pytest.mark.usefixtures("trusting")
def test_runs_that_write_are_never_answered_from_a_saved_run(tmp_path: Path, counted: list[int]) -> None:
    ws = workspace(tmp_path)
    cache = tmp_path / "cache"
    run(str(ws), "--cache-dir", str(cache))
    run(str(ws), "--cache-dir", str(cache), "--write-baseline", str(tmp_path / "baseline.json"))
    run(str(ws), "--cache-dir", str(cache), "--baseline", str(tmp_path / "baseline.json"))
    run(str(ws), "--cache-dir", str(cache), "--fix")
    run(str(ws), "--no-cache")
    assert len(counted) == 5
    assert not (tmp_path / "cache" / "check-run.bin.tmp").exists()


def test_a_probe_through_a_symlink_is_probed_itself(tmp_path: Path) -> None:
    target = tmp_path / "target.md"
    target.write_text("x", encoding="utf-8")
    (tmp_path / "link.md").symlink_to(target)
    recorder = recheck._Recorder({})
    recorder.present(str(tmp_path / "link.md"))
    recorder.absent(str(tmp_path / "missing" / "deeper" / "file.md"))
    assert recorder.exists == {str(tmp_path / "link.md"): True}
    assert set(recorder.dirs) == {str(tmp_path)}  # the nearest existing folder answers for the rest
