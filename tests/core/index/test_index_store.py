"""The persistent workspace index (core/index/store.py): a warm load equals a fresh build after any
edits; damaged, foreign or concurrently written frames are rebuilt, never trusted; the saved bm25f
postings give the scores of a fresh build."""

from __future__ import annotations

import dataclasses
import multiprocessing
import os
import pickle
import struct
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skills_lsp.core import forked
from skills_lsp.core.files.discovery import DEFAULT_AGENT_SKILL_ROOTS, DEFAULT_MAX_DEPTH
from skills_lsp.core.files.frames import RACY_NS, read_blobs, write_blobs
from skills_lsp.core.files.ignore import IgnoreFilter
from skills_lsp.core.index import skill_index, store
from skills_lsp.core.index.documents_digest import documents_digest
from skills_lsp.core.index.skill_index import SkillIndex, load_workspace_index
from skills_lsp.core.index.store import (
    DOCUMENTS_FILE,
    LISTING_FILE,
    DocumentStore,
    SavedCheck,
    load_cached_workspace_index,
    load_saved_workspace_index,
    read_frame,
    schema_key,
    write_frame,
)
from skills_lsp.core.routing import bm25f, ranking
from skills_lsp.core.routing.bm25f import SAVED_FILE, Bm25fSearch
from skills_lsp.core.routing.lexical import SAVED_FILE as LEXICAL_FILE
from skills_lsp.core.routing.lexical import LexicalScorer, select_skills_plain
from skills_lsp.core.routing.scorer import SelectionPolicy

WORDS = ["invoice", "invoices", "pdf", "forms", "weather", "git", "release", "notes", "sql", "数据库"]


def skill(name: str, description: str, body: str = "") -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n{body}\n"


def make_workspace(root: Path, count: int = 6) -> None:
    for i in range(count):
        write_skill(root, f"s{i}", skill(f"s{i}", f"{WORDS[i % len(WORDS)]} helper {i}", " ".join(WORDS[:i])))
    flat = root / ".skills" / "flat.md"
    flat.parent.mkdir(parents=True, exist_ok=True)
    flat.write_text(skill("flat", "a flat adk skill", "git release notes"), encoding="utf-8")


def write_skill(root: Path, name: str, text: str | bytes) -> Path:
    path = root / "skills" / name / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def age(cache: Path) -> None:
    """Make every stamp old enough to be trusted without hashing (as a store saved long ago),
    the directory listing's too."""
    frame = store_of(cache) / DOCUMENTS_FILE
    payload = read_frame(frame, schema_key("documents"))
    assert payload is not None
    payload["saved_ns"] += 10**12
    assert write_frame(frame, schema_key("documents"), payload)
    listing = read_frame(store_of(cache) / LISTING_FILE, schema_key("listing"))
    assert listing is not None
    listing["started"] += 10**12
    assert write_frame(store_of(cache) / LISTING_FILE, schema_key("listing"), listing)


def load(root: Path, cache: Path) -> SkillIndex:
    return load_cached_workspace_index(root, cache_dir=cache)


def store_of(cache: Path) -> Path:
    """The one workspace folder a test's cache holds."""
    (folder,) = [p for p in cache.iterdir() if p.is_dir()]
    return folder


def test_warm_load_reuses_every_unchanged_document(tmp_path: Path) -> None:
    root, cache = tmp_path / "ws", tmp_path / "cache"
    make_workspace(root)
    first = load(root, cache)
    assert first == load_workspace_index(root)
    assert (store_of(cache) / DOCUMENTS_FILE).is_file() and (store_of(cache) / ".gitignore").is_file()
    age(cache)
    warm = DocumentStore(store_of(cache))
    for doc in first:
        warm.document(os.path.normpath(doc.path), doc.kind)
    assert (warm.reused, warm.read) == (len(first), 0)
    assert load(root, cache) == first


def test_touched_file_with_the_same_content_is_not_parsed_again(tmp_path: Path) -> None:
    root, cache = tmp_path / "ws", tmp_path / "cache"
    make_workspace(root)
    load(root, cache)
    age(cache)
    path = root / "skills" / "s1" / "SKILL.md"
    os.utime(path, ns=(1_000_000_000_000_000_000, 1_000_000_000_000_000_000))
    warm = DocumentStore(store_of(cache))
    doc, record = warm.document(os.path.normpath(path), first_kind(root, path))
    assert (warm.reused, warm.read) == (1, 0)
    assert doc is not None and doc.last_modified == 1_000_000_000 and record is not None
    assert load(root, cache) == load_workspace_index(root)


def rewrite_keeping_mtime(path: Path, text: str) -> None:
    """Write `text` over `path` and give it back its mtime (an edit within one clock tick)."""
    before = os.stat(path)
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def test_an_edit_that_keeps_the_stamp_is_seen_when_the_stamp_is_recent(tmp_path: Path) -> None:
    """A same-size edit in the clock tick of the save keeps (size, mtime): stamps that recent are
    hashed again, never trusted on their own (the warm load's quick check included)."""
    root, cache = tmp_path / "ws", tmp_path / "cache"
    make_workspace(root)
    path = root / "skills" / "s1" / "SKILL.md"
    load(root, cache)
    # The save within RACY_NS of the file's mtime however slow the host (a save 2 s after writing
    # would trust the stamp, by design).
    frame = store_of(cache) / DOCUMENTS_FILE
    payload = read_frame(frame, schema_key("documents"))
    assert payload is not None
    payload["saved_ns"] = os.stat(path).st_mtime_ns + RACY_NS // 2
    assert write_frame(frame, schema_key("documents"), payload)
    old = path.read_text(encoding="utf-8")
    rewrite_keeping_mtime(path, old.replace("helper 1", "helpor 1"))
    assert len(path.read_text(encoding="utf-8")) == len(old)
    assert load(root, cache) == load_workspace_index(root)
    assert "helpor 1" in load(root, cache).find_by_path(path).description  # type: ignore[union-attr]


