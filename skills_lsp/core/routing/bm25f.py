"""The `bm25f` scorer: field-weighted BM25 over name, description, tags and body.

Beside the crate's `lexical` scorer (unchanged, bit-exact), this one fixes what makes lexical
routing poor at scale: stop words no longer score, light stemming joins `invoice`/`invoices`,
every field is length-normalised on its own (so a tiny skill no longer wins everything), rare
words count more than common ones (idf), and scores run from 0 to 1 so that one `min_score`
means about the same in a workspace of 60 skills or 20,000.

That 0..1 scale is x / (x + 1), where x is the raw BM25F sum divided by the idf of a word found in
a single skill: "as much evidence as one rare word matching fully" scores 0.5 in any workspace,
since every idf grows with the log of the pool. Words held by a fixed share of the pool drift
slowly (one in 5% of the skills: 0.55 among 40, 0.49 among 2,000, 0.47 among 20,000). A large pool
also holds more skills that a stray request can match, which pulls the other way: on
benchmarks/routing/ the calibrated threshold is 0.40 among 79 skills and 0.44 among 2,079.

An earlier version divided by the query's best possible score instead; that made the score fall
with every extra word of a chatty request, so at its threshold it turned away 62% of answerable
requests on benchmarks/routing/, and it told "some skill fits" from "none fits" barely better
than chance (AUROC 0.66; this scale: 0.94-0.97).

Postings keep raw per-field term counts and field lengths, so documents are added and removed
without a rebuild, and the BM25F sum is computed with numpy at query time.
"""

from __future__ import annotations

import math
import re
from array import array
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from skills_lsp.core.index.skill_index import SkillDocument, SkillIndex
from skills_lsp.core.routing.ranking import SlottedSearch, ranked
from skills_lsp.core.routing.scorer import SelectionPolicy, SkillMatch, Tokenizer, scorer_for

# English function words that carry no routing signal ("the", "my", "to" used to score).
STOP_WORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "let",
        "me",
        "more",
        "most",
        "my",
        "myself",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "ourselves",
        "out",
        "over",
        "own",
        "please",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "us",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
        "want",
        "need",
        "help",
        "get",
        "make",
        "use",
        "using",
        "used",
        "also",
        "like",
        "can't",
        "don't",
        "i'm",
        "i've",
        "it's",
        "let's",
        "some",
        "something",
        "thing",
        "things",
        "way",
    ]
)
# Runs of letters and digits, joined across an apostrophe (`don't`); written as runs, not one
# character at a time, because this regex is most of the cost of indexing a large workspace.
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")
_CJK_SPLIT = re.compile(f"({_CJK.pattern})")


def stem(word: str) -> str:
    """A light English stemmer (plurals, -ing, -ed, -ly, a final e), enough to join `invoice`,
    `invoices`; `change`, `changed`, `changing`; `plan`, `planned`. Short words stay."""
    if len(word) <= 3 or not word.isascii() or not word.isalpha():
        return word
    if word.endswith("ies") and len(word) >= 5:
        word = word[:-3] + "y"
    elif word.endswith("sses") or (word.endswith(("xes", "ches", "shes", "zes")) and len(word) >= 5):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")) and len(word) >= 4:
        word = word[:-1]
    for suffix, minimum in (("ing", 6), ("edly", 7), ("ed", 5), ("ly", 5)):
        if word.endswith(suffix) and len(word) >= minimum:
            word = word[: -len(suffix)]
            if len(word) > 2 and word[-1] == word[-2] and word[-1] not in "lsz":
                word = word[:-1]  # running -> run, planned -> plan
            break
    if word.endswith("e") and len(word) >= 5:
        word = word[:-1]
    return word


@lru_cache(maxsize=1 << 18)
def _word_terms(word: str) -> tuple[str, ...]:
    """One case-folded word as bm25f terms (cached: skill text repeats its words a great deal)."""
    if not word.isascii() and _CJK.search(word):
        # Each CJK character is a term; Latin runs inside (`审计Docker镜像`) are words again.
        return tuple(
            term
            for piece in _CJK_SPLIT.split(word)
            if piece
            for term in ((piece,) if _CJK.fullmatch(piece) else _word_terms(piece))
        )
    word = word.replace("'", "")
    if word in STOP_WORDS or (len(word) < 2 and not word.isdigit()):
        return ()
    return (stem(word),)


