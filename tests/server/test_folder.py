"""A folder as the server keeps it (server/folder.py): a skill's trigger evals on disk are read
when first asked for, not looked for at load; its test queries' rankings are kept between loads."""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import replace
from pathlib import Path

import pytest
from lsp_helpers import wait_for

from skills_lsp.core.files.frames import FrameFolder, write_frame
from skills_lsp.core.routing.kept_rankings import KIND, Positions, Request, save_rankings
from skills_lsp.core.routing.queries import QueryResult, run_cases
from skills_lsp.core.routing.scorer import SCORERS
from skills_lsp.server import folder as folder_module
from skills_lsp.server.folder import KEEP_RANKINGS_AFTER, Folder
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


# Test-query rankings kept between loads (core/routing/kept_rankings.py, Folder.advance_results).

SKILL_TOPICS = {
    "pdf-forms": "Fills PDF forms and extracts their fields",
    "csv-report": "Builds quarterly CSV reports from sales data",
    "git-review": "Reviews git diffs and pull requests for bugs",
    "slide-deck": "Drafts slide decks from an outline",
    "sql-tuning": "Tunes slow SQL queries and explains query plans",
    "mail-merge": "Merges a mailing list into personalised letters",
}
QUERIES = """\
defaults:
  top_k: 1
cases:
  - query: fill in this PDF form
    expect: pdf-forms
  - query: make the quarterly sales report as CSV
    expect: csv-report
    margin: 0.05
  - query: review my pull request diff
    expect: [git-review, slide-deck]
  - query: why is this SQL query slow
    expect: sql-tuning
    top_k: 2
  - query: tag filtered letters
    expect: mail-merge
    include_tags: [office]
  - query: what is the weather tomorrow
    expect: none
  - query: fills PDF forms and builds CSV reports when asked to
    expect: pdf-forms
"""


def write_ranked_workspace(root: Path, scorer: str) -> Path:
    for name, topic in SKILL_TOPICS.items():
        (root / "skills" / name).mkdir(parents=True)
        tags = "\nmetadata:\n  tags: [office]" if name in ("mail-merge", "slide-deck") else ""
        (root / "skills" / name / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: {topic}. Use when asked to.{tags}\n---\n# {name}\n\nSteps.\n",
            encoding="utf-8",
        )
    (root / "skill-queries.yaml").write_text(QUERIES, encoding="utf-8")
    (root / "skills-lsp.toml").write_text(f'scorer = "{scorer}"\n', encoding="utf-8")
    return root


def fresh_results(folder: Folder) -> list[QueryResult]:
    """Every case of `folder` ranked now, over its index as it is."""
    return run_cases(folder.index, folder.cases, scorer=folder.scorer)


def kept_file(root: Path, scorer: str) -> Path:
    [found] = root.rglob(f"test-query-rankings-{scorer}.bin")
    return found


@pytest.mark.parametrize("scorer", ["lexical", "bm25f", "hybrid"])
def test_a_second_load_ranks_no_test_query_again_and_answers_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scorer: str
) -> None:
    if scorer == "hybrid" and not SCORERS["hybrid"].available():
        pytest.skip("the semantic extra is not installed")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = write_ranked_workspace(tmp_path / "ws", scorer)
    first = State().load_folder(root)
    ranked = first.results()
    assert (first.rankings_scored, first.rankings_kept) == (len(first.cases), 0)
    assert ranked == fresh_results(first)
    assert any(r.runner_up for r in ranked)  # runner-ups kept too
    second = State().load_folder(root)
    kept = second.results()
    assert (second.rankings_scored, second.rankings_kept) == (0, len(second.cases))
    assert kept == ranked and repr(kept) == repr(ranked)  # scores, order, runner-up, every field
    assert kept == fresh_results(second)


