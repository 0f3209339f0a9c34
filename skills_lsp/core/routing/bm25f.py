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

import gc
import math
import re
import sys
from array import array
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache, partial
from itertools import chain, pairwise
from typing import TYPE_CHECKING, Any

import numpy as np

from skills_lsp.core import forked
from skills_lsp.core.routing.ranking import SlottedSearch, ranked
from skills_lsp.core.routing.scorer import SelectionPolicy, SkillMatch, Tokenizer, scorer_for
from skills_lsp.core.routing.terms import (
    CJK_RANGES,
    FIELDS,
    STOP_WORDS,
    TERMS_VERSION,
    WORD,
    Bm25fParameters,
    stem,
    terms,
)
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


@cache
def _separates(code: int) -> bool:
    """Whether a character only separates words, even case-folded: then it acts as a space does."""
    return not any(c.isalnum() or c in "'’" for c in chr(code).casefold())


# What a non-ASCII character is to the bulk build (0: not known yet).
_IN_WORDS, _SEPARATOR, _CJK_TERM = 1, 2, 3


@cache
def _character_kinds() -> np.ndarray[Any, np.dtype[np.uint8]]:
    """Each code point's kind, filled in as characters are first met: looked up for every
    non-ASCII character of a build (a table, not a sort of them all for their distinct values)."""
    return np.zeros(sys.maxunicode + 1, np.uint8)


def _kinds(code: np.ndarray[Any, np.dtype[np.int64]]) -> np.ndarray[Any, np.dtype[np.uint8]]:
    """The kind of each of these code points."""
    table = _character_kinds()
    kinds: np.ndarray[Any, np.dtype[np.uint8]] = table[code]
    unknown = np.flatnonzero(kinds == 0)
    if len(unknown):
        values = np.unique(code[unknown]).tolist()
        table[values] = [
            _SEPARATOR
            if _separates(value)
            else _CJK_TERM
            if any(lowest <= value <= highest for lowest, highest in CJK_RANGES)
            else _IN_WORDS
            for value in values
        ]
        kinds[unknown] = table[code[unknown]]
    return kinds


def _blank_separators(data: np.ndarray[Any, np.dtype[np.uint8]]) -> np.ndarray[Any, np.dtype[np.int64]]:
    """Overwrite with spaces, in UTF-8 bytes, each non-ASCII character that only separates words
    (dashes, arrows, box drawing, CJK punctuation) and each apostrophe that joins no two ASCII
    letters or digits: what is left non-ASCII is part of a word, or an apostrophe. Returns where
    the CJK characters left start (each is a term on its own: three bytes)."""
    leads = np.flatnonzero(data >= 0xC0)
    first = data[leads].astype(np.int64)
    width = 2 + (first >= 0xE0) + (first >= 0xF0)
    code = np.where(width == 2, first & 0x1F, np.where(width == 3, first & 0x0F, first & 0x07))
    for k in range(1, 4):
        more = width > k
        code[more] = (code[more] << 6) | (data[leads[more] + k] & 0x3F)
    kinds = _kinds(code)
    blank = kinds == _SEPARATOR
    for k in range(4):
        data[leads[blank & (width > k)] + k] = _SPACE
    quotes = np.flatnonzero(data == _APOSTROPHE)
    before, after = data[quotes - 1], data[quotes + 1]
    lone = ((before < 128) & ~_ASCII_WORD[before]) | ((after < 128) & ~_ASCII_WORD[after])
    data[quotes[lone]] = _SPACE
    kept: np.ndarray[Any, np.dtype[np.int64]] = leads[kinds == _CJK_TERM]
    return kept


