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
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

import numpy as np

from skills_lsp.core.routing.ranking import SlottedSearch, documents_key, ranked
from skills_lsp.core.routing.scorer import SelectionPolicy, SkillMatch, Tokenizer, scorer_for
from skills_lsp.core.routing.terms import FIELDS, STOP_WORDS, TERMS_VERSION, WORD, Bm25fParameters, terms
from skills_lsp.core.routing.terms import averages as _averages
from skills_lsp.core.routing.terms import idf as _idf
from skills_lsp.core.routing.terms import word_terms as _word_terms

if TYPE_CHECKING:  # not imported to run: a warm `select` (routing/quick.py) reads no documents
    from skills_lsp.core.index.skill_index import SkillDocument, SkillIndex

# bm25f's words (terms.py), or a newline: the bulk build marks the end of each token it hands to the regex.
_MARKED_WORD = re.compile(WORD.pattern + r"|\n")
# Bytes as the bulk build's fast path sees them: ASCII letters lower-cased, digits kept, every other
# ASCII character a space; the apostrophe and non-ASCII bytes (UTF-8 sequences) kept for a closer look.
_ASCII_FOLD = bytes(
    (c + 32 if 65 <= c <= 90 else c) if chr(c).isalnum() or c >= 128 or c == 39 else 32 for c in range(256)
)
_ASCII_WORD = np.array([chr(c).isalnum() for c in range(128)] + [False] * 128)  # [0-9A-Za-z]
_LOW_BYTES = np.array([(1 << (8 * n)) - 1 for n in range(8)] + [(1 << 64) - 1], np.uint64)
_FAST_LENGTH = 16  # bytes: two uint64 keys spell a token this long exactly
_SPACE = 32
_APOSTROPHE = 39


def _packed(word: str) -> int:
    """A word of up to 8 ASCII bytes as the fast path's key spells it."""
    return int.from_bytes(word.encode("ascii"), "little")


# The keys of the short ASCII words that give no term (`_word_terms`), sorted as the keys compare.
_NO_TERMS = np.sort(
    np.array(
        [
            _packed(word)
            for word in {*STOP_WORDS, *"abcdefghijklmnopqrstuvwxyz"}
            if word.isascii() and word.isalnum() and len(word) <= 8 and not _word_terms(word)
        ],
        np.uint64,
    ).view(np.int64)
)


@cache
def _separates(code: int) -> bool:
    """Whether a character only separates words, even case-folded: then it acts as a space does."""
    return not any(c.isalnum() or c in "'’" for c in chr(code).casefold())


def _blank_separators(data: np.ndarray[Any, np.dtype[np.uint8]]) -> None:
    """Overwrite with spaces, in UTF-8 bytes, each non-ASCII character that only separates words
    (dashes, arrows, box drawing, CJK punctuation) and each apostrophe that joins no two ASCII
    letters or digits: what is left non-ASCII is part of a word, or an apostrophe."""
    leads = np.flatnonzero(data >= 0xC0)
    first = data[leads].astype(np.int64)
    width = 2 + (first >= 0xE0) + (first >= 0xF0)
    code = np.where(width == 2, first & 0x1F, np.where(width == 3, first & 0x0F, first & 0x07))
    for k in range(1, 4):
        more = width > k
        code[more] = (code[more] << 6) | (data[leads[more] + k] & 0x3F)
    values, which = np.unique(code, return_inverse=True)
    blank = np.fromiter(map(_separates, values.tolist()), bool, len(values))[which]
    for k in range(4):
        data[leads[blank & (width > k)] + k] = _SPACE
    quotes = np.flatnonzero(data == _APOSTROPHE)
    before, after = data[quotes - 1], data[quotes + 1]
    lone = ((before < 128) & ~_ASCII_WORD[before]) | ((after < 128) & ~_ASCII_WORD[after])
    data[quotes[lone]] = _SPACE


