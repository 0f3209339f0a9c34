"""The `semantic` scorer: sentence embeddings (and the vector cache `hybrid` shares).

Lexical scorers cannot route a request that shares no word with the right skill ("my numbers
look off after the merge" for a reconciliation skill). `semantic` compares meanings instead: a
request and every skill are embedded as vectors, and the score is their cosine similarity
(clipped to 0..1). `hybrid` (hybrid.py) adds bm25f's exact-word evidence.

The model is the best one installed (embedding.py): all-MiniLM-L6-v2, a retrieval-trained
transformer run with onnxruntime (`semantic` extra), or WordLlama's static vectors as a light
fallback (`semantic-lite`). A skill is embedded as one text: its name, description, tags and the
start of its body, cut at 64 word pieces (embedding.MINILM_MAX_TOKENS). Embedding body sections
separately with a max-over-sections score was measured and did not route better, at seven times
the embedding cost (benchmarks/README.md).

A skill's vector depends only on its own text, so vectors are cached by the SHA-256 of that text:
an editor that replaces one document re-embeds that one, and two indexes of the same skills share
the work. Scores are rounded to 6 decimals so a ranking never depends on the order in which the
skills were added (BLAS may sum in a different order for a different matrix).

Install with `pip install 'skills-lsp[semantic]'`; without any model, choosing `semantic` or
`hybrid` raises `ScorerUnavailable` with that instruction.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import os
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Callable, Collection
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from skills_lsp.core.errors import SEMANTIC_INSTALL_HINT, ScorerUnavailable
from skills_lsp.core.files.cache import make_cache_folder
from skills_lsp.core.routing.embedding import EmbeddingModel, available, load_model, model_name
from skills_lsp.core.routing.ranking import SlottedSearch, matches, ranked_slots
from skills_lsp.core.routing.scorer import SelectionPolicy, SkillMatch, Tokenizer, scorer_for

if TYPE_CHECKING:  # not imported to run: a warm `select` (routing/quick.py) reads no documents
    from skills_lsp.core.index.skill_index import SkillDocument, SkillIndex

# The part of a body that describes a skill best is its start (the model reads 64 word pieces in
# all, so this is only an upper bound on what is tokenized).
BODY_CHARS = 2000
INSTALL_HINT = SEMANTIC_INSTALL_HINT
# How far a float32 similarity of two unit vectors of d dimensions can be from the float64 one:
# at most d x 2^-24 (about 2.3e-5 for 384) for the sum, with a margin for safety.
APPROXIMATION = 1e-4
DECIMALS = 6
_QUERY_CACHE = 1024  # request vectors kept per search
_SCORE_CACHE = 128  # requests whose scores are kept (80 KiB each at 20,000 skills)
_CACHE_LIMIT = 100_000  # vectors (1.5 KiB each): far more than any workspace, bounded all the same

Vector = np.ndarray[Any, np.dtype[np.float32]]


def skill_text(doc: SkillDocument) -> str:
    """What a skill's vector is made of: name, description, tags and the start of the body."""
    name = doc.name.replace("-", " ").replace("_", " ")
    tags = f" ({', '.join(doc.tags)})" if doc.tags else ""
    return f"{name}. {doc.description}{tags}\n{doc.body[:BODY_CHARS]}"


