"""A warm `select` that loads no index and imports no numpy: one scorer's state over one
workspace, saved by a full `select` (quick.save) with everything that state rests on, and
answered from while all of it still holds.

A full `select` loads the workspace index through the store (store.py: every document, a
`SkillIndex`, the scorer's saved postings and a dictionary of its vocabulary) to score one
query. What the answer depends on is much less: which files there are and that none changed
(the store's own proof: the saved listing and each file's stamp), the postings of the query's
words, a few numbers per skill, and the name, path and id of the skills printed. So the saved
state keeps exactly that, in one file per scorer and tokenizer in the index's store folder:

- a head (a frame, `files.frames`: checked by its SHA-256, of this format and package version)
  with the proof (every listed directory and file, with its stamp), the run's key (working
  folder, root as spelt, config file), the config file's stamp and a few small numbers (lexical's
  norms, bm25f's field totals); arrays are raw bytes read through `memoryview`: no numpy;
- then regions read only where a request needs them, each block of `BLOCK` bytes checked
  against its CRC-32 in the head before it is used: the vocabulary, sorted (one UTF-8 text and
  its offsets: a query word is found by bisection, no dictionary is built), each word's
  postings, each skill's name, path and id (the same), bm25f's field lengths and length norms,
  hybrid's skill vectors.

The proof is checked as the store checks it, by a stat of every path (45,000 for 15,000
skills: most of a warm run), half of them in a child process where another core can take them
(`stats`), while this one makes the answer.

Anything that does not hold (a changed, added or removed file or directory, an ignore file, the
config, a stamp too recent to trust, another version, a damaged or cut file) makes `select`
return None: the caller does the full `select`, which saves a fresh state. The answers are the
full path's bit for bit. lexical and bm25f are scored here in plain Python over those arrays
(a process that imports numpy spends 0.1-0.2 s on it, as much as the rest of a warm run): the
same operations in the same order, each rounded as numpy rounds it (float32 where numpy computes
in float32; bm25f's length norms are saved as numpy computed them). hybrid's scoring needs its
model, so numpy, and is hybrid.select_saved. Slots are in the index's (name, path) order, which
is how every scorer breaks ties.

Only plain requests take this path: no tag filter, no `--explain`, no `--crate`, a scorer named.
"""

from __future__ import annotations

import heapq
import os
import sys
import zlib
from array import array
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from skills_lsp._version import __version__
from skills_lsp.core import forked
from skills_lsp.core.files.cache import cache_dir_for, find_config, store_dir
from skills_lsp.core.files.frames import RACY_NS, file_stamp, probes_hold, read_head, stamps_hold
from skills_lsp.core.routing.terms import TERMS_VERSION, Bm25fParameters, idf, terms
from skills_lsp.core.routing.tokens import TOKENS_VERSION, f32, tokenize

FORMAT = 5  # 3: no numpy object in the head; 4: only the proof in it; 5: its paths as one list
FILE = f"select{FORMAT}-{{}}-{{}}.bin"  # scorer, tokenizer; in the index's store folder
BLOCK = 1 << 16  # bytes of postings per CRC-32
QUICK_SCORERS = ("lexical", "bm25f", "hybrid")
PARALLEL_STATS = 8192  # fewer paths to stat are not worth a second process
# The share of the stats a child process takes (see `stats`): hybrid's answer takes longer.
CHILD_SHARE = {"lexical": 0.5, "bm25f": 0.5, "hybrid": 1.0}
# numpy's dtype (its `str` less the byte order) -> memoryview's format of the same item.
FORMATS = {"u1": "B", "i4": "i", "i8": "q", "u2": "H", "u4": "I", "f4": "f", "f8": "d"}

# A selected skill as printed: (score, name, path, id).
Match = tuple[float, str, str, str]


def frame_key(scorer: str, tokenizer: str) -> bytes:
    """What a saved state must have been written by: this format, package version, scorer and
    tokenizer, the versions of the tokenizers' splitting (what postings were made with), and
    the machine's byte order (arrays are read as they were written)."""
    versions = f"{TOKENS_VERSION}/{TERMS_VERSION}/{Bm25fParameters()}/{sys.byteorder}"
    return f"select/{FORMAT}/{__version__}/{scorer}/{tokenizer}/{versions}".encode()


def view(data: bytes, dtype: str) -> Any:
    """Saved bytes as the items of numpy dtype `dtype` (`<f4`, ...) they were written from: a
    memoryview of ints or floats."""
    items: Any = memoryview(data)
    return items.cast(FORMATS[dtype[1:]])


