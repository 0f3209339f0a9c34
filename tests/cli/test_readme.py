"""The README's first set-up command is the first thing a newcomer runs: the output it shows
must be what they will see."""

from __future__ import annotations

import io
import re
import shutil
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
