"""Test-query rankings kept between runs (routing/kept_rankings.py): what their key rests on,
when documents are the ones they were kept for, and what a kept ranking may name."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from documents import skill_document

from skills_lsp.core.index.documents_digest import documents_digest
from skills_lsp.core.index.skill_index import SkillDocument, SkillIndex
from skills_lsp.core.model import FileKind
from skills_lsp.core.routing import kept_rankings
from skills_lsp.core.routing.kept_rankings import KeptRankings, rankings_key, request_of, same_documents
from skills_lsp.core.routing.scorer import SelectionPolicy, SkillMatch


def doc(name: str, hash: str = "a" * 64, tags: tuple[str, ...] = ()) -> SkillDocument:
    path = Path(f"/ws/skills/{name}/SKILL.md")
    return skill_document(name, f"Does {name}.", "", tags, id=f"{name}-000000000000", path=path, hash=hash)


def test_documents_are_the_same_when_each_is_or_reads_as_the_one_at_its_place() -> None:
    docs = [doc("alpha"), doc("beta"), doc("gamma")]
    digest = documents_digest(docs)
    # An editor's buffer of an unchanged file: another object, the same digested fields.
    reopened = [docs[0], dataclasses.replace(docs[1], body="read again", last_modified=7), docs[2]]
    assert same_documents(docs, reopened) and documents_digest(reopened) == digest
    changed = [
        [docs[0], doc("beta", hash="b" * 64), docs[2]],  # its content
        [docs[0], doc("beta", tags=("new",)), docs[2]],  # its tags
        [docs[0], dataclasses.replace(docs[1], name="beta-2"), docs[2]],  # its name
        [docs[0], dataclasses.replace(docs[1], path=Path("/ws/other/SKILL.md")), docs[2]],  # its place
        [docs[0], dataclasses.replace(docs[1], kind=FileKind.FLAT_SKILL), docs[2]],  # its kind
        [docs[1], docs[0], docs[2]],  # the order
        docs[:2],  # one fewer
    ]
    for others in changed:
        assert not same_documents(docs, others)
        assert documents_digest(others) != digest  # what same_documents stands for


def test_the_rankings_key_rests_on_the_scorer_the_code_and_the_documents(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    docs = [doc("alpha"), doc("beta")]
    index = SkillIndex(docs)
    digest = documents_digest(docs)
    key = rankings_key(index, "bm25f", 2, digest)
    assert rankings_key(index, "bm25f", 2, documents_digest(list(docs))) == key
    assert rankings_key(index, "lexical", 2, digest) != key
    assert rankings_key(index, "bm25f", 2, documents_digest([docs[0], doc("beta", hash="c" * 64)])) != key
    stamps = kept_rankings.code_stamps()
    assert any(path.endswith("bm25f.py") for path, _, _ in stamps)
    edited = tuple((path, size + path.endswith("bm25f.py"), mtime) for path, size, mtime in stamps)
    monkeypatch.setattr(kept_rankings, "code_stamps", lambda: edited)
    assert rankings_key(index, "bm25f", 2, digest) != key


def test_a_kept_ranking_names_only_the_documents_it_was_kept_for() -> None:
    docs = [doc("alpha"), doc("beta")]
    request = request_of("do alpha", SelectionPolicy(2, 0.0, scorer="bm25f"))
    kept = KeptRankings("key", docs, {request: ((0.75, 1), (0.5, 0))})
    assert kept.ranking(request) == (SkillMatch(0.75, docs[1].summary()), SkillMatch(0.5, docs[0].summary()))
    for damaged in (((0.75, 2),), ((0.75, -1),), ((1, 0),), ((0.75, 0.0),), ((0.75,),), (0.75,), [(0.75, 0)]):
        kept.positions = {request: damaged}  # type: ignore[dict-item]
        assert kept.ranking(request) is None
    # Scored now, then saved as positions; a skill that is not one of the documents is never saved.
    kept.positions = {}
    kept.keep(request, (SkillMatch(0.5, docs[0].summary()),))
    assert kept.to_save([request]) == {request: ((0.5, 0),)}
    kept.keep(request, (SkillMatch(0.5, doc("gamma").summary()),))
    assert kept.to_save([request]) is None
    assert KeptRankings("key", docs).to_save([request]) is None  # not kept at all