def terms(text: str) -> list[str]:
    """Words as bm25f sees them: case-folded, stop words dropped, stemmed; CJK characters alone."""
    return [term for word in _WORD.findall(text.casefold().replace("’", "'")) for term in _word_terms(word)]


@dataclass(frozen=True)
class Bm25fParameters:
    """Field weights, per-field length normalisation (b) and saturation (k1), tuned on
    benchmarks/routing/ (see benchmarks/README.md)."""

    name_weight: float = 3.0
    description_weight: float = 2.0
    tags_weight: float = 1.5
    body_weight: float = 0.4
    name_b: float = 0.3
    description_b: float = 0.6
    tags_b: float = 0.3
    body_b: float = 0.75
    k1: float = 1.2


FIELDS = ("name", "description", "tags", "body")
_MAX_COUNT = 65535


def _field_text(doc: SkillDocument, field: str) -> str:
    if field == "name":
        return doc.name.replace("-", " ").replace("_", " ")
    if field == "tags":
        return " ".join(doc.tags)
    return str(getattr(doc, field))


def matched_terms(query: str, doc: SkillDocument) -> dict[str, list[str]]:
    """The query's terms found in each field of `doc` (for hovers that explain a score)."""
    wanted = dict.fromkeys(terms(query))
    found: dict[str, list[str]] = {}
    for field in FIELDS:
        present = set(terms(_field_text(doc, field)))
        found[field] = [t for t in wanted if t in present]
    return found


