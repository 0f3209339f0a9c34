"""Collisions: a skill's description sentences ranked as requests, the rivals that compete for
them, pairs accepted in config, and the index following an edit."""

from __future__ import annotations

from pathlib import Path

from documents import skill_document

from skills_lsp.core.index.skill_index import SkillDocument, SkillIndex
from skills_lsp.core.routing.overlap import collisions_for, overlapping_pairs, probes
from skills_lsp.core.rules.registry import RULES


def doc(name: str, description: str, body: str = "") -> SkillDocument:
    path = Path(f"/ws/skills/{name}/SKILL.md")
    return skill_document(name, description, body, (), id=f"{name}-000000000000", path=path)


REPORT = "Build PDF reports from spreadsheet tables. Use when the user asks for a PDF report of their data."
EXPORT = "Build PDF reports from spreadsheet tables and export them. Use when the user asks for a PDF report."
WEATHER = "Look up the weather forecast for a city. Use when the user asks about rain or temperature."


def test_probes_are_the_sentences_and_when_clauses() -> None:
    assert probes(REPORT) == [
        "Build PDF reports from spreadsheet tables",
        "the user asks for a PDF report of their data",
    ]
    assert probes("Renders charts; useful when the team reviews sales numbers.") == [
        "the team reviews sales numbers"
    ]
    assert probes("Tiny.") == []
    assert len(probes(". ".join(f"Sentence number {i} here" for i in range(9)))) == 4


def test_two_skills_saying_the_same_thing_collide_and_others_do_not() -> None:
    index = SkillIndex([doc("pdf-report", REPORT), doc("pdf-export", EXPORT), doc("weather", WEATHER)])
    report = index.find_by_name("pdf-report")
    assert report is not None
    (collision,) = collisions_for(index, report, "bm25f")
    assert (collision.skill, collision.rival) == ("pdf-report", "pdf-export")
    assert collision.request in probes(REPORT)
    assert collision.rival_score >= 0.9 * collision.score
    assert 0.9 <= collision.confusability <= 1.0
    weather = index.find_by_name("weather")
    assert weather is not None and collisions_for(index, weather, "bm25f") == []
    (pair,) = overlapping_pairs(index, "bm25f")  # found from both sides, listed once
    assert {pair.skill, pair.rival} == {"pdf-report", "pdf-export"}
    assert pair.to_json()["confusability"] == pair.confusability


def test_an_accepted_pair_is_left_out() -> None:
    index = SkillIndex([doc("pdf-report", REPORT), doc("pdf-export", EXPORT), doc("weather", WEATHER)])
    accepted = frozenset({frozenset({"pdf-export", "pdf-report"})})
    assert overlapping_pairs(index, "bm25f", accepted) == []


def test_the_collision_follows_an_edit_of_the_index() -> None:
    index = SkillIndex([doc("pdf-report", REPORT), doc("weather", WEATHER)])
    report = index.find_by_name("pdf-report")
    assert report is not None
    assert collisions_for(index, report, "bm25f") == []  # builds the scorer; it follows from here
    index.upsert(doc("pdf-export", EXPORT))
    assert [c.rival for c in collisions_for(index, report, "bm25f")] == ["pdf-export"]
    index.upsert(doc("pdf-export", "Merge audio tracks into a podcast episode. Use when editing a podcast."))
    assert collisions_for(index, report, "bm25f") == []


def test_the_rule_words_a_rival_that_wins_and_one_that_comes_close() -> None:
    index = SkillIndex([doc("pdf-report", REPORT), doc("pdf-export", EXPORT)])
    report = index.find_by_name("pdf-report")
    assert report is not None
    (collision,) = collisions_for(index, report, "bm25f")
    from skills_lsp.core.model import Range, Severity

    rule = RULES["SK704"]
    (finding,) = rule.check(collision.rivalry(Range.point(2, 13)))
    verb = "go to" if collision.rival_wins else "nearly go to"
    assert finding.message.startswith(f'Requests like "{collision.request}" {verb} `pdf-export` (')
    assert finding.severity is (None if collision.rival_wins else Severity.INFO)