@dataclass
class _Tokens:
    """The tokens of some texts (runs of word bytes between spaces), numbered in order. A token
    of up to 16 bytes (all but 0.4 % of them) is two integers that spell it exactly; a longer one
    is looked up by its bytes."""

    folded: bytes  # the texts' UTF-8, ASCII letters lower-cased: a token's bytes here spell its word
    starts: np.ndarray[Any, np.dtype[np.int64]]  # each token's first byte in `folded`
    ends: np.ndarray[Any, np.dtype[np.int64]]  # and the byte after its last
    text_of: np.ndarray[Any, np.dtype[np.int32]]  # the text each token is in
    low: np.ndarray[Any, np.dtype[np.uint64]]  # its first 8 bytes, little-endian, zero-padded
    high: np.ndarray[Any, np.dtype[np.uint64]]  # its next 8 bytes (0 for a token of up to 8)
    long: np.ndarray[Any, np.dtype[np.int64]]  # the numbers of the tokens longer than 16 bytes


def _tokens(texts: Sequence[str]) -> _Tokens:
    """Split `texts` into tokens on their UTF-8 bytes. A word (`_words`) never spans a character
    that only separates words, and case-folding works character by character, so the regex finds
    the same words in the tokens left once those are blanked as in the texts."""
    encoded = [text.encode("utf-8", "surrogatepass") for text in texts]
    text_starts = np.zeros(len(encoded) + 1, np.int64)  # each text's leading space in `data`
    np.cumsum(np.fromiter(map(len, encoded), np.int64, len(encoded)) + 1, out=text_starts[1:])
    # A space before each text and after it, and room for a 16-byte key past the last token.
    joined = b" ".join([b"", *encoded, b" " * (_FAST_LENGTH + 3)]).translate(_ASCII_FOLD)
    del encoded
    data = np.frombuffer(joined, np.uint8).copy()
    cjk = _blank_separators(data)
    word = data != _SPACE
    # Token edges: where word bytes start or stop, and either side of each CJK character (a CJK
    # character is a term alone, and `_word_terms` makes the pieces between them words again).
    cut = word[1:] != word[:-1]
    cut[cjk - 1] = True
    cut[cjk + 2] = True
    edges = np.flatnonzero(cut) + 1
    del cut
    if len(cjk):  # a token may end where the next starts
        kept = np.flatnonzero(word[edges[:-1]])
        starts, ends = edges[kept], edges[kept + 1]
    else:  # starts and ends alternate
        starts, ends = edges[0::2], edges[1::2]
    del word
    sizes = ends - starts
    # Tokens never span the space between two texts, so each text's tokens are a run of them.
    per_text = np.diff(np.searchsorted(starts, text_starts))
    text_of = np.repeat(np.arange(len(texts), dtype=np.int32), per_text)
    # Every token's first 16 bytes as two little-endian uint64, zero-padded past its end.
    windows = np.ndarray((len(data) - 7,), np.dtype("<u8"), data, strides=(1,))
    low = windows[starts] & _LOW_BYTES[np.minimum(sizes, 8)]
    high = np.zeros(len(starts), np.uint64)
    longer = np.flatnonzero(sizes > 8)
    longer_sizes = sizes[longer]
    high[longer] = windows[starts[longer] + 8] & _LOW_BYTES[np.minimum(longer_sizes - 8, 8)]
    long = longer[longer_sizes > _FAST_LENGTH]
    # A token's bytes are the same before separators were blanked.
    return _Tokens(joined, starts, ends, text_of, low, high, long)


_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing: the top bits of key x this
_MIXER = np.uint64(0xC2B2AE3D27D4EB4F)  # the high key, mixed into the low one first


