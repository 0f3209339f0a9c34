"""Fixtures for the ADK tests: a skills root with two skills, a secret beside them, a symlink out."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("google.adk")

from helpers import write


@pytest.fixture
def skills_root(tmp_path: Path) -> Path:
    """Two skills under `tmp_path/skills`, a secret beside them, and a symlink leading out."""
    root = tmp_path / "skills"
    report = root / "pdf-report"
    write(
        report / "SKILL.md",
        "---\nname: pdf-report\n"
        "description: Build PDF reports from tables. Use when asked for a PDF report.\n"
        "allowed-tools: fetch_table render_pdf\n---\n# PDF report\n\nFetch the table, then render it.\n",
    )
    write(report / "references" / "guide.md", "# Guide\n\nUse A4 pages.\n")
    write(report / "scripts" / "summarize.py", "import sys\nprint('rows:', len(sys.argv) - 1)\n")
    write(tmp_path / "secret.txt", "top secret\n")
    (report / "references" / "leak.md").symlink_to(tmp_path / "secret.txt")
    weather = root / "weather"
    write(
        weather / "SKILL.md",
        "---\nname: weather\ndescription: Look up the weather forecast for a city.\n"
        "allowed-tools: get_forecast send_email\n---\n# Weather\n\nAsk the forecast.\n",
    )
    return root
