"""Hypothesis and examples: the incremental SkillIndex and the inverted-index scorer.

- After any sequence of `upsert`/`remove`, a `SkillIndex` equals a fresh `SkillIndex` of the
  surviving documents, in (name, component-wise path) order.
- `select_skills` (inverted index, kept in step with the index) returns exactly what
  `select_skills_plain` (adk-skill 0.6.0's algorithm as written) returns, before and after changes,
  for both tokenizers.
- Worked examples of the crate's scoring and selection semantics.
"""

from __future__ import annotations

import hashlib
import math
import os
import struct
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from documents import skill_document
from hypothesis import given, settings
from hypothesis import strategies as st

from skills_lsp.core.files.discovery import path_sort_key
from skills_lsp.core.index import skill_index
from skills_lsp.core.index.skill_index import (
    SkillDocument,
    SkillIndex,
    load_skill_index_with_extras,
    normalize_id,
)
from skills_lsp.core.model import FileKind
from skills_lsp.core.routing.lexical import f32, select_skills_plain
from skills_lsp.core.routing.scorer import SelectionPolicy, SkillMatch, Tokenizer, select_skills

# --- documents ------------------------------------------------------------------------------------


def make_doc(
    name: str, path: str | Path, description: str = "", tags: Sequence[str] = (), body: str = ""
) -> SkillDocument:
    """A document built directly, with the crate's id scheme over a stand-in for the file bytes."""
    digest = hashlib.sha256("\0".join([name, description, *tags, body]).encode()).hexdigest()
    return skill_document(
        name,
        description,
        body,
        tuple(tags),
        id=f"{normalize_id(name)}-{digest[:12]}",
        path=Path(path),
        hash=digest,
        kind=FileKind.FLAT_SKILL,  # SkillDocument's own default
    )


def reference_order(doc: SkillDocument) -> tuple[str, tuple[str, ...]]:
    """Independent of the library: name by code point, then the relative path's components."""
    return (doc.name, tuple(str(doc.path).split("/")))


def match_keys(matches: Sequence[SkillMatch]) -> list[tuple[float, str, str]]:
    return [(m.score, m.skill.id, str(m.skill.path)) for m in matches]


# --- strategies -----------------------------------------------------------------------------------

# Duplicates, case variants and non-ASCII, so that ties on name and code-point order both matter.
NAMES = ["alpha", "Alpha", "ALPHA", "beta", "café", "Café", "cafe", "数据", "a", "a b", "é", "Z", "alpha"]
# `a/b` sorts before `a-b` and `a.b` component-wise (but after them as plain strings).
INDEX_PATHS = ["a", "a-b", "a.b", "a/b", "a/b/c", "a/c", "a b/c", "b", "é/x", "Z/y", "a/b-c", "a/b/SKILL.md"]

WORDS = [
    "search", "Search", "SEARCH", "rust", "Rust", "code", "codebase", "data", "café", "Café", "数据",
    "数据库", "naïve", "Straße", "STRASSE", "ﬁle", "file", "a", "I", "x1", "2", "42", "gemini-2.5-flash",
    "code_search", "agents-md", "école", "ÉCOLE", "Ω", "ω", "search",
]  # fmt: skip
ABSENT = ["absent", "zzz", "数", "Ωmega", "9999"]
SEPARATORS = [" ", " ", "  ", "-", "_", ".", ", ", "/", "\n", "!", "é", "\t"]
TAG_VOCAB = ["rust", "Rust", "code-search", "agents-md", "data", "数据", "café", "Café", "CLI", "web", "a b"]
SCORE_NAMES = [
    "search",
    "Search",
    "rust-helper",
    "code search",
    "data",
    "café",
    "Café",
    "数据",
    "a",
    "b",
    "x1",
]
DIRS = ["a", "a-b", "a/b", "a.b", "b", "é", "Z"]
THRESHOLDS = [0.0, 0.1, 0.5, 1.0, 2.0, 3.5, -0.0, -1.0, 1e-50, 5e-324, 0.7, math.inf, -math.inf, math.nan]