class _FastWords:
    """The fast tokens' words seen so far (two uint64 keys each) and a value for each: a hash
    table with open addressing, looked up and filled a whole chunk of tokens at a time by numpy.
    Key 0 marks an empty place (a token has at least one byte); value 0 means "not found"."""

    def __init__(self, bits: int = 16) -> None:
        self._bits = bits
        self._places = np.zeros((1 << bits, 3), np.uint64)  # low, high, value
        self._count = 0

    def _homes(self, low: np.ndarray[Any, Any], high: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
        mixed = (low ^ (high * _MIXER)) * _MULTIPLIER
        homes: np.ndarray[Any, Any] = (mixed >> np.uint64(64 - self._bits)).astype(np.int64)
        return homes

    def find(
        self, low: np.ndarray[Any, Any], high: np.ndarray[Any, Any]
    ) -> np.ndarray[Any, np.dtype[np.uint64]]:
        """Each key's value, 0 where it is not in the table."""
        mask = (1 << self._bits) - 1
        places = self._homes(low, high)
        held = self._places.take(places, axis=0)
        hit = (held[:, 0] == low) & (held[:, 1] == high)
        values = np.where(hit, held[:, 2], np.uint64(0))
        pending = np.flatnonzero(~hit)
        pending = pending[held[pending, 0] != 0]  # another key there: look further on
        places = places[pending]
        while len(pending):
            places = (places + 1) & mask
            held = self._places.take(places, axis=0)
            hit = (held[:, 0] == low[pending]) & (held[:, 1] == high[pending])
            values[pending[hit]] = held[hit, 2]
            further = ~hit & (held[:, 0] != 0)
            pending, places = pending[further], places[further]
        return values

    def add(
        self, low: np.ndarray[Any, Any], high: np.ndarray[Any, Any], values: np.ndarray[Any, Any]
    ) -> None:
        """Put in keys not in the table yet, each once, with their values."""
        self._count += len(low)
        if 4 * self._count > 1 << self._bits:  # kept at most a quarter full: most finds look once
            held = self._places[self._places[:, 0] != 0]
            while 4 * self._count > 1 << self._bits:
                self._bits += 1
            self._places = np.zeros((1 << self._bits, 3), np.uint64)
            self._put(held[:, 0], held[:, 1], held[:, 2])
        self._put(low, high, values)

    def _put(
        self, low: np.ndarray[Any, Any], high: np.ndarray[Any, Any], values: np.ndarray[Any, Any]
    ) -> None:
        mask = (1 << self._bits) - 1
        pending = np.arange(len(low))
        places = self._homes(low, high)
        while len(pending):
            free = np.flatnonzero(self._places[places, 0] == 0)
            # Of several keys wanting one free place, the first takes it; the others look further.
            taken, first = np.unique(places[free], return_index=True)
            winners = pending[free[first]]
            self._places[taken] = np.stack((low[winners], high[winners], values[winners]), axis=1)
            left = np.ones(len(pending), bool)
            left[free[first]] = False
            pending, places = pending[left], (places[left] + 1) & mask


def _pieces_terms(pieces: list[bytes]) -> list[tuple[str, ...]]:
    """The terms of each token (its bytes in `_Tokens.folded`): an ASCII one is one word, made
    into terms here as `word_terms` does; in any other the regex finds the words, on its
    case-folded text as `words()` does. All decoded at once: a token holds no line break."""
    if not pieces:
        return []
    found: list[tuple[str, ...]] = []
    others: list[str] = []
    places: list[int] = []  # where each of the others is
    for text in b"\n".join(pieces).decode("utf-8", "surrogatepass").split("\n"):
        if not text.isascii():
            others.append(text)
            places.append(len(found))
            found.append(())
            continue
        if "'" in text:
            text = text.replace("'", "")
        found.append(() if text in STOP_WORDS or (len(text) < 2 and not text.isdigit()) else (stem(text),))
    if others:
        marked = "\n".join([*others, ""]).casefold().replace("’", "'")
        at = iter(places)
        words: list[str] = []
        for word in _MARKED_WORD.findall(marked):
            if word == "\n":
                found[next(at)] = tuple(term for w in words for term in _word_terms.__wrapped__(w))
                words = []
            else:
                words.append(word)
    return found


_BY_BYTES = 1 << 63  # the value of a token looked up by its bytes (a long one, or one with several terms)


class _BuildTerms:
    """The terms of a bulk build's tokens, numbered as they first appear (the vocabulary's order),
    each distinct token made into terms once per build: one of up to 16 bytes found in a hash
    table, a longer one (or one of the rare few that give several terms) in a dictionary."""

    def __init__(self) -> None:
        self.vocabulary: dict[str, int] = {}
        # value: 2 + the token's term row, 1 for a token with no term, _BY_BYTES for several
        self._fast = _FastWords()
        self._by_bytes: dict[bytes, tuple[int, ...]] = {}  # term rows of the other tokens

    def entries(self, tokens: _Tokens) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
        """(term row, text) of each term the tokens give."""
        values = self._fast.find(tokens.low, tokens.high)
        values[tokens.long] = _BY_BYTES
        missing = np.flatnonzero(values == 0)
        # The new tokens: each one's first place, and which of them each missing token is.
        low, high = tokens.low[missing], tokens.high[missing]
        order = np.lexsort((high, low))  # stable: a token's first place comes first
        low, high = low[order], high[order]
        first = np.ones(len(order), bool)
        first[1:] = (low[1:] != low[:-1]) | (high[1:] != high[:-1])
        which = np.empty(len(order), np.int64)
        which[order] = np.cumsum(first) - 1
        heads = missing[order[first]]
        folded, starts, ends = tokens.folded, tokens.starts, tokens.ends
        new = list(map(folded.__getitem__, map(slice, starts[heads].tolist(), ends[heads].tolist())))
        # The new long tokens, each at its first place.
        by_bytes = self._by_bytes
        long = tokens.long.tolist()
        spelt = map(folded.__getitem__, map(slice, starts[tokens.long].tolist(), ends[tokens.long].tolist()))
        firsts = dict(zip(reversed(list(spelt)), reversed(long), strict=True))
        new_long = [piece for piece in firsts if piece not in by_bytes]
        found = _pieces_terms(new + new_long)
        # Terms numbered in order of first appearance: the new tokens' terms, in their order.
        appear = np.concatenate((heads, np.array([firsts[piece] for piece in new_long], np.int64)))
        vocabulary = self.vocabulary
        ordered = chain.from_iterable(map(found.__getitem__, np.argsort(appear, kind="stable").tolist()))
        fresh = [term for term in dict.fromkeys(ordered) if term not in vocabulary]
        vocabulary.update(zip(fresh, range(len(vocabulary), len(vocabulary) + len(fresh)), strict=True))
        new_values = np.empty(len(new), np.uint64)
        new_values[:] = [
            vocabulary[terms_of[0]] + 2 if len(terms_of) == 1 else 1 if not terms_of else _BY_BYTES
            for terms_of in found[: len(new)]
        ]
        for piece, terms_of in zip(new + new_long, found, strict=True):
            if len(terms_of) > 1 or len(piece) > _FAST_LENGTH:
                by_bytes[piece] = tuple(map(vocabulary.__getitem__, terms_of))
        self._fast.add(low[first], high[first], new_values)
        values[missing] = new_values[which]
        values -= np.uint64(2)  # a term row, or past the rows: a token with no term wraps round
        kept = np.flatnonzero(values < _BY_BYTES - 2)
        looked_up = np.flatnonzero(values == _BY_BYTES - 2)
        spelt = map(folded.__getitem__, map(slice, starts[looked_up].tolist(), ends[looked_up].tolist()))
        of_bytes = list(map(by_bytes.__getitem__, spelt))
        per_token = np.fromiter(map(len, of_bytes), np.int64, len(of_bytes))
        rows = np.concatenate(
            (
                values[kept].astype(np.int64),
                np.fromiter(chain.from_iterable(of_bytes), np.int64, int(per_token.sum())),
            )
        )
        text_of = tokens.text_of
        return rows, np.concatenate((text_of[kept], np.repeat(text_of[looked_up], per_token)))


def _term_counts(
    texts: Sequence[str], build: _BuildTerms
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """`Counter(terms(text))` of every text at once, as (term row, text, count), sorted by term row
    then text; the term rows are `build.vocabulary`'s, new terms numbered as they first appear."""
    rows, text_of = build.entries(_tokens(texts))
    keys = rows * max(len(texts), 1) + text_of
    if len(build.vocabulary) * max(len(texts), 1) < 1 << 32:
        keys = keys.astype(np.uint32)  # sorted in half the time
    keys.sort()
    first = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1]))) if len(keys) else keys
    counts = np.diff(np.append(first, len(keys)))
    term_rows, text_index = np.divmod(keys[first].astype(np.int64), max(len(texts), 1))
    return term_rows, text_index, counts


