"""The hooks in .pre-commit-hooks.yaml, run by pre-commit itself in a temporary git repository.

The hook repository is this checkout's files (committed, untracked and changed alike) committed
into a temporary repository, so what is tested is what is on disk. pre-commit builds the hooks'
Python environment once (it pip-installs skills-lsp from that repository, its dependencies from the
package index) into a PRE_COMMIT_HOME shared by this module's tests; nothing is fetched from GitHub.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def _tool(name: str) -> str | None:
    local = BIN / name
    return str(local) if local.exists() else shutil.which(name)


PRE_COMMIT = _tool("pre-commit")
GIT = shutil.which("git")
pytestmark = pytest.mark.skipif(
    PRE_COMMIT is None or GIT is None, reason="pre-commit or git is not installed (the `test` extra has it)"
)

BAD = "---\nname: Bad\ndescription: x\n---\nSee [a](references/none.md).\n"
GOOD = "---\nname: good\ndescription: Formats notes. Use when the user asks for notes.\n---\nSteps.\n"


def _git(cwd: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
    }
    done = subprocess.run(
        ["git", "-c", "commit.gpgsign=false", *args], cwd=cwd, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """This checkout as a committed git repository: (path, commit)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        check=False,
    )
    if listed.returncode != 0:
        pytest.skip("not a git checkout")
    target = tmp_path_factory.mktemp("hook-repo")
    for name in filter(None, listed.stdout.decode().split("\0")):
        source = REPO / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    _git(target, "init", "-q")
    _git(target, "add", "-A")
    _git(target, "commit", "-q", "-m", "hooks under test")
    yield target, _git(target, "rev-parse", "HEAD")


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("pre-commit-home")


def _project(tmp_path: Path, config: str, files: dict[str, str]) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    _git(project, "init", "-q")
    (project / ".pre-commit-config.yaml").write_text(config)
    for name, text in files.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(text)
    _git(project, "add", "-A")
    return project


def _run(project: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    assert PRE_COMMIT is not None
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.run(
        [PRE_COMMIT, "run", "--all-files", "--color", "never", *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


def _config(repo: Path, rev: str, hook: str) -> str:
    return f"repos:\n  - repo: {repo}\n    rev: {rev}\n    hooks:\n      - id: {hook}\n"


def test_the_manifest_is_valid() -> None:
    assert PRE_COMMIT is not None
    done = subprocess.run(
        [PRE_COMMIT, "validate-manifest", str(REPO / ".pre-commit-hooks.yaml")],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_check_hook_fails_on_findings_and_passes_when_fixed(
    tmp_path: Path, hook_repo: tuple[Path, str], pre_commit_home: Path
) -> None:
    repo, rev = hook_repo
    project = _project(
        tmp_path, _config(repo, rev, "skills-lsp"), {"skills/bad/SKILL.md": BAD, "skills/good/SKILL.md": GOOD}
    )
    failed = _run(project, pre_commit_home)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "skills-lsp check" in failed.stdout and "Failed" in failed.stdout
    assert "skills/bad/SKILL.md:5:9: SK603 [error] `references/none.md` does not exist." in failed.stdout
    (project / "skills" / "bad").rename(project / "skills" / "fixed")
    (project / "skills" / "fixed" / "SKILL.md").write_text(GOOD.replace("good", "fixed"))
    _git(project, "add", "-A")
    passed = _run(project, pre_commit_home)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "Passed" in passed.stdout


def test_check_hook_is_skipped_without_skill_files(
    tmp_path: Path, hook_repo: tuple[Path, str], pre_commit_home: Path
) -> None:
    repo, rev = hook_repo
    project = _project(tmp_path, _config(repo, rev, "skills-lsp"), {"main.py": "print('hi')\n"})
    done = _run(project, pre_commit_home)
    assert done.returncode == 0 and "(no files to check)Skipped" in done.stdout, done.stdout


def test_fix_hook_applies_safe_fixes(
    tmp_path: Path, hook_repo: tuple[Path, str], pre_commit_home: Path
) -> None:
    repo, rev = hook_repo
    body = GOOD.replace("Steps.", "Run scripts\\run.py first.")
    project = _project(
        tmp_path,
        _config(repo, rev, "skills-lsp-fix"),
        {"skills/good/SKILL.md": body, "skills/good/scripts/run.py": "print('ok')\n"},
    )
    first = _run(project, pre_commit_home)
    assert first.returncode == 1, first.stdout  # pre-commit fails a hook that changed files
    assert "Run scripts/run.py first." in (project / "skills" / "good" / "SKILL.md").read_text()
    _git(project, "add", "-A")
    second = _run(project, pre_commit_home)
    assert second.returncode == 0, second.stdout + second.stderr


def test_a_local_system_hook_needs_no_install(tmp_path: Path) -> None:
    """The README's offline variant: `repo: local` with the skills-lsp already installed."""
    config = (
        "repos:\n  - repo: local\n    hooks:\n      - id: skills-lsp\n        name: skills-lsp check\n"
        "        entry: skills-lsp check\n        language: system\n        pass_filenames: false\n"
        "        files: \\.md$\n"
    )
    project = _project(tmp_path, config, {"skills/bad/SKILL.md": BAD})
    done = _run(project, tmp_path / "home")
    assert done.returncode == 1 and "SK603" in done.stdout, done.stdout + done.stderr


def test_the_hooks_run_when_trigger_evals_or_ignore_files_change() -> None:
    """`check` reads trigger evals (SK003) and honours .gitignore / .ignore: a commit that
    touches only those must still run the hook (pre-commit matches `files` with re.search)."""
    import re

    hooks = (Path(__file__).resolve().parents[2] / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")
    found = re.search(r"files: &skill_files (\S+)\n", hooks)
    assert found is not None
    pattern = re.compile(found.group(1))
    for path in (
        "skills/pdf/evals/eval_queries.json",
        ".gitignore",
        "skills/.ignore",
        "docs/.gitignore",
        "skill-queries.yaml",
        "skills/pdf/SKILL.md",
    ):
        assert pattern.search(path), path
    for path in ("src/app.py", "notes.gitignore", "package.json"):
        assert not pattern.search(path), path