class Bm25fSearch(SlottedSearch):
    """BM25F over an index, following its upserts and removes."""

    def __init__(self, index: SkillIndex, parameters: Bm25fParameters | None = None) -> None:
        self.p = parameters or Bm25fParameters()
        super().__init__(index)

    def _reset(self) -> None:
        # term -> (slots, counts per field): raw counts, so nothing depends on averages at build
        self._postings: dict[str, tuple[array[int], list[array[int]]]] = {}
        self._lengths = [array("f") for _ in FIELDS]
        self._totals = [0.0 for _ in FIELDS]
        # Per-word contributions, valid while the live count and the field totals (so idf's N and
        # the average lengths) are what they were when cached; a change drops the words it touched.
        self._contributions: dict[str, tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]] = {}
        self._cached_for: tuple[int, tuple[float, ...]] | None = None
        self._norms: list[np.ndarray[Any, Any]] | None = None

    def _add_all(self, docs: list[SkillDocument]) -> None:
        for doc in docs:
            self._add(doc)

    def _add(self, doc: SkillDocument) -> None:
        slot = self._claim(doc)
        counts: dict[str, list[int]] = {}
        for f, field in enumerate(FIELDS):
            words = terms(_field_text(doc, field))
            self._lengths[f].append(len(words))
            self._totals[f] += len(words)
            for word, count in Counter(words).items():
                # uint16 postings (half of float32's memory; 5.8 million entries at 20,000
                # skills): a word repeated more than 65,535 times in one field saturates anyway.
                counts.setdefault(word, [0, 0, 0, 0])[f] = min(count, _MAX_COUNT)
        for word, per_field in counts.items():
            entry = self._postings.get(word)
            if entry is None:
                entry = self._postings[word] = (array("i"), [array("H") for _ in FIELDS])
            entry[0].append(slot)
            for f in range(len(FIELDS)):
                entry[1][f].append(per_field[f])
            self._contributions.pop(word, None)  # its document frequency changed

    def set_parameters(self, parameters: Bm25fParameters) -> None:
        """Score with other weights, b and k1 from now on (no rebuild: postings keep raw counts);
        the per-word cache and the length norms, computed with the old ones, are dropped."""
        self.p = parameters
        self._cached_for = None

    def _forget(self, slot: int, doc: SkillDocument) -> None:
        for f, field in enumerate(FIELDS):
            self._totals[f] -= self._lengths[f][slot]
            if self._contributions:
                for word in terms(_field_text(doc, field)):
                    self._contributions.pop(word, None)  # its document frequency changed

    def _idf(self, document_frequency: int) -> float:
        n = max(self._live, 1)
        return math.log(1.0 + (n - document_frequency + 0.5) / (document_frequency + 0.5))

    def _term_scores(self, word: str) -> tuple[np.ndarray[Any, np.dtype[np.int32]], np.ndarray[Any, Any]]:
        """(live slots holding `word`, idf x saturated field-weighted frequency for each).

        Cached: a batch of queries costs one gather per word. An edit that keeps every field's
        word count (typing inside a word, say) keeps N and the average lengths, so only the words
        of the edited skill are computed again; any other change starts the cache afresh. Either
        way a cached value is bit for bit what a fresh computation would give."""
        key = (self._live, tuple(self._totals))
        if key != self._cached_for:
            self._contributions.clear()
            self._norms = None
            self._cached_for = key
        cached = self._contributions.get(word)
        if cached is not None:
            return cached
        entry = self._postings.get(word)
        if entry is None:
            empty = (np.zeros(0, np.int32), np.zeros(0))
            return empty
        p = self.p
        weights = (p.name_weight, p.description_weight, p.tags_weight, p.body_weight)
        if self._norms is None or len(self._norms[0]) < len(self._slots):
            # Per-slot length normalisation; slots added since keep the same averages, so only
            # theirs are computed (elementwise: the same values as computing all of them).
            bs = (p.name_b, p.description_b, p.tags_b, p.body_b)
            averages = [max(t / max(self._live, 1), 1e-9) for t in self._totals]
            done = 0 if self._norms is None else len(self._norms[0])
            fresh = [
                1.0 - bs[f] + bs[f] * np.frombuffer(self._lengths[f], dtype=np.float32)[done:] / averages[f]
                for f in range(len(FIELDS))
            ]
            self._norms = (
                fresh
                if self._norms is None
                else [np.concatenate((old, new)) for old, new in zip(self._norms, fresh, strict=True)]
            )
        slots = np.frombuffer(entry[0], dtype=np.int32)
        live = np.frombuffer(self._alive, dtype=np.int8)[slots].astype(bool)
        slots = slots[live]
        weighted = np.zeros(len(slots))
        for f in range(len(FIELDS)):
            counts = np.frombuffer(entry[1][f], dtype=np.uint16)[live]
            if counts.any():
                weighted += weights[f] * counts / self._norms[f][slots]
        contribution = self._idf(len(slots)) * weighted / (p.k1 + weighted)
        if len(self._contributions) > 50_000:  # bounded: a long session sees many words
            self._contributions.clear()
        self._contributions[word] = (slots, contribution)
        return slots, contribution

    def scores(self, query: str) -> np.ndarray[Any, np.dtype[np.float64]]:
        """Every slot's score (0..1) for `query`: see the module doc for the scale."""
        total = np.zeros(len(self._slots))
        words = Counter(terms(query))
        if not words or not self._live:
            return total
        for word, repeat in words.items():
            slots, contribution = self._term_scores(word)
            if len(slots):
                total[slots] += repeat * contribution  # a word is in a slot's postings once
        evidence = total / self._idf(1)
        # Rounded as semantic's are: 6 decimals are plenty, and equal matches tie exactly.
        scaled: np.ndarray[Any, np.dtype[np.float64]] = np.round(evidence / (evidence + 1.0), 6)
        return scaled

    def select(self, query: str, policy: SelectionPolicy) -> list[SkillMatch]:
        return ranked(self._slots, self.alive(), self.scores(query), policy)

    def explain(self, query: str, document: SkillDocument) -> str:
        return f"shared words (stemmed) {shared_words(query, document)}"

    def details(self, query: str, document: SkillDocument, tokenizer: Tokenizer = "ascii") -> dict[str, Any]:
        return {"shared_words": matched_terms(query, document)}


def shared_words(query: str, document: SkillDocument) -> str:
    """The query's terms found in each field of `document`, as one line."""
    found = matched_terms(query, document)
    return "; ".join(f"{field}: {' '.join(ts)}" for field, ts in found.items() if ts) or "no shared word"


def bm25f_for(index: SkillIndex) -> Bm25fSearch:
    """The index's bm25f search, typed as such (built on first use)."""
    search = scorer_for(index, "bm25f")
    assert isinstance(search, Bm25fSearch)
    return search
