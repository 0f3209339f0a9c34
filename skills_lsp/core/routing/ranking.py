"""How per-skill scores become a selection, shared by the scorers: the tag filter, `ranked` (a
policy applied to every slot's score, ties broken by (name, path)) and `SlottedSearch`, the slot
bookkeeping of a search that follows an index's upserts and removes."""

from __future__ import annotations

import hashlib
import operator
from array import array
from typing import TYPE_CHECKING, Any

import numpy as np

from skills_lsp.core.index.documents_digest import documents_digest
from skills_lsp.core.routing.scorer import SelectionPolicy, SkillMatch
from skills_lsp.core.text import ascii_lower

if TYPE_CHECKING:
    from skills_lsp.core.index.skill_index import SkillDocument, SkillIndex


def documents_key(docs: list[SkillDocument], *version: object, digest: str | None = None) -> str:
    """What a search saved between runs (store.py) must have been built from: these documents,
    in this order (`digest`: their documents_digest, when known), by this `version` of the code
    that indexed them."""
    head = repr((*version, len(docs)))
    return hashlib.sha256(f"{head}\0{digest or documents_digest(docs)}".encode()).hexdigest()


def tag_allowed(skill: SkillDocument, include: set[str], exclude: set[str]) -> bool:
    """Exclude wins; otherwise any tag in `include` (or no include list) lets the skill through.
    Tags compare as whole ASCII-lowercased strings."""
    tags = {ascii_lower(t) for t in skill.tags}
    if exclude and tags & exclude:
        return False
    return not include or bool(tags & include)


def best_first(
    alive: np.ndarray[Any, np.dtype[np.bool_]],
    scores: np.ndarray[Any, np.dtype[np.float64]],
    min_score: float,
    top_k: int,
    filtered: bool,
) -> np.ndarray[Any, np.dtype[np.int64]]:
    """The slots that can be selected, best first (ties in slot order): a score above 0 and at
    least `min_score`; unless a tag filter will drop some (`filtered`), only the `top_k` best and
    every slot tied with the last of them."""
    candidates = np.flatnonzero(alive & (scores > 0.0) & (scores >= min_score))
    if not filtered and len(candidates) > top_k:
        # Only the top_k best scores (and every skill tied with the last of them) can be chosen:
        # partition instead of sorting thousands of weak matches in Python.
        kth = np.partition(scores[candidates], -top_k)[-top_k]
        candidates = candidates[scores[candidates] >= kth]
    # Best first (in numpy); with a tag filter, ranked()'s loop stops once top_k have passed it.
    return candidates[np.argsort(-scores[candidates], kind="stable")]


def ranked(
    slots: list[SkillDocument | None],
    alive: np.ndarray[Any, np.dtype[np.bool_]],
    scores: np.ndarray[Any, np.dtype[np.float64]],
    policy: SelectionPolicy,
) -> list[SkillMatch]:
    """`policy` applied to per-slot scores: a score above 0 and at least `min_score`, the tag
    filter, the best `top_k`; ties broken by (name, path), never by the order skills were added."""
    return matches(slots, ranked_slots(slots, alive, scores, policy))


def matches(slots: list[SkillDocument | None], chosen: list[tuple[float, int]]) -> list[SkillMatch]:
    """(score, slot) pairs as the matches a selection returns."""
    found = []
    for score, slot in chosen:
        doc = slots[slot]
        assert doc is not None  # ranked_slots chooses live slots only
        found.append(SkillMatch(score, doc.summary()))
    return found


