"""The semantic and hybrid scorers: deterministic, independent of document order, incremental,
cached, routing by meaning where words fail, and honest when their extra is missing."""

from __future__ import annotations

import math
import random
import uuid
from pathlib import Path
from typing import Any

import pytest
from documents import SCORING_WORDS, numbered_document
from hypothesis import given, settings
from hypothesis import strategies as st

from skills_lsp.core.index.skill_index import SkillDocument, SkillIndex
from skills_lsp.core.routing import scorer as selection
from skills_lsp.core.routing import semantic
from skills_lsp.core.routing.bm25f import terms
from skills_lsp.core.routing.hybrid import HYBRID_BM25F_WEIGHT, hybrid_for
from skills_lsp.core.routing.queries import QueryCase, explain_case
from skills_lsp.core.routing.scorer import DEFAULT_MIN_SCORE, SelectionPolicy, select_skills
from skills_lsp.core.routing.semantic import (
    INSTALL_HINT,
    VECTORS,
    ScorerUnavailable,
    semantic_for,
    skill_text,
)
from skills_lsp.core.workspace.settings import parse_config

WORDS = SCORING_WORDS
EMBEDDING_SCORERS = ("semantic", "hybrid")


doc = numbered_document


text = st.lists(st.sampled_from(WORDS), max_size=10).map(" ".join)
corpus = st.lists(
    st.tuples(st.sampled_from(["a", "b", "c", "pdf-tools", "notes"]), text, text), min_size=1, max_size=12
)


def ranking(index: SkillIndex, query: str, policy: SelectionPolicy) -> list[tuple[float, str, str]]:
    return [(m.score, m.skill.name, str(m.skill.path)) for m in select_skills(index, query, policy)]


# --- order independence and incremental updates -------------------------------------------------


@pytest.mark.parametrize("scorer", EMBEDDING_SCORERS)
@settings(max_examples=40, deadline=None)
@given(
    entries=corpus,
    query=text,
    top_k=st.integers(0, 8),
    min_score=st.sampled_from([0.0, 0.1, 0.3]),
    rng=st.randoms(),
)
def test_deterministic_and_independent_of_document_order(  # type: ignore[no-untyped-def]
    scorer, entries, query, top_k, min_score, rng
) -> None:
    docs = [doc(i, n, d, b) for i, (n, d, b) in enumerate(entries)]
    policy = SelectionPolicy(top_k=top_k, min_score=min_score, scorer=scorer)
    first = ranking(SkillIndex(docs), query, policy)
    assert ranking(SkillIndex(docs), query, policy) == first
    shuffled = list(docs)
    rng.shuffle(shuffled)
    assert ranking(SkillIndex(shuffled), query, policy) == first
    incremental = SkillIndex()
    select_skills(incremental, "warm", policy)  # the search exists before the documents arrive
    for d in shuffled:
        incremental.upsert(d)
    assert ranking(incremental, query, policy) == first
    assert len(first) <= top_k
    assert all(min_score <= score <= 1.0 and score > 0.0 for score, _, _ in first)
    assert [s for s, _, _ in first] == sorted((s for s, _, _ in first), reverse=True)


@pytest.mark.parametrize("scorer", EMBEDDING_SCORERS)
def test_removal_equals_a_fresh_build(scorer: str) -> None:
    docs = [
        doc(i, f"s{i}", random.Random(i).choice(WORDS), " ".join(random.Random(i).sample(WORDS, 5)))
        for i in range(30)
    ]
    index = SkillIndex(docs)
    policy = SelectionPolicy(top_k=10, min_score=0.0, scorer=scorer)
    select_skills(index, "pdf", policy)
    for d in docs[::3]:
        index.remove(d.path)
    fresh = SkillIndex([d for i, d in enumerate(docs) if i % 3])
    found = 0
    for query in ("pdf form", "invoice cleaning", "数据", "deploy to the cluster"):
        got = ranking(index, query, policy)
        assert got == ranking(fresh, query, policy)
        assert all(name not in {d.name for d in docs[::3]} for _, name, _ in got)
        found += bool(got)
    assert found >= 3  # hybrid may sink a two-character request as a quick question (test_intent.py)


