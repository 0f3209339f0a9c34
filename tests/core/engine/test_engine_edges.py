"""Crate edge cases from review that the recorded parity data does not cover."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import pytest
from helpers import PARITY, needs_parity

from skills_lsp import (
    Content,
    InvalidSkillsRoot,
    Part,
    SelectionPolicy,
    Yaml,
    apply_skill_injection,
    discover_instruction_files,
    load_skill_index,
    load_workspace_index,
    parse_instruction_markdown,
    parse_skill_markdown,
    select_skills,
    to_prompt,
)
from skills_lsp.core.engine.coordinator import rust_debug
from skills_lsp.core.routing.queries import parse_query_file
from skills_lsp.core.workspace.settings import parse_tool_manifest

PARITY_WS = PARITY / "workspace"


def meta(value: str) -> Any:
    skill = parse_skill_markdown(
        ".skills/a.md", f"---\nname: a\ndescription: d\nmetadata:\n  k: {value}\n---\n"
    )
    return skill.metadata["k"]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("0x+1", "0x+1"),
        ("0x-1", "0x-1"),
        ("0x 1", "0x 1"),
        ("0x1F", 31),
        ("-0x1F", -31),
        ("0o17", 15),
        ("017", "017"),
        ("+1", 1),
        ("1_000", "1_000"),
        (".5", 0.5),
        ("1.", 1.0),
        ("1e400", "1e400"),
        ("1" + "0" * 40, 1e40),
        ("!!float 1", 1.0),
        ("!!int 12", 12),
        ("!!null ~", None),
        ("!!bool true", True),
    ],
)
def test_metadata_scalars_resolve_as_serde_yaml_does(text: str, value: Any) -> None:
    got = meta(text)
    assert got == value and type(got) is type(value)


@pytest.mark.parametrize(
    "text", ["18446744073709551616", "-9223372036854775809", "!x v", "!!int abc", "!!bool yes"]
)
def test_metadata_values_serde_json_cannot_hold_fail_the_file(text: str) -> None:
    with pytest.raises(Yaml):
        meta(text)


def test_tagged_fields_and_a_null_frontmatter() -> None:
    skill = parse_skill_markdown(
        ".skills/a.md",
        "---\nname: a\ndescription: d\ntrigger: !!bool true\ntags: !!seq\nversion: !!null ~\n---\n",
    )
    assert (skill.trigger, skill.tags, skill.version) == (True, [], None)
    with pytest.raises(Yaml):
        parse_skill_markdown(".skills/a.md", "---\n~\n---\n")


def test_convention_names_and_skills_folders_compare_ascii_only() -> None:
    # U+017F (long s) and U+212A (Kelvin sign) fold to ASCII under str.upper()/lower(); Rust's
    # ASCII-only comparisons do not fold them.
    assert parse_instruction_markdown(Path("\u017foul.md"), "---\nname: x\ndescription: y\n---\n").name == "x"
    convention = parse_instruction_markdown(Path(".s\u212aills/AGENTS.md"), "# Rules\n")
    assert convention.name == "agents"


def test_injection_trims_like_rust(tmp_path: Path) -> None:
    (tmp_path / ".skills").mkdir()
    (tmp_path / ".skills" / "x.md").write_text(
        "---\nname: x\ndescription: d\ntags: [t]\n---\nB\n", encoding="utf-8"
    )
    content = Content("user", [Part(text="\x1c")])
    policy = SelectionPolicy(top_k=1, min_score=0.0, include_tags=["t"])
    assert apply_skill_injection(content, load_skill_index(tmp_path), policy) is not None


def test_negative_top_k_selects_nothing(tmp_path: Path) -> None:
    (tmp_path / ".skills").mkdir()
    (tmp_path / ".skills" / "x.md").write_text("---\nname: x\ndescription: d\n---\nB\n", encoding="utf-8")
    assert select_skills(load_skill_index(tmp_path), "x", SelectionPolicy(top_k=-1)) == []


def test_invalid_root_error_keeps_the_path_as_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("afile").write_text("x", encoding="utf-8")
    with pytest.raises(InvalidSkillsRoot) as info:
        discover_instruction_files("./afile")
    assert str(info.value) == "invalid skills root, expected directory: ./afile"


def test_rust_debug_strings() -> None:
    assert rust_debug('say "hi"') == '"say \\"hi\\""'
    assert rust_debug("back\\slash\ttab\x01") == '"back\\\\slash\\ttab\\u{1}"'


def test_to_prompt_does_not_follow_a_linked_skill_file(tmp_path: Path) -> None:
    (tmp_path / "real.md").write_text("---\nname: b\ndescription: d\n---\nbody\n", encoding="utf-8")
    (tmp_path / "b").mkdir()
    os.symlink(tmp_path / "real.md", tmp_path / "b" / "SKILL.md")
    index = load_workspace_index(tmp_path)
    assert f"<location>\n{(tmp_path / 'b').resolve() / 'SKILL.md'}\n</location>" in to_prompt(index)


@needs_parity
def test_workspace_index_holds_everything_the_crate_indexes() -> None:
    crate = {str(d.path) for d in load_skill_index(PARITY_WS)}
    workspace = {str(d.path) for d in load_workspace_index(PARITY_WS)}
    assert crate <= workspace


@pytest.mark.parametrize("cases", ["5", "true", "1.5", "{a: 1}"])
def test_query_files_with_unreadable_cases_are_findings(cases: str) -> None:
    found, problems = parse_query_file(f"cases: {cases}\n", "q.yaml")
    assert found == [] and problems and problems[0].code == "SK003"


def test_query_file_duplicates_empty_and_nan() -> None:
    _, problems = parse_query_file("cases:\n  - query: a\n    expect: x\ncases: []\n", "q.yaml")
    assert any("Duplicate key `cases`" in p.message for p in problems)
    _, problems = parse_query_file("cases: []\n", "q.yaml")
    assert [p.message for p in problems] == ["The file has no test cases: routing is not under test."]
    found, problems = parse_query_file("cases:\n  - query: a\n    expect: x\n    margin: .nan\n", "q.yaml")
    assert found == [] and "finite" in problems[-1].message
    assert not math.isnan(0.0)


def test_manifest_duplicate_keys_are_findings() -> None:
    _, problems = parse_tool_manifest("tools:\n  - name: a\ntools:\n  - name: b\n", "t.yaml")
    assert any("Duplicate key `tools`" in p.message for p in problems)
