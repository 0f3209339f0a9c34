"""The `hybrid` scorer: bm25f's exact-word evidence fused with semantic's meaning.

Both already run 0..1, so a weighted mean keeps the scale, and so one `min_score`: 0.6 x bm25f +
0.4 x semantic. benchmarks/tune_fusion.py compared it, on the tuning split only, with rank fusion
(RRF), logistic fits per channel joined by noisy-or, one logistic fit over both, and "never
under bm25f": all route the right skill first about equally often (65-68%), and this mean turns
away the fewest answerable requests at a threshold that keeps "no skill fits" requests at 10%
false accepts (benchmarks/README.md). bm25f's weight is the larger because its scores say more
about whether anything fits; the embedding is what lifts a paraphrase that shares few words.
A request that reads like a quick question rather than a task ("what does net 30 mean?") takes a
penalty the same for every skill (intent.py), so it can fall under min_score without any skill's
rank changing. Needs an embedding model (the `semantic` extra).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from skills_lsp.core.index.skill_index import SkillDocument, SkillIndex
from skills_lsp.core.routing.bm25f import Bm25fSearch, bm25f_for, matched_terms, shared_words
from skills_lsp.core.routing.intent import probe_for, quick_answer_penalty
from skills_lsp.core.routing.scorer import SelectionPolicy, SkillMatch, Tokenizer, scorer_for
from skills_lsp.core.routing.semantic import APPROXIMATION, DECIMALS, select_exact, semantic_for

HYBRID_BM25F_WEIGHT = 0.6  # benchmarks/tune_fusion.py, on the tuning split (benchmarks/README.md)


class HybridSearch:
    """bm25f and semantic, fused by score: both already run 0..1, so a weighted mean keeps the
    scale (and so one `min_score`) while a skill needs both kinds of evidence to rank first."""

    def __init__(self, index: SkillIndex, weight: float = HYBRID_BM25F_WEIGHT) -> None:
        self.weight = weight
        self.lexical: Bm25fSearch = bm25f_for(index)
        self.semantic = semantic_for(index)
        self._alignment: np.ndarray[Any, np.dtype[np.int64]] | None = None
        self._lexical_slots = 0  # bm25f's slot count when the alignment was last right
        # Subscribed after both searches, so they have followed a change before this forgets.
        index.subscribe(self._on_change)

    def _on_change(self, change: str, doc: SkillDocument) -> None:
        order, seen = self._alignment, self._lexical_slots
        slots, lexical = self.semantic.documents(), self.lexical.slot_count()
        added = change == "add"
        if order is None or lexical != seen + added or len(slots) != len(order) + added:
            self._alignment = None  # a compaction renumbered the slots of one search or both
        elif added and slots[-1] is doc:
            # The common edit: both searches appended this document; extend, do not rebuild.
            self._alignment = np.append(order, self.lexical.slot_of()[id(doc)])
            self._lexical_slots = lexical
        elif added:
            self._alignment = None
        # A removal leaves the numbering alone: that slot is dead and its score never read.

    def _aligned(self) -> np.ndarray[Any, np.dtype[np.int64]]:
        """For each semantic slot, the bm25f slot of the same document (-1: a removed one)."""
        if self._alignment is None:
            self._lexical_slots = self.lexical.slot_count()
            slot_of = self.lexical.slot_of()
            self._alignment = np.array(
                [slot_of[id(doc)] if doc is not None else -1 for doc in self.semantic.documents()],
                dtype=np.int64,
            )
        return self._alignment

    def _words(self, query: str) -> np.ndarray[Any, np.dtype[np.float64]]:
        """bm25f's scores in the semantic search's slot order."""
        words = self.lexical.scores(query)
        order = self._aligned()
        if not len(words):
            return np.zeros(len(order))
        aligned: np.ndarray[Any, np.dtype[np.float64]]
        aligned = np.where(order >= 0, words[np.maximum(order, 0)], 0.0)
        return aligned

    def task_probability(self, query: str) -> float:
        """How likely `query` asks for a task rather than a quick answer (intent.py); 1.0 when the
        model has no probe."""
        probe = probe_for(self.semantic.model)
        return 1.0 if probe is None else probe.task_probability(self.semantic.query_vector(query))

    def penalty(self, query: str) -> float:
        """What every skill's score loses for `query` (0 for a request that reads like a task)."""
        return quick_answer_penalty(self.task_probability(query))

    def scores(self, query: str) -> np.ndarray[Any, np.dtype[np.float64]]:
        """Scores in the semantic search's slot order."""
        meaning = self.semantic.scores(query)
        mean = self.weight * self._words(query) + (1.0 - self.weight) * meaning
        shifted = np.maximum(mean - np.float64(self.penalty(query)), np.float64(0.0))
        fused: np.ndarray[Any, np.dtype[np.float64]] = np.round(shifted, DECIMALS)
        return fused

    def components(self, query: str) -> dict[int, tuple[float, float]]:
        """(bm25f, semantic) per document id(), for hovers that explain a hybrid score."""
        words, meaning = self._words(query), self.semantic.scores(query)
        return {
            id(doc): (float(words[slot]), float(meaning[slot]))
            for slot, doc in enumerate(self.semantic.documents())
            if doc is not None
        }

    def select(self, query: str, policy: SelectionPolicy) -> list[SkillMatch]:
        if not len(self.semantic.documents()):
            return []
        vector = self.semantic.query_vector(query)
        words = self._words(query)
        meaning = 1.0 - self.weight
        penalty = self.penalty(query)

        def fused(slots: np.ndarray[Any, Any]) -> np.ndarray[Any, np.dtype[np.float64]]:
            exact = self.weight * words[slots] + meaning * self.semantic.exact(vector, slots) - penalty
            rounded: np.ndarray[Any, np.dtype[np.float64]] = np.round(np.clip(exact, 0, 1), DECIMALS)
            return rounded

        # Clipping at 0 only merges scores under any min_score: the candidates stay right.
        approximate = (
            self.weight * words
            + meaning * np.clip(self.semantic.approximate_for(query, vector).astype(np.float64), 0.0, 1.0)
            - penalty
        )
        return select_exact(
            self.semantic.documents(), self.semantic.alive(), approximate, APPROXIMATION, fused, policy
        )

    def details(self, query: str, document: SkillDocument, tokenizer: Tokenizer = "ascii") -> dict[str, Any]:
        words, meaning = self.components(query).get(id(document), (0.0, 0.0))
        return {
            "shared_words": matched_terms(query, document),
            "bm25f": words,
            "semantic": meaning,
            "task_probability": round(self.task_probability(query), 3),
            "quick_answer_penalty": round(self.penalty(query), DECIMALS),
        }

    def explain(self, query: str, document: SkillDocument) -> str:
        words, meaning = self.components(query).get(id(document), (0.0, 0.0))
        w = self.weight
        fused = (
            f"bm25f {words:.3f} ({shared_words(query, document)}) x{w:g} + semantic {meaning:.3f} x{1 - w:g}"
        )
        penalty = self.penalty(query)
        if not penalty:
            return fused
        chance = self.task_probability(query)
        return f"{fused} - {penalty:.3f} (reads like a quick question, not a task: {chance:.0%} task-like)"


def hybrid_for(index: SkillIndex) -> HybridSearch:
    """The index's hybrid search, typed as such (built on first use)."""
    search = scorer_for(index, "hybrid")
    assert isinstance(search, HybridSearch)
    return search