def _distinct(texts: Sequence[str]) -> tuple[list[str], np.ndarray[Any, np.dtype[np.int64]]]:
    """`texts` without the copies of an earlier one, and which of those each text is. A workspace
    holds many copies (a skill mirrored in `.claude/`, `.agents/`, ...: a third of the corpus's
    body text), and they sort next to each other (by name). Only texts of a length met twice
    are hashed."""
    sizes = Counter(map(len, texts))
    seen: dict[str, int] = {}
    distinct: list[str] = []
    source = []
    for text in texts:
        number = len(distinct)
        if sizes[len(text)] > 1:
            number = seen.setdefault(text, number)
        if number == len(distinct):
            distinct.append(text)
        source.append(number)
    return distinct, np.array(source, np.int64)


def _with_copies(
    term_rows: np.ndarray[Any, Any],
    distinct_of: np.ndarray[Any, Any],
    counts: np.ndarray[Any, Any],
    source: np.ndarray[Any, Any],
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """`_term_counts` of every text from those of the distinct ones (`_distinct`): each copy gets
    the (term row, count) entries of the text it copies. Sorted by term row then text, as
    `_term_counts` sorts; counts above _MAX_COUNT come out as _MAX_COUNT (postings keep no more)."""
    width = len(source)
    first_of = np.empty(int(source.max()) + 1, np.int64)
    first_of[source[::-1]] = np.arange(width - 1, -1, -1)  # each distinct text's first place
    copies = np.flatnonzero(first_of[source] != np.arange(width))
    copied = source[copies]
    per_text = np.bincount(copied, minlength=len(first_of))
    grouped = copies[np.argsort(copied, kind="stable")]  # the copies' places, by what they copy
    # One more entry per copy of an entry's text: the k-th copy of text d is grouped[start[d] + k].
    held = np.flatnonzero(per_text[distinct_of])
    repeats = per_text[distinct_of[held]]
    again = np.repeat(held, repeats)
    ends = np.cumsum(repeats)
    nth = np.arange(len(again)) - np.repeat(ends - repeats, repeats)
    start = np.cumsum(per_text) - per_text
    texts = np.concatenate((first_of[distinct_of], grouped[start[distinct_of[again]] + nth]))
    rows = np.concatenate((term_rows, term_rows[again]))
    clipped = np.minimum(counts, _MAX_COUNT)
    # Both runs are sorted by (term, text), nearly so: a stable sort (timsort) merges them fast.
    keys = ((rows * width + texts) << 16) | np.concatenate((clipped, clipped[again]))
    keys.sort(kind="stable")
    found_rows, found_texts = np.divmod(keys >> 16, width)
    return found_rows, found_texts, keys & 0xFFFF


def _chunk_postings(
    texts: Sequence[str], first_slot: int, build: _BuildTerms, lengths: np.ndarray[Any, Any]
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """(term rows, slots, counts) of the postings of the documents whose field texts these are
    (FIELDS of each in turn), sorted by (term, slot), a posting's counts being its fields' uint16
    counts side by side as one uint64; their field lengths (in terms) go into `lengths`, from
    `first_slot` on."""
    n_fields = len(FIELDS)
    n = len(texts) // n_fields
    distinct, source = _distinct(texts)
    term_rows, text_of, summed = _term_counts(distinct, build)
    text_lengths = np.bincount(text_of, weights=summed, minlength=len(distinct))
    if len(distinct) < len(texts):
        text_lengths = text_lengths[source]
        term_rows, text_of, summed = _with_copies(term_rows, text_of, summed, source)
    lengths[first_slot : first_slot + n] = text_lengths.reshape(n, n_fields)
    slot_of, fields_of = np.divmod(text_of, n_fields)
    pairs = term_rows * n + slot_of  # ascending, as (term row, text) is
    new_pair = np.concatenate(([True], pairs[1:] != pairs[:-1])) if len(pairs) else np.zeros(0, bool)
    posting = np.cumsum(new_pair) - 1
    unique = pairs[new_pair]
    # A posting's counts side by side, as one uint64: placed by word with one scatter, not four.
    counts = np.zeros((len(unique), n_fields), np.uint16)
    counts[posting, fields_of] = np.minimum(summed, _MAX_COUNT)
    rows, local = np.divmod(unique, n)
    return rows.astype(np.int32), (local + first_slot).astype(np.int32), counts.view(np.uint64).ravel()


@dataclass
class _Postings:
    """Bulk-built postings of some documents: word row r's are entries [indptr[r], indptr[r + 1])
    of `slots` (ascending) and of each field's `counts`; `lengths`: each document's field lengths."""

    vocabulary: list[str]  # in order of first appearance
    indptr: np.ndarray[Any, np.dtype[np.int64]]
    slots: np.ndarray[Any, np.dtype[np.int32]]
    counts: np.ndarray[Any, np.dtype[np.uint16]]
    lengths: np.ndarray[Any, np.dtype[np.float64]]
    processes: int = 1  # how many built them
    rows: dict[str, int] | None = None  # each word's row


_Chunk = tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], np.ndarray[Any, Any]]