class Columns:
    """A saved state open for reading: its head, and the raw arrays after it, read a block at a
    time and checked: the sorted vocabulary (one UTF-8 text and its offsets) and each word's
    postings, the skills' names, paths and ids (the same), bm25f's length norms, hybrid's
    vectors. Only the proof that nothing changed is in the head, which is read whole."""

    def __init__(self, head: dict[str, Any], fd: int, start: int) -> None:
        self.head = head
        self.fd = fd
        self.start = start
        self.crcs = view(head["crcs"], "<u4")
        self.regions: dict[str, tuple[int, str, tuple[int, ...]]] = head["regions"]
        self._blocks: dict[int, bytes] = {}  # checked blocks (a bisection reads a few again and again)

    def row(self, word: str) -> int | None:
        """`word`'s row of the postings: by bisection of the sorted vocabulary (UTF-8 sorts as
        the code points it spells)."""
        key = word.encode("utf-8", "surrogatepass")
        count = self.regions["vocabulary_offsets"][2][0] - 1
        low, high = 0, count
        while low < high:
            middle = (low + high) // 2
            if self.piece("vocabulary", middle) < key:
                low = middle + 1
            else:
                high = middle
        if low < count and self.piece("vocabulary", low) == key:
            row: int = self.items("rows", low, low + 1)[0]
            return row
        return None

    def span(self, word: str) -> tuple[int, int] | None:
        """Where `word`'s postings are among the entries of each postings region."""
        row = self.row(word)
        if row is None:
            return None
        start, end = self.items("indptr", row, row + 2)
        return start, end

    def piece(self, name: str, index: int) -> bytes:
        """The `index`th piece of text region `name` (cut by region `name`_offsets)."""
        start, end = self.items(name + "_offsets", index, index + 2)
        return self.read(self.regions[name][0] + start, end - start)

    def text(self, name: str, index: int) -> str:
        return self.piece(name, index).decode("utf-8", "surrogatepass")

    def _block(self, block: int) -> bytes:
        data = self._blocks.get(block)
        if data is None:
            data = os.pread(self.fd, BLOCK, self.start + block * BLOCK)
            if block >= len(self.crcs) or zlib.crc32(data) != self.crcs[block]:
                raise ValueError("damaged saved state")
            self._blocks[block] = data
        return data

    def read(self, offset: int, length: int) -> bytes:
        """`length` bytes at `offset` after the head, every block they touch checked."""
        if length <= 0:
            return b""
        first, last = offset // BLOCK, (offset + length - 1) // BLOCK
        if last - first < 2:  # a small read: through the blocks kept
            data = b"".join(map(self._block, range(first, last + 1)))
        else:
            data = os.pread(self.fd, (last - first + 1) * BLOCK, self.start + first * BLOCK)
            for block in range(first, last + 1):
                piece = data[(block - first) * BLOCK : (block - first + 1) * BLOCK]
                if block >= len(self.crcs) or zlib.crc32(piece) != self.crcs[block]:
                    raise ValueError("damaged saved state")
        skip = offset - first * BLOCK
        if len(data) < skip + length:
            raise ValueError("short saved state")
        return data[skip : skip + length]

    def items(self, name: str, start: int, end: int) -> Any:
        """Items `start`..`end` of region `name`, flat (a memoryview of ints or floats)."""
        offset, dtype, _ = self.regions[name]
        size = int(dtype[2:])
        return view(self.read(offset + start * size, (end - start) * size), dtype)

    def views(self, name: str, start: int, end: int) -> list[Any]:
        """Entries `start`..`end` of region `name`, one view per row (bm25f's counts have a row
        per field, each field's run contiguous; the others one row)."""
        offset, dtype, shape = self.regions[name]
        size = int(dtype[2:])
        return [
            view(self.read(offset + (row * shape[-1] + start) * size, (end - start) * size), dtype)
            for row in range(shape[0] if len(shape) == 2 else 1)
        ]


# A scorer's answer from its saved state: (columns, query, tokenizer, top_k, min_score) -> matches.
Scoring = Callable[[Columns, str, str, int, float], list[Match]]


def holds(head: dict[str, Any], key: str, config: str | None) -> bool:
    """Whether what the saved state rests on still holds (see the module doc)."""
    finish = checking(head, key, config, 0.5)
    return finish is not None and finish()


