"""Routing evaluation: how well each scorer picks the right skill, and says "none" when it should.

For every scorer: top-1 accuracy and top-3 recall on cases that expect a skill (ranking alone),
the share of those the selector really routes right once its threshold applies, the share it turns
away (top score under the threshold), the false-accept rate on `expect: none` cases (the top score
reaches the threshold), the AUROC of the top score for "has a right answer" against "none", and
per-query latency. A trigger eval that should not trigger its skill (`should_trigger: false`)
counts with the `expect: none` cases, its skill's score standing for the top score. Paraphrased
requests (worded without the skill's own vocabulary) are also reported on their own.

Calibration: for a target false-accept rate, the lowest threshold (on a 0.01 grid for scorers
that run 0..1) that keeps the `expect: none` cases at or under it, and what that threshold costs
in answerable requests turned away.
"""

from __future__ import annotations

import math
import statistics
import time
from dataclasses import dataclass, field

import numpy as np

from skills_lsp.core.index.skill_index import SkillIndex
from skills_lsp.core.routing.queries import QueryCase
from skills_lsp.core.routing.scorer import DEFAULT_MIN_SCORE, SelectionPolicy, scorer_name, select_skills

DEFAULT_THRESHOLDS = DEFAULT_MIN_SCORE
RANKED = 3


@dataclass
class ScorerReport:
    scorer: str
    threshold: float
    answerable: int = 0
    top1: int = 0
    top3: int = 0
    paraphrased: int = 0
    paraphrased_top1: int = 0
    direct: int = 0  # answerable cases marked `paraphrase: false`
    direct_top1: int = 0
    routed: int = 0
    rejected: int = 0
    nones: int = 0
    false_accepts: int = 0
    auroc: float = 0.5
    latencies_ms: list[float] = field(default_factory=list)
    # (top score, whether the top skill is a right one) per answerable case; top score per none case
    answerable_tops: list[tuple[float, bool]] = field(default_factory=list)
    none_tops: list[float] = field(default_factory=list)

    @staticmethod
    def share(hits: int, total: int) -> float | None:
        """hits / total, or None ("n/a") when there is nothing to count."""
        return hits / total if total else None

    def to_json(self) -> dict[str, float | int | str | list[float] | None]:
        ordered = sorted(self.latencies_ms) or [0.0]
        interval = wilson_interval(self.false_accepts, self.nones)
        return {
            "scorer": self.scorer,
            "threshold": self.threshold,
            "answerable": self.answerable,
            "top1_accuracy": self.share(self.top1, self.answerable),
            "top3_recall": self.share(self.top3, self.answerable),
            "routed_accuracy": self.share(self.routed, self.answerable),
            "answerable_rejected_rate": self.share(self.rejected, self.answerable),
            "paraphrased": self.paraphrased,
            "paraphrased_top1_accuracy": self.share(self.paraphrased_top1, self.paraphrased),
            "direct": self.direct,
            "direct_top1_accuracy": self.share(self.direct_top1, self.direct),
            "none_cases": self.nones,
            "none_false_accept_rate": self.share(self.false_accepts, self.nones),
            "none_false_accept_interval": list(interval) if interval else None,
            "auroc": self.auroc if self.answerable_tops and self.none_tops else None,
            "latency_p50_ms": statistics.median(ordered),
            "latency_p95_ms": ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))],
        }


@dataclass(frozen=True)
class Calibration:
    """The threshold that holds false accepts to `target`, and what it does to answerable cases."""

    scorer: str
    target_false_accept: float
    threshold: float
    false_accept_rate: float | None  # None: no such case to count
    routed_accuracy: float | None
    answerable_rejected_rate: float | None
    # 95% interval of false_accept_rate: with a few dozen none cases it is wide.
    false_accept_interval: tuple[float, float] | None = None

    def to_json(self) -> dict[str, float | str | list[float] | None]:
        return {
            "scorer": self.scorer,
            "target_false_accept": self.target_false_accept,
            "threshold": self.threshold,
            "none_false_accept_rate": self.false_accept_rate,
            "routed_accuracy": self.routed_accuracy,
            "answerable_rejected_rate": self.answerable_rejected_rate,
            "none_false_accept_interval": (
                list(self.false_accept_interval) if self.false_accept_interval else None
            ),
        }


def format_threshold(value: float) -> str:
    """A min_score as a user would type it back: 0..1 ones on their 0.01 grid; lexical ones in
    full (a float32 just above a score must not print rounded below it)."""
    return f"{value:.2f}" if value <= 1.0 and round(value, 2) == value else repr(value)


def false_accepts_at(report: ScorerReport, threshold: float) -> int:
    """How many `expect: none` cases would still select a skill at `threshold`."""
    return sum(t >= threshold and t > 0 for t in report.none_tops)


