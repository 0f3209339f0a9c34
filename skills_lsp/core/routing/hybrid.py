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

import math
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from skills_lsp.core.routing import quick, warm
from skills_lsp.core.routing.bm25f import Bm25fSearch, Statistics, bm25f_for, matched_terms, shared_words
from skills_lsp.core.routing.embedding import load_model
from skills_lsp.core.routing.intent import keyword_search, probe_for, quick_answer_penalty
from skills_lsp.core.routing.ranking import best_first, matches, ranked_slots
from skills_lsp.core.routing.scorer import SelectionPolicy, SkillMatch, Tokenizer, scorer_for
from skills_lsp.core.routing.semantic import (
    APPROXIMATION,
    DECIMALS,
    exact_similarity,
    exact_where_needed,
    select_exact,
    semantic_for,
)

if TYPE_CHECKING:
    from skills_lsp.core.index.skill_index import SkillDocument, SkillIndex

HYBRID_BM25F_WEIGHT = 0.6  # benchmarks/tune_fusion.py, on the tuning split (benchmarks/README.md)
_KEPT = 128  # requests whose approximate scores are kept (76 KiB each at 20,000 skills)
# A request's kept scores are computed afresh once this many slots were added since (each edit
# adds one, scored exactly every time) or once bm25f's statistics moved so far that the bound
# lets too many skills through to exact scoring.
_NEW_SLOTS = 256
_DRIFT = 0.005
# float32 storage of a 0..1 score (relative error 2^-24) and rounding to 6 decimals.
_STORAGE = 1e-6
_SETTLED = 1024  # (request, policy) pairs whose last selection is kept (see _Settled)
_SETTLED_SLOTS = 256  # exact scores a kept selection may hold (most hold a few)


@dataclass(frozen=True)
class _Kept:
    """A request's approximate fused scores of the slots there were, and what they depended on."""

    scores: np.ndarray[Any, np.dtype[np.float32]]
    statistics: Statistics
    generations: tuple[int, int]


@dataclass(frozen=True)
class _Settled:
    """A request's last selection under one policy: the exact scores it was made from, a floor
    under every other skill's score, and what those scores depended on. While bm25f's statistics
    for the request are the same, a skill that was there then scores exactly what it did then."""

    statistics: Statistics
    generations: tuple[int, int]
    weight: float
    slots: int  # the slot count then: slots from here on were added since
    exact: dict[int, float]  # by slot
    floor: float  # every live slot then and not in `exact` scored less

    def comparable(self, now: _Settled) -> bool:
        """Whether skills there then score now exactly what they scored then."""
        return (self.statistics, self.generations, self.weight) == (
            now.statistics,
            now.generations,
            now.weight,
        )


def fused_mean(
    weight: float, words: np.ndarray[Any, Any], meaning: np.ndarray[Any, Any]
) -> np.ndarray[Any, Any]:
    """The fusion itself, before the quick-question penalty (also a warm `select`'s, quick.py)."""
    mean: np.ndarray[Any, Any] = weight * words + (1.0 - weight) * meaning
    return mean


def penalised(mean: np.ndarray[Any, Any], penalty: float) -> np.ndarray[Any, np.dtype[np.float64]]:
    """The scores shown: the fused mean less the request's penalty, never under 0, rounded."""
    shifted = np.maximum(mean - np.float64(penalty), np.float64(0.0))
    rounded: np.ndarray[Any, np.dtype[np.float64]] = np.round(shifted, DECIMALS)
    return rounded


