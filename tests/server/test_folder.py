"""A folder as the server keeps it (server/folder.py): a skill's trigger evals on disk are read
when first asked for, not looked for at load."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from skills_lsp.server.state import State


def test_a_skills_trigger_evals_are_read_from_disk_when_asked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = tmp_path / "ws"
    skill = root / "skills" / "pdf-forms"
    (skill / "evals").mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: pdf-forms\ndescription: Fills PDF forms. Use when asked to fill one.\n---\n# PDF\n",
        encoding="utf-8",
    )
    evals = skill / "evals" / "eval_queries.json"
    evals.write_text(json.dumps([{"query": "fill this PDF form", "should_trigger": True}]), encoding="utf-8")
    stray = root / "notes" / "evals" / "eval_queries.json"  # beside no skill
    stray.parent.mkdir(parents=True)
    stray.write_text(evals.read_text(encoding="utf-8"), encoding="utf-8")
    folder = State().load_folder(root)
    assert folder.eval_cases == {}  # nothing looked for at load
    [case] = folder.cases_for(evals)
    assert case.query == "fill this PDF form"
    [result] = folder.results_for(evals)
    assert result.passed
    assert folder.cases_for(stray) == [] and folder.results_for(stray) == []
    evals.unlink()  # read once: a later change comes through the file's update (roles/queries.py)
    assert [c.query for c in folder.eval_cases_of(os.path.normpath(evals))] == ["fill this PDF form"]