class VectorCache:
    """Skill vectors by the SHA-256 of the embedded text and the model; bounded (least recently
    used first out); safe to share between threads (the server indexes in a worker thread).

    In memory by default. `attach(file)` also reads vectors saved by an earlier run and makes
    `flush()` write the cache back (atomically, only when the file would change), so a CLI run
    or a server restart over 20,000 skills does not embed them all again (minutes with minilm)."""

    def __init__(self, limit: int = _CACHE_LIMIT) -> None:
        self.limit = limit
        self._vectors: OrderedDict[str, Vector] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0
        self.file: Path | None = None
        self._on_disk: set[str] = set()  # the keys the attached file holds

    @staticmethod
    def key(model: EmbeddingModel, text: str) -> str:
        return hashlib.sha256(f"{model.name}\0{text}".encode()).hexdigest()

    def vectors(self, model: EmbeddingModel, texts: list[str]) -> list[Vector]:
        keys = [self.key(model, t) for t in texts]
        with self._lock:
            found = [self._vectors.get(k) for k in keys]
            for key, vector in zip(keys, found, strict=True):
                if vector is not None:
                    self._vectors.move_to_end(key)  # least recently used goes first
            missing = [i for i, v in enumerate(found) if v is None]
            self.hits += len(texts) - len(missing)
            self.misses += len(missing)
        if missing:  # embedded outside the lock: two threads may embed one text twice, harmlessly
            fresh = model.embed([texts[i] for i in missing])
            with self._lock:
                for row, i in enumerate(missing):
                    found[i] = self._vectors[keys[i]] = fresh[row]
                while len(self._vectors) > self.limit:
                    self._vectors.popitem(last=False)
        return [v for v in found if v is not None]

    def attach(self, file: Path) -> None:
        """Read the vectors saved in `file` (a missing, unreadable or foreign file counts as
        empty, and is overwritten on flush) and save there from now on. Attaching the same file
        again reads it again: another process may have added to it."""
        loaded = _read_vectors(file)
        with self._lock:
            self.file = file
            for key, row in loaded:
                self._vectors.setdefault(key, row)
            self._on_disk = {key for key, _ in loaded}
            while len(self._vectors) > self.limit:
                self._vectors.popitem(last=False)

    def flush(self, keep: Collection[str] | None = None) -> None:
        """Write the vectors (only those of `keep`, when given: one workspace's skills) to the
        attached file, unless it holds exactly those already. Never raises: a read-only or
        broken cache folder costs the next run its embedding time, nothing else."""
        file = self.file
        if file is None:
            return
        with self._lock:
            wanted = [key for key, vector in self._vectors.items() if keep is None or key in keep]
            # One file holds one model's vectors: a process that used two keeps the newer one's.
            width = self._vectors[wanted[-1]].shape[0] if wanted else 0
            wanted = [key for key in wanted if self._vectors[key].shape == (width,)]
            if set(wanted) == self._on_disk:
                return
            keys = np.array([k.encode("ascii") for k in wanted], dtype="S64")
            rows = np.array([self._vectors[k] for k in wanted], dtype=np.float32).reshape(-1, width)
        tmp: str | None = None
        try:
            make_cache_folder(file.parent)
            fd, tmp = tempfile.mkstemp(dir=file.parent, prefix=".vectors-", suffix=".npz")
            with os.fdopen(fd, "wb") as handle:
                np.savez(handle, keys=keys, vectors=rows)
            os.replace(tmp, file)
            tmp = None
            with self._lock:
                self._on_disk = set(wanted)
        except Exception:
            pass
        finally:
            if tmp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)


def _read_vectors(file: Path) -> list[tuple[str, Vector]]:
    """(key, vector) pairs saved in `file`; [] for anything that is not what flush() writes."""
    try:
        with np.load(file, allow_pickle=False) as saved:
            keys, rows = saved["keys"], saved["vectors"]
        if (
            keys.dtype != np.dtype("S64")
            or keys.ndim != 1
            or rows.dtype != np.float32
            or rows.ndim != 2
            or rows.shape[0] != len(keys)
            or not 0 < rows.shape[1] <= 4096
        ):
            return []
        return [(key.decode("ascii"), row) for key, row in zip(keys.tolist(), rows, strict=True)]
    except Exception:
        return []


def workspace_keys(index: SkillIndex) -> set[str]:
    """The cache keys of an index's skills: what `flush(keep=...)` saves for that workspace."""
    model = load_model()
    return {VectorCache.key(model, skill_text(doc)) for doc in index}


VECTORS = VectorCache()
VECTOR_FILE = "vectors.npz"  # in the workspace's .skills-lsp-cache/, beside check.json


def keep_vectors_in(cache_dir: Path) -> None:
    """Reuse the skill vectors saved in a workspace's cache folder, and save new ones there
    (VECTORS.flush)."""
    VECTORS.attach(cache_dir / VECTOR_FILE)


