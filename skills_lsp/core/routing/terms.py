"""bm25f's words: how text is split into terms (case-folded, stop words dropped, stemmed), the
parameters and the idf. Apart from bm25f.py's numpy so that a warm `select` (routing/warm.py)
scores a request from a saved state without importing numpy."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, lru_cache

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
WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
CJK_RANGES = ((0x3040, 0x30FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0xAC00, 0xD7AF))
_CJK = "[" + "".join(f"\\u{lowest:04x}-\\u{highest:04x}" for lowest, highest in CJK_RANGES) + "]"


@cache
def cjk() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """A CJK character, the same as a splitting group, and a run of them: compiled when first
    needed (these classes take about 20 ms to compile, and a warm `select` of most requests meets
    none)."""
    return re.compile(_CJK), re.compile(f"({_CJK})"), re.compile(f"{_CJK}+")


def stem(word: str) -> str:
    """A light English stemmer (plurals, -ing, -ed, -ly, a final e), enough to join `invoice`,
    `invoices`; `change`, `changed`, `changing`; `plan`, `planned`. Short words stay."""
    if len(word) <= 3 or not word.isascii() or not word.isalpha():
        return word
    # Each rule is looked at only when the last letter allows it: a bulk build stems every word.
    if word[-1] == "s":
        if word.endswith("ies") and len(word) >= 5:
            word = word[:-3] + "y"
        elif word.endswith("sses") or (word.endswith(("xes", "ches", "shes", "zes")) and len(word) >= 5):
            word = word[:-2]
        elif not word.endswith(("ss", "us", "is")) and len(word) >= 4:
            word = word[:-1]
    if word[-1] in "gdy":
        for suffix, minimum in (("ing", 6), ("edly", 7), ("ed", 5), ("ly", 5)):
            if word.endswith(suffix) and len(word) >= minimum:
                word = word[: -len(suffix)]
                if len(word) > 2 and word[-1] == word[-2] and word[-1] not in "lsz":
                    word = word[:-1]  # running -> run, planned -> plan
                break
    if word[-1] == "e" and len(word) >= 5:
        word = word[:-1]
    return word


@lru_cache(maxsize=1 << 18)
def word_terms(word: str) -> tuple[str, ...]:
    """One case-folded word as bm25f terms (cached: skill text repeats its words a great deal)."""
    if not word.isascii() and cjk()[0].search(word):
        _, cjk_split, cjk_run = cjk()
        # Each CJK character is a term; Latin runs inside (`审计Docker镜像`) are words again.
        if cjk_run.fullmatch(word):
            return tuple(word)
        pieces = cjk_split.split(word)  # CJK characters at odd places, what is between them at even
        return tuple(
            term
            for i, piece in enumerate(pieces)
            if piece
            for term in ((piece,) if i % 2 else word_terms(piece))
        )
    word = word.replace("'", "")
    if word in STOP_WORDS or (len(word) < 2 and not word.isdigit()):
        return ()
    return (stem(word),)


def words(text: str) -> list[str]:
    """The words of `text` before stop words and stemming (bm25f's `_word_counts` counts the same)."""
    return WORD.findall(text.casefold().replace("’", "'"))


def terms(text: str) -> list[str]:
    """Words as bm25f sees them: case-folded, stop words dropped, stemmed; CJK characters alone."""
    return [term for word in words(text) for term in word_terms(word)]


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
TERMS_VERSION = 1  # bumped whenever `terms` splits text differently (saved postings are rebuilt)


def idf(document_frequency: int, live: int) -> float:
    """BM25's idf of a word held by `document_frequency` of `live` skills."""
    n = max(live, 1)
    return math.log(1.0 + (n - document_frequency + 0.5) / (document_frequency + 0.5))


def averages(totals: Sequence[float], live: int) -> list[float]:
    """Each field's average length over `live` skills (never 0, which would divide by it)."""
    return [max(t / max(live, 1), 1e-9) for t in totals]
