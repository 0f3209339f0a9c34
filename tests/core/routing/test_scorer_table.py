"""A scorer is one module plus one line in the table: this test adds one (`first-word`, defined
here) with a single entry in SCORERS and checks that everything that chooses a scorer takes it
with no other change: the policy and its default threshold, select_skills, the config, eval,
and the routing tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from documents import numbered_document

from skills_lsp.core.index.skill_index import SkillDocument, SkillIndex
from skills_lsp.core.routing.evaluation import evaluate
from skills_lsp.core.routing.queries import QueryCase, run_case
from skills_lsp.core.routing.ranking import SlottedSearch, ranked
from skills_lsp.core.routing.scorer import (
    SCORERS,
    ScorerSpec,
    SelectionPolicy,
    SkillMatch,
    Tokenizer,
    scorer_for,
    select_skills,
)
from skills_lsp.core.workspace.settings import parse_config


class FirstWordScorer(SlottedSearch):
    """1.0 for the skills whose name starts with the request's first word, else 0."""

    def select(self, query: str, policy: SelectionPolicy) -> list[SkillMatch]:
        first = query.split()[0].lower() if query.split() else ""
        scores = np.array(
            [1.0 if d is not None and d.name.startswith(first) else 0.0 for d in self.documents()]
        )
        return ranked(self.documents(), self.alive(), scores, policy)

    def explain(self, query: str, document: SkillDocument) -> str:
        return f"the name starts with {query.split()[0]!r}"

    def details(self, query: str, document: SkillDocument, tokenizer: Tokenizer = "ascii") -> dict[str, Any]:
        return {"first_word": query.split()[0]}


@pytest.fixture()
def first_word(monkeypatch: pytest.MonkeyPatch) -> str:
    spec = ScorerSpec("first-word", "the request's first word", f"{__name__}:FirstWordScorer", 0.5)
    monkeypatch.setitem(SCORERS, spec.name, spec)  # the one line
    return spec.name


def test_a_new_scorer_is_taken_everywhere_from_its_table_line(first_word: str, tmp_path: Path) -> None:
    index = SkillIndex(
        [
            numbered_document(0, "pdf-tools", "Fills PDF forms", "Body."),
            numbered_document(1, "notes", "x", "Body."),
        ]
    )
    policy = SelectionPolicy(scorer=first_word)
    assert policy.min_score == 0.5  # its default threshold
    assert [m.skill.name for m in select_skills(index, "pdf please", policy)] == ["pdf-tools"]
    assert (
        scorer_for(index, first_word).explain("pdf please", index.skills()[1]) == "the name starts with 'pdf'"
    )
    config, problems = parse_config(f'scorer = "{first_word}"\n', tmp_path / "skills-lsp.toml")
    assert config.scorer == first_word and not problems
    case = QueryCase("pdf please", ("pdf-tools",))
    assert run_case(index, case, scorer=first_word).passed
    report = evaluate(index, [case, QueryCase("zebra", ())], first_word)
    assert (report.top1, report.false_accepts) == (1, 0)
