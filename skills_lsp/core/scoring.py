"""adk-skill 0.6.0's lexical scorer and selector, bit for bit, and a fast inverted index.

Score of a skill for a query: for every query token (repeats count again), +4.0 if it is a name
token, +2.5 description, +2.0 tag, +1.0 body; divided by sqrt(max(unique body tokens, 1)). The
crate computes in f32: the sums are exact, the square root and the division are each rounded to
f32, and `min_score` is compared as f32. `select_skills_plain` is the crate's algorithm as
written (it re-tokenizes every skill for every query); `select_skills` gives the same answers from
an inverted index that only touches skills sharing a token with the query.
"""

from __future__ import annotations

import heapq
import math
import re
import struct
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from skills_lsp.core.discovery import path_sort_key
from skills_lsp.core.index import SkillDocument, SkillIndex, SkillSummary

Tokenizer = Literal["ascii", "unicode"]

NAME_WEIGHT = 4.0
DESCRIPTION_WEIGHT = 2.5
TAG_WEIGHT = 2.0
BODY_WEIGHT = 1.0

_ASCII_TOKEN = re.compile(r"[A-Za-z0-9]+")
_UNICODE_TOKEN = re.compile(r"[^\W_]+")
_F32 = struct.Struct("<f")


def f32(value: float) -> float:
    """`value` rounded to the nearest IEEE single (kept in a Python float, exactly)."""
    return float(_F32.unpack(_F32.pack(value))[0])


def f32_bits(value: float) -> str:
    return f"0x{struct.unpack('<I', _F32.pack(value))[0]:08x}"


def tokenize(text: str, tokenizer: Tokenizer = "ascii") -> list[str]:
    """The crate's tokens: runs of ASCII letters and digits, lowercased; every other character
    separates (`café` -> `caf`). `unicode`: runs of Unicode letters and digits, case-folded."""
    if tokenizer == "unicode":
        return [t.casefold() for t in _UNICODE_TOKEN.findall(text)]
    return [t.lower() for t in _ASCII_TOKEN.findall(text)]


def ascii_lower(text: str) -> str:
    """Rust's `to_ascii_lowercase`: only A-Z change (Python's lower() also lowers non-ASCII)."""
    return text.translate(_ASCII_LOWER)


_ASCII_LOWER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}


@dataclass
class SelectionPolicy:
    """The crate's SelectionPolicy (`top_k` 1, `min_score` 1.0 by default), plus our tokenizer
    choice (ASCII, the crate's, by default)."""

    top_k: int = 1
    min_score: float = 1.0
    include_tags: list[str] = field(default_factory=list)
    exclude_tags: list[str] = field(default_factory=list)
    tokenizer: Tokenizer = "ascii"


@dataclass
class SkillMatch:
    score: float
    skill: SkillSummary


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


def explain(query: str, skill: SkillDocument, tokenizer: Tokenizer = "ascii") -> FieldHits:
    """The crate's score of one skill, with the tokens behind it."""
    tokens = tokenize(query, tokenizer)
    name = set(tokenize(skill.name, tokenizer))
    desc = set(tokenize(skill.description, tokenizer))
    tags = _tag_tokens(skill.tags, tokenizer)
    body = set(tokenize(skill.body, tokenizer))
    raw = 0.0
    for tok in tokens:
        raw += NAME_WEIGHT * (tok in name) + DESCRIPTION_WEIGHT * (tok in desc)
        raw += TAG_WEIGHT * (tok in tags) + BODY_WEIGHT * (tok in body)
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
    name = set(tokenize(skill.name, tokenizer))
    desc = set(tokenize(skill.description, tokenizer))
    tags = _tag_tokens(skill.tags, tokenizer)
    body = set(tokenize(skill.body, tokenizer))
    raw = 0.0
    for tok in query_tokens:
        if tok in name:
            raw += NAME_WEIGHT
        if tok in desc:
            raw += DESCRIPTION_WEIGHT
        if tok in tags:
            raw += TAG_WEIGHT
        if tok in body:
            raw += BODY_WEIGHT
    return f32(raw / _norm(len(body)))


def _tag_filter(policy: SelectionPolicy) -> tuple[set[str], set[str]]:
    return {ascii_lower(t) for t in policy.include_tags}, {ascii_lower(t) for t in policy.exclude_tags}


def tag_allowed(skill: SkillDocument, include: set[str], exclude: set[str]) -> bool:
    """Exclude wins; otherwise any tag in `include` (or no include list) lets the skill through.
    Tags compare as whole ASCII-lowercased strings."""
    tags = {ascii_lower(t) for t in skill.tags}
    if exclude and tags & exclude:
        return False
    return not include or bool(tags & include)