def checking(
    head: dict[str, Any], key: str, config: str | None, child_share: float
) -> Callable[[], bool] | None:
    """Start checking what the saved state rests on: the store's own proof (as
    frames.listing_holds: every listed directory's mtime, the ignore files and `.git` markers;
    then each file's size and mtime), none of it too recent to trust. None when it does not hold
    already; else what finishes the check and says whether it holds (see `stats`)."""
    if head.get("key") != key:
        return None
    if (file_stamp(config) if config is not None else None) != head["config"]:
        return None
    listing = head["listing"]
    listed_before = listing["started"] - RACY_NS
    paths: list[str] = head["paths"]  # the listed directories, then the files
    dirs: int = head["dirs"]
    mtimes: list[int] = view(head["mtimes"], "<i8").tolist()
    sizes: list[int] = view(head["sizes"], "<i8").tolist()  # -1: a directory, no size
    if not len(paths) == len(mtimes) == len(sizes) or sizes[:dirs].count(-1) != dirs:
        return None
    if (
        max(mtimes[:dirs], default=0) >= listed_before
        or max(mtimes[dirs:], default=0) >= head["trusted_before"]
    ):
        return None  # a stamp too recent to trust
    if not probes_hold(listing["probes"], listed_before):
        return None
    return stats(paths, mtimes, sizes, child_share)


def stats(
    paths: Sequence[str], mtimes: Sequence[int], sizes: Sequence[int], child_share: float
) -> Callable[[], bool]:
    """`stamps_hold` begun: the last `child_share` of the paths in a child process where that
    can run on another core (forked.py), while this one goes on (with the scoring); the function
    returned stats the rest here, waits for the child and says whether all hold. At 45,000 paths
    the stats are most of a warm `select` (lexical, bm25f), and two threads hand the GIL to and
    fro at every stat (no faster). A child that fails, or cannot be had, leaves its share to this
    process; once this process's share fails, the child is stopped (the answer is no)."""
    cut = len(paths) - int(len(paths) * child_share)
    if len(paths) < PARALLEL_STATS or cut == len(paths) or not _may_fork():
        return lambda: stamps_hold(paths, mtimes, sizes)
    theirs = forked.start(partial(stamps_hold, paths[cut:], mtimes[cut:], sizes[cut:]))

    def finish() -> bool:
        try:
            mine = stamps_hold(paths[:cut], mtimes[:cut], sizes[:cut])
        except BaseException:
            theirs(False)
            raise
        if not mine:
            theirs(False)
            return False
        answer = theirs(True)
        return answer if answer is not None else stamps_hold(paths[cut:], mtimes[cut:], sizes[cut:])

    return finish