class HybridSearch:
    """bm25f and semantic, fused by score: both already run 0..1, so a weighted mean keeps the
    scale (and so one `min_score`) while a skill needs both kinds of evidence to rank first."""

    def __init__(self, index: SkillIndex, weight: float = HYBRID_BM25F_WEIGHT) -> None:
        self.weight = weight
        # The model first: onnxruntime's peak while it optimises the graph (about 55 MiB over what
        # it keeps) then comes before bm25f's postings are in memory, not on top of them.
        self.semantic = semantic_for(index)
        self.lexical: Bm25fSearch = bm25f_for(index)
        self._alignment: np.ndarray[Any, np.dtype[np.int64]] | None = None
        self._lexical_slots = 0  # bm25f's slot count when the alignment was last right
        # Per request, approximate scores kept between edits (an editor re-runs its test queries
        # after every keystroke; see select()).
        self._kept: OrderedDict[str, _Kept] = OrderedDict()
        self._kept_lock = threading.Lock()
        # Per request and policy, the last selection and its exact scores (see _settled_select()).
        self._settled: OrderedDict[tuple[object, ...], _Settled] = OrderedDict()
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

    def _mean(self, words: np.ndarray[Any, Any], meaning: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
        return fused_mean(self.weight, words, meaning)

    _penalised = staticmethod(penalised)

    def task_probability(self, query: str) -> float:
        """How likely `query` asks for a task rather than a quick answer (intent.py); 1.0 when the
        model has no probe."""
        probe = probe_for(self.semantic.model)
        return 1.0 if probe is None else probe.task_probability(self.semantic.query_vector(query))

    def intent(self, query: str) -> tuple[float, float]:
        """`query`'s task probability and what every skill's score loses for it (0 for a request
        that reads like a task, and for a keyword search)."""
        chance = self.task_probability(query)
        return chance, 0.0 if keyword_search(query) else quick_answer_penalty(chance)

    def penalty(self, query: str) -> float:
        return self.intent(query)[1]

    def scores(self, query: str) -> np.ndarray[Any, np.dtype[np.float64]]:
        """Scores in the semantic search's slot order."""
        meaning = self.semantic.scores(query)
        return self._penalised(self._mean(self._words(query), meaning), self.penalty(query))

    def components(self, query: str) -> dict[int, tuple[float, float]]:
        """(bm25f, semantic) per document id(), for hovers that explain a hybrid score."""
        words, meaning = self._words(query), self.semantic.scores(query)
        return {
            id(doc): (float(words[slot]), float(meaning[slot]))
            for slot, doc in enumerate(self.semantic.documents())
            if doc is not None
        }

    def select(self, query: str, policy: SelectionPolicy) -> list[SkillMatch]:
        """The selection exact scores give, computed exactly only for the skills that can be in it.

        An edit replaces one skill, and bm25f's scores of every other skill move with the average
        lengths and idfs (by about 1e-6 for a one-character edit among 20,000). So a request's
        approximate scores are kept from the last time it was scored in full, with bm25f's
        statistics of then; bm25f.drift() bounds how far any unchanged skill's score can have
        moved since, the skills added since are scored exactly, and select_exact() computes exact
        scores for the few whose kept score comes within that bound of the selection. The result is
        the one scoring every skill afresh gives (tests/core/routing/test_semantic.py checks it
        edit by edit)."""
        documents = self.semantic.documents()
        if not len(documents):
            return []
        vector = self.semantic.query_vector(query)
        order = self._aligned()
        penalty = self.penalty(query)
        exact: dict[int, float] = {}  # the exact scores this selection rests on, by slot

        def fused(slots: np.ndarray[Any, Any]) -> np.ndarray[Any, np.dtype[np.float64]]:
            words = self.lexical.scores_of(query, order[slots])
            scores = self._penalised(self._mean(words, self.semantic.exact(vector, slots)), penalty)
            exact.update(zip(slots.tolist(), scores.tolist(), strict=True))
            return scores

        key = (query, policy.top_k, policy.min_score, tuple(policy.include_tags), tuple(policy.exclude_tags))
        then = _Settled(
            self.lexical.statistics(query),
            (self.semantic.generation, self.lexical.generation),
            self.weight,
            len(documents),
            exact,
            math.inf,
        )
        with self._kept_lock:
            settled = self._settled.get(key)
        chosen = None
        if settled is not None and settled.comparable(then):
            chosen, floor = self._settled_select(settled, exact, fused, policy), settled.floor
        if chosen is None:
            exact.clear()
            chosen, floor = self._select(query, vector, penalty, fused, policy)
        with self._kept_lock:
            if len(exact) > _SETTLED_SLOTS:  # a tag filter: every skill that may pass it was scored
                self._settled.pop(key, None)
            else:
                self._settled[key] = replace(then, floor=floor)
                self._settled.move_to_end(key)
                while len(self._settled) > _SETTLED:
                    self._settled.popitem(last=False)
        return matches(documents, chosen)

    def _settled_select(
        self,
        settled: _Settled,
        exact: dict[int, float],
        fused: Callable[[np.ndarray[Any, Any]], np.ndarray[Any, np.dtype[np.float64]]],
        policy: SelectionPolicy,
    ) -> list[tuple[float, int]] | None:
        """The selection from the last one's exact scores and those of the skills added since (all
        of them put in `exact`); None when that may not be the selection exact scores of every
        skill give.

        `settled` was made under the same statistics: every skill there then scores exactly what
        it scored then, and those it did not score exactly less than its floor. So the selection
        among the skills it scored and those added since is every skill's when its last (top_k-th)
        score reaches the floor, or when the floor is under what any selected skill needs."""
        documents = self.semantic.documents()
        if len(documents) < settled.slots:
            return None
        exact.update((slot, score) for slot, score in settled.exact.items() if documents[slot] is not None)
        added = [slot for slot in range(settled.slots, len(documents)) if documents[slot] is not None]
        if added:
            fused(np.array(added, np.int64))  # recorded in `exact`
        among = list(exact)
        chosen = ranked_slots(
            [documents[slot] for slot in among],
            np.ones(len(among), bool),
            np.array([exact[slot] for slot in among]),
            policy,
        )
        if settled.floor <= max(policy.min_score, 0.0) or (
            len(chosen) >= policy.top_k and (not chosen or chosen[-1][0] >= settled.floor)
        ):
            return [(score, among[i]) for score, i in chosen]
        return None  # a skill removed since was selected, and one not scored then may take its place

    def _select(
        self,
        query: str,
        vector: np.ndarray[Any, np.dtype[np.float32]],
        penalty: float,
        fused: Callable[[np.ndarray[Any, Any]], np.ndarray[Any, np.dtype[np.float64]]],
        policy: SelectionPolicy,
    ) -> tuple[list[tuple[float, int]], float]:
        """The selection from the kept approximate scores (see select()), and its floor."""
        documents = self.semantic.documents()
        alive = self.semantic.alive()
        kept, drift = self._kept_for(query, vector, len(documents))
        approximate = np.zeros(len(documents))
        # Kept scores are before the penalty, which is the same for every skill of a request:
        # taking it here keeps the order, and a score under 0 is under any min_score.
        approximate[: len(kept.scores)] = kept.scores - penalty
        added = np.arange(len(kept.scores), len(documents))
        added = added[alive[added]]
        if len(added):
            approximate[added] = fused(added)
        return select_exact(documents, alive, approximate, _error(self.weight, drift), fused, policy)

    def _kept_for(
        self, query: str, vector: np.ndarray[Any, np.dtype[np.float32]], slots: int
    ) -> tuple[_Kept, float]:
        """`query`'s kept approximate scores and how far bm25f's part of them may be off now;
        scored afresh (drift 0) when there are none, or they are stale or too far off."""
        generations = (self.semantic.generation, self.lexical.generation)
        with self._kept_lock:
            kept = self._kept.get(query)
        drift = 0.0
        if kept is not None and kept.generations == generations and slots - len(kept.scores) <= _NEW_SLOTS:
            drift = self.lexical.drift(query, kept.statistics)
        if (
            kept is None
            or kept.generations != generations
            or not drift <= _DRIFT
            or slots - len(kept.scores) > _NEW_SLOTS
        ):
            statistics = self.lexical.statistics(query)
            # Not the semantic search's per-request cache: these scores take its place.
            similarity = np.clip(self.semantic.approximate(vector).astype(np.float64), 0.0, 1.0)
            scores = self._mean(self._words(query), similarity).astype(np.float32)
            kept, drift = _Kept(scores, statistics, generations), 0.0
        with self._kept_lock:
            self._kept[query] = kept
            self._kept.move_to_end(query)
            while len(self._kept) > _KEPT:
                self._kept.popitem(last=False)
        return kept, drift

    def details(self, query: str, document: SkillDocument, tokenizer: Tokenizer = "ascii") -> dict[str, Any]:
        words, meaning = self.components(query).get(id(document), (0.0, 0.0))
        chance, penalty = self.intent(query)
        return {
            "shared_words": matched_terms(query, document),
            "bm25f": words,
            "semantic": meaning,
            "task_probability": round(chance, 3),
            "quick_answer_penalty": round(penalty, DECIMALS),
        }

    def explain(self, query: str, document: SkillDocument) -> str:
        words, meaning = self.components(query).get(id(document), (0.0, 0.0))
        w = self.weight
        fused = (
            f"bm25f {words:.3f} ({shared_words(query, document)}) x{w:g} + semantic {meaning:.3f} x{1 - w:g}"
        )
        chance, penalty = self.intent(query)
        if not penalty:
            return fused
        return f"{fused} - {penalty:.3f} (reads like a quick question, not a task: {chance:.0%} task-like)"


def _error(weight: float, drift: float) -> float:
    """How far an approximate fused score can be from the exact one: bm25f's part off by `drift`
    (statistics moved since it was kept), semantic's by float32 products, both by float32 storage."""
    return weight * drift + (1.0 - weight) * APPROXIMATION + _STORAGE


def hybrid_for(index: SkillIndex) -> HybridSearch:
    """The index's hybrid search, typed as such (built on first use)."""
    search = scorer_for(index, "hybrid")
    assert isinstance(search, HybridSearch)
    return search


def saved_state(
    index: SkillIndex, docs: list[SkillDocument]
) -> tuple[dict[str, Any], dict[str, np.ndarray[Any, Any]]] | None:
    """What hybrid's saved state adds to bm25f's (quick.save): the model, the weight and the
    skill vectors in slot order; None when its slots are not `docs`."""
    search = hybrid_for(index)
    semantic = search.semantic
    if not quick.same_slots(semantic.documents(), docs):
        return None
    head = {"model": semantic.model.name, "weight": search.weight}
    return head, {"vectors": np.ascontiguousarray(semantic.matrix())}


def select_saved(
    saved: warm.Columns, query: str, tokenizer: str, top_k: int, min_score: float
) -> list[quick.Match]:
    """hybrid's selection from its saved state (warm.py, quick.py): HybridSearch.select with
    every slot alive and nothing kept from an earlier request, in the same arithmetic."""
    columns = quick.Columns.of(saved)
    head = columns.head
    size = head["size"]
    model = load_model()
    if model.name != head["model"] or head["weight"] != HYBRID_BM25F_WEIGHT:
        raise ValueError("saved with another model or weight")
    if top_k <= 0 or not size:
        return []
    vectors = columns.array("vectors")
    weight: float = head["weight"]
    vector = np.asarray(model.embed([query])[0], dtype=np.float32)
    probe = probe_for(model)
    chance = 1.0 if probe is None else probe.task_probability(vector)
    penalty = 0.0 if keyword_search(query) else quick_answer_penalty(chance)
    lexical = quick.SavedBm25f(columns)

    def fused(slots: np.ndarray[Any, Any]) -> np.ndarray[Any, np.dtype[np.float64]]:
        meaning = exact_similarity(vectors[slots], vector)
        return penalised(fused_mean(weight, lexical.scores_of(query, slots), meaning), penalty)

    similarity = np.clip((vectors @ vector).astype(np.float64), 0.0, 1.0)
    kept = fused_mean(weight, lexical.scores(query), similarity).astype(np.float32)
    approximate = (kept - penalty).astype(np.float64)  # as HybridSearch._select takes kept scores
    alive = np.ones(size, dtype=bool)
    policy = SelectionPolicy(top_k, min_score, [], [], "ascii", "hybrid")
    scores, _ = exact_where_needed(alive, approximate, _error(weight, 0.0), fused, policy)
    slots = best_first(alive, scores, min_score, top_k, False)
    return quick.matches(columns, slots[:top_k].tolist(), scores)
