"""Discovery: crate-exact walks (checked against the parity data) and our workspace walk."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from helpers import PARITY, needs_parity
from hypothesis import given
from hypothesis import strategies as st

from skills_lsp.core.errors import InvalidSkillsRoot
from skills_lsp.core.files.discovery import (
    discover_agent_skills,
    discover_instruction_files,
    discover_skill_files,
    discover_workspace,
    kind_of,
    path_sort_key,
    workspace_kind,
)
from skills_lsp.core.model import FileKind


def touch(root: Path, rel: str, text: str = "x") -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def rel(root: Path, paths: list[Path]) -> list[str]:
    return [p.relative_to(root).as_posix() for p in paths]


@needs_parity
def test_crate_discovery_matches_parity_data() -> None:
    expected = json.loads((PARITY / "expected.json").read_text(encoding="utf-8"))["discover"]
    root = PARITY / "workspace"
    assert rel(root, discover_skill_files(root)) == expected["skill_files"]
    assert rel(root, discover_instruction_files(root)) == expected["instruction_files"]


def test_crate_skip_rules(tmp_path: Path) -> None:
    touch(tmp_path, ".skills/a.md")
    touch(tmp_path, ".skills/B.MD")  # extension is case-sensitive
    touch(tmp_path, ".skills/references/r.md")
    touch(tmp_path, ".skills/x/Scripts/s.md")  # support dirs compare case-insensitively
    touch(tmp_path, ".claude/skills/c.md")
    (tmp_path / ".skills" / "link.md").symlink_to(tmp_path / ".skills" / "a.md")
    assert rel(tmp_path, discover_skill_files(tmp_path)) == [".claude/skills/c.md", ".skills/a.md"]


def test_crate_convention_rules(tmp_path: Path) -> None:
    touch(tmp_path, "AGENTS.md")
    touch(tmp_path, "pkg/claude.md")
    touch(tmp_path, "pkg/SOUL.md")  # SOUL.md only at the root
    touch(tmp_path, "SOUL.MD")
    touch(tmp_path, "node_modules/x/AGENTS.md")
    touch(tmp_path, "Target/AGENTS.md")
    touch(tmp_path, "a-b/AGENTS.md")
    touch(tmp_path, "a/b/AGENTS.md")
    assert rel(tmp_path, discover_instruction_files(tmp_path)) == [
        "AGENTS.md",
        "SOUL.MD",
        "a/b/AGENTS.md",
        "a-b/AGENTS.md",
        "pkg/claude.md",
    ]


@pytest.mark.parametrize("spelling", [".", "./", "", "sub/.."])
def test_crate_discovery_of_the_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spelling: str
) -> None:
    """The root as the CLI gives it by default (`.`): each file once, in the order an absolute
    root gives, a convention file inside `.skills/` (found by both walks) included."""
    files = [
        ".claude/skills/beta.md",
        ".skills/alpha/AGENTS.md",
        ".skills/alpha/SKILL.md",
        "AGENTS.md",
        "sub/CLAUDE.md",
    ]
    for name in files:
        touch(tmp_path, name)
    expected = rel(tmp_path, discover_instruction_files(tmp_path))
    assert expected == files  # in Rust's path order
    monkeypatch.chdir(tmp_path)
    prefix = "sub/../" if spelling == "sub/.." else ""  # a Path keeps `..` (so does the crate's PathBuf)
    assert [p.as_posix() for p in discover_instruction_files(spelling)] == [prefix + p for p in expected]


def test_crate_discovery_orders_components_as_rust_paths(tmp_path: Path) -> None:
    """A name sorts before any longer name it begins, whatever the next character (the walk's
    string keys stand for path_sort_key's tuples)."""
    names = ["a", "a b", "a!", "a#", "a-b", "a.b", "a0", "aé", "A", "a\x01", "ab", "b", "~"]
    for name in names:
        touch(tmp_path, f".skills/{name}/x.md")
        touch(tmp_path, f".skills/{name}.md")
        touch(tmp_path, f"{name}/AGENTS.md")
    found = discover_instruction_files(tmp_path)
    assert len(found) == 3 * len(names)
    assert found == sorted(found, key=path_sort_key)


def test_crate_root_errors(tmp_path: Path) -> None:
    assert discover_instruction_files(tmp_path / "missing") == []
    with pytest.raises(InvalidSkillsRoot) as info:
        discover_instruction_files(touch(tmp_path, "file.txt"))
    assert str(info.value).startswith("invalid skills root, expected directory: ")


def test_agent_skills_walk(tmp_path: Path) -> None:
    touch(tmp_path, "skills/pdf/SKILL.md")
    touch(tmp_path, "skills/pdf/references/nested/SKILL.md")  # inside a skill's support folder
    touch(tmp_path, "skills/group/inner/SKILL.md")
    touch(tmp_path, ".agents/skills/a/SKILL.md")
    touch(tmp_path, ".claude/skills/b/SKILL.md")
    touch(tmp_path, ".github/skills/c/SKILL.md")
    touch(tmp_path, ".hidden/d/SKILL.md")  # hidden and not a configured root
    touch(tmp_path, "node_modules/e/SKILL.md")
    touch(tmp_path, "build/f/SKILL.md")
    touch(tmp_path, ".venv/lib/g/SKILL.md")
    touch(tmp_path, "skills/lower/skill.md")  # exact name only
    touch(tmp_path, "SKILL.md")  # the workspace root itself can be a skill
    found = rel(tmp_path, discover_agent_skills(tmp_path))
    assert found == [
        ".agents/skills/a/SKILL.md",
        ".claude/skills/b/SKILL.md",
        ".github/skills/c/SKILL.md",
        "SKILL.md",
        "skills/group/inner/SKILL.md",
        "skills/pdf/SKILL.md",
    ]


def test_agent_skills_depth_is_bounded(tmp_path: Path) -> None:
    touch(tmp_path, "/".join(f"d{i}" for i in range(12)) + "/SKILL.md")
    touch(tmp_path, "a/b/SKILL.md")
    assert rel(tmp_path, discover_agent_skills(tmp_path, max_depth=4)) == ["a/b/SKILL.md"]


def test_symlink_loops_are_safe(tmp_path: Path) -> None:
    touch(tmp_path, "skills/a/SKILL.md")
    os.symlink(tmp_path / "skills", tmp_path / "skills" / "a" / "loop")
    os.symlink(tmp_path, tmp_path / "skills" / "up")
    found = rel(tmp_path, discover_agent_skills(tmp_path))
    assert found == ["skills/a/SKILL.md"]
    assert discover_workspace(tmp_path)  # terminates


def test_workspace_discovery_is_deterministic_and_labelled(tmp_path: Path) -> None:
    touch(tmp_path, "skills/x/SKILL.md")
    touch(tmp_path, ".skills/flat.md")
    touch(tmp_path, ".skills/dir/SKILL.md")
    touch(tmp_path, "AGENTS.md")
    touch(tmp_path, "docs/GEMINI.md")
    touch(tmp_path, ".mypy_cache/AGENTS.md")
    first = discover_workspace(tmp_path)
    assert first == discover_workspace(tmp_path)
    kinds = {Path(f.path).relative_to(tmp_path).as_posix(): f.kind for f in first}
    assert kinds == {
        ".skills/dir/SKILL.md": FileKind.AGENT_SKILL,
        ".skills/flat.md": FileKind.FLAT_SKILL,
        "AGENTS.md": FileKind.CONVENTION,
        "docs/GEMINI.md": FileKind.CONVENTION,
        "skills/x/SKILL.md": FileKind.AGENT_SKILL,
    }


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("a/SKILL.md", FileKind.AGENT_SKILL),
        (".skills/x.md", FileKind.FLAT_SKILL),
        ("CLAUDE.md", FileKind.CONVENTION),
        ("pkg/agents.md", FileKind.CONVENTION),
        (".skills/AGENTS.md", FileKind.FLAT_SKILL),
        (".claude/skills/y.md", FileKind.FLAT_SKILL),
    ],
)
def test_kind_of(path: str, kind: FileKind) -> None:
    assert kind_of(path) is kind


