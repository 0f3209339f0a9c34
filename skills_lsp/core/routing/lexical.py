"""adk-skill 0.6.0's lexical scorer and selector, bit for bit, and a fast inverted index.

Score of a skill for a query: for every query token (repeats count again), +4.0 if it is a name
token, +2.5 description, +2.0 tag, +1.0 body; divided by sqrt(max(unique body tokens, 1)). The
crate computes in f32: the sums are exact, the square root and the division are each rounded to
f32, and `min_score` is compared as f32. `select_skills_plain` is the crate's algorithm as
written (it re-tokenizes every skill for every query); the `lexical` scorer gives the same answers
from an inverted index that only touches skills sharing a token with the query.
"""

from __future__ import annotations

import heapq
import math
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from skills_lsp.core.routing.ranking import SlottedSearch, tag_allowed
from skills_lsp.core.routing.scorer import SelectionPolicy, SkillMatch, Tokenizer
from skills_lsp.core.routing.tokens import TOKENS_VERSION, f32, tokenize
from skills_lsp.core.text import ascii_lower

if TYPE_CHECKING:  # not imported to run: a warm `select` (routing/quick.py) reads no documents
    from skills_lsp.core.index.skill_index import SkillDocument, SkillIndex

NAME_WEIGHT = 4.0
DESCRIPTION_WEIGHT = 2.5
TAG_WEIGHT = 2.0
BODY_WEIGHT = 1.0
FIELD_WEIGHTS = {
    "name": NAME_WEIGHT,
    "description": DESCRIPTION_WEIGHT,
    "tags": TAG_WEIGHT,
    "body": BODY_WEIGHT,
}

SAVED_FILE = "index-lexical-{}.bin"  # a full build's postings per tokenizer, in the index's cache folder


@dataclass(frozen=True)
class FieldHits:
    """Which query tokens hit which field of one skill (for `--explain` and hovers)."""

    name: tuple[str, ...]
    description: tuple[str, ...]
    tags: tuple[str, ...]
    body: tuple[str, ...]
    raw: float
    unique_body_tokens: int
    norm: float
    score: float


def _tag_tokens(tags: Iterable[str], tokenizer: Tokenizer) -> set[str]:
    return {tok for tag in tags for tok in tokenize(tag, tokenizer)}


def _norm(unique_body_tokens: int) -> float:
    return max(f32(math.sqrt(max(unique_body_tokens, 1))), 1.0)


FieldSets = tuple[set[str], set[str], set[str], set[str]]  # name, description, tags, body


def field_sets(skill: SkillDocument, tokenizer: Tokenizer = "ascii") -> FieldSets:
    """A skill's distinct tokens per field (tags are tokenized for scoring)."""
    return (
        set(tokenize(skill.name, tokenizer)),
        set(tokenize(skill.description, tokenizer)),
        _tag_tokens(skill.tags, tokenizer),
        set(tokenize(skill.body, tokenizer)),
    )


def _raw(query_tokens: Sequence[str], fields: FieldSets) -> float:
    """The crate's sum: every query token (repeats count again) adds each field's weight."""
    name, desc, tags, body = fields
    raw = 0.0
    for tok in query_tokens:
        raw += NAME_WEIGHT * (tok in name) + DESCRIPTION_WEIGHT * (tok in desc)
        raw += TAG_WEIGHT * (tok in tags) + BODY_WEIGHT * (tok in body)
    return raw


def explain(query: str, skill: SkillDocument, tokenizer: Tokenizer = "ascii") -> FieldHits:
    """The crate's score of one skill, with the tokens behind it."""
    tokens = tokenize(query, tokenizer)
    fields = field_sets(skill, tokenizer)
    name, desc, tags, body = fields
    raw = _raw(tokens, fields)
    norm = _norm(len(body))
    return FieldHits(
        name=tuple(t for t in tokens if t in name),
        description=tuple(t for t in tokens if t in desc),
        tags=tuple(t for t in tokens if t in tags),
        body=tuple(t for t in tokens if t in body),
        raw=raw,
        unique_body_tokens=len(body),
        norm=norm,
        score=f32(raw / norm),
    )


def score_skill(query_tokens: Sequence[str], skill: SkillDocument, tokenizer: Tokenizer = "ascii") -> float:
    """The crate's `score_skill` (f32 result in a Python float)."""
    fields = field_sets(skill, tokenizer)
    return f32(_raw(query_tokens, fields) / _norm(len(fields[3])))


