"""The bm25f scorer: deterministic, independent of document order, incremental, calibrated."""

from __future__ import annotations

import os
import random
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from documents import SCORING_WORDS, numbered_document
from hypothesis import example, given, settings
from hypothesis import strategies as st

from skills_lsp.core.index.skill_index import SkillDocument, SkillIndex, load_workspace_index
from skills_lsp.core.routing import bm25f
from skills_lsp.core.routing.bm25f import Bm25fParameters, Bm25fSearch, bm25f_for, terms
from skills_lsp.core.routing.evaluation import auroc, evaluate
from skills_lsp.core.routing.queries import QueryCase
from skills_lsp.core.routing.scorer import DEFAULT_MIN_SCORE, SelectionPolicy, select_skills
from skills_lsp.core.routing.terms import stem

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
WORDS = SCORING_WORDS


doc = numbered_document


text = st.lists(st.sampled_from(WORDS), max_size=12).map(" ".join)
corpus = st.lists(
    st.tuples(st.sampled_from(["a", "b", "c", "pdf-tools", "notes"]), text, text), min_size=1, max_size=15
)


def ranking(index: SkillIndex, query: str, policy: SelectionPolicy) -> list[tuple[float, str, str]]:
    return [(m.score, m.skill.name, str(m.skill.path)) for m in select_skills(index, query, policy)]


@settings(max_examples=60, deadline=None)
@given(corpus, text, st.integers(0, 8), st.sampled_from([0.0, 0.1, 0.3]), st.randoms())
def test_deterministic_and_independent_of_document_order(entries, query, top_k, min_score, rng) -> None:  # type: ignore[no-untyped-def]
    docs = [doc(i, n, d, b) for i, (n, d, b) in enumerate(entries)]
    policy = SelectionPolicy(top_k=top_k, min_score=min_score, scorer="bm25f")
    first = ranking(SkillIndex(docs), query, policy)
    assert ranking(SkillIndex(docs), query, policy) == first
    shuffled = list(docs)
    rng.shuffle(shuffled)
    incremental = SkillIndex()
    select_skills(incremental, "warm", policy)  # the search exists before the documents arrive
    for d in shuffled:
        incremental.upsert(d)
    assert ranking(incremental, query, policy) == first
    assert all(0.0 <= score <= 1.0 for score, _, _ in first)


def test_removal_equals_a_fresh_build() -> None:
    docs = [
        doc(i, f"s{i}", random.Random(i).choice(WORDS), " ".join(random.Random(i).sample(WORDS, 5)))
        for i in range(30)
    ]
    index = SkillIndex(docs)
    policy = SelectionPolicy(top_k=10, min_score=0.0, scorer="bm25f")
    select_skills(index, "pdf", policy)
    for d in docs[::3]:
        index.remove(d.path)
    fresh = SkillIndex([d for i, d in enumerate(docs) if i % 3])
    for query in ("pdf form", "invoice cleaning", "数据"):
        assert ranking(index, query, policy) == ranking(fresh, query, policy)


@settings(max_examples=30, deadline=None)
@given(
    corpus,
    st.lists(text, min_size=1, max_size=4),
    st.builds(
        Bm25fParameters,
        name_weight=st.sampled_from([0.5, 3.0]),
        description_weight=st.sampled_from([1.0, 2.5]),
        body_weight=st.sampled_from([0.2, 1.0]),
        body_b=st.sampled_from([0.0, 0.9]),
        k1=st.sampled_from([0.5, 1.6]),
    ),
)
def test_new_parameters_score_as_a_fresh_build_with_them(entries, queries, parameters) -> None:  # type: ignore[no-untyped-def]
    # The tuning script switches parameters on a built search rather than rebuilding it.
    docs = [doc(i, n, d, b) for i, (n, d, b) in enumerate(entries)]
    switched = Bm25fSearch(SkillIndex(docs))
    for query in queries:
        switched.scores(query)  # fill the per-word cache with the default parameters' values
    switched.set_parameters(parameters)
    fresh = Bm25fSearch(SkillIndex(docs), parameters)
    for query in queries:
        assert switched.scores(query).tolist() == fresh.scores(query).tolist()


def test_terms_drop_stop_words_and_stem() -> None:
    assert terms("I need to bill the client for invoices") == ["bill", "client", "invoic"]
    assert stem("changed") == stem("change") == stem("changing")
    assert terms("数据库") == ["数", "据", "库"]
    # Latin words inside a CJK run are still words (they used to vanish).
    assert terms("请审计Docker镜像") == ["请", "审", "计", "docker", "镜", "像"]


