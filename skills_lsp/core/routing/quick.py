"""A warm `select`'s saved state: written here after a full `select` (`save`), read by
routing/warm.py, which answers lexical and bm25f without importing numpy. This module is the
numpy side: the save, and hybrid's reading of the same state (`Columns` with numpy arrays,
`SavedBm25f`). See warm.py for what the state holds and when it is used.
"""

from __future__ import annotations

import io
import zlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from skills_lsp.core.files.frames import RACY_NS, file_stamp, write_frame
from skills_lsp.core.routing import warm
from skills_lsp.core.routing.bm25f import Bm25fScores, bm25f_for
from skills_lsp.core.routing.lexical import LexicalScorer
from skills_lsp.core.routing.scorer import scorer_for
from skills_lsp.core.routing.terms import Bm25fParameters
from skills_lsp.core.routing.warm import (
    BLOCK,
    FILE,
    QUICK_SCORERS,
    Match,
    frame_key,
    matches,
    run_key,
    select,
)

if TYPE_CHECKING:
    from skills_lsp.core.index.skill_index import SkillIndex
    from skills_lsp.core.routing.bm25f import Bm25fSearch
    from skills_lsp.core.routing.scorer import Tokenizer

__all__ = [
    "FILE",
    "QUICK_SCORERS",
    "Columns",
    "Match",
    "SavedBm25f",
    "frame_key",
    "matches",
    "run_key",
    "save",
    "select",
]


def _sorted_vocabulary(vocabulary: list[str]) -> dict[str, np.ndarray[Any, Any]]:
    """The vocabulary sorted (one text and its offsets) and each word's row of the postings."""
    words = sorted(vocabulary)  # strings compared directly: twice as fast as sorting rows by key
    row_of = dict(zip(vocabulary, range(len(vocabulary)), strict=True))
    order = np.fromiter(map(row_of.__getitem__, words), np.int32, len(words))
    return {**_joined("vocabulary", words), "rows": order}


def _tail(
    arrays: dict[str, np.ndarray[Any, Any]],
) -> tuple[dict[str, Any], list[memoryview], np.ndarray[Any, Any]]:
    """The regions (offset, dtype, shape) of `arrays` laid one after another, each from a BLOCK
    boundary (zeros between), their bytes (views, not copies) and the CRC-32 of each BLOCK."""
    regions: dict[str, Any] = {}
    chunks: list[memoryview] = []
    crcs: list[int] = []
    offset = 0
    for name, array in arrays.items():
        data = np.ascontiguousarray(array).reshape(-1).view(np.uint8).data
        regions[name] = (offset, array.dtype.str, tuple(array.shape))
        padding = -len(data) % BLOCK
        chunks += [data, memoryview(bytes(padding))]
        crcs += [zlib.crc32(data[i : i + BLOCK]) for i in range(0, len(data), BLOCK)]
        if padding:  # the last block of the region, completed with the zeros written after it
            crcs[-1] = zlib.crc32(bytes(padding), crcs[-1])
        offset += len(data) + padding
    return regions, chunks, np.asarray(crcs, np.uint32)


def _postings(
    vocabulary: list[str],
    indptr: np.ndarray[Any, Any],
    slots: np.ndarray[Any, Any],
    values: np.ndarray[Any, Any],
) -> dict[str, np.ndarray[Any, Any]]:
    return {
        **_sorted_vocabulary(vocabulary),
        "indptr": np.asarray(indptr, np.int64),
        "slots": np.asarray(slots, np.int32),
        "values": values,
    }


# What a scorer built on bm25f adds to its saved state: (head items, arrays), or None (nothing
# trustworthy), from the index and its documents in slot order (hybrid.saved_state).
Extra = Callable[["SkillIndex", list[Any]], "tuple[dict[str, Any], dict[str, np.ndarray[Any, Any]]] | None"]


def _raw(array: np.ndarray[Any, Any]) -> bytes:
    """An array's items as the head keeps them: bytes in the machine's order (warm.view)."""
    return np.ascontiguousarray(array).tobytes()