def _tag_filter(policy: SelectionPolicy) -> tuple[set[str], set[str]]:
    return {ascii_lower(t) for t in policy.include_tags}, {ascii_lower(t) for t in policy.exclude_tags}


def _finish(scored: list[tuple[float, SkillDocument]], policy: SelectionPolicy) -> list[SkillMatch]:
    def order(item: tuple[float, SkillDocument]) -> tuple[float, tuple[str, tuple[str, ...]]]:
        return (-item[0], item[1].sort_key())  # (name, path) as the crate orders them

    best = heapq.nsmallest(policy.top_k, scored, key=order)
    return [SkillMatch(score, doc.summary()) for score, doc in best]


def select_skills_plain(
    index: SkillIndex, query: str, policy: SelectionPolicy | None = None
) -> list[SkillMatch]:
    """The crate's `select_skills`, as written: every skill is tokenized again for every query."""
    policy = policy or SelectionPolicy()
    if policy.top_k <= 0:
        return []
    include, exclude = _tag_filter(policy)
    tokens = tokenize(query, policy.tokenizer)
    if not tokens and not include:
        return []
    threshold = f32(policy.min_score)
    scored = []
    for doc in index:
        if not tag_allowed(doc, include, exclude):
            continue
        score = score_skill(tokens, doc, policy.tokenizer)
        if score >= threshold:
            scored.append((score, doc))
    return _finish(scored, policy)


Postings = Iterable[tuple[np.ndarray[Any, np.dtype[np.int32]], np.ndarray[Any, np.dtype[np.float32]]]]


def best_slots(
    postings: Callable[[str], Postings],
    tokens: Sequence[str],
    size: int,
    norms: np.ndarray[Any, np.dtype[np.float32]],
    min_score: float,
    allowed: np.ndarray[Any, np.dtype[np.bool_]],
    rank: np.ndarray[Any, np.dtype[np.int64]],
    top_k: int,
) -> tuple[np.ndarray[Any, np.dtype[np.int64]], np.ndarray[Any, np.dtype[np.float32]]]:
    """The crate's arithmetic over an inverted index: the best `top_k` slots of `size` (by score,
    then `rank`, the index's (name, path) order) and every slot's score. `postings(token)` gives
    the (slots, weights) holding a token; shared by `SkillSearch` and a warm `select`'s saved
    state (routing/quick.py), so both give the crate's answers bit for bit."""
    slots, weights = [], []
    for token, count in Counter(tokens).items():
        for token_slots, token_weights in postings(token):
            slots.append(token_slots)
            weight = token_weights.astype(np.float64)
            weights.append(weight * count if count > 1 else weight)
    if slots:  # with weights, bincount sums float64 (numpy's stubs say int)
        counts = np.bincount(np.concatenate(slots), np.concatenate(weights), minlength=size)
        raw = np.asarray(counts, dtype=np.float64)
    else:
        raw = np.zeros(size)
    scores = raw.astype(np.float32) / norms
    valid = scores >= np.float32(f32(min_score))
    valid &= allowed
    candidates = np.flatnonzero(valid)
    if len(candidates) > top_k:
        cand_scores = scores[candidates]
        kth = np.partition(cand_scores, len(cand_scores) - top_k)[len(cand_scores) - top_k]
        sure = candidates[cand_scores > kth]
        tied = candidates[cand_scores == kth]
        need = top_k - len(sure)
        if len(tied) > need:
            tied = tied[np.argpartition(rank[tied], need - 1)[:need]] if need > 0 else tied[:0]
        candidates = np.concatenate([sure, tied])
    order = candidates[np.lexsort((rank[candidates], -scores[candidates]))]
    return order[:top_k], scores