def _may_fork() -> bool:
    """Whether a child process may share the stats: where forking is safe (forked.may_fork),
    with another core to run on."""
    return forked.may_fork() and forked.cpus() >= 2


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
    scorer answers from its state (hybrid's is hybrid.select_saved; lexical's and bm25f's are here).

    The answer is made while the stats run (`stats`): for lexical and bm25f a child process
    takes half of them; `hybrid` imports numpy and onnxruntime and loads its model, longer than
    all the stats, so the child takes them all. The answer is returned only if they hold."""
    scoring = scoring or SCORING.get(scorer)
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
        key = run_key(cwd, root, config, scorer, tokenizer)
        finish = checking(head, key, config, CHILD_SHARE.get(scorer, 0.5))
        if finish is None:
            return None
        try:
            answer = scoring(Columns(head, fd, start), query, tokenizer, top_k, min_score)
        finally:
            held = finish()
        return answer if held else None
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, OSError):
        return None
    finally:
        os.close(fd)


def run_key(cwd: str, root: str, config: str | None, scorer: str, tokenizer: str) -> str:
    """What must be the same for a saved state to answer: paths are walked from `root` as spelt,
    relative to the working folder; the config decides roots, depth and ignore rules."""
    return repr((cwd, root, config, scorer, tokenizer))


def matches(columns: Columns, slots: Sequence[int], scores: Any) -> list[Match]:
    """The printed form of `slots`: (score, name, path, id); `scores` by slot (an array, a list or
    a mapping)."""
    text = columns.text
    return [(float(scores[s]), text("names", s), text("paths", s), text("ids", s)) for s in slots]


def _best(scores: Mapping[int, float], top_k: int) -> list[int]:
    """The `top_k` slots of `scores` by score, ties in slot order (numpy's stable sorts)."""
    return heapq.nsmallest(top_k, scores, key=lambda slot: (-scores[slot], slot))


def _lexical(columns: Columns, query: str, tokenizer: str, top_k: int, min_score: float) -> list[Match]:
    """lexical.best_slots over the saved postings with every slot allowed: weights summed in
    float64 in the tokens' order, rounded to float32, divided in float32 by the norm."""
    head = columns.head
    norms = view(head["norms"], "<f4")
    size = len(norms)
    tokens = tokenize(query, tokenizer)  # type: ignore[arg-type]  # "ascii" or "unicode" (argparse)
    if top_k <= 0 or not size or not tokens:
        return []
    raw: dict[int, float] = {}
    for token, count in Counter(tokens).items():
        span = columns.span(token)
        if span is None:
            continue
        (slots,) = columns.views("slots", *span)
        (weights,) = columns.views("values", *span)
        get = raw.get
        if count > 1:
            for slot, weight in zip(slots, weights, strict=True):
                raw[slot] = get(slot, 0.0) + weight * count
        else:
            for slot, weight in zip(slots, weights, strict=True):
                raw[slot] = get(slot, 0.0) + weight
    hit = list(raw)
    # float32 division as numpy's: both operands float32, the quotient rounded to float32 (a
    # quotient of singles rounded from double is the correctly rounded single).
    sums = array("f", raw.values())
    quotients = array("f", [total / norms[slot] for total, slot in zip(sums, hit, strict=True)])
    floor = f32(min_score)
    scores = {slot: score for slot, score in zip(hit, quotients, strict=True) if score >= floor}
    chosen = _best(scores, top_k)
    if len(chosen) < top_k and floor <= 0.0:  # every other skill scores 0 and is selected too
        zeros = (slot for slot in range(size) if slot not in raw)
        for slot in zeros:
            if len(chosen) == top_k:
                break
            chosen.append(slot)
            scores[slot] = 0.0
    return matches(columns, chosen, scores)


def bm25f_scores(columns: Columns, query: str) -> dict[int, float]:
    """Bm25fScores.scores(query) over the saved postings with every slot alive, for the slots a
    word of `query` is in (every other one scores 0): the same float64 operations in the same
    order, over the length norms saved as numpy computed them."""
    head = columns.head
    live: int = head["size"]
    words = Counter(terms(query))
    if not words or not live:
        return {}
    p = Bm25fParameters()
    weights = (p.name_weight, p.description_weight, p.tags_weight, p.body_weight)
    w0, w1, w2, w3 = weights
    norms = columns.items("field_norms", 0, 4 * live)
    n0, n1, n2, n3 = (norms[f * live : (f + 1) * live] for f in range(4))
    k1 = p.k1
    total: dict[int, float] = {}
    get = total.get
    for word, repeat in words.items():
        span = columns.span(word)
        if span is None or span[0] == span[1]:
            continue
        (slots,) = columns.views("slots", *span)
        word_idf = idf(len(slots), live)
        for slot, c0, c1, c2, c3 in zip(slots, *columns.views("values", *span), strict=True):
            # Field by field from 0.0, as numpy adds them (a field with no count adds 0.0,
            # which changes nothing).
            value = 0.0
            if c0:
                value += w0 * c0 / n0[slot]
            if c1:
                value += w1 * c1 / n1[slot]
            if c2:
                value += w2 * c2 / n2[slot]
            if c3:
                value += w3 * c3 / n3[slot]
            total[slot] = get(slot, 0.0) + repeat * (word_idf * value / (k1 + value))
    single = idf(1, live)
    scores: dict[int, float] = {}
    for slot, value in total.items():
        evidence = value / single
        scores[slot] = round(evidence / (evidence + 1.0) * 1e6) / 1e6  # np.round(x, 6): rint(x * 1e6) / 1e6
    return scores


def _bm25f(columns: Columns, query: str, tokenizer: str, top_k: int, min_score: float) -> list[Match]:
    """ranking.best_first over bm25f_scores: above 0 and at least `min_score`, best first."""
    if top_k <= 0 or not columns.head["size"]:
        return []
    found = bm25f_scores(columns, query)
    scores = {slot: score for slot, score in found.items() if score > 0.0 and score >= min_score}
    return matches(columns, _best(scores, top_k), scores)


SCORING: dict[str, Scoring] = {"lexical": _lexical, "bm25f": _bm25f}
