"""`check --jobs`: files checked in several processes give byte-identical output, and the cache
they fill is the one a single process fills."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from skills_lsp.core.rules.parallel import MIN_FILES_PER_JOB

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("jobs") / "ws"
    skills = str(3 * MIN_FILES_PER_JOB)  # enough files for three workers
    subprocess.run(
        [sys.executable, str(BENCHMARKS / "generate_workspace.py"), str(root), "--skills", skills],
        check=True,
        capture_output=True,
        timeout=600,
    )
    return root


def check(workspace: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "skills_lsp", "check", str(workspace), "--exit-zero", *args],
        capture_output=True,
        timeout=600,
        check=True,
    )


@pytest.mark.parametrize("output", ["json", "text"])
def test_jobs_1_and_jobs_n_give_byte_identical_output(workspace: Path, output: str) -> None:
    one = check(workspace, "--format", output, "--no-cache", "--jobs", "1").stdout
    three = check(workspace, "--format", output, "--no-cache", "--jobs", "3").stdout
    assert one == three
    if output == "json":
        assert len(json.loads(one)) > 50  # real findings (the generator's mistakes)


def test_a_cache_filled_by_workers_serves_a_single_process(workspace: Path, tmp_path: Path) -> None:
    cold = check(workspace, "--format", "json", "--no-cache", "--jobs", "1").stdout
    cache = tmp_path / "cache"
    filled = check(workspace, "--format", "json", "--cache-dir", str(cache), "--jobs", "3").stdout
    entries = json.loads((cache / "check.json").read_text(encoding="utf-8"))["entries"]
    assert len(entries) >= 3 * MIN_FILES_PER_JOB
    for path, entry in entries.items():  # each file's entry, filed under that file
        assert entry["key"].split(":")[0] == hashlib.sha256(Path(path).read_bytes()).hexdigest()
    warm = check(workspace, "--format", "json", "--cache-dir", str(cache), "--jobs", "1").stdout
    assert cold == filled == warm


def test_jobs_must_be_positive(workspace: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "skills_lsp", "check", str(workspace), "--jobs", "0"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 2 and "--jobs must be 1 or more" in done.stderr


def test_check_runs_without_full_collections_and_restores_the_thresholds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gc

    from helpers import run_cli, write_skill

    from skills_lsp.core.rules import check as check_module

    write_skill(tmp_path, "one", "---\nname: one\ndescription: Use when one.\n---\nBody.\n")
    seen: list[tuple[int, int, int]] = []
    real = check_module.check_paths

    def spying(*args: object, **kwargs: object) -> check_module.CheckResult:
        seen.append(gc.get_threshold())
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(check_module, "check_paths", spying)
    before = gc.get_threshold()
    code, _, _ = run_cli("check", str(tmp_path), "--no-cache", "--exit-zero")
    assert code == 0 and len(seen) == 1
    assert seen[0][:2] == before[:2] and seen[0][2] >= 1_000_000  # full passes off, young ones as they were
    assert gc.get_threshold() == before


def children_of(pid: int) -> set[int]:
    found: set[int] = set()
    for listing in Path(f"/proc/{pid}/task").glob("*/children"):
        try:
            found |= {int(child) for child in listing.read_text(encoding="ascii").split()}
        except OSError:
            continue
    return found


def running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text(encoding="ascii").rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG and /proc are Linux's")
def test_workers_end_with_a_check_killed_outright(workspace: Path) -> None:
    """A check killed with SIGKILL (a CI timeout) leaves no worker behind: they used to wait for
    ever on the pool's queue."""
    process = subprocess.Popen(
        [sys.executable, "-m", "skills_lsp", "check", str(workspace), "--no-cache", "--jobs", "2"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    workers: set[int] = set()
    try:
        deadline = time.monotonic() + 60
        while not workers and process.poll() is None and time.monotonic() < deadline:
            workers = children_of(process.pid)
            time.sleep(0.005)
        assert workers, "the check started no worker"
        process.kill()
        process.wait(timeout=30)
        deadline = time.monotonic() + 10
        while any(running(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(running(pid) for pid in workers)
    finally:
        if process.poll() is None:
            process.kill()
        for pid in workers:
            if running(pid):  # a failed test leaves no orphan either
                os.kill(pid, signal.SIGKILL)