def words_text(vocab: Sequence[str], max_words: int) -> st.SearchStrategy[str]:
    pieces = [w + sep for w in vocab for sep in SEPARATORS]  # one draw per word and separator
    return st.lists(st.sampled_from(pieces), max_size=max_words).map("".join)


def random_case(vocab: Sequence[str]) -> st.SearchStrategy[str]:
    def recase(word: str) -> st.SearchStrategy[str]:
        flags = st.lists(st.booleans(), min_size=len(word), max_size=len(word))
        return flags.map(
            lambda fs: "".join(c.upper() if f else c.lower() for c, f in zip(word, fs, strict=True))
        )

    return st.sampled_from(vocab).flatmap(recase)


INDEX_NAMES = st.sampled_from(NAMES)
INDEX_TEXT = words_text(WORDS, 3)
INDEX_TAGS = st.lists(st.sampled_from(TAG_VOCAB), max_size=2)


@st.composite
def index_docs(draw: st.DrawFn, path: str | None = None) -> SkillDocument:
    return make_doc(
        name=draw(INDEX_NAMES),
        path=path if path is not None else draw(st.sampled_from(INDEX_PATHS)),
        description=draw(INDEX_TEXT),
        tags=draw(INDEX_TAGS),
        body=draw(INDEX_TEXT),
    )


SCORED_FIELDS = st.tuples(
    st.one_of(st.sampled_from(SCORE_NAMES), words_text(WORDS, 3)),  # name
    words_text(WORDS, 6),  # description
    st.lists(st.sampled_from(TAG_VOCAB), max_size=4),  # tags
    words_text(WORDS, 14),  # body
)


def scored_doc(draw: st.DrawFn, path: str) -> SkillDocument:
    name, description, tags, body = draw(SCORED_FIELDS)
    return make_doc(name, path, description, tags, body)


def policies(tokenizer: Tokenizer) -> st.SearchStrategy[SelectionPolicy]:
    tags = st.lists(random_case([*TAG_VOCAB, "absent", "agents", "md", "code"]), max_size=3)
    return st.builds(
        SelectionPolicy,
        top_k=st.integers(0, 12),
        min_score=st.one_of(st.sampled_from(THRESHOLDS), st.floats(-5.0, 20.0)),
        include_tags=st.one_of(st.just([]), tags),
        exclude_tags=st.one_of(st.just([]), tags),
        tokenizer=st.just(tokenizer),
    )


# (corpus, [(query, policy)], [("upsert", document) | ("remove", path)])
Scenario = tuple[
    list[SkillDocument], list[tuple[str, SelectionPolicy]], list[tuple[str, SkillDocument | str]]
]
# (initial documents, [document to upsert | (path, a spelling of it to remove)])
IndexScript = tuple[list[SkillDocument], list[SkillDocument | tuple[str, str | os.PathLike[str]]]]

queries = st.one_of(st.just(""), words_text([*WORDS, *ABSENT], 6))


# --- incremental index == fresh build -------------------------------------------------------------


def _path_alias(draw: st.DrawFn, path: str) -> str | os.PathLike[str]:
    """The same path spelled differently: every spelling must find the document."""
    spellings: list[str | os.PathLike[str]] = [
        path,
        Path(path),
        f"./{path}",
        f"{path}/",
        path.replace("/", "//"),
    ]
    return draw(st.sampled_from(spellings))


@st.composite
def index_scripts(draw: st.DrawFn) -> IndexScript:
    initial_paths = draw(st.lists(st.sampled_from(INDEX_PATHS), unique=True, max_size=6))
    initial = [draw(index_docs(path=p)) for p in initial_paths]
    ops: list[SkillDocument | tuple[str, str | os.PathLike[str]]] = []
    for _ in range(draw(st.integers(0, 25))):
        if draw(st.booleans()):
            ops.append(draw(index_docs()))
        else:
            path = draw(st.sampled_from(INDEX_PATHS))
            ops.append((path, _path_alias(draw, path)))
    return initial, ops