def test_off_topic_requests_score_low_and_the_lexical_default_is_unchanged() -> None:
    index = load_workspace_index(EXAMPLES)
    policy = SelectionPolicy(top_k=1, min_score=0.0, scorer="bm25f")
    on_topic = select_skills(index, "fill in the pdf form from json", policy)[0]
    off_topic = select_skills(index, "Book me a table for two at an Italian restaurant", policy)
    assert on_topic.skill.name == "pdf-form-filling" and on_topic.score > 0.5
    # Under the default threshold: an off-topic request selects nothing.
    assert not off_topic or off_topic[0].score < DEFAULT_MIN_SCORE["bm25f"] < on_topic.score
    assert SelectionPolicy().scorer == "lexical"


def test_the_score_scale_does_not_drift_with_the_size_of_the_pool() -> None:
    # One `min_score` must mean the same among 5 skills and among 500: the same match, with the
    # same relative rarity of its words, scores about the same.
    def pool(size: int) -> SkillIndex:
        docs = [doc(i, f"filler-{i}", f"topic{i} chores", f"routine{i} steps") for i in range(size - 1)]
        docs.append(doc(size, "invoice-cleaner", "Clean up invoices", "Fix invoice totals and dates."))
        return SkillIndex(docs)

    policy = SelectionPolicy(top_k=1, min_score=0.0, scorer="bm25f")
    small = select_skills(pool(5), "clean up my invoices", policy)[0]
    large = select_skills(pool(500), "clean up my invoices", policy)[0]
    assert small.skill.name == large.skill.name == "invoice-cleaner"
    assert abs(small.score - large.score) < 0.1


def test_evaluate_and_auroc() -> None:
    assert auroc([0.9, 0.8], [0.1, 0.2]) == 1.0 and auroc([0.5], [0.5]) == 0.5
    index = load_workspace_index(EXAMPLES)
    cases = [
        QueryCase("fill the pdf form with this data", ("pdf-form-filling",), paraphrase=False),
        QueryCase(
            "write up what changed since the last tag for our users", ("git-release-notes",), paraphrase=True
        ),
        QueryCase("book a table at a restaurant", ()),
    ]
    report = evaluate(index, cases, "bm25f").to_json()
    assert report["answerable"] == 2 and report["none_cases"] == 1 and report["paraphrased"] == 1
    assert (
        report["top1_accuracy"] == 1.0 and report["none_false_accept_rate"] == 0.0 and report["auroc"] == 1.0
    )


def test_many_edits_compact_and_keep_results() -> None:
    # An editor replaces a document on every keystroke; the bm25f index must not grow with them.
    words = [random.Random(i).choice(WORDS) for i in range(20)]
    docs = [doc(i, f"s{i}", word, word) for i, word in enumerate(words)]
    index = SkillIndex(docs)
    policy = SelectionPolicy(top_k=10, min_score=0.0, scorer="bm25f")
    select_skills(index, "pdf", policy)
    search = bm25f_for(index)
    for edit in range(3000):
        old = docs[edit % 20]
        index.upsert(doc(edit % 20, old.name, old.description, f"{old.body} edit{edit % 7}"))
    assert len(search._slots) < 2100  # compacted: far fewer than 20 + 3,000 slots
    fresh = SkillIndex(list(index))
    for query in ("pdf form", "invoice cleaning", "edit3"):
        assert ranking(index, query, policy) == ranking(fresh, query, policy)


def test_edits_between_queries_give_exactly_a_fresh_builds_scores() -> None:
    # Most edits keep every field's word count, and then only the edited skill's words are
    # scored again: the rest of the cache must still be exactly right.
    rng = random.Random(3)
    bodies = {i: [rng.choice(WORDS) for _ in range(8)] for i in range(30)}

    def version(i: int, step: int) -> SkillDocument:
        return doc(i, f"s{i}", WORDS[i % len(WORDS)], " ".join(bodies[i]))

    index = SkillIndex([version(i, 0) for i in bodies])
    policy = SelectionPolicy(top_k=10, min_score=0.0, scorer="bm25f")
    queries = ["pdf form", "invoice cleaning", "git release notes", "数据 query"]
    for step in range(1, 400):
        i = rng.randrange(30)
        bodies[i][rng.randrange(len(bodies[i]))] = rng.choice(WORDS)  # same word count
        if step % 9 == 0:
            bodies[i].append(rng.choice(WORDS))  # and now and then a longer body
        index.upsert(version(i, step))
        query = queries[step % len(queries)]
        assert ranking(index, query, policy) == ranking(SkillIndex(list(index)), query, policy), step


