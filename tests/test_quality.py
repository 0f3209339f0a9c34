"""The code base stays ruff- and mypy-clean: part of the one test command CI runs."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _tool(name: str) -> list[str]:
    if shutil.which(name, path=str(Path(sys.executable).parent)):
        return [str(Path(sys.executable).parent / name)]
    pytest.skip(f"{name} is not installed (pip install -e '.[test]')")


def test_ruff_is_clean() -> None:
    proc = subprocess.run([*_tool("ruff"), "check", "."], cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_mypy_is_clean() -> None:
    proc = subprocess.run([*_tool("mypy")], cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
