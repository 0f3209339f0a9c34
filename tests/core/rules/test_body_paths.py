"""The reference rules' paths: split and joined as `PurePosixPath` and `Path` would, without building one."""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

from hypothesis import given
from hypothesis import strategies as st

from skills_lsp.core.model import FileKind
from skills_lsp.core.parse.frontmatter import parse_text
from skills_lsp.core.rules.body import _parts
from skills_lsp.core.rules.validate import check_document

_PIECES = st.sampled_from(["a", "b.md", "..", ".", "", "references", " x", "é", "c\\d"])


@given(st.lists(_PIECES, max_size=6), st.booleans())
def test_parts_of_a_normalized_reference_are_purepath_parts(pieces: list[str], absolute: bool) -> None:
    normal = os.path.normpath(("/" if absolute else "") + "/".join(pieces)).replace("\\", "/")
    assert _parts(normal) == PurePosixPath(normal).parts


@given(st.text(alphabet="ab./\\", max_size=12))
def test_parts_of_any_text_are_purepath_parts(text: str) -> None:
    assert _parts(text) == PurePosixPath(text).parts


_FOLDERS = st.sampled_from(["", ".", "s", "a/s", "/w/a/s", "//w/s", "./s", "s/", "a/../s"])


@given(_FOLDERS, st.lists(st.sampled_from(["a", "b.md", "é", "references"]), min_size=1, max_size=3))
def test_references_are_probed_at_the_paths_pathlib_writes(folder: str, pieces: list[str]) -> None:
    """The reference rules join a reference to the skill's folder as strings: each file probed
    is named as `str(Path(folder) / "SKILL.md").parent.joinpath(*parts)` names it, "." too."""
    target = "references/" + "/".join(pieces)
    doc = parse_text(f"---\nname: s\ndescription: A skill.\n---\nSee [it]({target}) and evals.\n")
    skill_md = Path(folder) / "SKILL.md"
    probed: list[object] = []

    def exists(path: str) -> bool:
        probed.append(path)
        return False

    check_document(doc, skill_md, kind=FileKind.AGENT_SKILL, exists=exists)
    parts = PurePosixPath(os.path.normpath(target)).parts
    assert str(skill_md.parent.joinpath(*parts)) in probed
    assert str(skill_md.parent.joinpath("evals", "evals.json")) in probed
    assert all(isinstance(path, str) for path in probed)