def _check_index(index: SkillIndex, model: dict[str, SkillDocument]) -> None:
    fresh = SkillIndex(reversed(list(model.values())))
    assert index == fresh
    docs = index.skills()
    assert docs == sorted(model.values(), key=reference_order)
    assert [d.sort_key() for d in docs] == sorted(d.sort_key() for d in docs)
    assert len(index) == index.len() == len(model)
    assert index.is_empty() == (not model)
    for name in NAMES:
        expected = next((d for d in docs if d.name == name), None)
        assert index.find_by_name(name) is expected
    for path in INDEX_PATHS:
        assert index.find_by_path(path) is model.get(path)
    # The normalised paths the index keeps beside its path table follow every change.
    assert index.normalised_paths() == [os.path.normpath(d.path) for d in docs]
    for doc in docs:
        assert index.find_by_id(doc.id) is next(d for d in docs if d.id == doc.id)


@settings(deadline=None)
@given(index_scripts())
def test_incremental_index_equals_fresh_build(script: IndexScript) -> None:
    initial, ops = script
    index = SkillIndex(initial)
    model = {str(d.path): d for d in initial}
    _check_index(index, model)
    for op in ops:
        if isinstance(op, SkillDocument):
            index.upsert(op)
            model[str(op.path)] = op
        else:
            path, alias = op
            removed = index.remove(alias)
            assert removed is model.pop(path, None)
        _check_index(index, model)


@given(st.lists(st.text(alphabet="/.a\0é", max_size=8), max_size=4))
def test_path_texts_are_normalised_as_normpath_does(texts: list[str]) -> None:
    """The path table's normalisation skips `normpath` when one search finds nothing it would
    change: the same paths either way (empty texts, `.` and `..`, `//`, trailing `/`, NULs)."""
    assert skill_index._normalised(list(texts)) == [os.path.normpath(t) for t in texts]


def test_incremental_index_examples() -> None:
    index = SkillIndex()
    docs = [
        make_doc("a", "a-b"),
        make_doc("a", "a/b"),
        make_doc("A", "z"),
        make_doc("é", "b"),
        make_doc("a", "a"),
    ]
    for doc in docs:
        index.upsert(doc)
    assert [(d.name, str(d.path)) for d in index] == [
        ("A", "z"),
        ("a", "a"),
        ("a", "a/b"),
        ("a", "a-b"),
        ("é", "b"),
    ]
    replacement = make_doc("b", "a/b", body="new")
    index.upsert(replacement)
    assert index.find_by_path("a/b") is replacement
    assert [(d.name, str(d.path)) for d in index] == [
        ("A", "z"),
        ("a", "a"),
        ("a", "a-b"),
        ("b", "a/b"),
        ("é", "b"),
    ]
    assert index.remove("./a/b/") is replacement
    assert index.remove("a/b") is None
    assert index == SkillIndex([docs[0], docs[2], docs[3], docs[4]])
    assert index != SkillIndex([docs[0], docs[2], docs[3]])


# --- inverted index == plain scorer ---------------------------------------------------------------


@st.composite
def scoring_scenarios(draw: st.DrawFn, tokenizer: Tokenizer) -> Scenario:
    n = draw(st.integers(1, 40))
    dirs = draw(st.lists(st.sampled_from(DIRS), min_size=n, max_size=n))
    paths = [f"{d}/{i}.md" for i, d in enumerate(dirs)]
    docs = [scored_doc(draw, p) for p in paths]
    cases = draw(st.lists(st.tuples(queries, policies(tokenizer)), min_size=1, max_size=4))
    ops: list[tuple[str, SkillDocument | str]] = []
    for j in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(["replace", "add", "remove", "remove-missing"]))
        if kind == "replace":
            ops.append(("upsert", scored_doc(draw, draw(st.sampled_from(paths)))))
        elif kind == "add":
            ops.append(("upsert", scored_doc(draw, f"{draw(st.sampled_from(DIRS))}/new{j}.md")))
        elif kind == "remove":
            ops.append(("remove", draw(st.sampled_from(paths))))
        else:
            ops.append(("remove", "nowhere/x.md"))
    return docs, cases, ops


def _compare(index: SkillIndex, query: str, policy: SelectionPolicy) -> None:
    fast = select_skills(index, query, policy)
    plain = select_skills_plain(index, query, policy)
    assert match_keys(fast) == match_keys(plain), (query, policy)
    assert [m.skill for m in fast] == [m.skill for m in plain]