def test_kept_rankings_are_not_used_once_the_index_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An edit after the load, a buffer that reads as the file does (used: the same documents),
    a skill changed on disk between loads: each answered as ranking now answers."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = write_ranked_workspace(tmp_path / "ws", "bm25f")
    before = State().load_folder(root).results()
    state = State()
    folder = state.load_folder(root)
    skill = root / "skills" / "pdf-forms" / "SKILL.md"
    state.update(skill, skill.read_text(encoding="utf-8"))  # as an editor opens it
    assert folder.results() == fresh_results(folder) and folder.rankings_scored == 0
    edited = skill.read_text(encoding="utf-8").replace("Fills PDF forms", "Fills PDF forms and letters")
    state.update(skill, edited)
    after_edit = folder.results()
    assert folder.rankings_scored == len(folder.cases) and after_edit == fresh_results(folder)
    state.update(skill, skill.read_text(encoding="utf-8"))  # the edit undone: the loaded documents again
    folder.results()
    assert folder.rankings_scored == len(folder.cases)
    # On disk, between loads: the scores of a case change.
    sql = root / "skills" / "sql-tuning" / "SKILL.md"
    sql.write_text(
        sql.read_text(encoding="utf-8").replace("Tunes slow SQL", "Bakes bread for"), encoding="utf-8"
    )
    reloaded = State().load_folder(root)
    results = reloaded.results()
    assert (reloaded.rankings_scored, reloaded.rankings_kept) == (len(reloaded.cases), 0)
    assert results == fresh_results(reloaded)
    assert results != before


@pytest.mark.parametrize("damage", ["flipped", "truncated", "foreign", "other-key"])
def test_a_damaged_or_foreign_rankings_file_is_not_trusted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = write_ranked_workspace(tmp_path / "ws", "bm25f")
    ranked = State().load_folder(root).results()
    file = kept_file(root, "bm25f")
    data = bytearray(file.read_bytes())
    if damage == "flipped":
        data[-5] ^= 0x01
        file.write_bytes(bytes(data))
    elif damage == "truncated":
        file.write_bytes(bytes(data[: len(data) - 7]))
    elif damage == "foreign":  # a frame of the same name another version wrote
        assert write_frame(file, b"test-query-rankings/0/0.0.0", {"key": "k", "rankings": {}})
    else:  # whole, but kept for other documents: the last ones, with a skill's content changed
        frames = State().load_folder(root).index.frames
        assert frames is not None
        payload = frames.read(file.name, KIND)
        assert isinstance(payload, dict)
        assert save_rankings(frames, "bm25f", payload["key"].replace("'", '"'), payload["rankings"])
    folder = State().load_folder(root)
    assert folder.results() == ranked == fresh_results(folder)
    assert (folder.rankings_scored, folder.rankings_kept) == (len(folder.cases), 0)
    again = State().load_folder(root)  # the file was written again, whole
    assert again.results() == ranked and again.rankings_scored == 0


def test_only_the_new_test_queries_are_ranked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = write_ranked_workspace(tmp_path / "ws", "bm25f")
    State().load_folder(root).results()
    state = State()
    folder = state.load_folder(root)
    queries = root / "skill-queries.yaml"
    text = QUERIES + "  - query: fill in this PDF form\n    expect: pdf-forms\n    top_k: 3\n"
    state.update(queries, text)  # the same query under another policy is another ranking
    assert folder.results() == fresh_results(folder)
    assert (folder.rankings_scored, folder.rankings_kept) == (1, len(folder.cases) - 1)


async def test_rankings_are_saved_after_the_answers_once_for_a_burst(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In a running server the save waits on the event loop (the lenses are answered first), and
    of scorings in quick succession (typing in the query file) only the last is saved."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = write_ranked_workspace(tmp_path / "ws", "bm25f")
    saves: list[int] = []

    def counted(frames: FrameFolder, scorer: str, key: str, rankings: dict[Request, Positions]) -> bool:
        saves.append(len(rankings))
        return save_rankings(frames, scorer, key, rankings)

    monkeypatch.setattr(folder_module, "save_rankings", counted)
    folder = State().load_folder(root)
    folder.results()
    assert saves == [] and not any(root.rglob("test-query-rankings-*"))  # not before the answers
    folder.cases = [*folder.cases, replace(folder.cases[0], query="fill in this PDF form now")]
    folder.changed()
    folder.results()
    await wait_for(lambda: bool(saves), "the rankings saved")
    await asyncio.sleep(2 * KEEP_RANKINGS_AFTER)  # the first scoring's save would have come by now
    assert saves == [len(folder.cases)]
    again = State().load_folder(root)
    again.cases = folder.cases
    again.changed()
    assert again.results() == folder.results() and again.rankings_scored == 0
