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