def _compare_at_score_boundaries(index: SkillIndex, query: str, tokenizer: Tokenizer) -> None:
    """min_score exactly at, just above and just below scores that occur."""
    policy = SelectionPolicy(top_k=1000, min_score=0.0, tokenizer=tokenizer)
    everything = select_skills_plain(index, query, policy)
    for score in sorted({m.score for m in everything})[-2:]:
        for threshold in (score, math.nextafter(score, math.inf), math.nextafter(score, -math.inf)):
            _compare(index, query, SelectionPolicy(top_k=5, min_score=threshold, tokenizer=tokenizer))


def _scenario_test(tokenizer: Tokenizer) -> Callable[..., None]:
    # Each example builds up to 40 documents and runs ~15 selections: 120 keep the file near 10 s.
    @settings(deadline=None, max_examples=120)
    @given(scoring_scenarios(tokenizer))
    def check(
        scenario: Scenario,
    ) -> None:
        docs, cases, ops = scenario
        index = SkillIndex(docs)
        for query, policy in cases:
            _compare(index, query, policy)
        _compare_at_score_boundaries(index, cases[0][0], tokenizer)
        model = {str(d.path): d for d in docs}
        for step, (_, arg) in enumerate(ops):
            if isinstance(arg, SkillDocument):
                index.upsert(arg)
                model[str(arg.path)] = arg
            else:
                assert index.remove(arg) is model.pop(arg, None)
            query, policy = cases[step % len(cases)]
            _compare(index, query, policy)
        assert index == SkillIndex(model.values())
        for query, policy in cases:
            _compare(index, query, policy)
            # the same answers as a search built from scratch over the final documents
            assert match_keys(select_skills(index, query, policy)) == match_keys(
                select_skills(SkillIndex(model.values()), query, policy)
            )
        _compare_at_score_boundaries(index, cases[-1][0], tokenizer)

    return check


test_inverted_index_equals_plain_ascii = _scenario_test("ascii")
test_inverted_index_equals_plain_unicode = _scenario_test("unicode")


@settings(deadline=None, max_examples=50)
@given(scoring_scenarios("ascii"), queries)
def test_both_tokenizers_on_one_index_follow_changes(
    scenario: Scenario,
    query: str,
) -> None:
    """Two cached searches (one per tokenizer) on the same index both track every change."""
    docs, _, ops = scenario
    index = SkillIndex(docs)
    policies_ = [SelectionPolicy(top_k=12, min_score=0.0, tokenizer=t) for t in ("ascii", "unicode")]
    for policy in policies_:
        _compare(index, query, policy)
    for _, arg in ops:
        if isinstance(arg, SkillDocument):
            index.upsert(arg)
        else:
            index.remove(arg)
        for policy in policies_:
            _compare(index, query, policy)


# --- worked examples of the crate's semantics -----------------------------------------------------


def _one(doc: SkillDocument, query: str, **policy: object) -> list[tuple[float, str]]:
    index = SkillIndex([doc])
    full = SelectionPolicy(**{"top_k": 5, "min_score": 0.0, **policy})  # type: ignore[arg-type]
    fast = select_skills(index, query, full)
    assert match_keys(fast) == match_keys(select_skills_plain(index, query, full))
    return [(m.score, m.skill.name) for m in fast]


SEARCH_DOC = make_doc(
    "search",
    "s/search.md",
    description="search the codebase",
    tags=["search"],
    body="search rust code base",  # 4 unique body tokens: norm 2
)


def test_query_is_not_deduplicated() -> None:
    one = _one(SEARCH_DOC, "search")
    assert one == [((4.0 + 2.5 + 2.0 + 1.0) / 2, "search")]
    assert _one(SEARCH_DOC, "search search search") == [(3 * one[0][0], "search")]
    assert _one(SEARCH_DOC, "Search, SEARCH; search!") == [(14.25, "search")]
    assert _one(SEARCH_DOC, "search rust codebase") == [((9.5 + 1.0 + 2.5) / 2, "search")]