def _order(score: float, doc: SkillDocument) -> tuple[float, str, tuple[str, ...]]:
    return (-score, doc.name, path_sort_key(doc.path))


def _finish(scored: list[tuple[float, SkillDocument]], policy: SelectionPolicy) -> list[SkillMatch]:
    best = heapq.nsmallest(policy.top_k, scored, key=lambda item: _order(item[0], item[1]))
    return [SkillMatch(score, doc.summary()) for score, doc in best]


def select_skills_plain(
    index: SkillIndex, query: str, policy: SelectionPolicy | None = None
) -> list[SkillMatch]:
    """The crate's `select_skills`, as written: every skill is tokenized again for every query."""
    policy = policy or SelectionPolicy()
    if policy.top_k == 0:
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


class SkillSearch:
    """An inverted index over a SkillIndex: token -> [(position, field weight)].

    Built once per tokenizer and kept in step with the index's upserts and removes, so a query
    costs time in proportion to the skills that share a token with it.
    """

    def __init__(self, index: SkillIndex, tokenizer: Tokenizer = "ascii") -> None:
        self.index = index
        self.tokenizer = tokenizer
        self._weights: dict[int, dict[str, float]] = {}  # doc key -> token -> weight
        self._norms: dict[int, float] = {}
        self._postings: dict[str, dict[int, float]] = {}
        self._docs: dict[int, SkillDocument] = {}
        for doc in index:
            self._add(doc)
        index.subscribe(self._on_change)

    def _add(self, doc: SkillDocument) -> None:
        key = id(doc)
        name = set(tokenize(doc.name, self.tokenizer))
        desc = set(tokenize(doc.description, self.tokenizer))
        tags = _tag_tokens(doc.tags, self.tokenizer)
        body = set(tokenize(doc.body, self.tokenizer))
        weights: dict[str, float] = {}
        for tok in name | desc | tags | body:
            weights[tok] = (
                NAME_WEIGHT * (tok in name)
                + DESCRIPTION_WEIGHT * (tok in desc)
                + TAG_WEIGHT * (tok in tags)
                + BODY_WEIGHT * (tok in body)
            )
            self._postings.setdefault(tok, {})[key] = weights[tok]
        self._weights[key] = weights
        self._norms[key] = _norm(len(body))
        self._docs[key] = doc

    def _remove(self, doc: SkillDocument) -> None:
        key = id(doc)
        for tok in self._weights.pop(key, {}):
            postings = self._postings.get(tok)
            if postings is not None:
                postings.pop(key, None)
                if not postings:
                    del self._postings[tok]
        self._norms.pop(key, None)
        self._docs.pop(key, None)

    def _on_change(self, change: str, doc: SkillDocument) -> None:
        if change == "add":
            self._add(doc)
        else:
            self._remove(doc)

    def select(self, query: str, policy: SelectionPolicy | None = None) -> list[SkillMatch]:
        policy = policy or SelectionPolicy()
        if policy.top_k == 0:
            return []
        include, exclude = _tag_filter(policy)
        tokens = tokenize(query, self.tokenizer)
        if not tokens and not include:
            return []
        threshold = f32(policy.min_score)
        raw: dict[int, float] = {}
        for tok, count in Counter(tokens).items():
            for key, weight in self._postings.get(tok, {}).items():
                raw[key] = raw.get(key, 0.0) + count * weight
        scored: list[tuple[float, SkillDocument]] = []
        for key, total in raw.items():
            doc = self._docs[key]
            score = f32(total / self._norms[key])
            if score >= threshold and (not (include or exclude) or tag_allowed(doc, include, exclude)):
                scored.append((score, doc))
        if threshold <= 0.0 and len(scored) < policy.top_k:
            # Skills sharing no token score 0.0 and still pass a min_score of 0: the first ones in
            # (name, path) order, which is the index's own order, fill the remaining places.
            for doc in self.index:
                if len(scored) >= policy.top_k:
                    break
                if id(doc) not in raw and tag_allowed(doc, include, exclude):
                    scored.append((0.0, doc))
        return _finish(scored, policy)


def search_for(index: SkillIndex, tokenizer: Tokenizer = "ascii") -> SkillSearch:
    """The index's inverted index for `tokenizer`, built on first use and kept current."""
    cache: dict[str, SkillSearch] = index.__dict__.setdefault("_searches", {})
    search = cache.get(tokenizer)
    if search is None:
        search = cache[tokenizer] = SkillSearch(index, tokenizer)
    return search


def select_skills(index: SkillIndex, query: str, policy: SelectionPolicy | None = None) -> list[SkillMatch]:
    """The crate's `select_skills` (same results, bit for bit), through the inverted index."""
    policy = policy or SelectionPolicy()
    return search_for(index, policy.tokenizer).select(query, policy)