@dataclass
class _Counted:
    """The postings of a run of consecutive documents, counted chunk by chunk and not yet placed
    by word: each chunk's (term rows, slots, counts), sorted by (term row, slot); a posting's
    counts are its fields' uint16 counts side by side, as one uint64."""

    vocabulary: list[str]  # in order of first appearance
    chunks: list[_Chunk]
    lengths: np.ndarray[Any, np.dtype[np.float64]]
    processes: int = 1  # how many built them
    # Each word's row, where this process numbered them; a child sends the vocabulary alone.
    rows: dict[str, int] | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "rows": None}


def _part_postings(docs: Sequence[SkillDocument], first_slot: int) -> _Counted:
    """The postings of `docs`, slots from `first_slot` on, in chunks of documents (they bound the
    intermediate arrays, and the bodies read at once: a stored document's is read from its file
    each time), one vocabulary over all of them."""
    n_fields = len(FIELDS)
    n = len(docs)
    build = _BuildTerms()
    chunks = []
    lengths = np.zeros((n, n_fields), np.float64)
    for start in range(0, n, _CHUNK):
        chunk = [_field_text(d, f) for d in docs[start : start + _CHUNK] for f in FIELDS]
        term_rows, slots, counts = _chunk_postings(chunk, start, build, lengths)
        chunks.append((term_rows, slots + np.int32(first_slot), counts))
    return _Counted(list(build.vocabulary), chunks, lengths, rows=build.vocabulary)