def _runs(
    keys: list[np.ndarray[Any, Any]], text_of: np.ndarray[Any, Any], tokens: np.ndarray[Any, Any]
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """Tokens grouped by their keys (the same keys, the same word): (each word's first token;
    per (text, word) pair: the word's number among these, the text, the count)."""
    order = np.lexsort(keys[::-1]) if len(keys) > 1 else np.argsort(keys[0], kind="stable")
    new_word = np.zeros(len(order), bool)
    new_word[:1] = True
    for key in keys:
        ordered = key[order]
        new_word[1:] |= ordered[1:] != ordered[:-1]
    texts = text_of[order]
    new_pair = new_word.copy()
    new_pair[1:] |= texts[1:] != texts[:-1]
    pairs = np.flatnonzero(new_pair)
    counts = np.diff(np.append(pairs, len(order)))
    word_number = np.cumsum(new_word)[pairs] - 1
    return tokens[order[new_word]], word_number, texts[pairs], counts


def _word_counts(
    texts: Sequence[str],
) -> tuple[list[str], np.ndarray[Any, Any], np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """`Counter(terms.words(text))` of every text at once, less some words that give no term (short
    stop words, single letters): (the distinct words in order of first appearance; then for each
    (text, word) pair the text's index, the word's and the count).

    The regex is most of the cost over a large workspace, so numpy splits and counts on the
    texts' UTF-8 bytes every token of ASCII letters, digits and joining apostrophes up to 16 bytes
    long (nearly all of them), each packed into two integers that spell it exactly. The rest (a
    token with a non-ASCII letter, or longer) goes through `terms.words`: a word never spans a
    character that only separates words, and case-folding works character by character, so
    splitting there first finds the same words."""
    encoded = [text.encode("utf-8", "surrogatepass").translate(_ASCII_FOLD) for text in texts]
    text_starts = np.zeros(len(encoded) + 1, np.int64)
    np.cumsum(np.fromiter(map(len, encoded), np.int64, len(encoded)) + 1, out=text_starts[1:])
    data = np.frombuffer(b" " + b" ".join(encoded) + b" " * (_FAST_LENGTH + 4), np.uint8).copy()
    del encoded
    _blank_separators(data)
    joined = data.tobytes()
    word = data != _SPACE
    edges = np.flatnonzero(word[1:] != word[:-1]) + 1  # starts and ends, alternately
    del word
    starts, ends = edges[0::2], edges[1::2]
    sizes = ends - starts
    text_of = np.searchsorted(text_starts, starts, "right") - 1
    slow = sizes > _FAST_LENGTH
    slow[np.searchsorted(starts, np.flatnonzero(data >= 128), "right") - 1] = True
    del data
    # Each fast token as two little-endian uint64 (its bytes, zero-padded): equal keys, same token.
    windows = np.ndarray((len(joined) - 7,), np.dtype("<u8"), joined, strides=(1,))
    fast = np.flatnonzero(~slow)
    short = fast[sizes[fast] <= 8]
    long = fast[sizes[fast] > 8]
    low_short = (windows[starts[short]] & _LOW_BYTES[sizes[short]]).view(np.int64)
    # Stop words and single letters become no term: left out before the sort (a third of the tokens).
    held = np.minimum(np.searchsorted(_NO_TERMS, low_short), len(_NO_TERMS) - 1)
    kept = _NO_TERMS[held] != low_short
    short, low_short = short[kept], low_short[kept]
    low_long = windows[starts[long]].view(np.int64)
    high_long = (windows[starts[long] + 8] & _LOW_BYTES[sizes[long] - 8]).view(np.int64)
    first_seen: dict[str, tuple[int, int]] = {}  # (token number, place among the token's words)
    parts = []
    for keys, tokens in (([low_short], short), ([low_long, high_long], long)):
        firsts, numbers, part_texts, counts = _runs(keys, text_of[tokens], tokens)
        found = [joined[starts[t] : ends[t]].decode("ascii") for t in firsts.tolist()]
        for token, text in zip(firsts.tolist(), found, strict=True):
            first_seen[text] = (token, 0)
        parts.append((found, numbers, part_texts, counts))
    # The other tokens through the regex, in one call: a newline ends each token's words.
    slow_tokens = np.flatnonzero(slow)
    pieces = b"\n".join(
        map(joined.__getitem__, map(slice, starts[slow_tokens].tolist(), ends[slow_tokens].tolist()))
    )
    found_slow = _MARKED_WORD.findall(
        (pieces + b"\n").decode("utf-8", "surrogatepass").casefold().replace("’", "'")
    )
    slow_counts: dict[tuple[int, str], int] = {}
    slow_text, slow_token = text_of[slow_tokens].tolist(), slow_tokens.tolist()
    number = place = 0
    for text in found_slow:
        if text == "\n":
            number, place = number + 1, 0
            continue
        key = (slow_text[number], text)
        slow_counts[key] = slow_counts.get(key, 0) + 1
        if first_seen.get(text, (slow_token[number] + 1, 0)) > (slow_token[number], place):
            first_seen[text] = (slow_token[number], place)
        place += 1
    distinct = sorted(first_seen, key=first_seen.__getitem__)
    row_of = {text: row for row, text in enumerate(distinct)}
    groups, rows, repeats = [], [], []
    for found, numbers, part_texts, counts in parts:
        groups.append(part_texts)
        rows.append(np.fromiter(map(row_of.__getitem__, found), np.int64, len(found))[numbers])
        repeats.append(counts)
    groups.append(np.fromiter((group for group, _ in slow_counts), np.int64, len(slow_counts)))
    rows.append(np.fromiter((row_of[text] for _, text in slow_counts), np.int64, len(slow_counts)))
    repeats.append(np.fromiter(slow_counts.values(), np.int64, len(slow_counts)))
    return distinct, np.concatenate(groups), np.concatenate(rows), np.concatenate(repeats)


@dataclass(frozen=True)
class Statistics:
    """What a skill's score depends on besides its own counts, for one query: the live count,
    the field totals (so the average lengths) and the idf of each of the query's words."""

    live: int
    totals: tuple[float, ...]
    idfs: dict[str, float]
    parameters: Bm25fParameters


# A bound's allowance for floating-point rounding: scores are computed with float32 length norms
# (relative error about 1e-7) and rounded to 6 decimals (0.5e-6 either side).
_ROUNDING = 1e-5
_CONTRIBUTION_BYTES = 8 << 20  # cached word contributions, at most
SAVED_FILE = "index-bm25f.bin"  # the postings of the last bulk build, in the index's cache folder
SAVED_KIND = "bm25f-blobs"  # its frame's kind: a head, then the vocabulary and each array's bytes
_MAX_COUNT = 65535
_CHUNK = 500  # documents per step of a bulk build (bounds its intermediate arrays)
_ADDED_COUNTS = 64  # slots added one by one whose own counts are kept (an editor's open files)


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


class Bm25fScores:
    """The BM25F arithmetic over postings, shared by the search that follows an index
    (`Bm25fSearch`) and a warm `select`'s saved state (routing/quick.py): both give the same
    scores bit for bit because they run this same code over the same counts and lengths."""

    p: Bm25fParameters
    _lengths: list[Any]  # per field, float32 lengths by slot (array("f") or a numpy array)
    _totals: list[float]
    _live: int

    def slot_count(self) -> int:
        raise NotImplementedError

    def _term_scores(self, word: str) -> tuple[np.ndarray[Any, np.dtype[np.int32]], np.ndarray[Any, Any]]:
        raise NotImplementedError

    def _frequency(self, word: str) -> int:
        raise NotImplementedError

    def _posting_parts(
        self, word: str, lowest: int = 0, highest: int = 2**31
    ) -> list[tuple[np.ndarray[Any, np.dtype[np.int32]], np.ndarray[Any, np.dtype[np.uint16]]]]:
        raise NotImplementedError

    def _idf(self, document_frequency: int) -> float:
        return _idf(document_frequency, self._live)

    def _contribution(
        self,
        counts: np.ndarray[Any, Any],
        norms: list[np.ndarray[Any, Any]],
        idf: float | np.ndarray[Any, Any],
    ) -> np.ndarray[Any, Any]:
        """idf x the saturated field-weighted frequency of postings with these counts per field and
        these length norms. Elementwise: a subset of postings gets the same values."""
        p = self.p
        weights = (p.name_weight, p.description_weight, p.tags_weight, p.body_weight)
        weighted = np.zeros(counts.shape[1])
        for f in range(len(FIELDS)):
            if counts[f].any():
                weighted += weights[f] * counts[f] / norms[f]
        contribution: np.ndarray[Any, Any] = idf * weighted / (p.k1 + weighted)
        return contribution

    def _averages(self) -> list[float]:
        return _averages(self._totals, self._live)

    def _length_norms(self, which: slice | np.ndarray[Any, Any]) -> list[np.ndarray[Any, Any]]:
        """Each field's length normalisation 1 - b + b x length / average length for the slots
        `which` picks (elementwise: any subset gets the same values)."""
        p = self.p
        bs = (p.name_b, p.description_b, p.tags_b, p.body_b)
        averages = self._averages()
        return [
            1.0 - bs[f] + bs[f] * np.frombuffer(self._lengths[f], dtype=np.float32)[which] / averages[f]
            for f in range(len(FIELDS))
        ]

    def scores_of(self, query: str, slots: np.ndarray[Any, Any]) -> np.ndarray[Any, np.dtype[np.float64]]:
        """`scores(query)[slots]` for live `slots`, bit for bit, computed for those slots only:
        each value is elementwise the same arithmetic, its words added in the same order."""
        slots = np.asarray(slots, dtype=np.int64)
        total = np.zeros(len(slots))
        words = Counter(terms(query))
        if not words or not self._live or not len(slots):
            return np.round(total, 6)
        # Every (word, slot) hit, word by word: positions among `slots`, counts, idf x repeat.
        where: list[np.ndarray[Any, Any]] = []
        counts: list[np.ndarray[Any, Any]] = []
        factors: list[tuple[int, float, int]] = []  # (hits, idf, repeat) per part
        lowest, highest = int(slots.min()), int(slots.max())
        for word, repeat in words.items():
            idf = 0.0
            for posting, held_counts in self._posting_parts(word, lowest, highest):
                at = np.minimum(np.searchsorted(posting, slots), len(posting) - 1)
                held = np.flatnonzero(posting[at] == slots)
                if len(held):
                    idf = idf or self._idf(self._frequency(word))
                    where.append(held)
                    counts.append(held_counts[:, at[held]])
                    factors.append((len(held), idf, repeat))
        if not where:
            return np.round(total, 6)
        positions = np.concatenate(where)
        norms = self._length_norms(slots[positions])
        idfs = np.repeat([idf for _, idf, _ in factors], [n for n, _, _ in factors])
        repeats = np.repeat([r for _, _, r in factors], [n for n, _, _ in factors])
        contribution = self._contribution(np.concatenate(counts, axis=1), norms, idfs)
        # Unbuffered and in order: each slot gets its words' contributions in the words' order.
        np.add.at(total, positions, repeats * contribution)
        evidence = total / self._idf(1)
        scaled: np.ndarray[Any, np.dtype[np.float64]] = np.round(evidence / (evidence + 1.0), 6)
        return scaled

    def scores(self, query: str) -> np.ndarray[Any, np.dtype[np.float64]]:
        """Every slot's score (0..1) for `query`: see the module doc for the scale."""
        total = np.zeros(self.slot_count())
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


class Bm25fSearch(SlottedSearch, Bm25fScores):
    """BM25F over an index, following its upserts and removes."""

    def __init__(self, index: SkillIndex, parameters: Bm25fParameters | None = None) -> None:
        self.p = parameters or Bm25fParameters()
        super().__init__(index)

    def _reset(self) -> None:
        # The postings of a bulk build, compressed by term: term -> row; row r's postings are
        # [indptr[r], indptr[r + 1]) of `_base_slots` (ascending) and of each field's counts.
        self._vocabulary: dict[str, int] = {}
        self._indptr: np.ndarray[Any, np.dtype[np.int64]] = np.zeros(1, np.int64)
        self._base_slots: np.ndarray[Any, np.dtype[np.int32]] = np.zeros(0, np.int32)
        self._base_counts: np.ndarray[Any, np.dtype[np.uint16]] = np.zeros((len(FIELDS), 0), np.uint16)
        # Documents added one at a time after it: term -> (slots, counts per field). Raw counts
        # either way, so nothing depends on averages at build.
        self._postings: dict[str, tuple[array[int], list[array[int]]]] = {}
        self._lengths = [array("f") for _ in FIELDS]
        self._totals = [0.0 for _ in FIELDS]
        # Per-word contributions, valid while the live count and the field totals (so idf's N and
        # the average lengths) are what they were when cached; a change drops the words it touched.
        # Each entry: (live slots holding the word, their contributions, its document frequency,
        # the slot count then). A skill added or removed since that holds the word "touches" it:
        # the entry is brought up to date when its frequency is the same (an editor's upsert).
        self._contributions: dict[str, tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], int, int]] = {}
        self._touched: set[str] = set()
        self._cached_for: tuple[int, tuple[float, ...]] | None = None
        self._contribution_bytes = 0
        self._norms: list[np.ndarray[Any, Any]] | None = None
        self._frequencies: dict[str, int] = {}  # live document frequency per word, kept like the above
        # The counts per field of each live slot added one by one (an editor's upserts), by word:
        # its exact score for a request needs no search of the postings (scores_of()).
        self._added_counts: dict[int, dict[str, list[int]]] = {}

    def _add_all(self, docs: list[SkillDocument]) -> None:
        if self._slots or len(docs) < 2:
            for doc in docs:
                self._add(doc)
            return
        if not self._load_saved(docs):
            self._bulk_build(docs)
            self._save(docs)

    def _bulk_build(self, docs: list[SkillDocument]) -> None:
        """Every document at once into the compressed postings, with the same counts, lengths and
        slot order as adding them one by one. `_word_counts` splits and counts the words (numpy
        on UTF-8 bytes, the regex only for tokens outside plain ASCII); each distinct word becomes
        terms once per chunk of documents; numpy does the rest. Chunks bound the memory of the
        intermediate arrays."""
        for doc in docs:
            self._claim(doc)
        vocabulary: dict[str, int] = {}
        terms_of_word: dict[str, list[int]] = {}  # a word's term rows, across chunks
        parts: list[tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], np.ndarray[Any, Any]]] = []
        lengths = np.zeros((len(docs), len(FIELDS)), np.float64)
        for start in range(0, len(docs), _CHUNK):
            chunk = docs[start : start + _CHUNK]
            term_rows, slots, counts = self._chunk_postings(chunk, start, vocabulary, terms_of_word, lengths)
            parts.append((term_rows, slots, counts))
        del terms_of_word
        # Counting sort into the final arrays: a term's postings are its postings of each chunk
        # in chunk order, so every term's slots stay ascending; each chunk is freed once placed.
        per_term = np.zeros(len(vocabulary), np.int64)
        for term_rows, _, _ in parts:
            per_term += np.bincount(term_rows, minlength=len(vocabulary))
        indptr = np.zeros(len(vocabulary) + 1, np.int64)
        np.cumsum(per_term, out=indptr[1:])
        total = int(indptr[-1])
        base_slots = np.zeros(total, np.int32)
        base_counts = np.zeros((len(FIELDS), total), np.uint16)
        cursor = indptr[:-1].copy()
        while parts:
            term_rows, slots, counts = parts.pop(0)
            first = np.searchsorted(term_rows, term_rows)  # each entry's term's first entry here
            at = cursor[term_rows] + (np.arange(len(term_rows)) - first)
            base_slots[at] = slots
            base_counts[:, at] = counts
            cursor += np.bincount(term_rows, minlength=len(vocabulary))
        self._vocabulary = vocabulary
        self._base_slots = base_slots
        self._base_counts = base_counts
        self._indptr = indptr
        for f in range(len(FIELDS)):
            self._lengths[f] = array("f", lengths[:, f].astype(np.float32).tobytes())
            self._totals[f] = float(lengths[:, f].sum())

    @staticmethod
    def _chunk_postings(
        docs: list[SkillDocument],
        first_slot: int,
        vocabulary: dict[str, int],
        terms_of_word: dict[str, list[int]],
        lengths: np.ndarray[Any, Any],
    ) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], np.ndarray[Any, Any]]:
        """(term rows, slots, counts per field) of `docs`' postings, sorted by (term, slot);
        their field lengths (in terms) go into `lengths`."""
        n, n_fields = len(docs), len(FIELDS)
        distinct, group, word_rows, repeat = _word_counts([_field_text(d, f) for d in docs for f in FIELDS])
        # Each distinct word as its terms (none for a stop word, several for CJK).
        per_word = np.zeros(len(distinct), np.int64)
        flat: list[int] = []
        for row, word in enumerate(distinct):
            found = terms_of_word.get(word)
            if found is None:
                found = terms_of_word[word] = [
                    vocabulary.setdefault(term, len(vocabulary)) for term in _word_terms.__wrapped__(word)
                ]
            per_word[row] = len(found)
            flat.extend(found)
        first_term = np.zeros(len(distinct) + 1, np.int64)
        np.cumsum(per_word, out=first_term[1:])
        del distinct
        per_entry = per_word[word_rows]
        lengths[first_slot : first_slot + n] = np.bincount(
            group, weights=repeat * per_entry, minlength=n * n_fields
        ).reshape(n, n_fields)
        # One entry per (word of a field, term of that word): a ragged gather.
        source = np.repeat(np.arange(len(word_rows), dtype=np.int64), per_entry)
        first_of_source = np.repeat(np.cumsum(per_entry) - per_entry, per_entry)
        offsets = np.arange(len(source), dtype=np.int64) - first_of_source
        del first_of_source
        term_of = np.asarray(flat, np.int64)[first_term[word_rows][source] + offsets]
        del offsets, word_rows, per_entry
        slot_of, field_of = np.divmod(group[source], n_fields)
        # Sum the counts of words that became the same term, per (term, slot, field).
        keys = (term_of * n + slot_of) * n_fields + field_of
        del term_of, slot_of, field_of
        order = np.argsort(keys, kind="stable")
        keys = keys[order]
        starts = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1]))) if len(keys) else keys
        summed = np.add.reduceat(repeat[source][order], starts) if len(starts) else np.zeros(0, np.int64)
        del order, source
        pairs, fields_of = np.divmod(keys[starts], n_fields)  # pairs: term * n + slot, ascending
        new_pair = np.concatenate(([True], pairs[1:] != pairs[:-1])) if len(pairs) else np.zeros(0, bool)
        posting = np.cumsum(new_pair) - 1
        unique = pairs[new_pair]
        counts = np.zeros((n_fields, len(unique)), np.uint16)
        counts[fields_of, posting] = np.minimum(summed, _MAX_COUNT)
        term_rows, local = np.divmod(unique, n)
        return term_rows.astype(np.int32), (local + first_slot).astype(np.int32), counts

    def _state_key(self, docs: list[SkillDocument]) -> str:
        """What saved postings must have been built from: these documents, in this order, split
        into terms by this version of `terms`."""
        return documents_key(docs, TERMS_VERSION)

    def _load_saved(self, docs: list[SkillDocument]) -> bool:
        """The postings saved for exactly these documents by an earlier run, if any (store.py):
        the arrays are views over the file's bytes (read once, checked, never unpickled), the
        vocabulary one string split at its line breaks."""
        frames = self.index.frames
        if frames is None:
            return False
        found = frames.read_blobs(SAVED_FILE, SAVED_KIND)
        if found is None:
            return False
        head, blobs = found
        if not isinstance(head, dict) or head.get("key") != self._state_key(docs):
            return False
        try:
            words, indptr_bytes, slots_bytes, counts_bytes, *lengths = blobs
            vocabulary = str(words, "utf-8", "surrogatepass").split("\n") if head["words"] else []
            indptr = np.frombuffer(indptr_bytes, np.int64)
            slots = np.frombuffer(slots_bytes, np.int32)
            counts = np.frombuffer(counts_bytes, np.uint16).reshape(len(FIELDS), -1)
            totals = [float(total) for total in head["totals"]]
        except (KeyError, TypeError, ValueError):
            return False
        if (
            len(vocabulary) != head["words"]
            or len(indptr) != len(vocabulary) + 1
            or int(indptr[-1]) != len(slots)
            or counts.shape[1] != len(slots)
            or len(lengths) != len(FIELDS)
            or len(totals) != len(FIELDS)
            or any(length.nbytes != 4 * len(docs) for length in lengths)
        ):
            return False
        for doc in docs:
            self._claim(doc)
        self._vocabulary = dict(zip(vocabulary, range(len(vocabulary)), strict=True))
        self._indptr, self._base_slots, self._base_counts = indptr, slots, counts
        for f in range(len(FIELDS)):
            self._lengths[f] = array("f")
            self._lengths[f].frombytes(lengths[f])
        self._totals = totals
        return True

    def _save(self, docs: list[SkillDocument]) -> None:
        frames = self.index.frames
        words = list(self._vocabulary)
        if frames is None or any("\n" in word for word in words):  # terms hold no line break
            return
        head = {"key": self._state_key(docs), "words": len(words), "totals": list(self._totals)}
        vocabulary = "\n".join(words).encode("utf-8", "surrogatepass")
        blobs = [vocabulary, self._indptr, self._base_slots, self._base_counts, *self._lengths]
        frames.write_blobs(SAVED_FILE, SAVED_KIND, head, blobs)

    def columns(
        self,
    ) -> tuple[list[str], np.ndarray[Any, Any], np.ndarray[Any, Any], np.ndarray[Any, Any]] | None:
        """The bulk-built postings as (vocabulary, indptr, slots, counts per field), word row r's
        being entries [indptr[r], indptr[r + 1]); None when documents were added since."""
        if self._postings:
            return None
        return list(self._vocabulary), self._indptr, self._base_slots, self._base_counts

    def field_lengths(self) -> tuple[list[np.ndarray[Any, np.dtype[np.float32]]], list[float]]:
        """Each field's length by slot (float32) and total."""
        return [np.frombuffer(a, dtype=np.float32) for a in self._lengths], list(self._totals)

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
        self._added_counts[slot] = counts
        if len(self._added_counts) > _ADDED_COUNTS:
            del self._added_counts[next(iter(self._added_counts))]  # the oldest: searched for instead
        for word, per_field in counts.items():
            entry = self._postings.get(word)
            if entry is None:
                entry = self._postings[word] = (array("i"), [array("H") for _ in FIELDS])
            entry[0].append(slot)
            for f in range(len(FIELDS)):
                entry[1][f].append(per_field[f])
            if word in self._contributions:
                self._touched.add(word)
            if word in self._frequencies:
                self._frequencies[word] += 1

    def set_parameters(self, parameters: Bm25fParameters) -> None:
        """Score with other weights, b and k1 from now on (no rebuild: postings keep raw counts);
        the per-word cache and the length norms, computed with the old ones, are dropped."""
        self.p = parameters
        self._cached_for = None

    def _forget(self, slot: int, doc: SkillDocument) -> None:
        counts = self._added_counts.pop(slot, None)
        for f in range(len(FIELDS)):
            self._totals[f] -= self._lengths[f][slot]
        if self._contributions or self._frequencies:
            held = (
                counts.keys()
                if counts is not None
                else {word for field in FIELDS for word in terms(_field_text(doc, field))}
            )
            for word in held:
                if word in self._contributions:
                    self._touched.add(word)
                if word in self._frequencies:
                    self._frequencies[word] -= 1

    def _term_scores(self, word: str) -> tuple[np.ndarray[Any, np.dtype[np.int32]], np.ndarray[Any, Any]]:
        """(live slots holding `word`, idf x saturated field-weighted frequency for each).

        Cached: a batch of queries costs one gather per word. An edit that keeps every field's
        word count (typing inside a word, say) keeps N and the average lengths, so only the words
        of the edited skill are computed again; any other change starts the cache afresh. Either
        way a cached value is bit for bit what a fresh computation would give."""
        key = (self._live, tuple(self._totals))
        if key != self._cached_for:
            self._contributions.clear()
            self._touched.clear()
            self._contribution_bytes = 0
            self._norms = None
            self._cached_for = key
        cached = self._contributions.get(word)
        if cached is not None and word in self._touched:
            self._touched.discard(word)
            cached = self._brought_up_to_date(word, *cached)
        if cached is not None:
            return cached[0], cached[1]
        all_slots, all_counts = self._posting(word)
        if not len(all_slots):
            empty = (np.zeros(0, np.int32), np.zeros(0))
            return empty
        norms = self._current_norms()
        live = np.frombuffer(self._alive, dtype=np.int8)[all_slots].astype(bool)
        slots = all_slots[live]
        self._frequencies[word] = len(slots)
        contribution = self._contribution(
            all_counts[:, live], [norms[f][slots] for f in range(len(FIELDS))], self._idf(len(slots))
        )
        # Bounded by size: a common word's postings cover thousands of skills, and an editor's
        # first run of 100 test queries cached 32 MiB of them at 20,000 skills (kept until the
        # next edit, for nothing: the kept scores of hybrid do not ask again).
        size = slots.nbytes + contribution.nbytes
        if self._contribution_bytes + size > _CONTRIBUTION_BYTES or len(self._contributions) > 50_000:
            self._contributions.clear()
            self._contribution_bytes = 0
        self._contributions[word] = (slots, contribution, len(slots), len(self._slots))
        self._contribution_bytes += size  # an upper bound: words dropped one by one are not subtracted
        return slots, contribution

    def _current_norms(self) -> list[np.ndarray[Any, Any]]:
        """Every slot's length norms per field under the current averages (cached with them)."""
        if self._norms is None or len(self._norms[0]) < len(self._slots):
            # Slots added since keep the same averages, so only theirs are computed (elementwise:
            # the same values as computing all of them).
            done = 0 if self._norms is None else len(self._norms[0])
            fresh = self._length_norms(slice(done, None))
            self._norms = (
                fresh
                if self._norms is None
                else [np.concatenate((old, new)) for old, new in zip(self._norms, fresh, strict=True)]
            )
        return self._norms

    def _brought_up_to_date(
        self,
        word: str,
        slots: np.ndarray[Any, Any],
        contribution: np.ndarray[Any, Any],
        frequency: int,
        upto: int,
    ) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], int, int] | None:
        """A cached word's entry after skills holding it came or went, with N and the averages the
        same: with the same document frequency (an upsert that keeps the word), the same idf, so
        only the removed slots leave and the slots added since are computed. None (and the
        entry dropped) when the frequency moved."""
        if self._frequency(word) != frequency:
            del self._contributions[word]
            return None
        alive = np.frombuffer(self._alive, dtype=np.int8)
        kept = alive[slots].astype(bool)
        slots, contribution = slots[kept], contribution[kept]
        extra = self._postings.get(word)
        if extra is not None:  # slots added one by one, ascending: those from `upto` on are new
            posted = np.frombuffer(extra[0], dtype=np.int32)
            start = int(np.searchsorted(posted, upto))
            added = posted[start:]
            live = alive[added].astype(bool)
            if live.any():
                added = added[live]
                counts = np.stack([np.frombuffer(c, dtype=np.uint16)[start:][live] for c in extra[1]])
                norms = self._current_norms()
                more = self._contribution(
                    counts, [norms[f][added] for f in range(len(FIELDS))], self._idf(frequency)
                )
                slots, contribution = np.concatenate((slots, added)), np.concatenate((contribution, more))
        entry = (slots, contribution, frequency, len(self._slots))
        self._contributions[word] = entry
        return entry

    def _frequency(self, word: str) -> int:
        """How many live skills hold `word` (cached until a skill holding it comes or goes)."""
        found = self._frequencies.get(word)
        if found is None:
            alive = np.frombuffer(self._alive, dtype=np.int8)
            found = sum(int(np.count_nonzero(alive[slots])) for slots, _ in self._posting_parts(word))
            if len(self._frequencies) > 50_000:
                self._frequencies.clear()
            self._frequencies[word] = found
        return found

    def statistics(self, query: str) -> Statistics:
        """What scores for `query` depend on beyond each skill's own counts, as of now."""
        idfs = {word: self._idf(self._frequency(word)) for word in dict.fromkeys(terms(query))}
        return Statistics(self._live, tuple(self._totals), idfs, self.p)

    def drift(self, query: str, then: Statistics) -> float:
        """A bound on how far any skill's score for `query` can now be from its score under the
        statistics `then`, for a skill that was in the index then and is unchanged since.

        Such a skill's counts and lengths are as they were; only the averages and the idfs moved.
        A field's length norm 1 - b + b x length / average then changes by a factor between 1 and
        average then / average now, so the weighted frequency W by a factor c between the
        extremes of the inverse ratios, and W / (k1 + W) by at most |c - 1| (it is below 1 and
        grows no faster than W). A word's contribution idf x W / (k1 + W) therefore moves by at
        most idf now x |c - 1| + |idf now - idf then|; the evidence divides their sum by the idf
        of a word in one skill, and x / (x + 1) changes no faster than x. infinity: no bound."""
        if then.parameters != self.p or not then.live or not self._live:
            return math.inf
        now = self._averages()
        before = _averages(then.totals, then.live)
        ratios = [after / earlier for after, earlier in zip(now, before, strict=True)]
        stretch = max(max(ratios) - 1.0, 1.0 - min(ratios))
        words = Counter(terms(query))
        moved = 0.0
        ceiling = 0.0  # the raw evidence then can be no larger
        for word, repeat in words.items():
            idf_then = then.idfs.get(word)
            if idf_then is None:
                return math.inf
            idf_now = self._idf(self._frequency(word))
            moved += repeat * (idf_now * stretch + abs(idf_now - idf_then))
            ceiling += repeat * idf_then
        single_then = _idf(1, then.live)
        single_now = self._idf(1)
        return moved / single_now + ceiling * abs(1.0 / single_now - 1.0 / single_then) + _ROUNDING

    def scores_of(self, query: str, slots: np.ndarray[Any, Any]) -> np.ndarray[Any, np.dtype[np.float64]]:
        """`scores(query)[slots]` for live `slots`, bit for bit; slots added one by one (an editor's
        upserts) from their own kept counts, the others from the postings (Bm25fScores)."""
        slots = np.asarray(slots, dtype=np.int64)
        words = Counter(terms(query))
        held = [self._added_counts.get(slot) for slot in slots.tolist()]
        if words and self._live and len(slots) and all(counts is not None for counts in held):
            return self._scores_of_added(words, slots, [counts for counts in held if counts is not None])
        return super().scores_of(query, slots)

    def _scores_of_added(
        self, words: Counter[str], slots: np.ndarray[Any, Any], held: list[dict[str, list[int]]]
    ) -> np.ndarray[Any, np.dtype[np.float64]]:
        """scores_of() for slots added one by one (an editor's upserts), from each one's own counts:
        the same arithmetic as scores()'s, one value at a time (length norms in float32, as numpy
        computes them from the float32 lengths; the rest in float64, words added in the same
        order), which for a few slots costs a fraction of numpy's calls."""
        p = self.p
        weights = (p.name_weight, p.description_weight, p.tags_weight, p.body_weight)
        bs = [(np.float32(1.0 - b), np.float32(b)) for b in (p.name_b, p.description_b, p.tags_b, p.body_b)]
        averages = [np.float32(average) for average in self._averages()]
        idfs: dict[str, float] = {}
        single = self._idf(1)
        found = []
        for slot, counts in zip(slots.tolist(), held, strict=True):
            norms = [
                float(rest + b * np.float32(self._lengths[f][slot]) / averages[f])
                for f, (rest, b) in enumerate(bs)
            ]
            total = 0.0
            for word, repeat in words.items():
                per_field = counts.get(word)
                if per_field is None:
                    continue
                idf = idfs.get(word)
                if idf is None:
                    idf = idfs[word] = self._idf(self._frequency(word))
                weighted = 0.0
                for f, count in enumerate(per_field):
                    if count:
                        weighted += weights[f] * count / norms[f]
                total += repeat * (idf * weighted / (p.k1 + weighted))
            evidence = total / single
            found.append(evidence / (evidence + 1.0))
        scaled: np.ndarray[Any, np.dtype[np.float64]] = np.array(found, dtype=np.float64).round(6)
        return scaled

    def _posting_parts(
        self, word: str, lowest: int = 0, highest: int = 2**31
    ) -> list[tuple[np.ndarray[Any, np.dtype[np.int32]], np.ndarray[Any, np.dtype[np.uint16]]]]:
        """`_posting(word)` as its parts (bulk-built, then added one by one), not copied together,
        leaving out a part with no slot from `lowest` to `highest`."""
        parts = []
        row = self._vocabulary.get(word)
        if row is not None:
            start, end = int(self._indptr[row]), int(self._indptr[row + 1])
            if start < end and self._base_slots[start] <= highest and self._base_slots[end - 1] >= lowest:
                parts.append((self._base_slots[start:end], self._base_counts[:, start:end]))
        extra = self._postings.get(word)
        if extra is not None and len(extra[0]) and extra[0][0] <= highest and extra[0][-1] >= lowest:
            more = np.stack([np.frombuffer(c, dtype=np.uint16) for c in extra[1]])
            parts.append((np.frombuffer(extra[0], dtype=np.int32), more))
        return parts

    def _posting(
        self, word: str
    ) -> tuple[np.ndarray[Any, np.dtype[np.int32]], np.ndarray[Any, np.dtype[np.uint16]]]:
        """Every slot holding `word` (dead ones too), ascending, and its counts per field."""
        parts = self._posting_parts(word)
        if not parts:
            return np.zeros(0, np.int32), np.zeros((len(FIELDS), 0), np.uint16)
        if len(parts) == 1 and word not in self._postings:
            return parts[0]  # the bulk-built part alone: slices, nothing to join
        # Joined, a copy even of one part: a part added one by one views arrays that still grow.
        # Added after the bulk build means later slots, so the join is still ascending.
        return np.concatenate([slots for slots, _ in parts]), np.concatenate([c for _, c in parts], axis=1)

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