def test_tags_are_tokenized_for_scoring_but_whole_strings_for_filters() -> None:
    doc = make_doc("x", "x.md", tags=["agents-md", "Café"], body="")
    assert _one(doc, "agents") == [(2.0, "x")]
    assert _one(doc, "md md") == [(4.0, "x")]
    assert _one(doc, "caf") == [(2.0, "x")]  # ASCII tokenizer: é separates
    assert _one(doc, "café", tokenizer="unicode") == [(2.0, "x")]
    assert _one(doc, "agents", include_tags=["agents"]) == []
    assert _one(doc, "agents", include_tags=["md"]) == []
    assert _one(doc, "agents", include_tags=["AGENTS-MD"]) == [(2.0, "x")]
    assert _one(doc, "agents", include_tags=["CAFé"]) == [(2.0, "x")]  # ASCII-only lowercasing
    assert _one(doc, "agents", include_tags=["CAFÉ"]) == []  # É is not lowercased
    assert _one(doc, "agents", exclude_tags=["agents"]) == [(2.0, "x")]
    assert _one(doc, "agents", exclude_tags=["Agents-MD"]) == []


def test_exclude_wins_over_include() -> None:
    both = make_doc("both", "both.md", tags=["a", "b"], body="q")
    only_a = make_doc("only-a", "a.md", tags=["a"], body="q")
    index = SkillIndex([both, only_a])
    policy = SelectionPolicy(top_k=5, min_score=0.0, include_tags=["a", "b"], exclude_tags=["B"])
    for select in (select_skills, select_skills_plain):
        assert [m.skill.name for m in select(index, "q", policy)] == ["only-a"]


def test_empty_query_with_include_tags_scores_every_tagged_skill_zero_in_name_order() -> None:
    docs = [
        make_doc("zeta", "1.md", tags=["t"], body="zeta"),
        make_doc("Beta", "2.md", tags=["T", "other"], body="beta"),
        make_doc("alpha", "3.md", tags=["t"], body="alpha"),
        make_doc("alpha", "a/b.md", tags=["t"]),
        make_doc("alpha", "a-b.md", tags=["t"]),
        make_doc("untagged", "4.md", body="x"),
        make_doc("other", "5.md", tags=["other"]),
    ]
    index = SkillIndex(docs)
    expected = [
        (0.0, "Beta", "2.md"),
        (0.0, "alpha", "3.md"),
        (0.0, "alpha", "a/b.md"),
        (0.0, "alpha", "a-b.md"),
    ]
    expected.append((0.0, "zeta", "1.md"))
    for query in ("", "  ...  ", "数据"):  # no ASCII tokens
        for select in (select_skills, select_skills_plain):
            policy = SelectionPolicy(top_k=10, min_score=0.0, include_tags=["t"])
            got = [(m.score, m.skill.name, str(m.skill.path)) for m in select(index, query, policy)]
            assert got == expected
            assert select(index, query, SelectionPolicy(top_k=10, min_score=0.0)) == []
            assert select(index, query, SelectionPolicy(top_k=10, min_score=1e-45, include_tags=["t"])) == []
            assert select(index, query, SelectionPolicy(top_k=10, include_tags=["t"])) == []  # default 1.0


def next_f32_up(value: float) -> float:
    """The float32 just above `value` (a positive float32)."""
    bits = struct.unpack("<I", struct.pack("<f", value))[0]
    return float(struct.unpack("<f", struct.pack("<I", bits + 1))[0])