def test_scores_of_a_few_slots_are_every_slots_scores_bit_for_bit() -> None:
    # Exact scores of a selection's candidates come from scores_of: from the postings for bulk-built
    # slots, from a skill's own counts for the slots an editor's upserts added (the oldest of
    # those beyond bm25f._ADDED_COUNTS searched for again). Either way, scores()'s values.
    rng = random.Random(8)
    skills = bm25f._ADDED_COUNTS + 16
    bodies = {i: rng.sample(WORDS, 6) + rng.sample(MESSY_PIECES, 3) for i in range(skills)}

    def version(i: int) -> SkillDocument:
        return doc(i, f"s{i} {bodies[i][0]}", " ".join(bodies[i][:4]), " ".join(bodies[i] * (1 + i % 3)))

    index = SkillIndex([version(i) for i in bodies])
    search = bm25f_for(index)
    # Random edits, then every skill edited once more: more slots added one by one than are kept.
    for step, i in enumerate([rng.randrange(skills) for _ in range(60)] + list(range(skills))):
        bodies[i][rng.randrange(len(bodies[i]))] = rng.choice([*WORDS, *MESSY_PIECES])
        index.upsert(version(i))
        if step % 10 and step != 59 + skills:
            continue
        live = np.flatnonzero(search.alive())
        added = np.array(sorted(search._added_counts), np.int64)
        for query in ("pdf form invoices", "the 数据 query query", "café release notes", "zzqx"):
            every = search.scores(query)
            for slots in (added, live[:5], live[-7:], np.concatenate([live[:3], added[-3:]]), live):
                assert np.array_equal(search.scores_of(query, slots), every[slots]), (step, query, slots)
    assert len(search._added_counts) == bm25f._ADDED_COUNTS


# Text that exercises every path of the bulk build's word splitting: ASCII words of every length
# around its 8- and 16-byte keys, stop words, apostrophes (ASCII and typographic, joining or not,
# beside CJK characters too), accented, Cyrillic and CJK letters (with CJK punctuation and marks),
# characters whose case-folding changes their length (ß, ﬁ, İ), separators outside ASCII (dashes,
# arrows, box drawing, emoji), combining marks, a lone surrogate, underscores and digits.
MESSY_PIECES = [
    *SCORING_WORDS[:20],
    "the", "a", "I", "x", "7", "don't", "Don’t", "can't", "it's", "'quoted'", "a''b", "rock'n'roll",
    "’", "'", "abcdefgh", "abcdefghi", "abcdefghijklmnop", "abcdefghijklmnopq",
    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123", "Café", "naïve", "ÉTÉ", "Straße", "ﬁle", "İstanbul",
    "привет", "Мир", "数据库", "审计Docker镜像", "テスト", "审'", "'计", "x'数", "한국어", "豈", "ー", "・",
    "゛",
    "—", "–", "→", "│", "├──", "✅", "🚀", "：", "。", "，", "\u0345", "\u0307", "\ud800", "e\u0301",
    "snake_case", "kebab-case", "v1.2.3", "x86_64", "…", "“smart”", "\u00a0", "\t", "\n", " ", "",
    "__", "1st",
]  # fmt: skip
messy = st.lists(st.sampled_from(MESSY_PIECES), max_size=30).map(
    lambda pieces: "".join(p + (" " if i % 3 else "") for i, p in enumerate(pieces))
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(messy | st.text(max_size=40), min_size=1, max_size=8), min_size=1, max_size=3))
# Short tokens that give several terms (a dotted İ case-folds to i and a combining dot, which splits
# the word), met again in the same batch and in the next one; and tokens longer than 16 bytes.
@example([["krİtİk yenİ'den krİtİk", "x krİtİk defaultazurecredential"], ["krİtİk defaultazurecredentials"]])
def test_bulk_term_counts_give_the_terms_of_each_text(batches: list[list[str]]) -> None:
    """The bulk build's term counting (numpy on UTF-8 bytes, a hash table of the words seen, the
    regex for tokens outside ASCII and CJK) gives each text exactly the terms `terms` gives it,
    over batches that share one vocabulary, numbered in order of first appearance."""
    build = bm25f._BuildTerms()
    for texts in batches:
        term_rows, text_of, counts = bm25f._term_counts(texts, build)
        vocabulary = list(build.vocabulary)
        found: list[Counter[str]] = [Counter() for _ in texts]
        for row, t, c in zip(term_rows.tolist(), text_of.tolist(), counts.tolist(), strict=True):
            found[t][vocabulary[row]] += c
        assert found == [Counter(terms(t)) for t in texts]
    every = [term for texts in batches for t in texts for term in terms(t)]
    assert list(build.vocabulary) == list(dict.fromkeys(every))
    assert list(build.vocabulary.values()) == list(range(len(build.vocabulary)))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(messy, messy, messy), min_size=2, max_size=12), st.integers(1, 5))