def _placed(parts: list[_Counted]) -> _Postings:
    """The postings of consecutive runs of documents, placed by word: a word's postings are its
    postings in each chunk of each run in turn (so its slots stay ascending), the vocabulary each
    run's new words in turn (so still in order of first appearance over all the documents). Each
    chunk is placed once, and freed once placed."""
    # The first run's words keep their rows (it was counted here: its own dictionary grows on).
    first = parts[0]
    vocabulary = first.rows if first.rows is not None else {w: r for r, w in enumerate(first.vocabulary)}
    first.rows = None
    chunks = list(first.chunks)
    for part in parts[1:]:
        words = part.vocabulary
        fresh = [word for word in words if word not in vocabulary]
        vocabulary.update(zip(fresh, range(len(vocabulary), len(vocabulary) + len(fresh)), strict=True))
        rows = np.fromiter(map(vocabulary.__getitem__, words), np.int32, len(words))
        # One row for one word: each chunk still holds one run of entries per word.
        chunks += [(rows[term_rows], slots, counts) for term_rows, slots, counts in part.chunks]
    for part in parts:
        part.chunks = []
    # Counting sort into the final arrays.
    every_row = np.concatenate([term_rows for term_rows, _, _ in chunks])
    per_term = np.bincount(every_row, minlength=len(vocabulary))
    del every_row
    indptr = np.zeros(len(vocabulary) + 1, np.int64)
    np.cumsum(per_term, out=indptr[1:])
    total = int(indptr[-1])
    slots_out = np.zeros(total, np.int32)
    counts_out = np.zeros(total, np.uint64)
    cursor = indptr[:-1].copy()
    chunks.reverse()
    while chunks:
        term_rows, slots, counts = chunks.pop()
        if not len(term_rows):
            continue
        # The chunk's entries come in runs of one term each: a run goes where its term's cursor is.
        runs = np.flatnonzero(np.concatenate(([True], term_rows[1:] != term_rows[:-1])))
        run_terms, run_lengths = term_rows[runs], np.diff(np.append(runs, len(term_rows)))
        at = np.repeat(cursor[run_terms] - runs, run_lengths) + np.arange(len(term_rows))
        slots_out[at] = slots
        counts_out[at] = counts
        cursor[run_terms] += run_lengths
    # Each field's counts in a row of their own, as the search keeps them.
    by_field = np.ascontiguousarray(counts_out.view(np.uint16).reshape(total, len(FIELDS)).T)
    del counts_out
    lengths = np.concatenate([p.lengths for p in parts])
    processes = sum(p.processes for p in parts)
    return _Postings(list(vocabulary), indptr, slots_out, by_field, lengths, processes, rows=vocabulary)