def test_min_score_is_compared_in_float32() -> None:
    hundred = " ".join(f"w{i}" for i in range(100))  # 100 unique body tokens: norm 10
    tenth = make_doc("tenth", "t.md", body=hundred)  # "w0": 1.0 / 10
    assert f32(0.1) > 0.1
    assert _one(tenth, "w0") == [(f32(0.1), "tenth")]
    assert _one(tenth, "w0", min_score=0.1) == [(f32(0.1), "tenth")]
    # A float64 threshold above the score that rounds down to it as float32 still lets it through.
    just_above = math.nextafter(f32(0.1), 1.0)
    assert just_above > f32(0.1) and f32(just_above) == f32(0.1)
    assert _one(tenth, "w0", min_score=just_above) == [(f32(0.1), "tenth")]
    assert _one(tenth, "w0", min_score=next_f32_up(f32(0.1))) == []
    assert _one(tenth, "w0", min_score=0.10000001) == []  # rounds to the next float32 up
    # 3.5 / 5 = 0.7; as float32 the score (0.699999988...) is below the float64 0.7, yet it passes
    # min_score 0.7 because the threshold is rounded to float32 as well.
    twentyfour = " ".join(f"w{i}" for i in range(24))
    seventh = make_doc("seventh", "s.md", description="x", body=f"x {twentyfour}")
    assert f32(0.7) < 0.7
    assert _one(seventh, "x") == [(f32(0.7), "seventh")]
    assert _one(seventh, "x", min_score=0.7) == [(f32(0.7), "seventh")]
    assert _one(seventh, "x", min_score=next_f32_up(f32(0.7))) == []
    # 1e-50 is 0.0 as float32: zero-score skills pass it (with no query tokens, only through include_tags)
    assert _one(seventh, "", min_score=1e-50) == []
    tagged = make_doc("tagged", "g.md", tags=["t"])
    assert _one(tagged, "", min_score=1e-50, include_tags=["t"]) == [(0.0, "tagged")]
    assert _one(tagged, "", min_score=1e-45, include_tags=["t"]) == []  # the smallest float32 subnormal


def test_ties_are_broken_by_name_then_path() -> None:
    body = "shared"
    docs = [
        make_doc("b", "0.md", body=body),
        make_doc("a", "a-b/x.md", body=body),
        make_doc("a", "a/b/x.md", body=body),
        make_doc("B", "9.md", body=body),
        make_doc("a", "a.b/x.md", body=body),
        make_doc("á", "0.md", body=body),
        make_doc("a", "b/x.md", body="shared more"),  # lower score: after every tie
    ]
    index = SkillIndex(docs)
    expected = [
        ("B", "9.md"),
        ("a", "a/b/x.md"),
        ("a", "a-b/x.md"),
        ("a", "a.b/x.md"),
        ("b", "0.md"),
        ("á", "0.md"),
    ]
    expected.append(("a", "b/x.md"))
    for select in (select_skills, select_skills_plain):
        got = select(index, "shared", SelectionPolicy(top_k=10, min_score=0.0))
        assert [(m.skill.name, str(m.skill.path)) for m in got] == expected
        assert len({m.score for m in got[:6]}) == 1
        top = select(index, "shared", SelectionPolicy(top_k=2, min_score=0.0))
        assert [(m.skill.name, str(m.skill.path)) for m in top] == expected[:2]


def test_zero_score_skills_fill_top_k_only_at_min_score_zero() -> None:
    docs = [
        make_doc("hit", "h.md", body="q"),
        make_doc("m1", "1.md"),
        make_doc("m0", "0.md"),
        make_doc("m2", "2.md"),
    ]
    index = SkillIndex(docs)
    for select in (select_skills, select_skills_plain):
        got = select(index, "q", SelectionPolicy(top_k=3, min_score=0.0))
        assert [(m.score, m.skill.name) for m in got] == [(1.0, "hit"), (0.0, "m0"), (0.0, "m1")]
        got = select(index, "q", SelectionPolicy(top_k=3, min_score=-1.0, exclude_tags=["x"]))
        assert [m.skill.name for m in got] == ["hit", "m0", "m1"]
        assert [m.skill.name for m in select(index, "q", SelectionPolicy(top_k=3, min_score=0.5))] == ["hit"]
        assert select(index, "q", SelectionPolicy(top_k=0, min_score=0.0)) == []


# --- Rust `Path` order ----------------------------------------------------------------------------

# Pairs (smaller, larger) as Rust's `Path` Ord says (checked with rustc 1.95: `Path::new(a) < Path::new(b)`).
RUST_PATH_ORDER_AGREES = [
    ("a/b", "a-b"), ("a/b", "a.b"), ("a/b/c", "a/bc"), ("A/x", "a"), ("/a", "a"), ("a", "é"), ("../x", ".a")
]  # fmt: skip
# Components compare as an enum first: RootDir < CurDir < ParentDir < Normal(..). `path_sort_key` makes
# the root "/" and ".." ordinary strings, so a normal component starting with a byte below "/" (resp. "..")
# sorts before them.
RUST_PATH_ORDER_DISAGREES = [("../x", "-y"), ("/a", "!x"), ("/a", "-x"), ("/a", "../x")]


