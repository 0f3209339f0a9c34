"""Routing evaluation: routed and turned-away counts, and the threshold calibration."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skills_lsp.core.index.skill_index import load_workspace_index
from skills_lsp.core.routing.evaluation import (
    Calibration,
    ScorerReport,
    calibrate,
    evaluate,
    outcome_at,
    wilson_interval,
)
from skills_lsp.core.routing.lexical import f32
from skills_lsp.core.routing.queries import QueryCase, load_query_file
from skills_lsp.core.routing.scorer import DEFAULT_MIN_SCORE, SCORERS

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def report(
    scorer: str, nones: Sequence[float], answerable: Sequence[tuple[float, bool]] = ()
) -> ScorerReport:
    return ScorerReport(
        scorer, DEFAULT_MIN_SCORE[scorer], none_tops=list(nones), answerable_tops=list(answerable)
    )


# --- calibrate and outcome_at on hand-built reports ---------------------------------------------

NONES = [0.9, 0.5, 0.42, 0.3, 0.1, 0.0, 0.0, 0.0, 0.0, 0.0]  # ten `expect: none` cases
ANSWERABLE = [(0.95, True), (0.6, False), (0.51, True), (0.505, True), (0.2, True), (0.0, False)]


@pytest.mark.parametrize(
    ("target", "threshold", "false_accepts"),
    [
        (0.0, 0.91, 0),  # every none case turned away: just above the highest
        (0.1, 0.51, 1),  # one of ten may pass: just above the second highest
        (0.15, 0.51, 1),  # 1.5 of ten: still one
        (0.2, 0.43, 2),
        (0.3, 0.31, 3),
        (0.4, 0.11, 4),
        (0.5, 0.0, 5),  # only five score above 0: no threshold needed
        (1.0, 0.0, 5),
    ],
)
def test_calibrate_picks_the_lowest_threshold_on_the_grid(
    target: float, threshold: float, false_accepts: int
) -> None:
    found = calibrate(report("bm25f", NONES, ANSWERABLE), target)
    assert found.scorer == "bm25f" and found.target_false_accept == target
    assert found.threshold == pytest.approx(threshold, abs=1e-12)
    assert found.false_accept_rate == false_accepts / 10 <= target
    fa, routed, rejected = outcome_at(report("bm25f", NONES, ANSWERABLE), found.threshold)
    assert (found.false_accept_rate, found.routed_accuracy, found.answerable_rejected_rate) == (
        fa,
        routed,
        rejected,
    )


def test_calibration_reports_what_the_threshold_costs() -> None:
    found = calibrate(report("hybrid", NONES, ANSWERABLE), 0.15)
    assert found == Calibration("hybrid", 0.15, 0.51, 0.1, 2 / 6, 3 / 6, wilson_interval(1, 10))
    assert found.to_json() == {
        "scorer": "hybrid",
        "target_false_accept": 0.15,
        "threshold": 0.51,
        "none_false_accept_rate": 0.1,
        "routed_accuracy": 2 / 6,  # 0.95 and 0.51 are right and reach 0.51; 0.6 is wrong
        "answerable_rejected_rate": 3 / 6,  # 0.505, 0.2 and 0.0 are under it
        "none_false_accept_interval": list(wilson_interval(1, 10) or ()),
    }


@pytest.mark.parametrize(
    ("hits", "total", "low", "high"),
    [
        # Newcombe (1998), "Two-sided confidence intervals for the single proportion", Table I,
        # method 3 (the Wilson score interval), to the four decimals published there.
        (81, 263, 0.2553, 0.3662),
        (15, 148, 0.0624, 0.1605),
        (0, 20, 0.0, 0.1611),
        (1, 29, 0.0061, 0.1718),
    ],
)
def test_wilson_interval(hits: int, total: int, low: float, high: float) -> None:
    found = wilson_interval(hits, total)
    assert found is not None
    assert (round(found[0], 4), round(found[1], 4)) == (low, high)
    assert found[0] <= hits / total <= found[1]


def test_the_interval_shows_how_little_a_few_none_cases_say() -> None:
    assert wilson_interval(0, 0) is None
    # The same 13.3% from 30 cases and from 300: the interval narrows about threefold.
    few, many = wilson_interval(4, 30), wilson_interval(40, 300)
    assert few is not None and many is not None
    assert (few[1] - few[0]) > 2.5 * (many[1] - many[0])
    found = calibrate(report("bm25f", NONES, ANSWERABLE), 0.15)
    assert found.false_accept_interval == wilson_interval(1, 10)
    assert calibrate(report("semantic", []), 0.15).false_accept_interval is None
    counted = ScorerReport("bm25f", 0.45, nones=10, false_accepts=0)  # as evaluate counts them
    assert counted.to_json()["none_false_accept_interval"] == [0.0, pytest.approx(0.27754, abs=1e-5)]
    assert ScorerReport("bm25f", 0.45).to_json()["none_false_accept_interval"] is None


def test_lexical_calibrates_just_above_the_score_to_turn_away() -> None:
    # lexical scores are float32 and not 0..1: no grid; the next float32 above the first none
    # case to turn away, since the crate compares min_score in float32.
    found = calibrate(report("lexical", [2.5, 1.2, 0.4], [(3.0, True), (1.2, True)]), 0.34)
    above = float(np.nextafter(np.float32(1.2), np.float32(np.inf)))
    assert found.threshold == above and f32(found.threshold) > f32(1.2)
    assert found.false_accept_rate == 1 / 3
    assert (found.routed_accuracy, found.answerable_rejected_rate) == (0.5, 0.5)
    assert calibrate(report("lexical", [2.5, 1.2, 0.4]), 0.0).threshold == pytest.approx(2.5 + 1e-6)


def test_calibrate_without_cases() -> None:
    empty = calibrate(report("semantic", []), 0.15)  # nothing to count: n/a, not 0%
    assert (empty.threshold, empty.false_accept_rate, empty.routed_accuracy) == (0.0, None, None)
    all_zero = calibrate(report("semantic", [0.0, 0.0], [(0.4, True)]), 0.0)
    assert (all_zero.threshold, all_zero.false_accept_rate, all_zero.routed_accuracy) == (0.0, 0.0, 1.0)


@pytest.mark.parametrize(("bar", "threshold"), [(0.3, 0.31), (0.2, 0.21), (0.305, 0.31), (0.999, 1.0)])
def test_calibrate_turns_away_a_none_case_on_the_grid(bar: float, threshold: float) -> None:
    found = calibrate(report("semantic", [bar, 0.1]), 0.0)
    assert found.threshold == pytest.approx(threshold, abs=1e-12)
    assert found.false_accept_rate == 0.0


# 0.29 * 100 is 28.999999999999996 in floating point: calibrate must still step past 0.29.
@pytest.mark.parametrize(("bar", "threshold"), [(0.29, 0.3), (0.57, 0.58), (0.58, 0.59)])
def test_calibrate_turns_away_a_none_case_whose_score_is_a_float_below_its_grid_value(
    bar: float, threshold: float
) -> None:
    found = calibrate(report("semantic", [bar, 0.1]), 0.0)
    assert found.false_accept_rate == 0.0
    assert found.threshold == pytest.approx(threshold, abs=1e-12)


# Top scores as the 0..1 scorers give them, off the 0.01 grid (on-grid ones are tested above).
off_grid = st.integers(0, 999).filter(lambda k: k % 10).map(lambda k: k / 1000)
tops = st.lists(st.one_of(st.just(0.0), off_grid), max_size=40)


@settings(max_examples=200, deadline=None)
@given(
    nones=tops,
    answerable=st.lists(st.tuples(off_grid, st.booleans()), max_size=20),
    target=st.sampled_from([0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.5, 1.0]),
    scorer=st.sampled_from(["bm25f", "semantic", "hybrid"]),
)
def test_calibrate_is_the_lowest_grid_threshold_within_the_target(
    nones: list[float], answerable: list[tuple[float, bool]], target: float, scorer: str
) -> None:
    r = report(scorer, nones, answerable)
    found = calibrate(r, target)
    assert (found.false_accept_rate is None) == (not nones)  # n/a without none cases
    assert (found.false_accept_rate or 0.0) <= target + 1e-12
    assert abs(found.threshold * 100 - round(found.threshold * 100)) < 1e-9  # on the 0.01 grid
    if found.threshold > 0:  # one step lower lets too many none cases through
        assert (outcome_at(r, found.threshold - 0.01)[0] or 0.0) > target
    assert outcome_at(r, found.threshold) == (
        found.false_accept_rate,
        found.routed_accuracy,
        found.answerable_rejected_rate,
    )


def test_outcome_at() -> None:
    r = report("bm25f", [0.6, 0.3, 0.0, 0.0], [(0.8, True), (0.5, False), (0.4, True), (0.0, False)])
    assert outcome_at(r, 0.45) == (0.25, 0.25, 0.5)  # 0.6 passes; 0.8 routes; 0.4 and 0.0 turned away
    assert outcome_at(r, 0.3) == (0.5, 0.5, 0.25)  # a score equal to the threshold passes
    assert outcome_at(r, 0.0) == (0.5, 0.5, 0.25)  # a top score of 0 never passes, and is turned away
    assert outcome_at(r, 0.9) == (0.0, 0.0, 1.0)
    assert outcome_at(report("bm25f", []), 0.5) == (None, None, None)


# --- evaluate on a small real index -------------------------------------------------------------

CASES = [
    QueryCase("fill the pdf form with this data", ("pdf-form-filling",), paraphrase=False),
    QueryCase(
        "write up what changed since the last tag for our users", ("git-release-notes",), paraphrase=True
    ),
    # Right first, but under bm25f's threshold (ranked well, turned away); just over hybrid's.
    QueryCase("the totals in this spreadsheet are wrong", ("csv-data-cleaning",)),
    # Wrong first, so never routed; above both thresholds, so not turned away either.
    QueryCase("summarise this pull request", ("git-release-notes",)),
    QueryCase("what will it be like outside tomorrow", ("weather-lookup",), paraphrase=True),
    QueryCase("book a table at a restaurant", ()),
]


@pytest.mark.parametrize(
    ("scorer", "counts"),
    [
        # answerable, top1, top3, routed, rejected, paraphrased, paraphrased_top1, nones, false_accepts
        ("bm25f", (5, 3, 3, 2, 2, 2, 1, 1, 0)),
        ("hybrid", (5, 3, 4, 3, 1, 2, 1, 1, 0)),
    ],
)
def test_evaluate_counts_routed_and_rejected(scorer: str, counts: tuple[int, ...]) -> None:
    index = load_workspace_index(EXAMPLES)
    r = evaluate(index, CASES, scorer)
    assert r.scorer == scorer and r.threshold == DEFAULT_MIN_SCORE[scorer]
    assert (
        r.answerable,
        r.top1,
        r.top3,
        r.routed,
        r.rejected,
        r.paraphrased,
        r.paraphrased_top1,
        r.nones,
        r.false_accepts,
    ) == counts
    assert len(r.answerable_tops) == r.answerable and len(r.none_tops) == r.nones
    assert [right for _, right in r.answerable_tops][:3] == [True, True, True]
    assert r.answerable_tops[3][1] is False  # Broken_Name wins the pull-request case
    assert len(r.latencies_ms) == len(CASES)
    data = r.to_json()
    assert data["routed_accuracy"] == counts[3] / 5 and data["answerable_rejected_rate"] == counts[4] / 5
    assert data["top1_accuracy"] == counts[1] / 5 and data["none_false_accept_rate"] == 0.0
    # What evaluate counts is what outcome_at says of the same threshold.
    assert outcome_at(r, r.threshold) == (
        data["none_false_accept_rate"],
        data["routed_accuracy"],
        data["answerable_rejected_rate"],
    )


def test_evaluate_at_another_threshold() -> None:
    index = load_workspace_index(EXAMPLES)
    r = evaluate(index, CASES, "hybrid", threshold=0.0)
    assert r.threshold == 0.0
    # Everything scores above 0 but the restaurant request: its quick-question penalty (intent.py)
    # takes every skill's score to 0, which no threshold selects.
    assert (r.routed, r.rejected, r.false_accepts) == (3, 0, 0)
    assert evaluate(index, CASES, "hybrid", threshold=0.9).routed == 0


@pytest.mark.parametrize("scorer", SCORERS)
def test_evaluate_agrees_with_outcome_at_on_the_example_queries(scorer: str) -> None:
    index = load_workspace_index(EXAMPLES)
    cases, problems = load_query_file(EXAMPLES / "skill-queries.yaml")
    assert not problems and cases
    r = evaluate(index, cases, scorer)
    data = r.to_json()
    assert r.routed <= r.top1 <= r.top3 <= r.answerable
    assert r.routed + r.rejected <= r.answerable
    assert outcome_at(r, r.threshold) == pytest.approx(
        (data["none_false_accept_rate"], data["routed_accuracy"], data["answerable_rejected_rate"])
    )
    assert 0.0 <= data["auroc"] <= 1.0 and not math.isnan(data["auroc"])


def test_evaluate_refuses_an_unknown_scorer() -> None:
    with pytest.raises(ValueError, match="unknown scorer 'cosine'"):
        evaluate(load_workspace_index(EXAMPLES), CASES, "cosine")
