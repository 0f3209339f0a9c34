"""A warm `select` that loads no index: one scorer's state over one workspace, saved by a full
`select` with everything that state rests on, and answered from while all of it still holds.

A full `select` loads the workspace index through the store (store.py: every document, a
`SkillIndex`, the scorer's saved postings and a dictionary of its vocabulary) to score one
query. What the answer depends on is much less: which files there are and that none changed
(the store's own proof: the saved listing and each file's stamp), the postings of the query's
words, a few numbers per skill, and the name, path and id of the skills printed. So `save` keeps
exactly that, in one file per scorer and tokenizer in the index's store folder, and `select`
reads it back:

- a head (a frame, `files.frames`: checked by its SHA-256, of this format and package version)
  with the proof, the run's key (working folder, root as spelt, config file), the config file's
  stamp, each skill's name, path and id, the scorer's per-skill arrays and its vocabulary, sorted
  (one string and its offsets: a query word is found by bisection, no dictionary is built);
- then the postings (and hybrid's skill vectors), raw, read only where a query word needs them,
  each block of `BLOCK` bytes checked against its CRC-32 in the head before it is used.

Anything that does not hold (a changed, added or removed file or directory, an ignore file, the
config, a stamp too recent to trust, another version, a damaged or cut file) makes `select`
return None: the caller does the full `select`, which saves a fresh state. The answers are the
full path's bit for bit: the scoring is the scorers' own code (`lexical.best_slots`,
`bm25f.Bm25fScores`, `hybrid.fused_mean`, `semantic.exact_where_needed`) over the same arrays,
and the slots are in the index's (name, path) order, which is how every scorer breaks ties.

Only plain requests take this path: no tag filter, no `--explain`, no `--crate`, a scorer named.
"""

from __future__ import annotations

import io
import os
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from skills_lsp._version import __version__
from skills_lsp.core.files.cache import cache_dir_for, find_config, store_dir
from skills_lsp.core.files.frames import RACY_NS, file_stamp, listing_holds, read_head, write_frame
from skills_lsp.core.routing.bm25f import TERMS_VERSION, Bm25fParameters, Bm25fScores, bm25f_for
from skills_lsp.core.routing.lexical import TOKENS_VERSION, LexicalScorer, best_slots, tokenize
from skills_lsp.core.routing.ranking import best_first
from skills_lsp.core.routing.scorer import scorer_for

if TYPE_CHECKING:
    from skills_lsp.core.index.skill_index import SkillIndex
    from skills_lsp.core.routing.bm25f import Bm25fSearch
    from skills_lsp.core.routing.scorer import Tokenizer

FORMAT = 2  # 2: names, paths and ids as one string each
FILE = "select-{}-{}.bin"  # scorer, tokenizer; in the index's store folder (store.store_dir)
BLOCK = 1 << 16  # bytes of postings per CRC-32
QUICK_SCORERS = ("lexical", "bm25f", "hybrid")

# A selected skill as printed: (score, name, path, id).
Match = tuple[float, str, str, str]


def frame_key(scorer: str, tokenizer: str) -> bytes:
    """What a saved state must have been written by: this format, package version, scorer and
    tokenizer, and the versions of the tokenizers' splitting (what postings were made with)."""
    versions = f"{TOKENS_VERSION}/{TERMS_VERSION}/{Bm25fParameters()}"
    return f"select/{FORMAT}/{__version__}/{scorer}/{tokenizer}/{versions}".encode()