@pytest.mark.parametrize("scorer", EMBEDDING_SCORERS)
def test_many_edits_compact_and_keep_results(scorer: str) -> None:
    # An editor replaces a document on every keystroke; the search must not grow with them.
    words = [random.Random(i).choice(WORDS) for i in range(20)]
    docs = [doc(i, f"s{i}", word, word) for i, word in enumerate(words)]
    index = SkillIndex(docs)
    policy = SelectionPolicy(top_k=10, min_score=0.0, scorer=scorer)
    select_skills(index, "pdf", policy)
    search = semantic_for(index)
    for edit in range(3000):
        old = docs[edit % 20]
        index.upsert(doc(edit % 20, old.name, old.description, f"{old.body} edit{edit % 7}"))
    assert len(index) == 20
    assert len(search._slots) < 2100  # compacted: far fewer than 20 + 3,000 slots
    assert sum(d is not None for d in search.documents()) == 20
    fresh = SkillIndex(list(index))
    for query in ("pdf form", "invoice cleaning", "edit3", "weather forecast"):
        assert ranking(index, query, policy) == ranking(fresh, query, policy)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_queries_between_edits_match_a_fresh_build(seed: int) -> None:
    # Queries between an editor's upserts and removes (the hybrid scorer lines up its two
    # searches incrementally), through compactions of both, always equal a fresh build.
    rng = random.Random(seed)
    index = SkillIndex()
    policies = [SelectionPolicy(top_k=5, min_score=0.0, scorer=s) for s in ("bm25f", *EMBEDDING_SCORERS)]
    for policy in policies:
        select_skills(index, "warm", policy)
    for step in range(2500):
        i = rng.randrange(12)
        if rng.random() < 0.3:
            index.remove(Path(f"/ws/s{i}/SKILL.md"))
        else:
            words = " ".join(rng.sample(WORDS, 4))
            index.upsert(doc(i, f"s{i}", words, f"{words} edit{step % 5}"))
        if step % 5:
            continue
        query = " ".join(rng.sample(WORDS, 3))
        rankings = [ranking(index, query, policy) for policy in policies]
        if step % 50 == 0:
            fresh = SkillIndex(list(index))
            assert rankings == [ranking(fresh, query, policy) for policy in policies], step
    assert len(semantic_for(index)._slots) < 1100  # compacted along the way (2,500 edits)


def test_requests_run_again_after_each_edit_get_exactly_a_fresh_builds_selection() -> None:
    # An editor re-runs its test queries after every keystroke: hybrid keeps their approximate
    # scores between edits and bounds how far bm25f's statistics (average lengths, idfs, the
    # number of skills) moved since. Whatever the edits, the selection and every score must be
    # exactly a fresh build's, and the kept scores must really be what most rounds use.
    rng = random.Random(5)
    bodies = {i: rng.sample(WORDS, 6) for i in range(40)}

    def version(i: int) -> SkillDocument:
        return doc(i, f"s{i}", " ".join(bodies[i][:3]), " ".join(bodies[i]))

    index = SkillIndex([version(i) for i in bodies])
    queries = [" ".join(rng.sample(WORDS, 3)) for _ in range(5)] + [bodies[7][0]]
    policies = [SelectionPolicy(top_k=k, min_score=m, scorer="hybrid") for k, m in ((2, 0.0), (5, 0.3))]
    search = hybrid_for(index)
    reused = rounds = 0
    for step in range(200):
        i = rng.randrange(40)
        change = rng.random()
        if change < 0.1:
            index.remove(Path(f"/ws/s{i}/SKILL.md"))
        else:
            if change < 0.6:
                bodies[i][rng.randrange(len(bodies[i]))] = rng.choice(WORDS)  # same word count
            else:
                bodies[i].append(rng.choice(WORDS))
            index.upsert(version(i))
        fresh = SkillIndex(list(index))
        for query in queries:
            before = search._kept.get(query)
            for policy in policies:
                assert ranking(index, query, policy) == ranking(fresh, query, policy), (step, query)
            rounds += 1
            reused += before is not None and search._kept.get(query) is before
    assert reused > rounds / 3  # 40 skills: an edit moves the statistics far more than among 20,000


