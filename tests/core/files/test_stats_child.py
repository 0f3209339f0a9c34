"""A child interpreter's stats of many paths (core/files/stats_child.py): the same stamps as
`os.stat` here, -1 for what cannot be statted, any file name the system allows, and None when no
child can be had (the caller then stats them itself)."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import pytest

from skills_lsp.core.files import stats_child
from skills_lsp.core.files.stats_child import stats_in_child


def test_a_child_gives_the_stamps_os_stat_gives_here(tmp_path: Path) -> None:
    odd = os.fsdecode(b"caf\xe9-not-utf8.md")  # a name that is not UTF-8: surrogate-escaped
    paths = []
    for name in ("a.md", "space and ü.md", odd):
        path = tmp_path / name
        path.write_bytes(b"x" * len(name))
        paths.append(str(path))
    paths += [str(tmp_path), str(tmp_path / "missing.md")]
    stats = stats_in_child(paths)
    assert stats is not None
    mtimes, sizes = stats
    expected = [(os.stat(p).st_mtime_ns, os.stat(p).st_size) for p in paths[:-1]] + [(-1, -1)]
    assert list(zip(mtimes, sizes, strict=True)) == expected


def test_without_a_child_the_caller_is_told_to_stat_them_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert stats_in_child([]) is None
    monkeypatch.setattr(sys, "executable", "")
    assert stats_in_child([str(tmp_path)]) is None
    monkeypatch.setattr(sys, "executable", str(tmp_path / "no-such-python"))
    assert stats_in_child([str(tmp_path)]) is None


def test_paths_over_several_chunks_reach_the_child_apart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(stats_child, "_CHUNK", 2)
    paths = []
    for number in range(5):
        path = tmp_path / f"f{number}"
        path.write_bytes(b"x" * number)
        paths.append(str(path))
    stats = stats_in_child(paths)
    assert stats is not None
    assert list(zip(*stats, strict=True)) == [(os.stat(p).st_mtime_ns, os.stat(p).st_size) for p in paths]


def test_once_stopped_no_child_is_started(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stats_child, "_stopping", threading.Event())
    assert stats_in_child([str(tmp_path)]) is not None and not stats_child.stopped()
    stats_child.stop_all()
    assert stats_child.stopped() and stats_in_child([str(tmp_path)]) is None
