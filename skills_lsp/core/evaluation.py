"""Routing evaluation: how well each scorer picks the right skill, and says "none" when it should.

For every scorer: top-1 accuracy and top-3 recall on cases that expect a skill, the false-accept
rate on `expect: none` cases (the top score reaches the scorer's threshold), the AUROC of the top
score for "has a right answer" against "none", and per-query latency. Paraphrased requests (worded
without the skill's own vocabulary) are also reported on their own.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field

from skills_lsp.core.index import SkillIndex
from skills_lsp.core.queries import QueryCase
from skills_lsp.core.scoring import DEFAULT_MIN_SCORE, SelectionPolicy, select_skills

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
    nones: int = 0
    false_accepts: int = 0
    auroc: float = 0.5
    latencies_ms: list[float] = field(default_factory=list)

    def rate(self, hits: int, total: int) -> float:
        return hits / total if total else 0.0

    def to_json(self) -> dict[str, float | int | str]:
        ordered = sorted(self.latencies_ms) or [0.0]
        return {
            "scorer": self.scorer,
            "threshold": self.threshold,
            "answerable": self.answerable,
            "top1_accuracy": self.rate(self.top1, self.answerable),
            "top3_recall": self.rate(self.top3, self.answerable),
            "paraphrased": self.paraphrased,
            "paraphrased_top1_accuracy": self.rate(self.paraphrased_top1, self.paraphrased),
            "none_cases": self.nones,
            "none_false_accept_rate": self.rate(self.false_accepts, self.nones),
            "auroc": self.auroc,
            "latency_p50_ms": statistics.median(ordered),
            "latency_p95_ms": ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))],
        }


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
    threshold = DEFAULT_THRESHOLDS.get(scorer, 0.0) if threshold is None else threshold
    report = ScorerReport(scorer, threshold)
    positives: list[float] = []
    negatives: list[float] = []
    if cases:  # build the scorer's index first: that is set-up, not per-query latency
        select_skills(
            index, cases[0].query, SelectionPolicy(scorer="bm25f" if scorer == "bm25f" else "lexical")
        )
    for case in cases:
        policy = SelectionPolicy(
            top_k=RANKED,
            min_score=0.0,
            include_tags=list(case.include_tags),
            exclude_tags=list(case.exclude_tags),
            scorer="bm25f" if scorer == "bm25f" else "lexical",
        )
        start = time.perf_counter()
        matches = select_skills(index, case.query, policy)
        report.latencies_ms.append((time.perf_counter() - start) * 1000)
        top = matches[0].score if matches else 0.0
        names = [m.skill.name for m in matches]
        if case.expects_none:
            report.nones += 1
            report.false_accepts += top >= threshold and bool(matches)
            negatives.append(top)
            continue
        report.answerable += 1
        positives.append(top)
        first = bool(names) and names[0] in case.expect
        report.top1 += first
        report.top3 += any(n in case.expect for n in names[:RANKED])
        if case.paraphrase:
            report.paraphrased += 1
            report.paraphrased_top1 += first
    report.auroc = auroc(positives, negatives)
    return report