def test_an_edit_that_keeps_the_mtime_but_not_the_size_is_seen(tmp_path: Path) -> None:
    root, cache = tmp_path / "ws", tmp_path / "cache"
    make_workspace(root)
    path = root / "skills" / "s1" / "SKILL.md"
    load(root, cache)
    age(cache)  # every stamp old enough to be trusted: only the size tells
    rewrite_keeping_mtime(path, skill("s1", "a longer description than before", "more words"))
    assert load(root, cache) == load_workspace_index(root)


def test_a_saved_document_of_another_kind_is_read_again(tmp_path: Path) -> None:
    root, cache = tmp_path / "ws", tmp_path / "cache"
    make_workspace(root)
    path = root / "skills" / "s1" / "SKILL.md"
    load(root, cache)
    age(cache)
    kind = first_kind(root, path)
    other = next(k for k in type(kind) if k is not kind)
    warm = DocumentStore(store_of(cache))
    warm.documents({os.path.normpath(path): other})
    assert (warm.reused, warm.read) == (0, 1)
    warm.documents({os.path.normpath(path): kind})
    assert warm.reused == 1


def first_kind(root: Path, path: Path):  # type: ignore[no-untyped-def]
    doc = load_workspace_index(root).find_by_path(path)
    assert doc is not None
    return doc.kind


# An edit: (skill number, new content or None to delete, or bytes that are no usable skill)
edits = st.lists(
    st.tuples(
        st.integers(0, 7),
        st.one_of(
            st.none(),
            st.just(b"\xff\xfe not utf-8"),
            st.just("no frontmatter at all"),
            st.tuples(st.sampled_from(WORDS), st.lists(st.sampled_from(WORDS), max_size=6)).map(
                lambda t: (t[0], " ".join(t[1]))
            ),
        ),
        st.booleans(),  # keep the old mtime (a same-size edit inside one clock tick)
    ),
    max_size=8,
)


@settings(max_examples=40, deadline=None)
@given(edits, st.booleans())
def test_warm_index_equals_a_fresh_build_after_edits(  # type: ignore[no-untyped-def]
    tmp_path_factory: pytest.TempPathFactory, script, aged
) -> None:
    """`aged`: the store was saved long ago, so unchanged stamps are trusted without hashing,
    and every edit moves the mtime (as time passing does); else every edit lands in the same
    clock tick as the save, the case where only hashing can tell."""
    tmp = tmp_path_factory.mktemp("store")
    root, cache = tmp / "ws", tmp / "cache"
    make_workspace(root)
    load(root, cache)
    tick = 10**18
    for number, change, keep_mtime in script:
        if aged:
            age(cache)
            keep_mtime = False
        path = root / "skills" / f"s{number}" / "SKILL.md"
        before = path.stat() if path.exists() else None
        if change is None:
            if path.exists():
                path.unlink()
        elif isinstance(change, tuple):
            word, body = change
            write_skill(root, f"s{number}", skill(f"s{number}", f"{word} helper", body))
        else:
            write_skill(root, f"s{number}", change)
        if keep_mtime and before is not None and path.exists():
            os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
        elif aged:
            tick += 10**9
            # the directories an edit may have changed: a file added or removed moves their mtimes
            for changed in (path, path.parent, path.parent.parent):
                if changed.exists():
                    os.utime(changed, ns=(tick, tick))
        warm = load(root, cache)
        assert warm == load_workspace_index(root)
        assert [d.to_json() for d in warm] == [d.to_json() for d in load_workspace_index(root)]


def damage(frame: Path, how: str) -> None:
    data = frame.read_bytes()
    if how == "truncated":
        frame.write_bytes(data[: len(data) // 2])
    elif how == "flipped":
        frame.write_bytes(data[:-10] + bytes([data[-10] ^ 0xFF]) + data[-9:])
    elif how == "empty":
        frame.write_bytes(b"")
    elif how == "garbage":
        frame.write_bytes(os.urandom(len(data)))
    elif how == "foreign-version":
        key = schema_key("documents").replace(b"/", b"/0.0.0-other/", 1)
        at = len(store.MAGIC)
        (length,) = struct.unpack_from("<I", data, at)
        frame.write_bytes(data[:at] + struct.pack("<I", len(key)) + key + data[at + 4 + length :])
    else:  # a valid frame whose payload names a class the store never holds
        write_frame(frame, schema_key("documents"), {"records": {"x": os.system}, "saved_ns": 0})


@pytest.mark.parametrize("how", ["truncated", "flipped", "empty", "garbage", "foreign-version", "hostile"])
def test_damaged_store_is_rebuilt_never_trusted(tmp_path: Path, how: str) -> None:
    root, cache = tmp_path / "ws", tmp_path / "cache"
    make_workspace(root)
    load(root, cache)
    age(cache)
    # Change a file behind the store's back without changing its stamp: a trusted store would
    # keep the old document; a rebuilt one reads the new content.
    path = root / "skills" / "s2" / "SKILL.md"
    info = path.stat()
    text = path.read_text(encoding="utf-8").replace("helper", "HELPER")
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))
    damage(store_of(cache) / DOCUMENTS_FILE, how)
    assert DocumentStore(store_of(cache)).records == {}
    assert load(root, cache) == load_workspace_index(root)
    assert read_frame(store_of(cache) / DOCUMENTS_FILE, schema_key("documents")) is not None  # anew


