"""Hostile and odd input found in review: each case once hung, crashed, or pointed at the wrong place."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from helpers import write

from skills_lsp.core.files.config import Config
from skills_lsp.core.files.discovery import discover_workspace
from skills_lsp.core.model import Range
from skills_lsp.core.parse import frontmatter as fm
from skills_lsp.core.parse.frontmatter import parse_text, read_limited
from skills_lsp.core.parse.markdown import find_references
from skills_lsp.core.rules.check import check_paths, default_cache_dir
from skills_lsp.core.rules.validate import validate_file, validate_text

GOOD = "---\nname: {name}\ndescription: Does things. Use when asked.\n---\nBody.\n"


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85"])
def test_unicode_line_separators_do_not_shift_ranges(separator: str) -> None:
    text = f'---\nname: demo\ndescription: "Use when a{separator}b"\nlicence: MIT\n---\nbody\n'
    doc = parse_text(text)
    assert doc.problems == []
    assert doc.get("licence").key.range == Range.of(3, 0, 3, 7)  # type: ignore[union-attr]
    assert doc.get("description").value.value == f"Use when a{separator}b"  # type: ignore[union-attr]
    (finding,) = [f for f in validate_text(text, "demo/SKILL.md") if f.code == "SK401"]
    assert finding.range == Range.of(3, 0, 3, 7)


@pytest.mark.parametrize("char", ["\x00", "\x07", "\x7f", "\x9f"])
def test_control_characters_are_located_exactly(char: str) -> None:
    doc = parse_text(f"---\nname: x\ndescription: a{char}b\n---\n")
    (problem,) = doc.problems
    assert problem.kind == fm.P_YAML_SYNTAX and problem.range == Range.of(2, 14, 2, 15)
    assert "\n" not in problem.message and f"U+{ord(char):04X}" in problem.message


def test_brackets_inside_scalars_are_not_nesting() -> None:
    many = "".join(f'  k{i}: "a[b"\n' for i in range(70))
    assert parse_text(f"---\nname: x\nmetadata:\n{many}---\n").problems == []
    assert parse_text('---\ndescription: "Use when ' + "[" * 65 + '"\n---\n').problems == []
    assert parse_text("---\ndescription: Use when " + "{" * 65 + "\n---\n").problems == []
    deep = parse_text("---\na: " + "[" * 65 + "]" * 65 + "\n---\n")
    assert [p.kind for p in deep.problems] == [fm.P_TOO_COMPLEX]


@pytest.mark.parametrize(
    "body",
    [
        "[" * 60_000 + " see references/x.md",
        "".join("```\ncode\n```\nscripts/a.py\n" for _ in range(20_000)),
        "[a [b] c](references/x.md) " * 20_000,
    ],
)
def test_body_scans_are_linear(body: str) -> None:
    start = time.perf_counter()
    find_references(parse_text("---\nname: x\n---\n" + body))
    # Generous bound: the quadratic scans took minutes on these inputs.
    assert time.perf_counter() - start < 30


def test_links_keep_one_level_of_brackets_and_decode_percent_escapes(tmp_path: Path) -> None:
    refs = find_references(parse_text("---\nname: x\n---\nSee [a [b] c](references/my%20file.md).\n"))
    assert [(r.target, r.path) for r in refs] == [("references/my%20file.md", "references/my file.md")]
    skill = write(tmp_path / "sk" / "SKILL.md", GOOD.format(name="sk") + "[g](references/my%20file.md)\n")
    write(tmp_path / "sk" / "references" / "my file.md", "x")
    assert [f.code for f in validate_file(skill)] == []


def test_one_spelling_per_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path / ".claude" / "skills" / "r" / "SKILL.md", GOOD.format(name="r"))
    monkeypatch.chdir(tmp_path)
    files = discover_workspace(".")
    assert [f.path for f in files] == [os.path.join(".claude", "skills", "r", "SKILL.md")]
    assert [f.code for f in check_paths(["."]).findings] == []


def test_support_names_above_the_workspace_do_not_hide_skills(tmp_path: Path) -> None:
    root = tmp_path / "agents" / "proj"
    write(root / ".skills" / "f.md", GOOD.format(name="f"))
    assert [Path(f.path).name for f in discover_workspace(root)] == ["f.md"]


def test_directory_rule_works_from_inside_the_skill(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path / "good-name" / "SKILL.md", GOOD.format(name="other-name"))
    monkeypatch.chdir(tmp_path / "good-name")
    assert [f.code for f in validate_file("SKILL.md")] == ["SK208"]


def test_huge_and_special_files_are_not_read_whole(tmp_path: Path) -> None:
    big = tmp_path / "big" / "SKILL.md"
    big.parent.mkdir()
    with open(big, "wb") as handle:  # sparse: 1 GiB on paper, nothing on disk
        handle.write(b"---\nname: big\n---\n")
        handle.truncate(1 << 30)
    assert len(read_limited(big)) == fm.MAX_FILE_BYTES + 1
    assert [f.code for f in validate_file(big)] == ["SK108"]
    fifo = tmp_path / "fifo" / "SKILL.md"
    fifo.parent.mkdir()
    os.mkfifo(fifo)
    (finding,) = validate_file(fifo)
    assert finding.code == "SK100" and "not a regular file" in finding.message


def test_evals_content_is_part_of_the_cache_key_and_special_files_are_refused(tmp_path: Path) -> None:
    write(tmp_path / "sk" / "SKILL.md", GOOD.format(name="sk"))
    evals = write(tmp_path / "sk" / "evals" / "evals.json", '{"skill_name": "sk", "evals": []}')
    cache = tmp_path / "cache"
    assert check_paths([tmp_path / "sk"], cache_dir=cache).findings == []
    evals.write_text('{"skill_name": "sk", "evals": "no"}', encoding="utf-8")
    assert [f.code for f in check_paths([tmp_path / "sk"], cache_dir=cache).findings] == ["SK610"]
    evals.unlink()
    os.mkfifo(evals)
    (finding,) = check_paths([tmp_path / "sk"], cache_dir=cache).findings
    assert finding.code == "SK610" and "not a regular file" in finding.message


def test_cache_never_lands_inside_a_skill(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    skill = write(tmp_path / "repo" / "skills" / "demo" / "SKILL.md", GOOD.format(name="demo")).parent
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    outside = default_cache_dir([skill], Config())
    assert (tmp_path / "xdg" / "skills-lsp") in outside.parents
    (tmp_path / "repo" / ".git").mkdir()
    assert default_cache_dir([skill], Config()) == tmp_path / "repo" / ".skills-lsp-cache"