def test_a_selection_is_made_again_from_its_exact_scores_while_the_statistics_hold(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Most keystrokes keep every field's word count and the document frequencies of a request's
    # words: every other skill then scores exactly what it did, and hybrid selects again from
    # the last selection's exact scores and the edited skill's. Whether the edited skill was
    # selected before, rises, falls or leaves its place to a skill never scored exactly, the
    # selection and every score must be exactly a fresh build's.
    rng = random.Random(11)
    fillers = ["zephyr", "quokka", "marmot", "ibex", "narwhal", "okapi"]  # in no request
    bodies = {i: [*rng.sample(WORDS, 4), *rng.sample(fillers, 2)] for i in range(40)}
    tags = {i: ("ops",) if i % 3 else ("docs",) for i in bodies}

    def version(i: int) -> SkillDocument:
        return doc(i, f"s{i}", " ".join(bodies[i][:3]), " ".join(bodies[i]), tags[i])

    index = SkillIndex([version(i) for i in bodies])
    search = hybrid_for(index)
    full = {"selections": 0}
    real = search._select

    def counted(*args: Any) -> Any:
        full["selections"] += 1
        return real(*args)

    monkeypatch.setattr(search, "_select", counted)
    queries = [" ".join(rng.sample(WORDS, 3)) for _ in range(6)]
    policies = [
        SelectionPolicy(top_k=k, min_score=m, include_tags=t, scorer="hybrid")
        for k, m, t in ((2, 0.0, []), (1, 0.28, []), (3, 0.0, ["docs"]), (0, 0.0, []))
    ]
    selections = 0
    for step in range(120):
        winners = [m.skill.path for m in select_skills(index, queries[step % 6], policies[0])]
        # The winner of a request half the time (its old slot leaves the selection), else any skill.
        i = int(winners[0].parent.name[1:]) if winners and step % 2 else rng.randrange(40)
        slot = 3 + rng.randrange(3)  # a filler's place or a word of the body: same word count
        word = rng.choice([w for w in fillers if w not in bodies[i]]) if slot > 3 else rng.choice(WORDS)
        bodies[i][slot] = word
        index.upsert(version(i))
        fresh = SkillIndex(list(index))
        for query in queries:
            for policy in policies:
                assert ranking(index, query, policy) == ranking(fresh, query, policy), (step, query, policy)
                selections += 1
    assert full["selections"] < selections / 2  # most were made again from the exact scores kept


def test_hybrid_is_the_weighted_mean_of_bm25f_and_semantic() -> None:
    docs = [doc(i, n, d, b) for i, (n, d, b) in enumerate(SKILLS)]
    index = SkillIndex(docs)
    query = "deploy the pods to the cluster"
    hybrid = {
        m.skill.name: m.score for m in select_skills(index, query, SelectionPolicy(4, 0.0, scorer="hybrid"))
    }
    lexical = {
        m.skill.name: m.score for m in select_skills(index, query, SelectionPolicy(4, 0.0, scorer="bm25f"))
    }
    meaning = {
        m.skill.name: m.score for m in select_skills(index, query, SelectionPolicy(4, 0.0, scorer="semantic"))
    }
    parts = hybrid_for(index).components(query)
    assert hybrid_for(index).penalty(query) == 0.0  # a task: no quick-question penalty (test_intent.py)
    assert hybrid and set(hybrid) <= set(lexical) | set(meaning)
    for d in docs:
        words, sense = parts[id(d)]
        assert words == pytest.approx(lexical.get(d.name, 0.0))
        assert sense == pytest.approx(meaning.get(d.name, 0.0))
        expected = round(HYBRID_BM25F_WEIGHT * words + (1 - HYBRID_BM25F_WEIGHT) * sense, 6)
        assert hybrid.get(d.name, 0.0) == pytest.approx(expected, abs=2e-6)  # both parts rounded too


# --- routing by meaning -------------------------------------------------------------------------

SKILLS = [
    (
        "invoice-reconciliation",
        "Reconcile invoices against bank statements and ledger entries.",
        "Pair each invoice with its payment and report any discrepancy.",
    ),
    (
        "kubernetes-deploy",
        "Deploy services to a Kubernetes cluster with kubectl and Helm.",
        "Apply the manifests and watch the rollout of the pods.",
    ),
    (
        "pdf-form-filling",
        "Fill in PDF forms from structured data.",
        "Map JSON values onto the form fields and save the filled PDF.",
    ),
    (
        "git-release-notes",
        "Draft release notes from git history between tags.",
        "Group merged commits into features and fixes for the changelog.",
    ),
]
# Requests that share no word (as bm25f reads words: stemmed, stop words dropped) with any skill.
PARAPHRASES = [
    ("the money we received doesn't add up with what we billed", "invoice-reconciliation"),
    ("roll out the container to production", "kubernetes-deploy"),
    ("put the applicant details into the document", "pdf-form-filling"),
    ("write up what is new in this version", "git-release-notes"),
]


@pytest.fixture()
def skills() -> SkillIndex:
    return SkillIndex(doc(i, n, d, b) for i, (n, d, b) in enumerate(SKILLS))


@pytest.mark.parametrize(("query", "expected"), PARAPHRASES)
def test_a_paraphrase_routes_by_meaning_where_words_cannot(
    skills: SkillIndex, query: str, expected: str
) -> None:
    for d in skills:  # no shared word at all: words alone cannot find the skill
        assert not set(terms(query)) & set(terms(skill_text(d))), d.name
    assert select_skills(skills, query, SelectionPolicy(top_k=3, min_score=0.0, scorer="bm25f")) == []
    ranked = select_skills(skills, query, SelectionPolicy(top_k=4, min_score=0.0, scorer="semantic"))
    assert ranked[0].skill.name == expected
    assert ranked[0].score > ranked[1].score + 0.02  # first by a margin, not by a tie-break
    hybrid = select_skills(skills, query, SelectionPolicy(top_k=1, min_score=0.0, scorer="hybrid"))
    assert hybrid[0].skill.name == expected


def test_the_default_threshold_keeps_a_clear_match_and_turns_away_nonsense(skills: SkillIndex) -> None:
    for scorer in EMBEDDING_SCORERS:
        policy = SelectionPolicy(scorer=scorer)  # top_k 1 at the scorer's calibrated min_score
        assert [m.skill.name for m in select_skills(skills, "deploy the pods to the cluster", policy)] == [
            "kubernetes-deploy"
        ]
        assert select_skills(skills, "zzqx", policy) == []
        assert select_skills(skills, "", policy) == []


def test_tags_filter_the_embedding_scorers(skills: SkillIndex) -> None:
    tagged = SkillIndex(
        [*skills, doc(9, "helm-charts", "Deploy with Helm charts to Kubernetes.", "", ("ops",))]
    )
    for scorer in EMBEDDING_SCORERS:
        only = SelectionPolicy(top_k=5, min_score=0.0, include_tags=["OPS"], scorer=scorer)
        assert [m.skill.name for m in select_skills(tagged, "deploy to the cluster", only)] == ["helm-charts"]
        never = SelectionPolicy(top_k=5, min_score=0.0, exclude_tags=["ops"], scorer=scorer)
        assert "helm-charts" not in {
            m.skill.name for m in select_skills(tagged, "deploy to the cluster", never)
        }


# --- the vector cache ---------------------------------------------------------------------------


def test_the_same_skill_text_is_embedded_once() -> None:
    marker = uuid.uuid4().hex  # text no earlier test embedded
    first = doc(1, "cache-probe", f"Probe the vector cache {marker}.", "Steps.")
    other = doc(2, "other-probe", f"Another probe {marker}.", "More steps.")
    hits, misses = VECTORS.hits, VECTORS.misses
    semantic_for(SkillIndex([first, other]))
    assert (VECTORS.hits - hits, VECTORS.misses - misses) == (0, 2)
    # A second index of the same texts (another workspace, a rebuild) embeds nothing.
    hits, misses = VECTORS.hits, VECTORS.misses
    index = SkillIndex([first, other])
    search = semantic_for(index)
    assert (VECTORS.hits - hits, VECTORS.misses - misses) == (2, 0)
    # An editor's change to one body re-embeds that one skill.
    hits, misses = VECTORS.hits, VECTORS.misses
    index.upsert(doc(1, "cache-probe", f"Probe the vector cache {marker}.", "Changed steps."))
    assert (VECTORS.hits - hits, VECTORS.misses - misses) == (0, 1)
    # Putting the old text back is a hit again.
    hits, misses = VECTORS.hits, VECTORS.misses
    index.upsert(first)
    assert (VECTORS.hits - hits, VECTORS.misses - misses) == (1, 0)
    assert search is semantic_for(index)


def test_the_cache_is_keyed_by_text_and_bounded() -> None:
    model = semantic.load_model()
    cache = semantic.VectorCache(limit=3)
    texts = [f"text {i} {uuid.uuid4().hex}" for i in range(5)]
    vectors = cache.vectors(model, texts)
    assert (cache.hits, cache.misses) == (0, 5) and len(vectors) == 5
    assert len(cache._vectors) == 3  # the oldest two are gone
    again = cache.vectors(model, texts[-3:])
    assert (cache.hits, cache.misses) == (3, 5)
    for fresh, cached in zip(vectors[-3:], again, strict=True):
        assert (fresh == cached).all()
    assert cache.vectors(model, texts[:1]) and cache.misses == 6
    norms = [float((v.astype(float) ** 2).sum()) for v in vectors]
    assert norms == pytest.approx([1.0] * 5, abs=1e-5)  # unit vectors: cosine is a dot product


def test_vectors_saved_to_a_file_come_back_in_the_next_process(tmp_path: Path) -> None:
    model = semantic.load_model()
    file = tmp_path / ".skills-lsp-cache" / semantic.VECTOR_FILE
    texts = [f"saved {i} {uuid.uuid4().hex}" for i in range(4)]
    first = semantic.VectorCache()
    first.attach(file)  # no file yet: an empty cache
    made = first.vectors(model, texts)
    first.flush()
    assert file.is_file() and (file.parent / ".gitignore").read_text(encoding="utf-8").endswith("*\n")
    stamp = file.stat().st_mtime_ns
    first.flush()  # nothing learned since: the file is not written again
    assert file.stat().st_mtime_ns == stamp
    second = semantic.VectorCache()  # as a new process would
    second.attach(file)
    again = second.vectors(model, texts)
    assert (second.hits, second.misses) == (4, 0)
    for a, b in zip(made, again, strict=True):
        assert (a == b).all()


@pytest.mark.parametrize("content", [b"", b"not a zip file", b"PK\x03\x04broken"])
def test_an_unreadable_vector_file_is_an_empty_cache_and_is_replaced(tmp_path: Path, content: bytes) -> None:
    model = semantic.load_model()
    file = tmp_path / semantic.VECTOR_FILE
    file.write_bytes(content)
    cache = semantic.VectorCache()
    cache.attach(file)
    cache.vectors(model, ["one text"])
    assert cache.misses == 1
    cache.flush()
    fresh = semantic.VectorCache()
    fresh.attach(file)
    assert fresh.vectors(model, ["one text"]) and (fresh.hits, fresh.misses) == (1, 0)


def _foreign(file: Path, kind: str) -> None:
    import numpy as np

    if kind == "narrow rows":  # another model's width
        np.savez(file, keys=np.array([b"a" * 64]), vectors=np.zeros((1, 128), np.float32))
    elif kind == "text keys":
        np.savez(file, keys=np.array(["a" * 64]), vectors=np.zeros((1, 256), np.float32))
    elif kind == "non-ascii keys":
        np.savez(file, keys=np.array([b"\xff" * 64]), vectors=np.zeros((1, 256), np.float32))
    else:  # a plain .npy array under the cache's name
        with file.open("wb") as handle:
            np.save(handle, np.zeros(3))


@pytest.mark.parametrize("kind", ["narrow rows", "text keys", "non-ascii keys", "npy"])
def test_a_foreign_vector_file_is_an_empty_cache_and_never_an_error(tmp_path: Path, kind: str) -> None:
    file = tmp_path / semantic.VECTOR_FILE
    _foreign(file, kind)
    cache = semantic.VectorCache()
    cache.attach(file)
    assert cache.vectors(semantic.load_model(), [f"foreign {kind}"]) and cache.misses == 1
    cache.flush()  # replaced by what this run knows, without an exception
    fresh = semantic.VectorCache()
    fresh.attach(file)
    assert fresh.vectors(semantic.load_model(), [f"foreign {kind}"]) and fresh.hits == 1


def test_flush_keeps_only_the_workspaces_vectors(tmp_path: Path) -> None:
    # A server with two folders must not write one folder's skills into the other's cache.
    model = semantic.load_model()
    cache = semantic.VectorCache()
    mine, theirs = f"mine {uuid.uuid4().hex}", f"theirs {uuid.uuid4().hex}"
    cache.vectors(model, [mine, theirs])
    cache.attach(tmp_path / semantic.VECTOR_FILE)
    cache.flush(keep={semantic.VectorCache.key(model, mine)})
    saved = semantic.VectorCache()
    saved.attach(tmp_path / semantic.VECTOR_FILE)
    assert list(saved._vectors) == [semantic.VectorCache.key(model, mine)]


def test_a_cache_folder_that_cannot_be_written_is_quiet(tmp_path: Path) -> None:
    blocker = tmp_path / "file-not-folder"
    blocker.write_text("x", encoding="utf-8")
    cache = semantic.VectorCache()
    cache.attach(blocker / semantic.VECTOR_FILE)  # its folder cannot be created
    cache.vectors(semantic.load_model(), [f"quiet {uuid.uuid4().hex}"])
    cache.flush()  # no exception: the scores are what matters
    assert blocker.read_text(encoding="utf-8") == "x"


# --- without the extra --------------------------------------------------------------------------


@pytest.mark.usefixtures("no_embedding_model")
@pytest.mark.parametrize("scorer", EMBEDDING_SCORERS)
def test_a_missing_extra_says_how_to_install_it(scorer: Any) -> None:
    assert not semantic.available()
    index = SkillIndex([doc(1, "a", "Deploy to the cluster.", "")])
    with pytest.raises(ScorerUnavailable) as raised:
        select_skills(index, "deploy", SelectionPolicy(scorer=scorer))
    assert INSTALL_HINT == "pip install 'skills-lsp[semantic]'"
    assert INSTALL_HINT in str(raised.value)
    # The other scorers still work.
    assert select_skills(index, "deploy", SelectionPolicy(min_score=0.0, scorer="bm25f"))[0].skill.name == "a"
    assert select_skills(index, "deploy", SelectionPolicy(min_score=0.0))[0].skill.name == "a"


@pytest.mark.usefixtures("no_embedding_model")
def test_explain_case_lists_only_the_scorers_installed() -> None:
    index = SkillIndex([doc(1, "a", "Deploy to the cluster.", "")])
    text = explain_case(index, QueryCase("deploy", ("a",)), scorer="bm25f")
    assert text.splitlines()[-1] == "Scorers: lexical ranks `a` first, bm25f ranks `a` first."


def test_the_extra_is_found_again_afterwards() -> None:
    # The fixture above put everything back: the real model loads.
    assert semantic.available()
    assert semantic.load_model().dimensions == 384  # minilm, the best installed


# --- the policy and the config ------------------------------------------------------------------


def test_the_config_offers_exactly_the_scorers_of_the_table(tmp_path: Path) -> None:
    # One list of scorers (the table): the config accepts each of them and names them all when
    # it refuses another.
    assert list(selection.SCORERS) == ["lexical", "bm25f", "semantic", "hybrid"]
    assert set(selection.DEFAULT_MIN_SCORE) == set(selection.SCORERS)
    assert set(selection.optional_scorers()) == set(EMBEDDING_SCORERS)
    for name in selection.SCORERS:
        loaded, problems = parse_config(f'scorer = "{name}"\n', tmp_path / "skills-lsp.toml")
        assert loaded.scorer == name and not problems
    _, problems = parse_config('scorer = "neural"\n', tmp_path / "skills-lsp.toml")
    assert [p.code for p in problems] == ["SK001"]
    assert all(f'"{name}"' in problems[0].message for name in selection.SCORERS)


def test_the_policy_takes_the_scorers_default_threshold() -> None:
    default = SelectionPolicy()
    assert (default.top_k, default.min_score, default.scorer, default.tokenizer) == (
        1,
        1.0,
        "lexical",
        "ascii",
    )
    for scorer in selection.SCORERS:
        assert SelectionPolicy(scorer=scorer).min_score == DEFAULT_MIN_SCORE[scorer]
    assert SelectionPolicy(scorer="hybrid").min_score == DEFAULT_MIN_SCORE["hybrid"] == 0.28
    assert all(0.0 < DEFAULT_MIN_SCORE[s] < 1.0 for s in ("bm25f", "semantic", "hybrid"))
    # An explicit min_score is kept, 0.0 and the crate's 1.0 included.
    assert SelectionPolicy(min_score=0.0, scorer="hybrid").min_score == 0.0
    assert SelectionPolicy(min_score=1.0, scorer="semantic").min_score == 1.0
    assert SelectionPolicy(3, 0.5, scorer="bm25f").min_score == 0.5
    assert not math.isnan(SelectionPolicy(scorer="semantic").min_score)


@pytest.mark.parametrize("scorer", ["embedding", "Hybrid", "", "bm25"])
def test_an_unknown_scorer_is_refused(scorer: str) -> None:
    with pytest.raises(ValueError, match="unknown scorer"):
        SelectionPolicy(scorer=scorer)  # type: ignore[arg-type]


# --- explaining a test query --------------------------------------------------------------------


def test_explain_case_with_hybrid_shows_both_parts(skills: SkillIndex) -> None:
    case = QueryCase("deploy the pods to the cluster", ("kubernetes-deploy",))
    text = explain_case(skills, case, scorer="hybrid")
    lines = text.splitlines()
    assert lines[2] == "Expected: `kubernetes-deploy` (hybrid scorer, min_score 0.28)"
    assert lines[4].startswith("1. **kubernetes-deploy** ") and "below min_score" not in lines[4]
    why = lines[5]
    parts = hybrid_for(skills).components(case.query)[id(skills.find_by_name("kubernetes-deploy"))]
    assert why == (
        f"   - bm25f {parts[0]:.3f} (name: deploy; description: deploy cluster; body: pod) x0.6"
        f" + semantic {parts[1]:.3f} x0.4"
    )
    assert "(no shared word) x0.6 + semantic " in text  # the skills that match by meaning only
    assert lines[-1] == (
        "Scorers: lexical ranks `kubernetes-deploy` first, bm25f ranks `kubernetes-deploy` first, "
        "semantic ranks `kubernetes-deploy` first, hybrid ranks `kubernetes-deploy` first."
    )


def test_explain_case_for_a_paraphrase(skills: SkillIndex) -> None:
    case = QueryCase("roll out the container to production", ("kubernetes-deploy",))
    text = explain_case(skills, case, scorer="semantic")
    assert "(semantic scorer, min_score 0.44)" in text
    assert "1. **kubernetes-deploy** " in text and "cosine similarity" in text
    last = text.splitlines()[-1]
    assert last.startswith("Scorers: lexical ranks ")
    assert last.endswith(
        ", bm25f selects nothing, semantic ranks `kubernetes-deploy` first, "
        "hybrid ranks `kubernetes-deploy` first."
    )


def test_with_scorer_takes_the_new_scorers_threshold() -> None:
    lexical = SelectionPolicy(top_k=3, include_tags=["a"])
    hybrid = lexical.with_scorer("hybrid")
    assert (hybrid.top_k, hybrid.include_tags, hybrid.scorer) == (3, ["a"], "hybrid")
    assert hybrid.min_score == DEFAULT_MIN_SCORE["hybrid"] and lexical.min_score == 1.0


def test_a_margin_is_measured_against_the_real_runner_up() -> None:
    # Under a 0..1 scorer nearly every skill scores something: a runner-up under min_score still
    # competes, and the lead must be measured against it, not against 0.
    from skills_lsp.core.routing.queries import run_case

    index = SkillIndex(
        [
            doc(1, "invoice-reconciliation", "Reconcile invoices against payments", "Match invoices."),
            doc(2, "invoice-chasing", "Chase unpaid invoices by email", "Remind customers to pay."),
        ]
    )
    query = "reconcile these invoices with the payments"
    ranking = select_skills(index, query, SelectionPolicy(top_k=2, min_score=0.0, scorer="semantic"))
    assert [m.skill.name for m in ranking] == ["invoice-reconciliation", "invoice-chasing"]
    true_lead = ranking[0].score - ranking[1].score
    between = (ranking[0].score + ranking[1].score) / 2  # the runner-up falls under min_score
    case = QueryCase(query, ("invoice-reconciliation",), min_score=between, margin=true_lead + 0.01)
    result = run_case(index, case, scorer="semantic")
    assert not result.passed and f"leads by {true_lead:.3f}" in result.reason
    enough = QueryCase(query, ("invoice-reconciliation",), min_score=between, margin=true_lead - 0.01)
    assert run_case(index, enough, scorer="semantic").passed


@settings(max_examples=40, deadline=None)
@given(
    entries=corpus,
    query=text,
    top_k=st.integers(0, 6),
    min_score=st.sampled_from([0.0, 0.1, 0.28, 0.31, 0.5]),
    tags=st.sampled_from([(), ("pdf",)]),
)
def test_selection_equals_ranking_every_exact_score(  # type: ignore[no-untyped-def]
    entries, query, top_k, min_score, tags
) -> None:
    # Selection scores only the candidates in float64; it must pick exactly what ranking all of
    # the exact scores picks.
    from skills_lsp.core.routing.ranking import ranked

    docs = [doc(i, n, d, b, ("pdf",) if i % 2 else ()) for i, (n, d, b) in enumerate(entries)]
    index = SkillIndex(docs)
    for name, search in (("semantic", semantic_for(index)), ("hybrid", hybrid_for(index))):
        policy = SelectionPolicy(top_k=top_k, min_score=min_score, include_tags=list(tags), scorer=name)  # type: ignore[arg-type]
        documents = search.documents() if name == "semantic" else search.semantic.documents()
        alive = search.alive() if name == "semantic" else search.semantic.alive()
        full = ranked(documents, alive, search.scores(query), policy)
        assert [(m.score, m.skill.id) for m in search.select(query, policy)] == [
            (m.score, m.skill.id) for m in full
        ]