def test_bulk_build_equals_adding_one_by_one_on_random_texts(entries, chunk) -> None:  # type: ignore[no-untyped-def]
    docs = [doc(i, f"n{i}", description, body, (tag,)) for i, (description, body, tag) in enumerate(entries)]
    assert_bulk_build_equals_adding_one_by_one(docs, chunk)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(messy, messy, messy), min_size=1, max_size=4),
    st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=2, max_size=14),
    st.integers(1, 6),
)
def test_copied_texts_are_counted_as_any_other(originals, picks, chunk) -> None:  # type: ignore[no-untyped-def]
    """A chunk's copies of one text (a skill mirrored in several folders) are split into words once
    and given to every copy: the same postings as adding the documents one by one."""
    docs = []
    for i, (whole, body) in enumerate(picks):
        description, _, tag = originals[whole % len(originals)]
        docs.append(doc(i, f"n{whole % 2}", description, originals[body % len(originals)][1], (tag,)))
    assert_bulk_build_equals_adding_one_by_one(docs, chunk)


def test_copies_of_a_word_repeated_past_the_largest_count_keep_the_exact_length() -> None:
    body = "invoice " * (bm25f._MAX_COUNT + 10)
    docs = [doc(i, "n", "pdf forms", body if i % 2 else "notes", ("pdf",)) for i in range(4)]
    assert_bulk_build_equals_adding_one_by_one(docs, 4)
    built = bm25f._bulk_postings(list(SkillIndex(docs)), 1)
    assert built.lengths[:, 3].tolist() == [1, bm25f._MAX_COUNT + 10] * 2
    assert built.counts[3].max() == bm25f._MAX_COUNT


def assert_bulk_build_equals_adding_one_by_one(docs: list[SkillDocument], chunk: int) -> None:
    original = bm25f._CHUNK
    bm25f._CHUNK = chunk  # several chunks: their postings merge in order
    try:
        bulk = Bm25fSearch(SkillIndex(docs))
    finally:
        bm25f._CHUNK = original
    one_by_one = Bm25fSearch(SkillIndex())
    for d in SkillIndex(docs):
        one_by_one.index.upsert(d)
    assert bulk._totals == one_by_one._totals
    assert [list(a) for a in bulk._lengths] == [list(a) for a in one_by_one._lengths]
    for word in set(bulk._vocabulary) | set(one_by_one._postings):
        slots, counts = bulk._posting(word)
        other_slots, other_counts = one_by_one._posting(word)
        assert np.array_equal(slots, other_slots) and np.array_equal(counts, other_counts), word
    for query in [*MESSY_PIECES[:30], "café naïve", "数据库 docker"]:
        assert np.array_equal(bulk.scores(query), one_by_one.scores(query))


