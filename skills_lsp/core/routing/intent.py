"""Does a request ask for work a skill does, or for a quick answer? The probe behind hybrid's "none".

Real runtimes route with an LLM, which loads no skill for "what does net 30 mean?" although an
invoice skill shares its words, and loads one for "bill Acme net 30 for the March hours". Word and
meaning scores can hardly tell the two apart: both are about invoices. The kind of request tells
them apart, and a sentence embedding carries that too. A logistic probe on the request's vector,
fitted on two generic banks of requests (data/requests/: tasks a skill would do, and what an
assistant answers in a sentence), separates the banks with a cross-validated AUROC of 0.98, and the
answerable from the `expect: none` requests of benchmarks/routing's tuning split with 0.95, where
hybrid's own top score reaches 0.82-0.87 (benchmarks/README.md).

The banks hold nothing about any workspace's skills, so the probe learns what kind of text a
request is, not which topics a workspace covers. `hybrid` turns a low probability into a penalty
the same for every skill (quick_answer_penalty), so it never changes the ranking, only whether
the best skill clears min_score.
"""

from __future__ import annotations

import hashlib
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from skills_lsp.core.routing.embedding import EmbeddingModel

_DATA = Path(__file__).resolve().parent / "data" / "requests"
TASKS = _DATA / "task.txt"
QUICK_ANSWERS = _DATA / "quick.txt"
# Ridge strength of the fit: 0.3-3 all give a cross-validated AUROC of 0.98 on the banks and 0.95 on
# the tuning split; 1 keeps the weights small (the probe is applied to requests unlike both banks).
RIDGE = 1.0
# The penalty, fitted on the tuning split only (benchmarks/tune_intent.py): a request whose
# probability of being a task is under TASK_FLOOR loses PENALTY_SLOPE x the shortfall.
TASK_FLOOR = 0.78
PENALTY_SLOPE = 0.75
KEYWORD_SEARCH_WORDS = 2
_WORD = re.compile(r"\w+")

Vector = np.ndarray[Any, np.dtype[np.float32]]


@dataclass(frozen=True)
class IntentProbe:
    """A logistic probe on one embedding model's request vectors: P(the request asks for a task)."""

    model: str
    weights: np.ndarray[Any, np.dtype[np.float64]]
    bias: float
    banks: str  # the SHA-256 of the banks it was fitted on

    def task_probability(self, vector: Vector) -> float:
        logit = float(vector.astype(np.float64) @ self.weights) + self.bias
        return float(1.0 / (1.0 + np.exp(-logit)))

    def save(self, file: Path) -> None:
        """Written through a temporary file and a rename, so a reader never sees half a file."""
        part = file.with_name(file.name + ".part")
        with part.open("wb") as out:
            np.savez(out, weights=self.weights, bias=self.bias, model=self.model, banks=self.banks)
        part.replace(file)


def keyword_search(query: str) -> bool:
    """A request of one or two words ("pdf", "code search") is a keyword search, not a sentence:
    the banks hold sentences, so the probe says nothing about it (it reads most single words as
    quick questions), and someone searching skills by keyword should get plain scores."""
    return len(_WORD.findall(query)) <= KEYWORD_SEARCH_WORDS


def quick_answer_penalty(task_probability: float) -> float:
    """What a request that reads like a quick question loses from every skill's score."""
    return PENALTY_SLOPE * max(0.0, TASK_FLOOR - task_probability)


def bank_texts() -> tuple[list[str], list[str]]:
    """The task requests and the quick-answer requests the probe learns from."""

    def lines(file: Path) -> list[str]:
        return [line.strip() for line in file.read_text(encoding="utf-8").splitlines() if line.strip()]

    return lines(TASKS), lines(QUICK_ANSWERS)


def banks_digest() -> str:
    digest = hashlib.sha256()
    for file in (TASKS, QUICK_ANSWERS):
        digest.update(file.read_bytes())
    return digest.hexdigest()


def _logistic(x: np.ndarray[Any, Any], y: np.ndarray[Any, Any], ridge: float) -> np.ndarray[Any, Any]:
    """Ridge logistic regression by Newton's method (the bias is not shrunk)."""
    x = np.hstack([x, np.ones((len(x), 1))])
    shrink = ridge * np.diag(np.r_[np.ones(x.shape[1] - 1), 0.0])
    beta = np.zeros(x.shape[1])
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-(x @ beta)))
        gradient = x.T @ (y - p) - shrink @ beta
        hessian = (x * (p * (1 - p))[:, None]).T @ x + shrink + 1e-9 * np.eye(x.shape[1])
        step = np.linalg.solve(hessian, gradient)
        beta += step
        if np.abs(step).max() < 1e-10:
            break
    return beta


def fit_probe(model: EmbeddingModel) -> IntentProbe:
    """The probe for `model`, fitted on the banks (640 short texts to embed: seconds for minilm,
    so the fit ships as a file instead; tests/core/routing/test_intent.py keeps the two in step)."""
    tasks, quick = bank_texts()
    vectors = model.embed(tasks + quick).astype(np.float64)
    labels = np.r_[np.ones(len(tasks)), np.zeros(len(quick))]
    beta = _logistic(vectors, labels, RIDGE)
    return IntentProbe(model.name, beta[:-1], float(beta[-1]), banks_digest())


def shipped_file(model_name: str) -> Path:
    """Where the probe fitted for `model_name` ships ("all-MiniLM-L6-v2 int8 64" ->
    intent-all-minilm-l6-v2-int8-64.npz: the cut is part of the name, as in the vector cache)."""
    return _DATA / f"intent-{re.sub(r'[^a-z0-9]+', '-', model_name.lower()).strip('-')}.npz"


def _shipped(model_name: str) -> IntentProbe | None:
    """The fitted probe that ships for `model_name`, if it was fitted on today's banks."""
    file = shipped_file(model_name)
    if not file.is_file():
        return None
    with np.load(file) as saved:
        probe = IntentProbe(str(saved["model"]), saved["weights"], float(saved["bias"]), str(saved["banks"]))
    return probe if probe.model == model_name and probe.banks == banks_digest() else None


_LOCK = threading.Lock()
_PROBES: dict[str, IntentProbe | None] = {}


def probe_for(model: EmbeddingModel) -> IntentProbe | None:
    """`model`'s shipped probe, or None: the penalty was fitted for the probes that ship (minilm's),
    and a weaker model's probe (WordLlama's static vectors) reads too few tasks as tasks for it."""
    with _LOCK:
        if model.name not in _PROBES:
            _PROBES[model.name] = _shipped(model.name)
        return _PROBES[model.name]