def outcome_at(report: ScorerReport, threshold: float) -> tuple[float | None, float | None, float | None]:
    """(false-accept rate, routed accuracy, answerable rejected rate) if `threshold` applied;
    None where the report has no case of that kind."""
    fa = false_accepts_at(report, threshold)
    routed = sum(right and t >= threshold for t, right in report.answerable_tops)
    rejected = sum(t < threshold or t <= 0 for t, _ in report.answerable_tops)
    total = len(report.answerable_tops)
    return report.share(fa, len(report.none_tops)), report.share(routed, total), report.share(rejected, total)


def _lowest_threshold(scorer: str, none_tops: list[float], target: float) -> float:
    """The lowest threshold that accepts at most `target` of the none cases scoring `none_tops`."""
    allowed = math.floor(target * len(none_tops) + 1e-9)
    highest = sorted((t for t in none_tops if t > 0), reverse=True)
    if len(highest) <= allowed:
        return 0.0
    # Just above the first none case that must be turned away; scores in 0..1 get a 0.01 grid.
    bar = highest[allowed]
    if scorer == "lexical":  # the crate compares in float32: the next float32 up
        return float(np.nextafter(np.float32(bar), np.float32(np.inf)))
    # (rounded first: 0.29 * 100 is 28.999999999999996 in binary floating point)
    return (math.floor(round(bar * 100, 6)) + 1) / 100


def calibrate(report: ScorerReport, target: float) -> Calibration:
    """The lowest threshold whose none false-accept rate is at most `target`, with the 95% interval
    of that rate: it is fitted on the very cases it is measured on, and a few dozen of them
    leave a wide margin (4 of 30 is anywhere from about 5% to 30%)."""
    threshold = _lowest_threshold(report.scorer, report.none_tops, target)
    fa, routed, rejected = outcome_at(report, threshold)
    interval = wilson_interval(false_accepts_at(report, threshold), len(report.none_tops))
    return Calibration(report.scorer, target, threshold, fa, routed, rejected, interval)


def wilson_interval(hits: int, total: int, z: float = 1.96) -> tuple[float, float] | None:
    """The Wilson score interval of the rate hits / total (95% for z = 1.96); None for no cases.
    Unlike the normal approximation it stays inside 0..1 and is sound for small counts."""
    if total <= 0:
        return None
    rate = hits / total
    spread = z * z / total
    centre = (rate + spread / 2) / (1 + spread)
    half = z * math.sqrt(rate * (1 - rate) / total + spread / (4 * total)) / (1 + spread)
    return max(0.0, centre - half), min(1.0, centre + half)


def auroc(positives: list[float], negatives: list[float]) -> float:
    """Probability that a random positive scores above a random negative (ties count half)."""
    if not positives or not negatives:
        return 0.5
    wins = 0.0
    for p in positives:
        for n in negatives:
            wins += 1.0 if p > n else 0.5 if p == n else 0.0
    return wins / (len(positives) * len(negatives))


def evaluate(
    index: SkillIndex, cases: list[QueryCase], scorer: str, threshold: float | None = None
) -> ScorerReport:
    """Every case through `scorer`, ranked without a threshold, then judged at `threshold` (the
    scorer's default when None). Raises ValueError for an unknown scorer and
    semantic.ScorerUnavailable when an optional one is not installed."""
    name = scorer_name(scorer)
    threshold = DEFAULT_THRESHOLDS.get(name, 0.0) if threshold is None else threshold
    report = ScorerReport(name, threshold)
    positives: list[float] = []
    negatives: list[float] = []
    if cases:  # build the scorer's index first: that is set-up, not per-query latency
        select_skills(index, cases[0].query, SelectionPolicy(scorer=name))
    for case in cases:
        policy = SelectionPolicy(
            top_k=RANKED,
            min_score=0.0,
            include_tags=list(case.include_tags),
            exclude_tags=list(case.exclude_tags),
            scorer=name,
        )
        start = time.perf_counter()
        matches = select_skills(index, case.query, policy)
        report.latencies_ms.append((time.perf_counter() - start) * 1000)
        top = matches[0].score if matches else 0.0
        names = [m.skill.name for m in matches]
        if case.reject:  # `should_trigger: false`: a false accept only if that very skill is chosen
            against = top if names and names[0] in case.reject else 0.0
            report.nones += 1
            report.false_accepts += against >= threshold and against > 0
            negatives.append(against)
            report.none_tops.append(against)
            continue
        if case.expects_none:
            report.nones += 1
            report.false_accepts += top >= threshold and bool(matches)
            negatives.append(top)
            report.none_tops.append(top)
            continue
        report.answerable += 1
        positives.append(top)
        first = bool(names) and names[0] in case.expect
        report.answerable_tops.append((top, first))
        report.top1 += first
        report.routed += first and top >= threshold
        report.rejected += not matches or top < threshold
        report.top3 += any(n in case.expect for n in names[:RANKED])
        if case.paraphrase:
            report.paraphrased += 1
            report.paraphrased_top1 += first
        elif case.paraphrase is False:
            report.direct += 1
            report.direct_top1 += first
    report.auroc = auroc(positives, negatives)
    return report