class SkillSearch(SlottedSearch):
    """An inverted index over a SkillIndex, kept in step with its upserts and removes.

    Each token maps to the slots of the skills holding it and the field weight there (4 name +
    2.5 description + 2 tags + 1 body). A query adds up its tokens' postings with one numpy
    `bincount`, divides in float32 by each skill's norm (exactly the crate's arithmetic: the sums
    are multiples of 0.5, exact in float32, and float32 division is correctly rounded), and
    takes the top k by (score, then the index's own (name, path) order).

    A full build is saved in the index's cache folder and loaded by the next run over the same
    documents: those postings stay compressed by token (`_vocabulary` rows into `_base_slots` and
    `_base_weights`); documents added later go to `_postings`.
    """

    def __init__(self, index: SkillIndex, tokenizer: Tokenizer = "ascii") -> None:
        self.tokenizer = tokenizer
        super().__init__(index)

    def _reset(self) -> None:
        self._postings: dict[str, tuple[array[int], array[float]]] = {}
        self._vocabulary: dict[str, int] = {}
        self._indptr: np.ndarray[Any, np.dtype[np.int64]] = np.zeros(1, np.int64)
        self._base_slots: np.ndarray[Any, np.dtype[np.int32]] = np.zeros(0, np.int32)
        self._base_weights: np.ndarray[Any, np.dtype[np.float32]] = np.zeros(0, np.float32)
        self._norms = array("f")
        self._tags: dict[str, array[int]] = {}
        self._rank_version = -1
        self._rank: np.ndarray[Any, np.dtype[np.int64]] = np.zeros(0, dtype=np.int64)

    def _add_all(self, docs: list[SkillDocument]) -> None:
        if not self._slots and len(docs) > 1 and self._load_saved(docs):
            return
        for doc in docs:
            self._add(doc)
        if len(self._slots) == len(docs) > 1:  # a full build (not an editor's one change)
            self._save(docs)

    def _load_saved(self, docs: list[SkillDocument]) -> bool:
        """The postings saved for exactly these documents by an earlier run, if any (store.py)."""
        frames = self.index.frames
        if frames is None:
            return False
        state = frames.read(SAVED_FILE.format(self.tokenizer), "lexical")
        if not isinstance(state, dict) or state.get("key") != self._documents_key(docs, TOKENS_VERSION):
            return False
        for doc in docs:
            self._claim(doc)
        self._vocabulary = {token: row for row, token in enumerate(state["vocabulary"])}
        self._indptr = state["indptr"]
        self._base_slots = state["slots"]
        self._base_weights = state["weights"]
        self._norms = array("f", state["norms"].tobytes())
        self._tags = {tag: array("i", slots.tobytes()) for tag, slots in state["tags"].items()}
        return True

    def _save(self, docs: list[SkillDocument]) -> None:
        frames = self.index.frames
        columns = self.columns()
        if frames is None or columns is None:
            return
        vocabulary, indptr, slots, weights = columns
        state = {
            "key": self._documents_key(docs, TOKENS_VERSION),
            "vocabulary": vocabulary,
            "indptr": indptr,
            "slots": slots,
            "weights": weights,
            "norms": np.frombuffer(self._norms, dtype=np.float32).copy(),
            "tags": {tag: np.frombuffer(slots, dtype=np.int32).copy() for tag, slots in self._tags.items()},
        }
        frames.write(SAVED_FILE.format(self.tokenizer), "lexical", state)

    def columns(
        self,
    ) -> tuple[list[str], np.ndarray[Any, Any], np.ndarray[Any, Any], np.ndarray[Any, Any]] | None:
        """The postings as (vocabulary, indptr, slots, weights): token row r's are the entries
        [indptr[r], indptr[r + 1]) of slots and weights. None when they are split between a saved
        build and documents added since (an editor's)."""
        if self._vocabulary:
            if self._postings:
                return None
            return list(self._vocabulary), self._indptr, self._base_slots, self._base_weights
        entries = list(self._postings.values())
        lengths = np.fromiter((len(e[0]) for e in entries), dtype=np.int64, count=len(entries))
        return (
            list(self._postings),
            np.concatenate([np.zeros(1, np.int64), np.cumsum(lengths)]),
            np.frombuffer(b"".join(e[0].tobytes() for e in entries), dtype=np.int32),
            np.frombuffer(b"".join(e[1].tobytes() for e in entries), dtype=np.float32),
        )

    def norms(self) -> np.ndarray[Any, np.dtype[np.float32]]:
        """Each slot's norm, the crate's max(sqrt(unique body tokens), 1) in float32."""
        return np.frombuffer(self._norms, dtype=np.float32)

    def _token_postings(
        self, token: str
    ) -> Iterable[tuple[np.ndarray[Any, np.dtype[np.int32]], np.ndarray[Any, np.dtype[np.float32]]]]:
        """The (slots, weights) holding `token`: from the saved build, then from later additions."""
        row = self._vocabulary.get(token)
        if row is not None:
            start, end = self._indptr[row], self._indptr[row + 1]
            yield self._base_slots[start:end], self._base_weights[start:end]
        entry = self._postings.get(token)
        if entry is not None:
            yield np.frombuffer(entry[0], dtype=np.int32), np.frombuffer(entry[1], dtype=np.float32)

    def _add(self, doc: SkillDocument) -> None:
        slot = self._claim(doc)
        tok = self.tokenizer
        body = set(tokenize(doc.body, tok))
        weights = dict.fromkeys(body, BODY_WEIGHT)
        for token in set(tokenize(doc.name, tok)):
            weights[token] = weights.get(token, 0.0) + NAME_WEIGHT
        for token in set(tokenize(doc.description, tok)):
            weights[token] = weights.get(token, 0.0) + DESCRIPTION_WEIGHT
        for token in _tag_tokens(doc.tags, tok):
            weights[token] = weights.get(token, 0.0) + TAG_WEIGHT
        postings = self._postings
        for token, weight in weights.items():
            entry = postings.get(token)
            if entry is None:  # the postings' key is the one copy of the token kept
                entry = postings[token] = (array("i"), array("f"))
            entry[0].append(slot)
            entry[1].append(weight)
        self._norms.append(_norm(len(body)))
        for tag in {ascii_lower(t) for t in doc.tags}:
            self._tags.setdefault(tag, array("i")).append(slot)

    def _ranks(self) -> np.ndarray[Any, np.dtype[np.int64]]:
        """Each slot's position in the index's (name, path) order, recomputed after changes."""
        if self._rank_version != self.index.version or len(self._rank) != len(self._slots):
            rank = np.full(len(self._slots), np.iinfo(np.int64).max, dtype=np.int64)
            for position, doc in enumerate(self.index):
                rank[self._slot_of[id(doc)]] = position
            self._rank, self._rank_version = rank, self.index.version
        return self._rank

    def _allowed(self, include: set[str], exclude: set[str]) -> np.ndarray[Any, np.dtype[np.bool_]]:
        alive = np.frombuffer(self._alive, dtype=np.int8).astype(bool)
        if include:
            allowed = np.zeros(len(self._slots), dtype=bool)
            for tag in include:
                if tag in self._tags:
                    allowed[np.frombuffer(self._tags[tag], dtype=np.int32)] = True
            alive &= allowed
        for tag in exclude:
            if tag in self._tags:
                alive[np.frombuffer(self._tags[tag], dtype=np.int32)] = False
        return alive

    def select(self, query: str, policy: SelectionPolicy | None = None) -> list[SkillMatch]:
        policy = policy or SelectionPolicy()
        if policy.top_k <= 0 or not self._slots:
            return []
        include, exclude = _tag_filter(policy)
        tokens = tokenize(query, self.tokenizer)
        if not tokens and not include:
            return []
        order, scores = best_slots(
            self._token_postings,
            tokens,
            len(self._slots),
            np.frombuffer(self._norms, dtype=np.float32),
            policy.min_score,
            self._allowed(include, exclude),
            self._ranks(),
            policy.top_k,
        )
        matches = []
        for slot in order:
            doc = self._slots[int(slot)]
            assert doc is not None
            matches.append(SkillMatch(float(scores[slot]), doc.summary()))
        return matches