def test_version_change_rebuilds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, cache = tmp_path / "ws", tmp_path / "cache"
    make_workspace(root)
    load(root, cache)
    assert DocumentStore(store_of(cache)).records
    monkeypatch.setattr(store, "__version__", "999.0.0")
    assert DocumentStore(store_of(cache)).records == {}
    assert load(root, cache) == load_workspace_index(root)
    assert DocumentStore(store_of(cache)).records  # saved under the new version


def _write_many(frame: str, marker: int) -> None:
    for i in range(30):
        assert write_frame(Path(frame), b"test", {"marker": marker, "round": i, "fill": "x" * 200_000})


def test_two_writers_at_once_leave_one_whole_frame(tmp_path: Path) -> None:
    frame = tmp_path / "cache" / "frame.bin"
    context = multiprocessing.get_context("spawn")
    writers = [context.Process(target=_write_many, args=(str(frame), n)) for n in (1, 2)]
    seen: set[int] = set()
    for w in writers:
        w.start()
    while any(w.is_alive() for w in writers):
        payload = read_frame(frame, b"test")  # a reader meanwhile sees a whole frame or none
        if payload is not None:
            assert payload["fill"] == "x" * 200_000
            seen.add(payload["marker"])
    for w in writers:
        w.join()
        assert w.exitcode == 0
    final = read_frame(frame, b"test")
    assert final is not None and final["round"] == 29 and final["marker"] in (1, 2)
    assert not [p for p in frame.parent.iterdir() if p.name.endswith(".tmp")]


def test_large_arrays_and_unpicklable_payloads(tmp_path: Path) -> None:
    frame = tmp_path / "frame.bin"
    big = np.arange(3_000_000, dtype=np.int64)  # written out of band by pickle protocol 5
    assert write_frame(frame, b"k", {"big": big, "small": np.zeros(3, np.uint16)})
    loaded = read_frame(frame, b"k")
    assert loaded is not None and np.array_equal(loaded["big"], big) and loaded["small"].dtype == np.uint16
    assert not write_frame(frame, b"k", {"lambda": lambda: 1})  # not picklable: no frame, no crash
    assert read_frame(frame, b"k") is not None  # the previous frame is still there
    assert sorted(p.name for p in tmp_path.iterdir()) == [".gitignore", "frame.bin"]  # no temp file left


def test_blobs_come_back_as_written_and_a_damaged_file_is_never_trusted(tmp_path: Path) -> None:
    frame = tmp_path / "blobs.bin"
    counts = np.arange(12, dtype=np.uint16).reshape(3, 4)
    assert write_blobs(frame, b"k", {"words": 2}, [b"a\nb", np.arange(5, dtype=np.int64), counts, b""])
    found = read_blobs(frame, b"k")
    assert found is not None
    head, (words, indptr, counts_bytes, empty) = found
    assert head == {"words": 2} and bytes(words) == b"a\nb" and bytes(empty) == b""
    assert np.frombuffer(indptr, np.int64).tolist() == [0, 1, 2, 3, 4]
    assert np.array_equal(np.frombuffer(counts_bytes, np.uint16).reshape(3, 4), counts)
    assert read_blobs(frame, b"other") is None  # foreign
    whole = frame.read_bytes()
    for damaged in (
        whole[:-1],  # cut short in the last blob
        whole + b"\0",  # longer than its table says
        whole[:-5] + bytes([whole[-5] ^ 1]) + whole[-4:],  # one bit of a blob flipped
        whole[:40],  # cut in the head
    ):
        frame.write_bytes(damaged)
        assert read_blobs(frame, b"k") is None
    assert read_blobs(tmp_path / "missing.bin", b"k") is None


def test_damaged_saved_bm25f_postings_are_rebuilt(tmp_path: Path) -> None:
    root, cache = tmp_path / "ws", tmp_path / "cache"
    make_workspace(root, 9)
    expected = bm25f_scores(Bm25fSearch(load_workspace_index(root)), QUERIES)
    Bm25fSearch(load(root, cache))  # builds and saves
    saved = (store_of(cache) / SAVED_FILE).read_bytes()
    # A bit flipped in the middle of the arrays (past the checked head): not used, written again.
    middle = len(saved) - 200
    (store_of(cache) / SAVED_FILE).write_bytes(
        saved[:middle] + bytes([saved[middle] ^ 4]) + saved[middle + 1 :]
    )
    assert bm25f_scores(Bm25fSearch(load(root, cache)), QUERIES) == expected
    assert (store_of(cache) / SAVED_FILE).read_bytes() == saved
    loaded = Bm25fSearch(load(root, cache))  # the file written again is used: same scores
    assert isinstance(loaded._base_slots.base, memoryview)  # a view over the file, not a copy
    assert bm25f_scores(loaded, QUERIES) == expected


