"""`relative`'s POSIX shortcut gives what `os.path.relpath` and the `..` test give."""

from __future__ import annotations

import posixpath

from hypothesis import given
from hypothesis import strategies as st

from skills_lsp.cli.common import _below

_PARTS = st.lists(st.sampled_from(["a", "b", "ab", "..b", "a.", "é", " "]), max_size=4)


def _by_relpath(absolute: str, cwd: str) -> str | None:
    rel = posixpath.relpath(absolute, cwd)
    return None if rel == ".." or rel.startswith("../") else rel


@given(_PARTS, _PARTS)
def test_below_matches_relpath(cwd_parts: list[str], path_parts: list[str]) -> None:
    cwd = posixpath.normpath("/" + "/".join(cwd_parts))
    for absolute in (
        posixpath.normpath("/" + "/".join(path_parts)),
        posixpath.normpath(cwd + "/" + "/".join(path_parts)),
    ):
        if not absolute.startswith("//") and not cwd.startswith("//"):  # `relative` leaves those to relpath
            assert _below(absolute, cwd) == _by_relpath(absolute, cwd)