def _default_jobs() -> int:
    """The CPUs that the last minute left idle, counting this process's own, up to _MAX_JOBS
    (forked.idle_jobs). At 16,000 skills on 2 CPUs, 2.75-2.92 s wall with 2 against 4.09-4.24 s
    with 1 on a quiet machine, but 11.5 s against 8.9 s under a load average of 5, and 5.0-5.3 s
    against 3.7-4.7 s at 1.6-1.9 (the build's own included)."""
    return forked.idle_jobs(_MAX_JOBS)


def _forked(work: Callable[[], _Counted]) -> Callable[[bool], _Counted | None]:
    """`work()` in a forked child (forked.start), its answer checked to be a run's counts."""
    result = forked.start(work)

    def counted(wanted: bool) -> _Counted | None:
        loaded = result(wanted)
        return loaded if isinstance(loaded, _Counted) else None

    return counted


def _bulk_postings(docs: Sequence[SkillDocument], jobs: int = 1) -> _Postings:
    """The postings of `docs`, with the same counts, lengths, slot order and vocabulary order as
    adding them one by one.

    With `jobs` > 1, consecutive runs of as many documents each are built in forked processes
    (the first in this one) and joined in order: the result is the same, array for array. Not
    where fork does not exist, for fewer than _MIN_DOCS_PER_JOB documents a process, or when this
    process runs other threads (a fork copies only the calling thread, and a lock another one
    holds would stay held in the child): then in this process alone."""
    # No garbage collection meanwhile: the build makes few cycles, and a full collection would
    # walk every object of a large index, each page it writes to copied after a fork.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _postings_in_runs(docs, jobs)
    finally:
        if collecting:
            gc.enable()