def test_two_roots_sharing_a_cache_folder_keep_an_index_each(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    make_workspace(tmp_path / "ws" / "a", 3)
    make_workspace(tmp_path / "ws" / "b", 5)
    for root in (tmp_path / "ws" / "a", tmp_path / "ws" / "b", tmp_path / "ws"):
        assert load(root, cache) == load_workspace_index(root)
    folders = [p for p in cache.iterdir() if p.is_dir()]
    assert len(folders) == 3 and all((p / DOCUMENTS_FILE).is_file() for p in folders)


def test_unwritable_cache_still_gives_the_index(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    make_workspace(root)
    blocker = tmp_path / "file"
    blocker.write_text("not a folder", encoding="utf-8")
    assert load(root, blocker / "cache") == load_workspace_index(root)


def test_a_cold_load_keeps_no_body_in_memory_before_the_save(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, cache = tmp_path / "ws", tmp_path / "cache"
    make_workspace(root, 9)
    write_skill(root, "s9", skill("s9", "unicode body", "数据库 ünïcödé \U0001f600 body"))
    held: list[int] = []
    save = DocumentStore.save

    def counting(
        self: DocumentStore, records: dict[str, store.Record], order: list[str], digest: str | None = None
    ) -> bool:
        held.append(sum("body" in r[4].__dict__ for r in records.values() if r[4] is not None))
        return save(self, records, order, digest)

    monkeypatch.setattr(DocumentStore, "save", counting)
    fresh = load_workspace_index(root)
    cold = load(root, cache)
    assert held == [0]  # every body read was written to the spool, not kept
    assert [d.body for d in cold] == [d.body for d in fresh]
    write_skill(root, "s1", skill("s1", "changed", "another body"))  # one read, the rest from the old file
    assert [d.body for d in load(root, cache)] == [d.body for d in load_workspace_index(root)]
    assert held == [0, 0]
    assert [d.body for d in load(root, cache)] == [d.body for d in load_workspace_index(root)]  # warm


def bm25f_scores(search: Bm25fSearch, queries: list[str]) -> dict[str, dict[str, float]]:
    """Each query's score per document path (slot order may differ between builds)."""
    result: dict[str, dict[str, float]] = {}
    for query in queries:
        scores = search.scores(query)
        slots = enumerate(search.documents())
        result[query] = {str(doc.path): float(scores[slot]) for slot, doc in slots if doc is not None}
    return result


QUERIES = ["invoice pdf", "git release notes", "weather", "数据库 sql", "nothing matches zzz"]


def test_saved_bm25f_postings_score_as_a_fresh_build(tmp_path: Path) -> None:
    root, cache = tmp_path / "ws", tmp_path / "cache"
    make_workspace(root, 9)
    fresh = Bm25fSearch(load_workspace_index(root))
    built = Bm25fSearch(load(root, cache))  # builds and saves
    assert (store_of(cache) / SAVED_FILE).is_file()
    loaded_index = load(root, cache)
    loaded = Bm25fSearch(loaded_index)  # loads
    assert loaded._vocabulary == built._vocabulary
    assert bm25f_scores(loaded, QUERIES) == bm25f_scores(fresh, QUERIES)
    # ... and follows edits like a fresh build
    edited = write_skill(root, "s3", skill("s3", "invoice weather", "sql sql sql"))
    loaded_index.upsert(load_workspace_index(root).find_by_path(edited))  # type: ignore[arg-type]
    assert bm25f_scores(loaded, QUERIES) == bm25f_scores(Bm25fSearch(load_workspace_index(root)), QUERIES)


def test_bm25f_postings_of_other_documents_are_not_used(tmp_path: Path) -> None:
    root, cache = tmp_path / "ws", tmp_path / "cache"
    make_workspace(root, 9)
    Bm25fSearch(load(root, cache))
    saved = (store_of(cache) / SAVED_FILE).read_bytes()
    write_skill(root, "s4", skill("s4", "release weather", "pdf"))
    rebuilt = Bm25fSearch(load(root, cache))
    assert (store_of(cache) / SAVED_FILE).read_bytes() != saved
    assert bm25f_scores(rebuilt, QUERIES) == bm25f_scores(Bm25fSearch(load_workspace_index(root)), QUERIES)
    (store_of(cache) / SAVED_FILE).write_bytes(saved[:100])  # truncated: rebuilt, same scores
    again = Bm25fSearch(load(root, cache))
    assert bm25f_scores(again, QUERIES) == bm25f_scores(rebuilt, QUERIES)


@pytest.mark.parametrize("chunk", [2, 3, 1000])
def test_bulk_build_equals_adding_one_by_one(monkeypatch: pytest.MonkeyPatch, chunk: int) -> None:
    monkeypatch.setattr(bm25f, "_CHUNK", chunk)  # several chunks: their postings merge in order
    index = load_workspace_index(Path(__file__).resolve().parents[3] / "examples")
    bulk = Bm25fSearch(index)
    assert len(index) > 2 * chunk or chunk == 1000
    one_by_one = Bm25fSearch(SkillIndex())
    for doc in index:
        one_by_one.index.upsert(doc)
    queries = ["pdf form", "release notes", "weather forecast", "sql query", "the"]
    for query in queries:
        assert np.array_equal(bulk.scores(query), one_by_one.scores(query))
    assert pickle.loads(pickle.dumps(bulk._base_counts)).dtype == np.uint16


def walks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the tree walks `load` makes (one per call of `workspace_files`)."""
    count: list[int] = []
    real = store.workspace_files

    def counting(*args, **kwargs):  # type: ignore[no-untyped-def]
        count.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(store, "workspace_files", counting)
    return count


def test_listing_is_reused_until_a_directory_changes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, cache = tmp_path / "ws", tmp_path / "cache"
    make_workspace(root)
    count = walks(monkeypatch)
    load(root, cache)
    assert len(count) == 1
    assert load(root, cache) == load_workspace_index(root) and len(count) == 2  # too recent to trust
    age(cache)
    # an edit in place changes no directory: no walk, and the document store still sees it
    path = root / "skills" / "s2" / "SKILL.md"
    path.write_text(skill("s2", "renamed helper", "pdf"), encoding="utf-8")
    assert load(root, cache) == load_workspace_index(root) and len(count) == 2
    # a new skill changes its parent's mtime: walked again, found
    new = write_skill(root, "s9", skill("s9", "new weather helper"))
    os.utime(new.parent.parent, ns=(10**18, 10**18))
    warm = load(root, cache)
    assert warm.find_by_path(new) is not None and len(count) == 3
    assert warm == load_workspace_index(root)


def test_a_recent_listing_is_reused_by_the_loads_it_was_made_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`fresh_since`: a walk made since then (the server's, for the child process that indexes
    the folder and for its own load after it) is not made again, though the tree changed within
    RACY_NS of it; a directory changed since it still counts, and an older walk is not trusted."""
    root, cache = tmp_path / "ws", tmp_path / "cache"
    make_workspace(root)
    count = walks(monkeypatch)
    since = time.time_ns()
    load_cached_workspace_index(root, cache_dir=cache, fresh_since=since)
    again = load_cached_workspace_index(root, cache_dir=cache, fresh_since=since)
    assert again == load_workspace_index(root) and len(count) == 1  # recent, but made since then
    new = write_skill(root, "s9", skill("s9", "new weather helper"))
    os.utime(new.parent.parent, ns=(10**18, 10**18))
    warm = load_cached_workspace_index(root, cache_dir=cache, fresh_since=since)
    assert warm.find_by_path(new) is not None and len(count) == 2 and warm == load_workspace_index(root)
    later = time.time_ns()
    assert load_cached_workspace_index(root, cache_dir=cache, fresh_since=later) == warm
    assert len(count) == 3  # walked before `later`, and too recent to trust


def test_ignore_file_edited_in_place_walks_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, cache = tmp_path / "ws", tmp_path / "cache"
    make_workspace(root)
    gitignore = root / ".gitignore"
    gitignore.write_text("skills/s1/\n", encoding="utf-8")
    count = walks(monkeypatch)

    def load_ignoring() -> SkillIndex:
        return load_cached_workspace_index(root, cache_dir=cache, ignore=IgnoreFilter(root))

    assert load_ignoring().find_by_name("s1") is None
    age(cache)
    assert load_ignoring().find_by_name("s1") is None and len(count) == 1
    info = root.stat()
    gitignore.write_text("skills/s3/\n", encoding="utf-8")  # same size, the folder's mtime kept
    os.utime(root, ns=(info.st_atime_ns, info.st_mtime_ns))
    os.utime(gitignore, ns=(10**18, 10**18))
    warm = load_ignoring()
    assert len(count) == 2 and warm.find_by_name("s1") is not None and warm.find_by_name("s3") is None
    age(cache)
    # a new ignore file in a listed folder is seen through that folder's mtime (not stat'ed itself)
    (root / "skills" / ".gitignore").write_text("s5/\n", encoding="utf-8")
    os.utime(root / "skills", ns=(10**18, 10**18))
    warm = load_ignoring()
    assert (
        len(count) == 3
        and warm.find_by_name("s5") is None
        and warm == load_workspace_index(root, ignore=IgnoreFilter(root))
    )


@pytest.mark.parametrize("how", ["truncated", "flipped", "garbage"])
def test_damaged_listing_is_walked_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    root, cache = tmp_path / "ws", tmp_path / "cache"
    make_workspace(root)
    load(root, cache)
    age(cache)
    count = walks(monkeypatch)
    damage(store_of(cache) / LISTING_FILE, how)
    assert load(root, cache) == load_workspace_index(root) and len(count) == 1
    assert read_frame(store_of(cache) / LISTING_FILE, schema_key("listing")) is not None  # anew


def test_a_listing_naming_an_unknown_kind_is_walked_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A whole frame this code did not write (a kind it does not know) is no listing: the tree is
    walked again (the kinds are looked up by value, not made by FileKind's call)."""
    root, cache = tmp_path / "ws", tmp_path / "cache"
    make_workspace(root)
    load(root, cache)
    age(cache)
    frame = store_of(cache) / LISTING_FILE
    listing = read_frame(frame, schema_key("listing"))
    assert listing is not None
    listing["kinds"][0] = "a-kind-of-the-future"
    assert write_frame(frame, schema_key("listing"), listing)
    count = walks(monkeypatch)
    assert load(root, cache) == load_workspace_index(root) and len(count) == 1


def lexical_answers(index: SkillIndex) -> list[list[tuple[str, float]]]:
    policy = SelectionPolicy(top_k=20, min_score=0.0)
    search = LexicalScorer(index).search()
    return [[(str(m.skill.path), m.score) for m in search.select(q, policy)] for q in QUERIES]


def test_saved_lexical_postings_select_as_a_fresh_build(tmp_path: Path) -> None:
    root, cache = tmp_path / "ws", tmp_path / "cache"
    make_workspace(root, 9)
    built = LexicalScorer(load(root, cache)).search()  # builds and saves
    assert (store_of(cache) / LEXICAL_FILE.format("ascii")).is_file() and built._postings
    loaded_index = load(root, cache)
    loaded = LexicalScorer(loaded_index).search()  # loads: no per-token arrays
    assert loaded._vocabulary and not loaded._postings
    assert lexical_answers(loaded_index) == lexical_answers(load_workspace_index(root))
    # ... and follows edits like a fresh build
    edited = write_skill(root, "s3", skill("s3", "invoice weather", "sql sql sql"))
    loaded_index.upsert(load_workspace_index(root).find_by_path(edited))  # type: ignore[arg-type]
    policy = SelectionPolicy(top_k=20, min_score=0.0)
    fresh = load_workspace_index(root)
    for query in QUERIES:
        got = [(str(m.skill.path), m.score) for m in loaded.select(query, policy)]
        assert got == [(str(m.skill.path), m.score) for m in select_skills_plain(fresh, query, policy)]
    # postings saved for other documents are not used
    saved = (store_of(cache) / LEXICAL_FILE.format("ascii")).read_bytes()
    write_skill(root, "s4", skill("s4", "release weather", "pdf"))
    assert lexical_answers(load(root, cache)) == lexical_answers(load_workspace_index(root))
    assert (store_of(cache) / LEXICAL_FILE.format("ascii")).read_bytes() != saved


def test_warm_index_keeps_the_saved_order_and_still_follows_changes(tmp_path: Path) -> None:
    root, cache = tmp_path / "ws", tmp_path / "cache"
    make_workspace(root, 9)
    load(root, cache)
    warm = load(root, cache)
    assert warm._sort_keys is None  # taken in the saved order, not sorted again
    assert [d.to_json() for d in warm] == [d.to_json() for d in load_workspace_index(root)]
    fresh = load_workspace_index(root)
    # One write, read once: two writes could fall in two seconds and differ in last_modified.
    edited = write_skill(root, "s7", skill("a-first", "now sorts first", "pdf"))
    edited_doc = load_workspace_index(root).find_by_path(edited)
    assert edited_doc is not None
    for index in (warm, fresh):
        index.remove(root / "skills" / "s4" / "SKILL.md")
        index.upsert(edited_doc)
    assert [d.to_json() for d in warm] == [d.to_json() for d in fresh]
    assert warm.normalised_paths() == fresh.normalised_paths() == [os.path.normpath(d.path) for d in fresh]


def fresh_and_warm(tmp_path: Path) -> tuple[Path, Path, SkillIndex, SkillIndex]:
    """A workspace of 9 skills, its cache, its fresh build and a warm load of its saved store."""
    root, cache = tmp_path / "ws", tmp_path / "cache"
    make_workspace(root, 9)
    fresh = load_workspace_index(root)
    load(root, cache)
    return root, cache, fresh, load(root, cache)


def test_bodies_are_read_on_first_use_and_survive_a_damaged_frame(tmp_path: Path) -> None:
    root, cache, fresh, warm = fresh_and_warm(tmp_path)
    assert all("body" not in doc.__dict__ for doc in warm)  # nothing asked for a body yet
    assert [d.body for d in warm] == [d.body for d in fresh]
    restored = pickle.loads(pickle.dumps(load(root, cache).skills()))  # a lazy document pickles whole
    assert restored == fresh.skills() and all("_body_loader" not in d.__dict__ for d in restored)
    damage(store_of(cache) / store.BODIES_FILE, "garbage")
    assert [d.to_json() for d in load(root, cache)] == [d.to_json() for d in fresh]  # read from the files


def test_paths_are_made_on_first_use_and_are_those_of_a_fresh_build(tmp_path: Path) -> None:
    """A warm load keeps each saved document's path as text until it is asked for (16,000 Paths
    were 0.1 s of a warm start): the keys made of every path (a saved search's, the index's
    lookup by path) read the text; the path, its pickle and the store saved again are a fresh
    build's."""
    from skills_lsp.core.index.skill_index import path_text
    from skills_lsp.core.routing.ranking import documents_key

    root, cache, fresh, warm = fresh_and_warm(tmp_path)
    assert all("path" not in doc.__dict__ for doc in warm)  # nothing asked for a path yet
    assert [path_text(d) for d in warm] == [os.fspath(d.path) for d in fresh]
    assert documents_key(warm.skills(), 1) == documents_key(fresh.skills(), 1)
    # The path table's normalised paths are the store's keys: no text read, a fresh build's paths.
    assert warm.normalised_paths() == [os.path.normpath(d.path) for d in fresh]
    assert all("path" not in doc.__dict__ for doc in warm)
    some = fresh.skills()[3]
    found = warm.find_by_path(os.fspath(some.path))  # the lookup by path, made of the texts
    assert all("path" not in doc.__dict__ for doc in warm if doc is not found)
    assert found == some
    restored = pickle.loads(pickle.dumps(warm.skills()))  # a lazy document pickles with its path
    assert restored == fresh.skills() and all(isinstance(d.__dict__["path"], Path) for d in restored)
    assert all("_path_text" not in d.__dict__ for d in restored)
    assert [d.path for d in warm] == [d.path for d in fresh] and all(isinstance(d.path, Path) for d in warm)
    edited = write_skill(root, "s2", skill("s2", "edited now", "other words"))
    again = load(root, cache)  # the store saved again, with the texts of the documents not read
    assert again == load_workspace_index(root) and again.find_by_path(edited) is not None
    assert load(root, cache) == again


def test_bodies_are_read_from_the_store_each_time_and_never_kept(tmp_path: Path) -> None:
    root, cache = tmp_path / "ws", tmp_path / "cache"
    make_workspace(root, 9)
    write_skill(root, "s9", skill("s9", "unicode body", "数据库 ünïcödé \U0001f600 body"))
    fresh = load_workspace_index(root)
    for index in (load(root, cache), load(root, cache)):  # the cold load that saves, then a warm one
        assert [d.body for d in index] == [d.body for d in fresh]
        assert all("body" not in doc.__dict__ for doc in index)  # read, not kept in memory
    warm = load(root, cache)
    assert [d.body for d in warm] == [d.body for d in fresh]
    # A body whose bytes were damaged in the file is read from the skill's file again.
    bodies = store_of(cache) / store.BODIES_FILE
    data = bytearray(bodies.read_bytes())
    at = data.rindex("ünïcödé".encode())
    data[at] ^= 0x01
    bodies.write_bytes(bytes(data))  # in place: the open file sees it
    assert [d.body for d in warm] == [d.body for d in fresh]
    # A store written again by another process (new content) leaves what is read alone.
    other = load(root, cache)
    write_skill(root, "s1", skill("s1", "changed", "another body"))
    load(root, cache)
    assert [d.body for d in other] == [d.body for d in fresh]


def test_listing_of_a_relative_root_is_not_reused_from_another_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_workspace(tmp_path / "a" / "ws")
    cache = tmp_path / "cache"
    monkeypatch.chdir(tmp_path / "a")
    load(Path("ws"), cache)
    age(cache)
    monkeypatch.chdir(tmp_path)  # the same folder spelt from elsewhere: paths spelt from here
    warm = load(Path("a/ws"), cache)
    assert warm == load_workspace_index(Path("a/ws"))
    assert all(Path(doc.path).is_file() for doc in warm)


@pytest.mark.skipif(not forked.may_fork(), reason="forked reading needs Linux and one thread")
def test_a_cold_load_on_two_processes_equals_one(tmp_path: Path) -> None:
    """The files that changed are read on two processes: the same index, the same saved store
    (a warm load of either reuses every document), and progress reported up to the total."""
    root = tmp_path / "ws"
    make_workspace(root, count=1200)
    reports: list[tuple[int, int]] = []
    one = load_cached_workspace_index(root, cache_dir=tmp_path / "one", jobs=1)
    two = load_cached_workspace_index(
        root, cache_dir=tmp_path / "two", jobs=2, progress=lambda done, total: reports.append((done, total))
    )
    assert [(d.to_json(), d.kind) for d in two] == [(d.to_json(), d.kind) for d in one]
    assert reports[0] == (0, 1201) and len(reports) > 10 and all(total == 1201 for _, total in reports)
    assert [d.body for d in two][:50] == [d.body for d in one][:50]  # bodies from the spool
    for cache in ("one", "two"):
        age(tmp_path / cache)
        reloaded = DocumentStore(store_of(tmp_path / cache))
        reloaded.documents({os.path.normpath(d.path): d.kind for d in one}, jobs=2)
        assert (reloaded.reused, reloaded.read) == (len(one), 0)


def test_two_spellings_of_one_file_are_both_answered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    write_skill(tmp_path, "a", skill("a", "an a helper"))
    kind = first_kind(tmp_path, tmp_path / "skills" / "a" / "SKILL.md")
    found = DocumentStore(None).documents({"skills/a/SKILL.md": kind, "./skills/a/SKILL.md": kind}, jobs=1)
    assert [doc.name if doc else None for doc, _ in found.values()] == ["a", "a"]


def test_progress_counts_every_file_when_some_are_reused(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    make_workspace(root, count=12)
    load(root, tmp_path / "cache")
    age(tmp_path / "cache")
    write_skill(root, "s3", skill("s3", "changed"))
    reports: list[tuple[int, int]] = []
    load_cached_workspace_index(
        root, cache_dir=tmp_path / "cache", progress=lambda done, total: reports.append((done, total))
    )
    assert {total for _, total in reports} == {13}
    assert reports[0] == (0, 13) and reports[-1][0] >= 12  # the reused ones count as done


def load_saved(
    root: Path, cache: Path, ignore: IgnoreFilter | None = None
) -> tuple[SkillIndex, SavedCheck] | None:
    ignore = ignore or IgnoreFilter(root)
    return load_saved_workspace_index(root, DEFAULT_AGENT_SKILL_ROOTS, DEFAULT_MAX_DEPTH, cache, ignore)


def saved_workspace(tmp_path: Path) -> tuple[Path, Path]:
    """A workspace (with an ignore file) loaded once through the store, its stamps aged."""
    root, cache = tmp_path / "ws", tmp_path / "cache"
    make_workspace(root, 9)
    (root / ".gitignore").write_text("skills/s8/\n", encoding="utf-8")
    load_cached_workspace_index(root, cache_dir=cache, ignore=IgnoreFilter(root))
    age(cache)
    return root, cache


def test_a_saved_index_loads_without_a_stat_of_the_tree_as_the_full_load_gives_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, cache = saved_workspace(tmp_path)
    ignore = IgnoreFilter(root)  # made as the folder's config is read: before the load
    stats: list[str] = []
    real_stat = os.stat

    def counting_stat(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        if str(path).startswith(str(root)):
            stats.append(str(path))
        return real_stat(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", counting_stat)
    saved = load_saved(root, cache, ignore)
    assert saved is not None and stats == []
    index, check = saved
    assert check.holds() and stats  # the check is where the stats are
    full = load_cached_workspace_index(root, cache_dir=cache, ignore=IgnoreFilter(root))
    assert [d.to_json() for d in index] == [d.to_json() for d in full]
    assert [d.to_json() for d in index] == [
        d.to_json() for d in load_workspace_index(root, ignore=IgnoreFilter(root))
    ]
    assert index.cache_dir == full.cache_dir and index.frames is not None


def edit_in_place(root: Path) -> None:
    path = root / "skills" / "s3" / "SKILL.md"
    before = path.stat()
    path.write_text(path.read_text(encoding="utf-8").replace("forms", "FORMS"), encoding="utf-8")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 1))  # same size, the folder's mtime kept
    os.utime(path.parent, ns=(before.st_atime_ns, path.parent.stat().st_mtime_ns))


def add_skill(root: Path) -> None:
    write_skill(root, "s9", skill("s9", "a new helper", "pdf"))


def remove_skill(root: Path) -> None:
    (root / "skills" / "s4" / "SKILL.md").unlink()


def grow_keeping_mtime(root: Path) -> None:
    path = root / "skills" / "s3" / "SKILL.md"
    before, folder = path.stat(), path.parent.stat()
    path.write_text(path.read_text(encoding="utf-8") + "\nOne more line.\n", encoding="utf-8")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # as `cp -p`, `rsync -t` and tar do
    os.utime(path.parent, ns=(folder.st_atime_ns, folder.st_mtime_ns))


def change_ignore_file(root: Path) -> None:
    gitignore = root / ".gitignore"
    folder = root.stat()
    gitignore.write_text("skills/s1/\n", encoding="utf-8")  # same size, the folder's mtime kept
    os.utime(root, ns=(folder.st_atime_ns, folder.st_mtime_ns))
    os.utime(gitignore, ns=(10**18, 10**18))


@pytest.mark.parametrize("in_child", [True, False], ids=["stats in a child", "stats here"])
@pytest.mark.parametrize(
    "change", [edit_in_place, grow_keeping_mtime, add_skill, remove_skill, change_ignore_file]
)
def test_the_check_of_a_saved_index_fails_on_any_change_the_full_load_sees(
    tmp_path: Path, change: Callable[[Path], None], in_child: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not in_child:  # no child to be had: the check stats here
        monkeypatch.setattr(store, "stats_in_child", lambda paths: None)
    root, cache = saved_workspace(tmp_path)
    saved = load_saved(root, cache)
    assert saved is not None
    index, check = saved
    assert check.holds()
    change(root)
    assert not check.holds()
    full = load_cached_workspace_index(root, cache_dir=cache, ignore=IgnoreFilter(root))
    assert [d.to_json() for d in full] != [d.to_json() for d in index]  # what the check guards


def test_no_saved_index_is_taken_without_a_stat_unless_every_stamp_may_be_trusted(tmp_path: Path) -> None:
    root, cache = tmp_path / "ws", tmp_path / "cache"
    make_workspace(root, 9)
    assert load_saved(root, cache) is None  # nothing saved
    load_cached_workspace_index(root, cache_dir=cache, ignore=IgnoreFilter(root))
    assert load_saved(root, cache) is None  # files written within RACY_NS of the save
    listing = read_frame(store_of(cache) / LISTING_FILE, schema_key("listing"))
    assert listing is not None
    listing["started"] += 10**12  # the folders' stamps old enough, not yet the files'
    assert write_frame(store_of(cache) / LISTING_FILE, schema_key("listing"), listing)
    assert load_saved(root, cache) is None
    age(cache)
    assert load_saved(root, cache) is not None
    assert load_saved_workspace_index(root, DEFAULT_AGENT_SKILL_ROOTS, 1, cache, IgnoreFilter(root)) is None
    (store_of(cache) / DOCUMENTS_FILE).write_bytes(b"truncated")
    assert load_saved(root, cache) is None


def test_a_cache_folder_inside_the_tree_is_made_before_the_walk_that_lists_its_parent(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    make_workspace(root, 3)
    cache = root / ".cache-here"  # as beside a config file: the first save makes it in `root`
    load_cached_workspace_index(root, cache_dir=cache, ignore=IgnoreFilter(root))
    age(cache)
    saved = load_saved(root, cache)
    assert saved is not None and saved[1].holds()  # `root`'s mtime is the one the walk saw


def test_a_warm_load_keys_its_saved_postings_with_the_digest_saved_with_its_documents(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, cache = tmp_path / "ws", tmp_path / "cache"
    make_workspace(root, 9)
    Bm25fSearch(load(root, cache))  # builds and saves
    saved = (store_of(cache) / SAVED_FILE).read_bytes()
    warm = load(root, cache)
    assert warm.digest is not None and warm.digest[1] == documents_digest(list(warm))

    def unread(docs: object) -> str:
        raise AssertionError("a warm load read its documents for their digest")

    with monkeypatch.context() as patched:
        patched.setattr(skill_index, "documents_digest", unread)
        patched.setattr(ranking, "documents_digest", unread)
        loaded = Bm25fSearch(warm)  # the saved postings, found under the saved digest
    assert (store_of(cache) / SAVED_FILE).read_bytes() == saved
    assert bm25f_scores(loaded, QUERIES) == bm25f_scores(Bm25fSearch(load_workspace_index(root)), QUERIES)
    # An edit makes the digest one of other documents: made again, as a fresh index makes it.
    before = warm.documents_digest()
    edited = write_skill(root, "s3", skill("s3", "invoice weather", "sql sql sql"))
    warm.upsert(load_workspace_index(root).find_by_path(edited))  # type: ignore[arg-type]
    assert warm.documents_digest() == load_workspace_index(root).documents_digest() != before


def test_a_listed_folder_that_could_not_be_statted_holds_while_it_still_cannot(tmp_path: Path) -> None:
    root, cache = saved_workspace(tmp_path)
    file = store_of(cache) / LISTING_FILE
    listing = read_frame(file, schema_key("listing"))
    assert listing is not None
    listing["dirs"][str(root / "unreadable")] = -1  # as the walk records a folder it cannot stat
    assert write_frame(file, schema_key("listing"), listing)
    assert store.listing_holds(listing, listing["key"])
    saved = load_saved(root, cache)
    assert saved is not None and saved[1].holds()  # in a child process
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(store, "stats_in_child", lambda paths: None)
        assert saved[1].holds()  # and here
    (root / "unreadable").mkdir()  # it can be statted now: changed
    assert not store.listing_holds(listing, listing["key"]) and not saved[1].holds()


def test_no_saved_index_is_taken_for_a_file_listed_as_another_kind(tmp_path: Path) -> None:
    root, cache = saved_workspace(tmp_path)
    file = store_of(cache) / LISTING_FILE
    listing = read_frame(file, schema_key("listing"))
    assert listing is not None and load_saved(root, cache) is not None
    listing["kinds"][0] = next(kind for kind in ("agentskill", "flat") if kind != listing["kinds"][0])
    assert write_frame(file, schema_key("listing"), listing)
    assert load_saved(root, cache) is None


def test_the_documents_digest_holds_every_field_a_key_rests_on(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    make_workspace(root, 4)
    index = load_workspace_index(root)
    docs = list(index)
    digest = documents_digest(docs)
    changed = [dataclasses.replace(docs[0], tags=["new-tag"]), *docs[1:]]
    assert documents_digest(changed) != digest
    assert documents_digest(list(reversed(docs))) != digest
    # A search built over other documents than the whole index, in its order, is keyed by them.
    search = Bm25fSearch(index)
    assert search._documents_key(docs, "v") == ranking.documents_key(docs, "v")
    assert search._documents_key(list(reversed(docs)), "v") == ranking.documents_key(
        list(reversed(docs)), "v"
    )
    assert search._documents_key(list(reversed(docs)), "v") != search._documents_key(docs, "v")