class SemanticSearch(SlottedSearch):
    """Cosine similarity between a request and every skill of an index, following its changes."""

    def __init__(self, index: SkillIndex, model: EmbeddingModel | None = None) -> None:
        self.model = model or load_model()
        # Requests embedded lately: an editor re-runs the same test queries after every edit, and
        # a transformer takes milliseconds per request.
        self._queries: OrderedDict[str, Vector] = OrderedDict()
        self._queries_lock = threading.Lock()
        # And their similarity to every slot so far: after an edit only the new slot's is
        # computed (a slot never changes; an edit adds one), not all 20,000 again.
        self._scores: OrderedDict[str, np.ndarray[Any, np.dtype[np.float32]]] = OrderedDict()
        super().__init__(index)

    def _reset(self) -> None:
        # One float32 row per slot, with spare capacity so an editor's upsert appends in place.
        self._matrix = np.zeros((0, self.model.dimensions), np.float32)
        with self._queries_lock:
            self._scores.clear()  # a rebuild renumbers the slots

    def _add_all(self, docs: list[SkillDocument]) -> None:
        # One batch: the tokenizer runs on both cores; vectors already cached cost nothing (a
        # compaction re-adds every document, and finds them all in the cache).
        vectors = VECTORS.vectors(self.model, [skill_text(d) for d in docs])
        needed = len(self._slots) + len(docs)
        if needed > len(self._matrix):
            # A quarter more each time: amortised appends without doubling 20,000 x 1 KiB rows.
            # The first build leaves room for an editor's upserts (rows never written stay
            # unmapped zeros): growing copies the whole matrix, 30 MiB more at 20,000 skills.
            spare = needed // 64 + 64 if not len(self._matrix) else 0
            size = max(needed + spare, len(self._matrix) + len(self._matrix) // 4 + 64)
            grown = np.zeros((size, self.model.dimensions), np.float32)
            grown[: len(self._slots)] = self._matrix[: len(self._slots)]
            self._matrix = grown
        for doc, vector in zip(docs, vectors, strict=True):
            self._matrix[self._claim(doc)] = vector

    def _vectors(self) -> np.ndarray[Any, np.dtype[np.float32]]:
        return self._matrix[: len(self._slots)]

    def matrix(self) -> np.ndarray[Any, np.dtype[np.float32]]:
        """Each slot's vector, one row per slot (a view: not to be changed)."""
        return self._vectors()

    def query_vector(self, query: str) -> np.ndarray[Any, np.dtype[np.float32]]:
        with self._queries_lock:
            vector = self._queries.get(query)
            if vector is not None:
                self._queries.move_to_end(query)
                return vector
        vector = np.asarray(self.model.embed([query])[0], dtype=np.float32)
        with self._queries_lock:
            self._queries[query] = vector
            while len(self._queries) > _QUERY_CACHE:
                self._queries.popitem(last=False)
        return vector

    def forget_queries(self) -> None:
        """Drop the cached request vectors and scores (benchmarks time requests never seen)."""
        with self._queries_lock:
            self._queries.clear()
            self._scores.clear()

    def approximate(self, vector: np.ndarray[Any, np.dtype[np.float32]]) -> np.ndarray[Any, Any]:
        """Every slot's similarity in float32: fast, within APPROXIMATION of the exact value, but
        its last bits may depend on the matrix's size (BLAS), so it only picks candidates."""
        return self._vectors() @ vector

    def approximate_for(
        self, query: str, vector: np.ndarray[Any, np.dtype[np.float32]]
    ) -> np.ndarray[Any, Any]:
        """approximate(vector) for `query`, computed only for the slots added since it was last
        asked (an editor re-runs its test queries after every keystroke)."""
        slots = len(self._slots)
        with self._queries_lock:
            known = self._scores.get(query)
        if known is None or len(known) > slots:
            known = np.zeros(0, np.float32)
        if len(known) < slots:
            known = np.concatenate([known, self._vectors()[len(known) : slots] @ vector])
        with self._queries_lock:
            self._scores[query] = known
            self._scores.move_to_end(query)
            while len(self._scores) > _SCORE_CACHE:
                self._scores.popitem(last=False)
        return known

    def exact(
        self, vector: np.ndarray[Any, np.dtype[np.float32]], slots: np.ndarray[Any, Any] | None = None
    ) -> np.ndarray[Any, np.dtype[np.float64]]:
        """The similarity of `slots` (all when None) in float64, clipped to 0..1 and rounded to 6
        decimals: what scores are made of, the same whatever order the skills were added in."""
        return exact_similarity(self._vectors() if slots is None else self._vectors()[slots], vector)

    def scores(self, query: str) -> np.ndarray[Any, np.dtype[np.float64]]:
        """Every slot's cosine similarity to `query`, clipped to 0..1 and rounded."""
        if not len(self._slots):
            return np.zeros(0)
        return self.exact(self.query_vector(query))

    def explain(self, query: str, document: SkillDocument) -> str:
        return "cosine similarity of the request's meaning and the skill's (name, description, body start)"

    def details(self, query: str, document: SkillDocument, tokenizer: Tokenizer = "ascii") -> dict[str, Any]:
        return {"embedded": "name, description, tags, body start"}  # meaning, not vocabulary

    def select(self, query: str, policy: SelectionPolicy) -> list[SkillMatch]:
        if not len(self._slots):
            return []
        vector = self.query_vector(query)
        chosen, _ = select_exact(
            self._slots,
            self.alive(),
            self.approximate_for(query, vector).astype(np.float64),
            APPROXIMATION,
            lambda slots: self.exact(vector, slots),
            policy,
        )
        return matches(self._slots, chosen)


def exact_similarity(
    rows: np.ndarray[Any, np.dtype[np.float32]], vector: np.ndarray[Any, np.dtype[np.float32]]
) -> np.ndarray[Any, np.dtype[np.float64]]:
    """`SemanticSearch.exact` of these rows (also hybrid's over a saved state, quick.py)."""
    similarity: np.ndarray[Any, np.dtype[np.float64]] = np.round(
        np.clip(rows.astype(np.float64) @ vector.astype(np.float64), 0.0, 1.0), DECIMALS
    )
    return similarity


def select_exact(
    slots: list[SkillDocument | None],
    alive: np.ndarray[Any, np.dtype[np.bool_]],
    approximate: np.ndarray[Any, np.dtype[np.float64]],
    error: float,
    exact: Callable[[np.ndarray[Any, Any]], np.ndarray[Any, np.dtype[np.float64]]],
    policy: SelectionPolicy,
) -> tuple[list[tuple[float, int]], float]:
    """`ranked` over exact scores, computed only where they can matter: slots whose approximate
    score (off by at most `error`) could reach min_score and, without a tag filter, the top_k.
    The selection is exactly the one all exact scores would give: (score, slot) pairs, with a
    floor: every live slot not scored exactly scores less than that."""
    if policy.top_k <= 0:
        return [], math.inf
    scores, floor = exact_where_needed(alive, approximate, error, exact, policy)
    return ranked_slots(slots, alive, scores, policy), floor


def exact_where_needed(
    alive: np.ndarray[Any, np.dtype[np.bool_]],
    approximate: np.ndarray[Any, np.dtype[np.float64]],
    error: float,
    exact: Callable[[np.ndarray[Any, Any]], np.ndarray[Any, np.dtype[np.float64]]],
    policy: SelectionPolicy,
) -> tuple[np.ndarray[Any, np.dtype[np.float64]], float]:
    """Scores for `select_exact`: exact where a slot can be selected, 0 elsewhere; and a floor:
    every live slot not scored exactly scores less than that."""
    floor = max(policy.min_score, 0.0)
    candidates = np.flatnonzero(alive & (approximate >= floor - error))
    if not policy.include_tags and not policy.exclude_tags and len(candidates) > policy.top_k:
        kth = float(np.partition(approximate[candidates], -policy.top_k)[-policy.top_k])
        # Each of the true top_k scores at least kth - error exactly, so approximately kth - 2 error.
        candidates = candidates[approximate[candidates] >= kth - 2 * error]
        floor = max(floor, kth - error)
    scores = np.zeros(len(alive))
    if len(candidates):
        scores[candidates] = exact(candidates)
    return scores, floor


__all__ = ["ScorerUnavailable", "available", "load_model", "model_name"]  # re-exported for callers


def semantic_for(index: SkillIndex) -> SemanticSearch:
    """The index's semantic search, typed as such (built on first use)."""
    search = scorer_for(index, "semantic")
    assert isinstance(search, SemanticSearch)
    return search