def _postings_in_runs(docs: Sequence[SkillDocument], jobs: int) -> _Postings:
    """`_bulk_postings`, the collector off."""
    n = len(docs)
    jobs = min(jobs, n // _MIN_DOCS_PER_JOB)
    if jobs <= 1 or not forked.may_fork():
        return _placed([_part_postings(docs, 0)])
    bounds = [n * k // jobs for k in range(jobs + 1)]
    _field_text(docs[0], "body")  # a stored body read once before the fork: the store's table too
    waiting = [(a, b, _forked(partial(_part_postings, docs[a:b], a))) for a, b in pairwise(bounds[1:])]
    try:
        parts = [_part_postings(docs[: bounds[1]], 0)]
    except BaseException:
        for _, _, result in waiting:
            result(False)
        raise
    for a, b, result in waiting:
        part = result(True)
        if part is None:  # the child failed: built here instead
            part = _part_postings(docs[a:b], a)
            part.processes = 0
        parts.append(part)
    return _placed(parts)


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
_MAX_JOBS = 4  # processes a bulk build uses at most
_MIN_DOCS_PER_JOB = 2000  # below this a forked process costs more than it saves
_ADDED_COUNTS = 64  # slots added one by one whose own counts are kept (an editor's open files)
_NO_NORMS = np.zeros(0)  # in place of the length norms of a field a word is not in (never read)


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
            if len(slots):  # a word is in a slot's postings once; 1 x a value is that value
                total[slots] += contribution if repeat == 1 else repeat * contribution
        evidence = total / self._idf(1)
        # Rounded as semantic's are: 6 decimals are plenty, and equal matches tie exactly.
        scaled: np.ndarray[Any, np.dtype[np.float64]] = np.round(evidence / (evidence + 1.0), 6)
        return scaled


class Bm25fSearch(SlottedSearch, Bm25fScores):
    """BM25F over an index, following its upserts and removes."""

    def __init__(
        self, index: SkillIndex, parameters: Bm25fParameters | None = None, jobs: int | None = None
    ) -> None:
        """`jobs`: processes a bulk build may use (default: the idle CPUs when it starts, see
        `_default_jobs`)."""
        self.p = parameters or Bm25fParameters()
        self.jobs = jobs
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
        self._dead: tuple[tuple[int, int, int], np.ndarray[Any, np.dtype[np.int64]]] | None = None
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
        """Every document at once into the compressed postings, with the same counts, lengths,
        slot order and vocabulary order as adding them one by one (`_bulk_postings`)."""
        self._claim_all(docs)
        built = _bulk_postings(docs, self.jobs if self.jobs is not None else _default_jobs())
        rows = built.rows  # made as the words were numbered
        self._vocabulary = rows if rows is not None else {w: r for r, w in enumerate(built.vocabulary)}
        self._base_slots = built.slots
        self._base_counts = built.counts
        self._indptr = built.indptr
        for f in range(len(FIELDS)):
            self._lengths[f] = array("f", built.lengths[:, f].astype(np.float32).tobytes())
            self._totals[f] = float(built.lengths[:, f].sum())

    def _state_key(self, docs: list[SkillDocument]) -> str:
        """What saved postings must have been built from: these documents, in this order, split
        into terms by this version of `terms`."""
        return self._documents_key(docs, TERMS_VERSION)

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
        self._claim_all(docs)
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
        slots, counts = self._live_postings(all_slots, all_counts)
        self._frequencies[word] = len(slots)
        # Only the fields the word is in are weighted (_contribution): the others' norms are not gathered.
        field_norms = [norms[f][slots] if counts[f].any() else _NO_NORMS for f in range(len(FIELDS))]
        contribution = self._contribution(counts, field_norms, self._idf(len(slots)))
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

    def _live_postings(
        self, slots: np.ndarray[Any, np.dtype[np.int32]], counts: np.ndarray[Any, np.dtype[np.uint16]]
    ) -> tuple[np.ndarray[Any, np.dtype[np.int32]], np.ndarray[Any, np.dtype[np.uint16]]]:
        """The postings of live slots among `slots` (ascending) and their counts. Most postings
        hold no dead slot (an editor's upsert leaves one or two): those are kept whole, the same
        values without a mask gathered over thousands of slots."""
        dead = self._dead_slots()
        if len(dead):
            at = np.minimum(np.searchsorted(slots, dead), max(len(slots) - 1, 0))
            if len(slots) and bool((slots[at] == dead).any()):
                live = np.frombuffer(self._alive, dtype=np.int8)[slots].astype(bool)
                return slots[live], counts[:, live]
        return slots, counts

    def _dead_slots(self) -> np.ndarray[Any, np.dtype[np.int64]]:
        """The dead slots, ascending (kept while the slots are as they were)."""
        state = (len(self._slots), self._live, self.generation)
        if self._dead is None or self._dead[0] != state:
            dead = np.flatnonzero(np.frombuffer(self._alive, dtype=np.int8) == 0)
            self._dead = (state, dead)
        return self._dead[1]

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
