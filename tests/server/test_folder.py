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


def test_a_skills_listing_base_is_every_other_skill_of_the_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SK703 places an open skill among the folder's others: the base the folder keeps (its
    skills sorted and summed up once, the file's own entry dropped) is the listing of exactly the
    others, before and after an edit elsewhere."""
    from skills_lsp.core.rules.listing import RUNTIMES, ListedSkill, listing_base

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("SLASH_COMMAND_TOOL_CHAR_BUDGET", raising=False)
    root = tmp_path / "ws"
    texts = {
        "alpha": "---\nname: alpha\ndescription: Does alpha things. Use when asked.\n---\n# A\n",
        "beta": "---\nname: beta\ndescription: " + "b" * 3000 + "\nwhen_to_use: On beta days.\n---\n# B\n",
        "beta-too": "---\nname: beta\ndescription: A namesake of beta.\n---\n# B\n",
        "gamma": "---\nname: gamma\ndescription: " + "g" * 900 + "\n---\n# G\n",
    }
    for folder_name, text in texts.items():
        (root / "skills" / folder_name).mkdir(parents=True)
        (root / "skills" / folder_name / "SKILL.md").write_text(text, encoding="utf-8")
    (root / "AGENTS.md").write_text("# Conventions\nAlways be brief.\n", encoding="utf-8")  # never listed
    state = State()
    folder = state.load_folder(root)

    def expected(runtime_name: str, path: Path) -> object:
        others = [
            ListedSkill(d.name, d.description, os.path.abspath(d.path), d.when_to_use)
            for d in folder.index
            if d.kind.value != "convention" and os.path.normpath(d.path) != os.path.normpath(path)
        ]
        return listing_base(RUNTIMES[runtime_name], others, environ={})

    paths = [root / "skills" / name / "SKILL.md" for name in texts]
    for _ in range(2):
        for path in paths:
            for name in ("claude-code", "codex", "gemini-cli"):
                got = folder.listing_base(RUNTIMES[name], path)
                assert got == expected(name, path)
                assert len(got.keys) == len(texts) - 1
        # An edit of one skill changes the others' listing: their bases follow it.
        edited = paths[0].read_text(encoding="utf-8").replace("Does alpha things.", "a" * 1500)
        paths[0].write_text(edited, encoding="utf-8")
        state.update(paths[0], edited)
    assert any("a" * 1500 in d.description for d in folder.index)
    # A warm load (the documents in the store's order, the path table made from the store's keys)
    # gives every skill the same base.
    State().load_folder(root)  # the store saved with the edit
    warm = State().load_folder(root)
    assert warm.index._by_path is None and warm.index._normalised is not None
    for path in paths:
        for name in ("claude-code", "codex", "gemini-cli"):
            assert warm.listing_base(RUNTIMES[name], path) == expected(name, path)


def test_listed_paths_are_made_absolute_as_each_alone_would_be(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SK703 lists every skill by its absolute path: all absolute already is one pass, and a
    relative one among them still gets the working folder's."""
    from skills_lsp.server.folder import _absolute, _absolute_paths

    monkeypatch.chdir(tmp_path)
    absolute = ["/w/a/SKILL.md", "/w/b/SKILL.md"]
    assert _absolute_paths(absolute) == absolute
    mixed = ["/w/a/SKILL.md", "skills/b/SKILL.md", "../c/SKILL.md"]
    assert _absolute_paths(mixed) == [_absolute(p) for p in mixed] == [os.path.abspath(p) for p in mixed]
    assert _absolute_paths(mixed)[1] == str(tmp_path / "skills/b/SKILL.md")