def ranked_slots(
    slots: list[SkillDocument | None],
    alive: np.ndarray[Any, np.dtype[np.bool_]],
    scores: np.ndarray[Any, np.dtype[np.float64]],
    policy: SelectionPolicy,
) -> list[tuple[float, int]]:
    """`ranked`'s selection as (score, slot) pairs."""
    if policy.top_k <= 0 or not len(scores):
        return []
    include = {ascii_lower(t) for t in policy.include_tags}
    exclude = {ascii_lower(t) for t in policy.exclude_tags}
    candidates = best_first(alive, scores, policy.min_score, policy.top_k, bool(include or exclude))
    chosen: list[tuple[float, SkillDocument, int]] = []
    for slot in candidates.tolist():
        score = float(scores[slot])
        if len(chosen) >= policy.top_k and score < chosen[-1][0]:
            break  # ties with the last chosen stay in, for the (name, path) tie-break below
        doc = slots[slot]
        if doc is not None and tag_allowed(doc, include, exclude):
            chosen.append((score, doc, slot))
    chosen.sort(key=lambda item: (-item[0], item[1].sort_key()))
    return [(score, slot) for score, _, slot in chosen[: policy.top_k]]


class SlottedSearch:
    """A search over an index's documents kept in append-only slots, following the index's
    upserts and removes: a removal leaves a dead slot, and a search that is mostly dead slots
    rebuilds itself (an editor replaces a document on every change; a long session must not
    grow without bound). Subclasses keep their per-slot data in step through the hooks."""

    COMPACT_AFTER = 1000  # dead slots tolerated before a mostly-dead search is rebuilt

    def __init__(self, index: SkillIndex) -> None:
        self.index = index
        self.generation = 0  # rebuilds so far: each one renumbers the slots
        self._rebuild()
        index.subscribe(self._on_change)

    def _rebuild(self) -> None:
        self.generation += 1
        self._slots: list[SkillDocument | None] = []
        self._slot_of: dict[int, int] = {}
        self._alive = array("b")
        self._live = 0
        self._reset()
        self._add_all(list(self.index))

    def _reset(self) -> None:
        """Hook: empty the subclass's per-slot data (before a build)."""

    def _documents_key(self, docs: list[SkillDocument], *version: object) -> str:
        """`documents_key` of `docs`, with the digest the index keeps when they are all of its
        documents in its order (a build's): a warm start reads no document for it."""
        whole = len(docs) == len(self.index) and all(map(operator.is_, docs, self.index))
        return documents_key(docs, *version, digest=self.index.documents_digest() if whole else None)

    def _add_all(self, docs: list[SkillDocument]) -> None:
        """Hook: give each document a slot (`_claim`) and index it; overridden to batch work."""
        for doc in docs:
            self._claim(doc)

    def _claim(self, doc: SkillDocument) -> int:
        slot = len(self._slots)
        self._slots.append(doc)
        self._slot_of[id(doc)] = slot
        self._alive.append(1)
        self._live += 1
        return slot

    def _claim_all(self, docs: list[SkillDocument]) -> None:
        """`_claim` of each of `docs`, in order, at once (a warm load's 16,000 slots)."""
        first = len(self._slots)
        self._slots.extend(docs)
        self._slot_of.update(zip(map(id, docs), range(first, first + len(docs)), strict=True))
        self._alive.frombytes(b"\x01" * len(docs))
        self._live += len(docs)

    def _forget(self, slot: int, doc: SkillDocument) -> None:
        """Hook: a slot died (`doc` left the index)."""

    def _remove(self, doc: SkillDocument) -> None:
        slot = self._slot_of.pop(id(doc), None)
        if slot is None:
            return
        self._slots[slot] = None
        self._alive[slot] = 0
        self._live -= 1
        self._forget(slot, doc)
        dead = len(self._slots) - self._live
        if dead > self.COMPACT_AFTER and dead > self._live:
            self._rebuild()  # listeners run after the index changed: it holds the live set

    def _on_change(self, change: str, doc: SkillDocument) -> None:
        if change == "add":
            self._add_all([doc])
        else:
            self._remove(doc)

    def documents(self) -> list[SkillDocument | None]:
        """The slots' documents (None: a dead slot)."""
        return self._slots

    def slot_count(self) -> int:
        """Slots in use, dead ones included (a compaction renumbers and shrinks them)."""
        return len(self._slots)

    def slot_of(self) -> dict[int, int]:
        """The slot of each live document, by id()."""
        return self._slot_of

    def alive(self) -> np.ndarray[Any, np.dtype[np.bool_]]:
        return np.frombuffer(self._alive, dtype=np.int8).astype(bool)
