"""The README's first set-up command is the first thing a newcomer runs: the output it shows
must be what they will see."""

from __future__ import annotations

import io
import re
import shlex
import shutil
import tempfile
from pathlib import Path

import pytest

from skills_lsp.cli import main

REPO = Path(__file__).resolve().parents[2]


def test_the_readme_shows_what_the_first_set_up_command_prints(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    shown = re.search(r"The first command prints:\n\n```text\n(.*?)```", readme, re.S)
    assert shown is not None
    shutil.copytree(REPO / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)  # the command runs from the checkout, with relative paths
    out = io.StringIO()
    assert main(["check", "examples/", "--no-cache"], out, io.StringIO()) == 1
    assert out.getvalue() == shown.group(1)


# The other commands whose output the README shows: a `bash` block with one `skills-lsp` command,
# then "prints..." and a `text` block with its standard output.
SHOWN = re.compile(r"```bash\n(skills-lsp [^\n]*)\n```\n\nprints(?:(?!```).)*?```text\n(.*?)```", re.S)


def shown_commands() -> list[tuple[str, str]]:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    return [(m.group(1), m.group(2)) for m in SHOWN.finditer(readme)]


def test_the_readme_shows_the_fix_and_statistics_outputs() -> None:
    commands = [command for command, _ in shown_commands()]
    assert any("--diff" in c for c in commands) and any("--statistics" in c for c in commands)


@pytest.mark.parametrize(("command", "output"), shown_commands(), ids=[c for c, _ in shown_commands()])
def test_the_readme_shows_what_each_command_prints(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str, output: str
) -> None:
    shutil.copytree(REPO / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    main([*shlex.split(command)[1:], "--no-cache"], out, io.StringIO())
    assert out.getvalue() == output


# Codex writes each skill's absolute path into its entry, so its figures depend on where the
# checkout is: the README shows them for this one, and the test puts examples/ at a path as long.
README_CHECKOUT = "/home/user/src/skills-lsp"


def test_the_readme_shows_what_the_codex_budget_prints(monkeypatch: pytest.MonkeyPatch) -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    command = "skills-lsp budget examples --runtime codex --context-window 20000"
    shown = re.search(re.escape(command) + r"\n.*?```\n\n(?:(?!```).)*?```text\n(.*?)```", readme, re.S)
    assert shown is not None and f"`{README_CHECKOUT}`" in readme
    top = Path(tempfile.mkdtemp(dir="/tmp"))
    try:
        checkout = top / ("c" * (len(README_CHECKOUT) - len(str(top)) - 1))
        assert len(str(checkout)) == len(README_CHECKOUT)
        shutil.copytree(REPO / "examples", checkout / "examples")
        monkeypatch.chdir(checkout)
        out = io.StringIO()
        assert main([*shlex.split(command)[1:]], out, io.StringIO()) == 1
    finally:
        shutil.rmtree(top)
    assert out.getvalue() == shown.group(1)