def _joined(name: str, texts: list[str]) -> dict[str, np.ndarray[Any, Any]]:
    """`texts` as the regions `name` (one UTF-8 text) and `name`_offsets (where each starts)."""
    encoded = [text.encode("utf-8", "surrogatepass") for text in texts]
    offsets = np.zeros(len(texts) + 1, np.int64)
    np.cumsum(np.fromiter(map(len, encoded), np.int64, len(encoded)), out=offsets[1:])
    return {name: np.frombuffer(b"".join(encoded), np.uint8), f"{name}_offsets": offsets}


class Columns(warm.Columns):
    """A saved state's postings and vectors as numpy arrays (hybrid's reading of it)."""

    @classmethod
    def of(cls, columns: warm.Columns) -> Columns:
        return cls(columns.head, columns.fd, columns.start)

    def array(self, name: str) -> np.ndarray[Any, Any]:
        """Region `name` whole (hybrid's skill vectors)."""
        offset, dtype, shape = self.regions[name]
        kind = np.dtype(dtype)
        return np.frombuffer(self.read(offset, int(np.prod(shape)) * kind.itemsize), kind).reshape(shape)

    def posting(self, word: str) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]] | None:
        span = self.span(word)
        if span is None:
            return None
        (slots,) = self.views("slots", *span)
        values = self.views("values", *span)
        counts = np.stack([np.asarray(row) for row in values]) if len(values) > 1 else np.asarray(values[0])
        return np.asarray(slots), counts


class _LengthNorms(Bm25fScores):
    """bm25f's length norms of saved lengths and totals, every slot alive (saved with the state,
    so that a warm `select` reads them instead of computing them in numpy's float32)."""

    def __init__(self, lengths: np.ndarray[Any, Any], totals: list[float], live: int) -> None:
        self.p = Bm25fParameters()
        self._lengths = list(lengths)
        self._totals = list(totals)
        self._live = live

    def norms(self) -> list[np.ndarray[Any, Any]]:
        return self._length_norms(slice(0, None))


def save(
    index: SkillIndex,
    scorer: str,
    tokenizer: str,
    key: str,
    config: str | None,
    started: int,
    extra: Extra | None = None,
) -> bool:
    """Save what a warm `select` with `scorer` needs, after a full one over `index` (loaded
    through the store, the scorer built; `extra` adds what hybrid needs beyond bm25f's state);
    False when there is nothing trustworthy to save."""
    stamps = index.stamps
    if stamps is None or index.cache_dir is None or scorer not in QUICK_SCORERS:
        return False
    trusted_before = stamps.saved_ns - RACY_NS
    listing = stamps.listing
    files: list[str] = list(listing["paths"])
    if any(stamps.files.get(path, (0, trusted_before))[1] >= trusted_before for path in files):
        return False  # a stamp too recent (or a file without one): the next full run saves
    config_stamp = file_stamp(config) if config is not None else None
    if config_stamp is not None and max(config_stamp[1:]) >= started - RACY_NS:
        return False
    # In the index's order, which is (name, path) order, the scorers' tie-break: a tie between
    # skills is broken by slot alone (ranking.best_first keeps slots in order among equals).
    docs = list(index)
    dirs: dict[str, int] = listing["dirs"]
    head: dict[str, Any] = {
        "key": key,
        "config": config_stamp,
        # The listing's directories, then the files: one list (a dict of 28,000 directories
        # took twice as long to unpickle), their mtimes, and the files' sizes (-1: a directory).
        "paths": [*dirs, *files],
        "mtimes": _raw(np.array([*dirs.values(), *(stamps.files[p][1] for p in files)], np.int64)),
        "sizes": _raw(np.array([-1] * len(dirs) + [stamps.files[p][0] for p in files], np.int64)),
        "dirs": len(dirs),
        "listing": {k: listing[k] for k in ("started", "probes")},
        "trusted_before": trusted_before,
        "size": len(docs),
    }
    # After the head, read where needed: one text each, cut by offsets when printed.
    arrays: dict[str, np.ndarray[Any, Any]] = {
        **_joined("names", [doc.name for doc in docs]),
        **_joined("paths", [str(doc.path) for doc in docs]),
        **_joined("ids", [doc.id for doc in docs]),
    }
    if scorer == "lexical":
        built = scorer_for(index, scorer)
        assert isinstance(built, LexicalScorer)
        search = built.search(cast("Tokenizer", tokenizer))
        columns = search.columns()
        if columns is None or not same_slots(search.documents(), docs):
            return False
        vocabulary, indptr, slots, weights = columns
        arrays.update(_postings(vocabulary, indptr, slots, weights))
        head.update(norms=_raw(search.norms()))
    else:
        lexical = bm25f_for(index)
        found = _bm25f_arrays(lexical, docs)
        if found is None or lexical.p != Bm25fParameters():
            return False
        head.update(found[0])
        arrays.update(found[1])
        if scorer == "hybrid":
            more = extra(index, docs) if extra is not None else None
            if more is None:
                return False
            head.update(more[0])
            arrays.update(more[1])
    regions, chunks, crcs = _tail(arrays)
    head.update(regions=regions, crcs=_raw(crcs))

    def tail(handle: io.BufferedWriter) -> None:
        for chunk in chunks:
            handle.write(chunk)

    return write_frame(
        index.cache_dir / FILE.format(scorer, tokenizer), frame_key(scorer, tokenizer), head, tail
    )