class Columns:
    """Saved postings: a sorted vocabulary (one string, offsets, and each word's row) and the
    raw arrays after the head, read a block at a time and checked."""

    def __init__(self, head: dict[str, Any], fd: int, start: int) -> None:
        self.head = head
        self.fd = fd
        self.start = start
        self.text: str = head["vocabulary"]
        self.offsets: np.ndarray[Any, Any] = head["offsets"]  # a few bisections: no list of it
        self.rows: np.ndarray[Any, Any] = head["rows"]
        self.indptr: np.ndarray[Any, Any] = head["indptr"]
        self.crcs: np.ndarray[Any, Any] = head["crcs"]
        self.regions: dict[str, tuple[int, str, tuple[int, ...]]] = head["regions"]

    def row(self, word: str) -> int | None:
        offsets, text = self.offsets, self.text
        low, high = 0, len(offsets) - 1
        while low < high:
            middle = (low + high) // 2
            if text[offsets[middle] : offsets[middle + 1]] < word:
                low = middle + 1
            else:
                high = middle
        if low < len(offsets) - 1 and text[offsets[low] : offsets[low + 1]] == word:
            return int(self.rows[low])
        return None

    def read(self, offset: int, length: int) -> bytes:
        """`length` bytes at `offset` after the head, every block they touch checked."""
        if length <= 0:
            return b""
        first, last = offset // BLOCK, (offset + length - 1) // BLOCK
        data = os.pread(self.fd, (last - first + 1) * BLOCK, self.start + first * BLOCK)
        for block in range(first, last + 1):
            piece = data[(block - first) * BLOCK : (block - first + 1) * BLOCK]
            if block >= len(self.crcs) or zlib.crc32(piece) != int(self.crcs[block]):
                raise ValueError("damaged postings")
        skip = offset - first * BLOCK
        if len(data) < skip + length:
            raise ValueError("short postings")
        return data[skip : skip + length]

    def array(self, name: str) -> np.ndarray[Any, Any]:
        """Region `name` whole (hybrid's skill vectors)."""
        offset, dtype, shape = self.regions[name]
        kind = np.dtype(dtype)
        return np.frombuffer(self.read(offset, int(np.prod(shape)) * kind.itemsize), kind).reshape(shape)

    def entries(self, name: str, start: int, end: int) -> np.ndarray[Any, Any]:
        """Entries `start`..`end` of postings region `name`: of each row when it has two axes
        (bm25f's counts per field, each field's run contiguous)."""
        offset, dtype, shape = self.regions[name]
        size = np.dtype(dtype).itemsize
        rows = [
            np.frombuffer(self.read(offset + (row * shape[-1] + start) * size, (end - start) * size), dtype)
            for row in range(shape[0] if len(shape) == 2 else 1)
        ]
        return rows[0] if len(shape) == 1 else np.stack(rows)

    def posting(self, word: str) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]] | None:
        row = self.row(word)
        if row is None:
            return None
        start, end = int(self.indptr[row]), int(self.indptr[row + 1])
        return self.entries("slots", start, end), self.entries("values", start, end)


def _sorted_vocabulary(vocabulary: list[str]) -> tuple[str, np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    words = sorted(vocabulary)  # strings compared directly: twice as fast as sorting rows by key
    row_of = dict(zip(vocabulary, range(len(vocabulary)), strict=True))
    order = np.fromiter(map(row_of.__getitem__, words), np.int32, len(words))
    text, offsets = _joined(words)
    return text, offsets, order


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


def _postings_head(
    vocabulary: list[str],
    indptr: np.ndarray[Any, Any],
    slots: np.ndarray[Any, Any],
    values: np.ndarray[Any, Any],
) -> tuple[dict[str, Any], dict[str, np.ndarray[Any, Any]]]:
    text, offsets, rows = _sorted_vocabulary(vocabulary)
    head = {"vocabulary": text, "offsets": offsets, "rows": rows, "indptr": np.asarray(indptr, np.int64)}
    return head, {"slots": np.asarray(slots, np.int32), "values": values}


# What a scorer built on bm25f adds to its saved state: (head items, arrays), or None (nothing
# trustworthy), from the index and its documents in slot order (hybrid.saved_state).
Extra = Callable[["SkillIndex", list[Any]], "tuple[dict[str, Any], dict[str, np.ndarray[Any, Any]]] | None"]
# A scorer's answer from its saved state: (columns, query, tokenizer, top_k, min_score) -> matches.
Scoring = Callable[["Columns", str, str, int, float], list[Match]]


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
    head: dict[str, Any] = {
        "key": key,
        "config": config_stamp,
        "listing": {k: listing[k] for k in ("key", "started", "dirs", "probes")},
        "files": files,
        "sizes": np.array([stamps.files[p][0] for p in files], np.int64),
        "mtimes": np.array([stamps.files[p][1] for p in files], np.int64),
        "trusted_before": trusted_before,
        "size": len(docs),
        # One string each, cut by offsets when printed: 48,000 strings a run need not unpickle.
        "names": _joined([doc.name for doc in docs]),
        "paths": _joined([str(doc.path) for doc in docs]),
        "ids": _joined([doc.id for doc in docs]),
    }
    arrays: dict[str, np.ndarray[Any, Any]]
    if scorer == "lexical":
        built = scorer_for(index, scorer)
        assert isinstance(built, LexicalScorer)
        search = built.search(cast("Tokenizer", tokenizer))
        columns = search.columns()
        if columns is None or not same_slots(search.documents(), docs):
            return False
        vocabulary, indptr, slots, weights = columns
        part, arrays = _postings_head(vocabulary, indptr, slots, weights)
        head.update(part, norms=search.norms().copy())
    else:
        lexical = bm25f_for(index)
        found = _bm25f_arrays(lexical, docs)
        if found is None or lexical.p != Bm25fParameters():
            return False
        part, arrays = found
        head.update(part)
        if scorer == "hybrid":
            more = extra(index, docs) if extra is not None else None
            if more is None:
                return False
            head.update(more[0])
            arrays.update(more[1])
    regions, chunks, crcs = _tail(arrays)
    head.update(regions=regions, crcs=crcs)

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
    head, arrays = _postings_head(vocabulary, indptr, slots, np.asarray(counts, np.uint16))
    lengths, totals = search.field_lengths()
    head.update(lengths=np.stack(lengths), totals=totals)
    return head, arrays


def _holds(head: dict[str, Any], key: str, config: str | None) -> bool:
    """Whether what the saved state rests on still holds (see the module doc)."""
    if head.get("key") != key:
        return False
    trusted_before = head["trusted_before"]
    seen = head["config"]
    if (file_stamp(config) if config is not None else None) != seen:
        return False
    listing = head["listing"]
    if not listing_holds(listing, listing["key"]):
        return False
    mtimes: list[int] = head["mtimes"].tolist()
    sizes: list[int] = head["sizes"].tolist()
    stat = os.stat
    try:
        for path, size, mtime in zip(head["files"], sizes, mtimes, strict=True):
            if mtime >= trusted_before:
                return False
            info = stat(path)
            if info.st_mtime_ns != mtime or info.st_size != size:
                return False
    except OSError:
        return False
    return True


def select(
    root: str,
    scorer: str,
    tokenizer: str,
    query: str,
    top_k: int,
    min_score: float,
    cwd: str,
    scoring: Scoring | None = None,
) -> list[Match] | None:
    """The full `select`'s matches, from the saved state; None when it cannot answer (no saved
    state, or anything it rests on changed): then do the full `select`. `scoring`: how the
    scorer answers from its state (hybrid's is hybrid.select_saved; lexical's and bm25f's are here)."""
    scoring = scoring or _SCORING.get(scorer)
    if scoring is None or scorer not in QUICK_SCORERS or not os.path.isdir(root):
        return None
    config_path = find_config(Path(root))
    config = os.fspath(config_path) if config_path is not None else None
    folder = store_dir(cache_dir_for([root], config_path.parent if config_path else None), root)
    try:
        fd = os.open(folder / FILE.format(scorer, tokenizer), os.O_RDONLY | getattr(os, "O_BINARY", 0))
    except OSError:
        return None
    try:
        with os.fdopen(os.dup(fd), "rb") as handle:
            found = read_head(handle, frame_key(scorer, tokenizer))
        if found is None or not isinstance(found[0], dict):
            return None
        head, start = found
        if not _holds(head, run_key(cwd, root, config, scorer, tokenizer), config):
            return None
        columns = Columns(head, fd, start)
        return scoring(columns, query, tokenizer, top_k, min_score)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, OSError):
        return None
    finally:
        os.close(fd)


