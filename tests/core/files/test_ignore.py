"""Discovery leaves out what .gitignore, .ignore and `exclude` / `extend-exclude` ignore, with git's
own semantics (negation, character classes, anchoring, directory-only patterns, nesting)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from skills_lsp.core.files.config import Config, parse_config
from skills_lsp.core.files.discovery import discover_workspace
from skills_lsp.core.files.ignore import IgnoreFilter
from skills_lsp.core.index.skill_index import load_workspace_index


def _skill(folder: Path, name: str | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    skill = folder / "SKILL.md"
    skill.write_text(f"---\nname: {name or folder.name}\ndescription: Does things.\n---\nBody\n")
    return skill


def _found(root: Path, ignore: IgnoreFilter | None) -> list[str]:
    return [Path(f.path).relative_to(root).as_posix() for f in discover_workspace(root, ignore=ignore)]


def test_negation_reincludes_one_skill(tmp_path: Path) -> None:
    for name in ("alpha", "beta", "keep-me"):
        _skill(tmp_path / "skills" / name)
    (tmp_path / ".gitignore").write_text("# generated skills\nskills/*\n!skills/keep-me/\n")
    assert _found(tmp_path, IgnoreFilter(tmp_path)) == ["skills/keep-me/SKILL.md"]
    everything = ["skills/alpha/SKILL.md", "skills/beta/SKILL.md", "skills/keep-me/SKILL.md"]
    assert _found(tmp_path, IgnoreFilter(tmp_path, respect_gitignore=False)) == everything
    assert _found(tmp_path, None) == everything


def test_nothing_inside_an_ignored_folder_comes_back(tmp_path: Path) -> None:
    # git: "It is not possible to re-include a file if a parent directory of that file is excluded."
    _skill(tmp_path / "skills" / "old" / "inner")
    _skill(tmp_path / "skills" / "new")
    (tmp_path / ".gitignore").write_text("skills/old/\n!skills/old/inner/\n")
    assert _found(tmp_path, IgnoreFilter(tmp_path)) == ["skills/new/SKILL.md"]


def test_character_classes_and_anchoring(tmp_path: Path) -> None:
    for name in ("draft1", "draft2", "draftx", "out"):
        _skill(tmp_path / "skills" / name)
    _skill(tmp_path / "skills" / "nested" / "out")
    # `draft[0-9]` is a character class; `/skills/out` is anchored to this folder only.
    (tmp_path / ".gitignore").write_text("draft[0-9]/\n/skills/out/\n")
    assert _found(tmp_path, IgnoreFilter(tmp_path)) == [
        "skills/draftx/SKILL.md",
        "skills/nested/out/SKILL.md",
    ]


def test_nested_gitignore_overrides_the_outer_one(tmp_path: Path) -> None:
    for name in ("a", "b", "c"):
        _skill(tmp_path / "skills" / name)
    (tmp_path / ".gitignore").write_text("skills/b/\nskills/c/\n")
    (tmp_path / "skills" / ".gitignore").write_text("!c/\n/a/\n")  # relative to skills/
    assert _found(tmp_path, IgnoreFilter(tmp_path)) == ["skills/c/SKILL.md"]


def test_dot_ignore_wins_over_gitignore_in_the_same_folder(tmp_path: Path) -> None:
    for name in ("a", "b"):
        _skill(tmp_path / "skills" / name)
    (tmp_path / ".gitignore").write_text("skills/a/\n")
    (tmp_path / ".ignore").write_text("!skills/a/\nskills/b/\n")
    assert _found(tmp_path, IgnoreFilter(tmp_path)) == ["skills/a/SKILL.md"]


def test_convention_and_flat_skill_files_are_filtered_too(tmp_path: Path) -> None:
    (tmp_path / "vendor").mkdir()
    (tmp_path / "vendor" / "AGENTS.md").write_text("# vendored\n")
    (tmp_path / "AGENTS.md").write_text("# ours\n")
    flat = tmp_path / ".skills"
    flat.mkdir()
    (flat / "kept.md").write_text("---\nname: kept\ndescription: d\n---\n")
    (flat / "generated.md").write_text("---\nname: generated\ndescription: d\n---\n")
    (tmp_path / ".gitignore").write_text("vendor/\n.skills/gen*.md\n")
    assert _found(tmp_path, IgnoreFilter(tmp_path)) == [".skills/kept.md", "AGENTS.md"]


def test_parent_gitignore_of_the_repository_applies(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    _skill(tmp_path / "project" / "skills" / "tmp-skill")
    _skill(tmp_path / "project" / "skills" / "real")
    (tmp_path / ".gitignore").write_text("tmp-*/\n")
    (tmp_path / ".git" / "info").mkdir(exist_ok=True)
    (tmp_path / ".git" / "info" / "exclude").write_text("real/\n")
    (tmp_path / "project" / ".gitignore").write_text("!real/\n")  # deeper file wins over info/exclude
    root = tmp_path / "project"
    assert _found(root, IgnoreFilter(root)) == ["skills/real/SKILL.md"]


def test_parent_gitignore_outside_a_repository_does_not_apply(tmp_path: Path) -> None:
    _skill(tmp_path / "project" / "skills" / "tmp-skill")
    (tmp_path / ".gitignore").write_text("tmp-*/\n")
    root = tmp_path / "project"
    if (tmp_path / ".git").exists() or any((p / ".git").exists() for p in tmp_path.parents):
        pytest.skip("the temporary folder is inside a git repository")
    assert _found(root, IgnoreFilter(root)) == ["skills/tmp-skill/SKILL.md"]


def test_config_exclude_and_extend_exclude(tmp_path: Path) -> None:
    for name in ("one", "two", "three", "archive-2024"):
        _skill(tmp_path / "skills" / name)
    text = 'exclude = ["skills/archive-*/"]\nextend-exclude = ["skills/t*/", "!skills/two/"]\n'
    config, problems = parse_config(text, tmp_path / "skills-lsp.toml")
    assert problems == []
    assert config.extend_exclude == ("skills/t*/", "!skills/two/")
    found = _found(tmp_path, config.ignore_filter(tmp_path))
    assert found == ["skills/one/SKILL.md", "skills/two/SKILL.md"]
    assert config.ignore_filter(tmp_path).ignored(tmp_path / "skills" / "three" / "SKILL.md")
    assert not config.ignore_filter(tmp_path).ignored(tmp_path / "skills" / "two" / "SKILL.md")
    # Config patterns apply even with ignore files switched off.
    off = Config(root=tmp_path, exclude=("skills/one/",), respect_gitignore=False)
    assert "skills/one/SKILL.md" not in _found(tmp_path, off.ignore_filter(tmp_path))


def test_bad_config_values_are_reported_at_their_key(tmp_path: Path) -> None:
    config, problems = parse_config(
        'respect-gitignore = "no"\nextend-exclude = "x"\n', tmp_path / "skills-lsp.toml"
    )
    messages = {p.message: p.range.start.line for p in problems}
    assert messages == {
        "`respect-gitignore`: expected true or false": 0,
        "`extend-exclude`: expected a list of gitignore patterns": 1,
    }
    assert config.respect_gitignore is True
    config, problems = parse_config("respect-gitignore = false\n", tmp_path / "skills-lsp.toml")
    assert problems == [] and config.respect_gitignore is False


def test_workspace_index_respects_the_filter(tmp_path: Path) -> None:
    _skill(tmp_path / "skills" / "kept")
    _skill(tmp_path / "skills" / "dropped")
    (tmp_path / ".gitignore").write_text("dropped/\n")
    index = load_workspace_index(tmp_path, ignore=IgnoreFilter(tmp_path))
    assert sorted(d.name for d in index) == ["kept"]


def test_unreadable_and_odd_ignore_files_do_not_break_discovery(tmp_path: Path) -> None:
    _skill(tmp_path / "skills" / "a")
    (tmp_path / ".gitignore").mkdir()  # a folder named .gitignore: no patterns
    (tmp_path / ".ignore").write_bytes(b"\xff\xfe not utf-8\n\n# comment\n\\#literal\n")
    assert _found(tmp_path, IgnoreFilter(tmp_path)) == ["skills/a/SKILL.md"]


def test_a_folder_asked_for_is_walked_even_if_the_repository_ignores_it(tmp_path: Path) -> None:
    # e.g. a corpus unpacked into an ignored folder and checked by name
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    corpus = tmp_path / "benchmarks" / ".workspace"
    _skill(corpus / "skills" / "one")
    _skill(corpus / "skills" / "scratch")
    (tmp_path / ".gitignore").write_text("benchmarks/.workspace/\n")
    (corpus / ".gitignore").write_text("scratch/\n")  # its own ignore files still count
    assert _found(corpus, IgnoreFilter(corpus)) == ["skills/one/SKILL.md"]
    assert _found(tmp_path, IgnoreFilter(tmp_path)) == []


# --- the same answers as git --------------------------------------------------------------------

_TREE = (
    "skills/alpha",
    "skills/beta",
    "skills/real",
    "skills/x-name",
    "skills/deep/inner",
    "docs/skills/alpha",
    "tools/alpha",
)

# Each case: the ignore files (folder -> lines) of a repository holding the skills of _TREE.
_IDIOMS: dict[str, dict[str, str]] = {
    "nothing": {},
    "ignore all, re-include folders and SKILL.md": {"": "*\n!*/\n!SKILL.md\n"},
    "** with folders re-included": {"": "skills/**\n!skills/**/\n!skills/real/SKILL.md\n"},
    "children ignored, one folder back": {"": "skills/*\n!skills/real/\n"},
    "no way back into an ignored folder": {"": "skills/\n!skills/real/SKILL.md\n"},
    "anchored and unanchored": {"": "/skills/alpha\ntools/\n"},
    "a leading slash anchors, a bare name does not": {"": "alpha\n!/docs/skills/alpha/\n"},
    "inner slash anchors": {"": "skills/alpha\n"},
    "character class": {"": "skills/x-[n]ame/\nskills/[!abr]*/\n"},
    "** in front and in the middle": {"": "**/inner\ndocs/**/SKILL.md\n"},
    "trailing slash matches folders only": {"": "SKILL.md/\nbeta/\n"},
    "trailing blanks are dropped": {"": "skills/alpha/   \n"},
    "file globs with a negation": {"": "*.md\n!SKILL.md\n"},
    "every folder, one back": {"": "**/\n!skills/\n!skills/real/\n"},
    "folder globs with a negation": {"": "skills/*/\n!skills/b*/\n"},
    "nested file re-includes": {"": "skills/*\n", "skills": "!real/\n"},
    "nested file anchors at its folder": {"skills": "/alpha/\n/docs/\n", "docs": "*\n!*/\n!alpha/SKILL.md\n"},
    "deeper file wins": {"": "!beta/\n", "skills": "*\n!*/\n", "skills/beta": "!SKILL.md\n"},
    "comments and escapes": {"": "# skills/alpha\n\\#x\nskills/beta\\\n!skills/real\n"},
}


def _git_untracked(root: Path) -> list[str]:
    env = {"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1", "PATH": "/usr/bin:/bin"}
    listed = subprocess.run(
        ["git", "-C", str(root), "ls-files", "--others", "--exclude-standard"],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    ).stdout.split("\n")
    return sorted(path for path in listed if path.endswith("SKILL.md"))


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
@pytest.mark.parametrize("files", list(_IDIOMS.values()), ids=list(_IDIOMS))
def test_discovery_leaves_out_what_git_leaves_out(tmp_path: Path, files: dict[str, str]) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    for folder in _TREE:
        _skill(tmp_path / folder)
    for folder, lines in files.items():
        (tmp_path / folder / ".gitignore").write_text(lines)
    assert sorted(_found(tmp_path, IgnoreFilter(tmp_path))) == _git_untracked(tmp_path)
