"""core/memory.py: `long_lived` freezes what a folder's load made and lets what a later load
replaced be collected; `no_collection` keeps the cycle collector off meanwhile and turns it back on."""

from __future__ import annotations

import gc
import weakref

import pytest

from skills_lsp.core.memory import long_lived, no_collection, unfreeze


class Node:
    def __init__(self) -> None:
        self.me = self  # a cycle: only the cycle collector frees it


def test_what_was_made_is_frozen() -> None:
    try:
        with long_lived():
            kept = [Node() for _ in range(10)]
        assert gc.get_freeze_count() >= len(kept)
    finally:
        unfreeze()
    assert gc.get_freeze_count() == 0


def test_garbage_made_meanwhile_is_not_frozen() -> None:
    try:
        with long_lived():
            dropped = weakref.ref(Node())  # a cycle nothing refers to
        assert dropped() is None
    finally:
        unfreeze()


def test_what_a_later_load_replaced_is_collected() -> None:
    folders: dict[str, Node] = {}
    try:
        with long_lived():
            folders["root"] = Node()
        old = weakref.ref(folders["root"])
        with long_lived(replacing=True):  # a reload: the old folder, a cycle frozen before, is freed
            folders["root"] = Node()
        assert old() is None
        assert gc.isenabled()
    finally:
        unfreeze()


def test_the_collector_is_off_inside_and_back_on_after_a_failure() -> None:
    assert gc.isenabled()
    with pytest.raises(ValueError), no_collection():
        assert not gc.isenabled()
        raise ValueError("the load failed")
    assert gc.isenabled()


def test_what_is_made_without_collections_goes_to_the_oldest_generation_and_its_garbage_is_still_freed() -> (
    None
):
    gc.collect()
    with no_collection():
        kept = [Node() for _ in range(5000)]  # what a warm load makes: all of it lives on
        garbage = Node()
        garbage.other = garbage  # a cycle, made inside
        freed = weakref.ref(garbage)
        del garbage
    assert gc.get_count()[0] < 100  # not left young, for the next collections to walk twice
    assert all(gc.is_tracked(node) for node in kept[:10])
    assert freed() is not None  # waits for a full collection ...
    gc.collect()
    assert freed() is None  # ... which frees it
    assert gc.get_freeze_count() == 0  # nothing is left frozen