def run_key(cwd: str, root: str, config: str | None, scorer: str, tokenizer: str) -> str:
    """What must be the same for a saved state to answer: paths are walked from `root` as spelt,
    relative to the working folder; the config decides roots, depth and ignore rules."""
    return repr((cwd, root, config, scorer, tokenizer))


def _joined(texts: list[str]) -> tuple[str, np.ndarray[Any, Any]]:
    offsets = np.zeros(len(texts) + 1, np.int64)
    np.cumsum(np.fromiter(map(len, texts), np.int64, len(texts)), out=offsets[1:])
    return "".join(texts), offsets


def _cut(joined: tuple[str, np.ndarray[Any, Any]], slot: int) -> str:
    text, offsets = joined
    return text[int(offsets[slot]) : int(offsets[slot + 1])]


def matches(head: dict[str, Any], slots: list[int], scores: np.ndarray[Any, Any]) -> list[Match]:
    """The printed form of `slots`: (score, name, path, id)."""
    names, paths, ids = head["names"], head["paths"], head["ids"]
    return [(float(scores[s]), _cut(names, s), _cut(paths, s), _cut(ids, s)) for s in slots]


def _lexical(columns: Columns, query: str, tokenizer: str, top_k: int, min_score: float) -> list[Match]:
    head = columns.head
    norms = head["norms"]
    size = len(norms)
    tokens = tokenize(query, cast("Tokenizer", tokenizer))
    if top_k <= 0 or not size or not tokens:
        return []

    def postings(token: str) -> list[tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]]:
        found = columns.posting(token)
        return [] if found is None else [found]

    everyone = np.ones(size, dtype=bool)
    order, scores = best_slots(
        postings, tokens, size, norms, min_score, everyone, np.arange(size, dtype=np.int64), top_k
    )
    return matches(head, order.tolist(), scores)


class SavedBm25f(Bm25fScores):
    """bm25f's scores over saved postings: `Bm25fScores` with every slot alive."""

    def __init__(self, columns: Columns) -> None:
        head = columns.head
        self.columns = columns
        self.p = Bm25fParameters()
        self._lengths = list(head["lengths"])
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


def _bm25f(columns: Columns, query: str, tokenizer: str, top_k: int, min_score: float) -> list[Match]:
    size = columns.head["size"]
    if top_k <= 0 or not size:
        return []
    scores = SavedBm25f(columns).scores(query)
    slots = best_first(np.ones(size, dtype=bool), scores, min_score, top_k, False)
    return matches(columns.head, slots[:top_k].tolist(), scores)


_SCORING: dict[str, Callable[[Columns, str, str, int, float], list[Match]]] = {
    "lexical": _lexical,
    "bm25f": _bm25f,
}
