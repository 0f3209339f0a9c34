"""core/memory.py: `long_lived` keeps the cycle collector off while a folder loads, freezes what
it made, and lets what a later call replaced be collected."""

from __future__ import annotations

import gc
import weakref

import pytest

from skills_lsp.core.memory import long_lived, unfreeze


class Node:
    def __init__(self) -> None:
        self.me = self  # a cycle: only the cycle collector frees it


def test_the_collector_is_off_inside_and_what_was_made_is_frozen() -> None:
    assert gc.isenabled()
    try:
        with long_lived():
            assert not gc.isenabled()
            kept = [Node() for _ in range(10)]
        assert gc.isenabled()
        assert gc.get_freeze_count() >= len(kept)
    finally:
        unfreeze()
    assert gc.get_freeze_count() == 0


def test_what_a_later_load_replaced_is_collected() -> None:
    folders: dict[str, Node] = {}
    try:
        with long_lived():
            folders["root"] = Node()
        old = weakref.ref(folders["root"])
        with long_lived():  # a reload: the old folder, a cycle frozen by the first call, is freed
            folders["root"] = Node()
        assert old() is None
        assert gc.isenabled()
    finally:
        unfreeze()


def test_a_failing_load_turns_the_collector_back_on() -> None:
    try:
        with pytest.raises(ValueError), long_lived():
            raise ValueError("the load failed")
    finally:
        unfreeze()
    assert gc.isenabled()
