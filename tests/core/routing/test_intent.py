"""The intent probe: tasks against quick questions, the penalty hybrid takes from it, and the
shipped fit kept in step with the request banks it was fitted on."""

from __future__ import annotations

import numpy as np
import pytest
from documents import numbered_document

from skills_lsp.core.index.skill_index import SkillIndex
from skills_lsp.core.routing import intent
from skills_lsp.core.routing.embedding import load_model
from skills_lsp.core.routing.hybrid import HYBRID_BM25F_WEIGHT, hybrid_for
from skills_lsp.core.routing.intent import (
    PENALTY_SLOPE,
    TASK_FLOOR,
    bank_texts,
    fit_probe,
    probe_for,
    quick_answer_penalty,
    shipped_file,
)
from skills_lsp.core.routing.scorer import SelectionPolicy, select_skills

pytest.importorskip("onnxruntime")  # the `semantic` extra; the test extra installs it

INVOICES = numbered_document(
    1,
    "invoice-generator",
    "Create client invoices with line items, tax and payment terms such as net 30, ready to send as PDF.",
    "Collect the client, the hours or items, the rates and the terms, then lay out the invoice.",
)
WORKOUTS = numbered_document(
    2,
    "strength-workout-plan",
    "Design a weekly strength training plan with sets, reps and progression for a lifter's goal.",
    "Ask for the days available, the equipment and the lifts, then build the weeks.",
)
TASK = "bill Acme for the 12 hours of consulting in March at $90 an hour, net 30"
QUICK = "what does net 30 mean?"


def test_the_shipped_probe_is_the_fit_of_todays_banks() -> None:
    model = load_model("minilm")
    file = shipped_file(model.name)
    assert file.is_file(), f"{file} is missing: write it with intent.fit_probe(model).save(file)"
    shipped = intent._shipped(model.name)
    assert shipped is not None, "the banks changed since the probe was fitted: fit it again"
    refit = fit_probe(model)
    assert refit.banks == shipped.banks
    np.testing.assert_allclose(shipped.weights, refit.weights, atol=1e-6)
    assert shipped.bias == pytest.approx(refit.bias, abs=1e-6)


def test_the_banks_are_generic_and_apart() -> None:
    tasks, quick = bank_texts()
    assert len(tasks) >= 300 and len(quick) >= 300
    assert not set(tasks) & set(quick)
    assert len(set(tasks)) == len(tasks) and len(set(quick)) == len(quick)


def test_a_task_reads_as_a_task_and_a_quick_question_does_not() -> None:
    model = load_model("minilm")
    probe = probe_for(model)
    assert probe is not None
    [task, quick] = model.embed([TASK, QUICK])
    assert probe.task_probability(task) > TASK_FLOOR > probe.task_probability(quick)


def test_a_model_without_a_shipped_probe_takes_no_penalty() -> None:
    """WordLlama's static vectors make a weaker probe than the penalty was fitted for: none ships,
    and hybrid on WordLlama scores as before."""
    assert probe_for(load_model("wordllama")) is None
    assert not shipped_file(load_model("wordllama").name).exists()


def test_the_penalty_grows_as_a_request_reads_less_like_a_task() -> None:
    assert quick_answer_penalty(1.0) == quick_answer_penalty(TASK_FLOOR) == 0.0
    assert quick_answer_penalty(0.0) == pytest.approx(PENALTY_SLOPE * TASK_FLOOR)
    shortfalls = [quick_answer_penalty(p) for p in np.linspace(0.0, 1.0, 21)]
    assert shortfalls == sorted(shortfalls, reverse=True)


def test_hybrid_turns_away_the_quick_question_and_keeps_the_task() -> None:
    index = SkillIndex([INVOICES, WORKOUTS])
    policy = SelectionPolicy(scorer="hybrid")  # the default min_score
    assert [m.skill.name for m in select_skills(index, TASK, policy)] == ["invoice-generator"]
    assert select_skills(index, QUICK, policy) == []
    # Without its penalty the question would have cleared the threshold on shared words alone.
    search = hybrid_for(index)
    penalty = search.penalty(QUICK)
    assert penalty > 0 and search.penalty(TASK) == 0.0
    words, meaning = search.components(QUICK)[id(INVOICES)]
    assert HYBRID_BM25F_WEIGHT * words + (1 - HYBRID_BM25F_WEIGHT) * meaning >= policy.min_score
    assert "reads like a quick question" in search.explain(QUICK, INVOICES)
    assert "quick question" not in search.explain(TASK, INVOICES)


def test_the_penalty_never_changes_the_ranking() -> None:
    index = SkillIndex([INVOICES, WORKOUTS])
    search = hybrid_for(index)
    for query in (QUICK, "is it bad to stretch before lifting?", TASK):
        penalty = search.penalty(query)
        ranked = select_skills(index, query, SelectionPolicy(top_k=2, min_score=0.0, scorer="hybrid"))
        parts = search.components(query)
        expected = {
            d.name: max(0.0, HYBRID_BM25F_WEIGHT * w + (1 - HYBRID_BM25F_WEIGHT) * m - penalty)
            for d in (INVOICES, WORKOUTS)
            for w, m in [parts[id(d)]]
        }
        for match in ranked:
            assert match.score == pytest.approx(expected[match.skill.name], abs=2e-6)
        by_fused = sorted(expected, key=lambda n: -expected[n])
        assert [m.skill.name for m in ranked] == [n for n in by_fused if expected[n] > 0]


def test_a_keyword_search_takes_no_penalty() -> None:
    """One or two words are a keyword search: the probe reads most single words as quick
    questions, yet `select invoice` should find the invoice skill."""
    index = SkillIndex([INVOICES, WORKOUTS])
    search = hybrid_for(index)
    chance, penalty = search.intent("invoices")
    assert chance < TASK_FLOOR and penalty == 0.0
    assert [m.skill.name for m in select_skills(index, "invoices", SelectionPolicy(scorer="hybrid"))] == [
        "invoice-generator"
    ]
    assert "quick question" not in search.explain("invoices", INVOICES)
    # A third word makes it a sentence the probe can read.
    assert search.intent("what's net 30")[1] > 0