class LexicalScorer:
    """The `lexical` scorer: one inverted index per tokenizer a policy asks for."""

    def __init__(self, index: SkillIndex) -> None:
        self.index = index
        self._searches: dict[Tokenizer, SkillSearch] = {"ascii": SkillSearch(index, "ascii")}

    def search(self, tokenizer: Tokenizer = "ascii") -> SkillSearch:
        found = self._searches.get(tokenizer)
        if found is None:
            found = self._searches[tokenizer] = SkillSearch(self.index, tokenizer)
        return found

    def select(self, query: str, policy: SelectionPolicy) -> list[SkillMatch]:
        return self.search(policy.tokenizer).select(query, policy)

    def details(self, query: str, document: SkillDocument, tokenizer: Tokenizer = "ascii") -> dict[str, Any]:
        hits = explain(query, document, tokenizer)
        return {
            "name": list(hits.name),
            "description": list(hits.description),
            "tags": list(hits.tags),
            "body": list(hits.body),
            "raw": hits.raw,
            "unique_body_tokens": hits.unique_body_tokens,
            "norm": hits.norm,
        }

    def explain(self, query: str, document: SkillDocument) -> str:
        hits = explain(query, document)
        fields = [
            f"{label} x{weight}: {' '.join(tokens)}"
            for label, weight, tokens in (
                ("name", NAME_WEIGHT, hits.name),
                ("description", DESCRIPTION_WEIGHT, hits.description),
                ("tags", TAG_WEIGHT, hits.tags),
                ("body", BODY_WEIGHT, hits.body),
            )
            if tokens
        ]
        return (
            f"{'; '.join(fields) or 'no field hit'}\n"
            f"   - {hits.raw} / sqrt({hits.unique_body_tokens} distinct body words) = {hits.score:.3f}"
        )