def same_slots(slots: list[Any], docs: list[Any]) -> bool:
    return len(slots) == len(docs) and all(a is b for a, b in zip(slots, docs, strict=True))


def _bm25f_arrays(
    search: Bm25fSearch, docs: list[Any]
) -> tuple[dict[str, Any], dict[str, np.ndarray[Any, Any]]] | None:
    columns = search.columns()
    if columns is None or not same_slots(search.documents(), docs):
        return None
    vocabulary, indptr, slots, counts = columns
    arrays = _postings(vocabulary, indptr, slots, np.asarray(counts, np.uint16))
    lengths, totals = search.field_lengths()
    stacked = np.stack(lengths)
    norms = np.stack(_LengthNorms(stacked, totals, len(docs)).norms())
    if stacked.dtype != np.float32 or norms.dtype != np.float32:
        return None  # warm.bm25f_scores reads them as float32
    return {"totals": totals}, {**arrays, "lengths": stacked, "field_norms": norms}


class SavedBm25f(Bm25fScores):
    """bm25f's scores over saved postings: `Bm25fScores` with every slot alive."""

    def __init__(self, columns: Columns) -> None:
        head = columns.head
        self.columns = columns
        self.p = Bm25fParameters()
        self._lengths = list(columns.array("lengths"))
        self._totals = list(head["totals"])
        self._live = head["size"]
        self._norms: list[np.ndarray[Any, Any]] | None = None
        self._found: dict[str, tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]] | None] = {}

    def slot_count(self) -> int:
        return self._live

    def _saved(self, word: str) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]] | None:
        if word not in self._found:
            self._found[word] = self.columns.posting(word)
        return self._found[word]

    def _posting_parts(
        self, word: str, lowest: int = 0, highest: int = 2**31
    ) -> list[tuple[np.ndarray[Any, np.dtype[np.int32]], np.ndarray[Any, np.dtype[np.uint16]]]]:
        found = self._saved(word)
        if found is None or not len(found[0]) or found[0][0] > highest or found[0][-1] < lowest:
            return []
        return [found]

    def _frequency(self, word: str) -> int:
        found = self._saved(word)
        return 0 if found is None else len(found[0])

    def _term_scores(self, word: str) -> tuple[np.ndarray[Any, np.dtype[np.int32]], np.ndarray[Any, Any]]:
        """As `Bm25fSearch._term_scores` with every slot alive: the same arithmetic."""
        found = self._saved(word)
        if found is None or not len(found[0]):
            return np.zeros(0, np.int32), np.zeros(0)
        slots, counts = found
        if self._norms is None:
            self._norms = self._length_norms(slice(0, None))
        norms = self._norms
        contribution = self._contribution(
            counts, [norms[f][slots] for f in range(len(norms))], self._idf(len(slots))
        )
        return slots, contribution
