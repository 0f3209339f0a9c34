"""The code base stays ruff- and mypy-clean: part of the one test command CI runs."""

from __future__ import annotations

import importlib.util
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


# Modules of the optional extras that mypy must see to check the package (skills_lsp.adk imports
# google-adk; the semantic scorer reads the embedding model with tokenizers and safetensors).
EXTRAS = {"google.adk": "adk", "tokenizers": "semantic", "safetensors": "semantic"}


def test_mypy_is_clean() -> None:
    missing = sorted({extra for module, extra in EXTRAS.items() if not _importable(module)})
    if missing:
        pytest.skip(f"the optional extras {missing} are not installed: mypy would only report their absence")
    proc = subprocess.run([*_tool("mypy")], cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # a parent package is missing
        return False