@pytest.mark.parametrize(("smaller", "larger"), RUST_PATH_ORDER_AGREES)
def test_path_sort_key_is_rust_path_order(smaller: str, larger: str) -> None:
    assert path_sort_key(smaller) < path_sort_key(larger)


@pytest.mark.parametrize(("smaller", "larger"), RUST_PATH_ORDER_DISAGREES)
def test_path_sort_key_orders_root_and_parent_before_normal_components(smaller: str, larger: str) -> None:
    assert path_sort_key(smaller) < path_sort_key(larger)


def test_extras_dedup_follows_rust_path_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "work/proj").mkdir(parents=True)
    (tmp_path / "work/sub").mkdir()
    (tmp_path / "g").mkdir()
    (tmp_path / "work/proj/AGENTS.md").write_text("# Agents\nDo things.\n", encoding="utf-8")
    global_skill = "---\nname: agents\ndescription: global\n---\nbody\n"
    (tmp_path / "g/agents.md").write_text(global_skill, encoding="utf-8")
    monkeypatch.chdir(tmp_path / "work/sub")
    index = load_skill_index_with_extras("../proj", [tmp_path / "g"])
    assert [str(d.path) for d in index] == [str(tmp_path / "g/agents.md")]


def test_min_score_beyond_float32_range_selects_nothing() -> None:
    """Rust's `as f32` turns a finite value beyond the single range into infinity."""
    index = SkillIndex([SEARCH_DOC])
    assert f32(1e39) == math.inf and f32(-1e39) == -math.inf
    for select in (select_skills, select_skills_plain):
        assert select(index, "search", SelectionPolicy(min_score=1e39)) == []
        assert match_keys(select(index, "search", SelectionPolicy(min_score=-1e39))) == [
            (4.75, SEARCH_DOC.id, "s/search.md")
        ]


def test_search_survives_many_removals_and_compaction() -> None:
    """Over a thousand removals (the inverted index compacts itself) interleaved with queries."""
    words = ["alpha", "beta", "gamma", "delta", "search", "rust"]
    docs = [
        make_doc(
            name=f"{words[i % 6]} {i % 7}",
            path=f"{'ab'[i % 2]}/{i}.md",
            description=f"{words[(i * 5) % 6]} {words[(i * 3) % 6]}",
            tags=[words[i % 4]],
            body=" ".join(words[: 1 + i % 6]),
        )
        for i in range(1600)
    ]
    index = SkillIndex(docs)
    cases = [
        ("alpha beta", SelectionPolicy(top_k=7, min_score=0.0)),
        ("search search rust 3", SelectionPolicy(top_k=12, min_score=1.0, include_tags=["gamma", "alpha"])),
        ("", SelectionPolicy(top_k=5, min_score=0.0, include_tags=["Delta"])),
        ("gamma", SelectionPolicy(top_k=3, min_score=0.5, exclude_tags=["beta"], tokenizer="unicode")),
    ]
    for query, policy in cases:
        _compare(index, query, policy)
    for i in range(1600):
        if i % 4 != 3:  # drop three in four
            assert index.remove(f"{'ab'[i % 2]}/{i}.md") is docs[i]
        if i % 97 == 0:
            index.upsert(make_doc(f"new {i}", f"c/{i}.md", body="alpha search"))
            query, policy = cases[i % len(cases)]
            _compare(index, query, policy)
    for query, policy in cases:
        _compare(index, query, policy)
    survivors = [d for i, d in enumerate(docs) if i % 4 == 3]
    fresh = SkillIndex([*survivors, *(d for d in index if str(d.path).startswith("c/"))])
    assert index == fresh
    for query, policy in cases:
        assert match_keys(select_skills(index, query, policy)) == match_keys(
            select_skills(fresh, query, policy)
        )