@settings(max_examples=15, deadline=None)
@given(
    st.lists(st.tuples(messy, messy, messy), min_size=2, max_size=12), st.integers(1, 3), st.integers(2, 3)
)
def test_a_bulk_build_over_several_processes_is_the_same_array_for_array(entries, chunk, jobs) -> None:  # type: ignore[no-untyped-def]
    """Runs of documents built in forked processes and joined give the very postings, lengths and
    vocabulary order of one process (and of adding the documents one by one, above)."""
    docs = list(SkillIndex([doc(i, f"n{i}", d, body, (tag,)) for i, (d, body, tag) in enumerate(entries)]))
    original = bm25f._CHUNK, bm25f._MIN_DOCS_PER_JOB
    bm25f._CHUNK, bm25f._MIN_DOCS_PER_JOB = chunk, 1
    try:
        alone = bm25f._bulk_postings(docs, 1)
        shared = bm25f._bulk_postings(docs, jobs)
        search = Bm25fSearch(SkillIndex(docs), jobs=jobs)
    finally:
        bm25f._CHUNK, bm25f._MIN_DOCS_PER_JOB = original
    assert alone.processes == 1 and shared.processes == min(jobs, len(docs))
    assert shared.vocabulary == alone.vocabulary
    for name in ("indptr", "slots", "counts", "lengths"):
        assert np.array_equal(getattr(shared, name), getattr(alone, name)), name
        assert getattr(shared, name).dtype == getattr(alone, name).dtype, name
    assert list(search._vocabulary) == alone.vocabulary
    assert np.array_equal(search._base_slots, alone.slots) and np.array_equal(
        search._base_counts, alone.counts
    )


@pytest.mark.parametrize("in_memory", [True, False])
def test_a_childs_postings_come_back_through_a_file(monkeypatch, in_memory) -> None:  # type: ignore[no-untyped-def]
    """Sent through a file in memory (memfd, Linux) or, where there is none, a temporary file."""
    docs = list(SkillIndex([doc(i, f"n{i}", f"pdf form {i}", "invoices and notes " * i) for i in range(6)]))
    monkeypatch.setattr(bm25f, "_MIN_DOCS_PER_JOB", 1)
    if not in_memory:
        monkeypatch.delattr(os, "memfd_create", raising=False)
    alone, shared = bm25f._bulk_postings(docs, 1), bm25f._bulk_postings(docs, 3)
    assert shared.processes == 3 and shared.vocabulary == alone.vocabulary
    for name in ("indptr", "slots", "counts", "lengths"):
        assert np.array_equal(getattr(shared, name), getattr(alone, name)), name


def test_the_default_jobs_are_the_idle_cpus_counting_the_builds_own(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    for cpus, load, jobs in [(2, 0.2, 2), (2, 1.0, 2), (2, 1.7, 1), (2, 5.0, 1), (8, 0.0, 4), (1, 0.0, 1)]:
        monkeypatch.setattr(os, "sched_getaffinity", lambda _pid, cpus=cpus: set(range(cpus)))
        monkeypatch.setattr(os, "getloadavg", lambda load=load: (load, load, load))
        assert bm25f._default_jobs() == jobs, (cpus, load)


def test_a_failed_child_is_built_again_here_and_a_failure_here_leaves_no_child(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    docs = list(SkillIndex([doc(i, f"n{i}", f"pdf form {i}", "invoices and notes " * i) for i in range(6)]))
    monkeypatch.setattr(bm25f, "_MIN_DOCS_PER_JOB", 1)
    alone = bm25f._bulk_postings(docs, 1)
    parent, build = os.getpid(), bm25f._part_postings
    forked: list[int] = []
    fork = os.fork

    def recorded_fork() -> int:
        pid = fork()
        forked.append(pid)
        return pid

    def failing_in_children(part_docs, first_slot):  # type: ignore[no-untyped-def]
        if os.getpid() != parent:
            raise RuntimeError("a child that fails")
        return build(part_docs, first_slot)

    monkeypatch.setattr(os, "fork", recorded_fork)
    monkeypatch.setattr(bm25f, "_part_postings", failing_in_children)
    again = bm25f._bulk_postings(docs, 3)
    assert again.processes == 1 and again.vocabulary == alone.vocabulary and len(forked) == 2
    for name in ("indptr", "slots", "counts", "lengths"):
        assert np.array_equal(getattr(again, name), getattr(alone, name)), name

    def failing_here(part_docs, first_slot):  # type: ignore[no-untyped-def]
        if os.getpid() == parent:
            raise RuntimeError("this process fails")
        time.sleep(30)  # a child still at work: stopped, not waited for
        return build(part_docs, first_slot)

    forked.clear()
    monkeypatch.setattr(bm25f, "_part_postings", failing_here)
    started = time.perf_counter()
    with pytest.raises(RuntimeError, match="this process fails"):
        bm25f._bulk_postings(docs, 2)
    assert time.perf_counter() - started < 10 and len(forked) == 1
    with pytest.raises(ChildProcessError):  # already reaped: no child left behind
        os.waitpid(forked[0], os.WNOHANG)
