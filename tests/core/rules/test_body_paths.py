"""The reference rules' path splitting: the same parts as `PurePosixPath`, without building one."""

from __future__ import annotations

import os
from pathlib import PurePosixPath

from hypothesis import given
from hypothesis import strategies as st

from skills_lsp.core.rules.body import _parts

_PIECES = st.sampled_from(["a", "b.md", "..", ".", "", "references", " x", "é", "c\\d"])


@given(st.lists(_PIECES, max_size=6), st.booleans())
def test_parts_of_a_normalized_reference_are_purepath_parts(pieces: list[str], absolute: bool) -> None:
    normal = os.path.normpath(("/" if absolute else "") + "/".join(pieces)).replace("\\", "/")
    assert _parts(normal) == PurePosixPath(normal).parts


@given(st.text(alphabet="ab./\\", max_size=12))
def test_parts_of_any_text_are_purepath_parts(text: str) -> None:
    assert _parts(text) == PurePosixPath(text).parts