def test_each_runtimes_own_folder_is_found_below_the_root_too(tmp_path: Path) -> None:
    # A monorepo: a project's .codex/ or .gemini/ skills are walked into like .claude/'s,
    # so the runtime's profile (rules/profiles.LOCATION_PROFILES) ever gets to judge them.
    for runtime in (".claude", ".codex", ".gemini", ".github"):
        touch(tmp_path, f"projects/app/{runtime}/skills/s/SKILL.md")
    touch(tmp_path, "projects/app/.cache/skills/s/SKILL.md")  # any other hidden folder is not
    found = rel(tmp_path, discover_agent_skills(tmp_path))
    assert found == [
        f"projects/app/{runtime}/skills/s/SKILL.md" for runtime in (".claude", ".codex", ".gemini", ".github")
    ]


def test_one_files_kind_is_the_one_discovery_gives_it(tmp_path: Path) -> None:
    """The editor judges one open file (`workspace_kind`); `check` walks the folder
    (`discover_workspace`). Both give every file of a tree the same layout, or both leave it
    out, so the editor checks the files `check` checks, and only those."""
    files = [
        "skills/alpha/SKILL.md",
        "AGENTS.md",
        "SOUL.md",
        "docs/CLAUDE.md",
        "docs/SOUL.md",  # SOUL.md counts only at the root
        "node_modules/pkg/AGENTS.md",  # an ignored folder
        ".skills/beta.md",
        ".skills/nested/gamma.md",
        ".skills/scripts/helper.md",  # the crate's support folders hold no skills
        ".skills/README.MD",  # lowercase `.md` only
        ".skills/AGENTS.md",  # a flat skill, not a convention file
        ".claude/skills/delta.md",
        ".claude/skills/references/notes.md",
        ".claude/plugins/skills/epsilon.md",  # not `.claude/skills/`
        "notes/.skills-like/zeta.md",
        "README.md",
    ]
    for name in files:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("---\nname: x\ndescription: y\n---\n", encoding="utf-8")
    found = {Path(item.path): item.kind for item in discover_workspace(tmp_path)}
    judged = {path: workspace_kind(path, tmp_path) for path in (tmp_path / name for name in files)}
    assert {path: kind for path, kind in judged.items() if kind is not None} == found
    assert judged[tmp_path / "docs" / "SOUL.md"] is None
    assert judged[tmp_path / ".skills" / "AGENTS.md"] is FileKind.FLAT_SKILL


def _component_key(path: str) -> tuple[str, ...]:
    """`path_sort_key` component by component, as it was written before its plain-path shortcut."""
    key = ["\x01"] if path.startswith("/") else []
    for index, part in enumerate(path.split("/")):
        if part == "." and index == 0:
            key.append("\x02")
        elif part == "..":
            key.append("\x03")
        elif part and part != ".":
            key.append("\x04" + part)
    return tuple(key)


@given(
    st.lists(st.sampled_from(["", ".", "..", "a", "b-c", ".claude", "SKILL.md", "é"]), max_size=6),
    st.booleans(),
)
def test_path_sort_key_of_plain_and_unusual_paths_is_the_components_key(
    parts: list[str], rooted: bool
) -> None:
    path = ("/" if rooted else "") + "/".join(parts)
    assert path_sort_key(path) == _component_key(path)
    assert path_sort_key(Path(path) if path else ".") == _component_key(str(Path(path)) if path else ".")
