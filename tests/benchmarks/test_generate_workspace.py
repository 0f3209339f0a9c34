"""Tests for the benchmark workspace generator (benchmarks/generate_workspace.py)."""

from __future__ import annotations

import importlib.util
import re
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "generate_workspace.py"
NAME_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
SKILLS = 200


def _load_generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("generate_workspace", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look the module up while the class body runs
    spec.loader.exec_module(module)
    return module


gen = _load_generator()


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _frontmatter(path: Path) -> dict[str, Any]:
    text = path.read_text(encoding="utf-8").replace("\r\n", "\n")
    assert text.startswith("---\n"), path
    end = text.index("\n---\n", 4)
    data = yaml.safe_load(text[4:end])
    assert isinstance(data, dict), path
    return data


@pytest.fixture(scope="module")
def workspaces(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, Any]]:
    first = tmp_path_factory.mktemp("ws") / "a"
    second = tmp_path_factory.mktemp("ws") / "b"
    manifest = gen.generate(first, skills=SKILLS, seed=1)
    gen.generate(second, skills=SKILLS, seed=1)
    return first, second, manifest


def test_same_arguments_give_byte_identical_trees(workspaces: tuple[Path, Path, dict[str, Any]]) -> None:
    first, second, _ = workspaces
    a, b = _tree(first), _tree(second)
    assert len(a) > SKILLS
    assert a.keys() == b.keys()
    assert [k for k in a if a[k] != b[k]] == []


def test_another_seed_gives_another_tree(
    tmp_path: Path, workspaces: tuple[Path, Path, dict[str, Any]]
) -> None:
    gen.generate(tmp_path / "c", skills=SKILLS, seed=2)
    assert _tree(tmp_path / "c") != _tree(workspaces[0])


def test_refuses_non_empty_directory(tmp_path: Path) -> None:
    (tmp_path / "x.txt").write_text("x", encoding="utf-8")
    with pytest.raises(FileExistsError):
        gen.generate(tmp_path, skills=10, seed=1)


def test_layout_proportions(workspaces: tuple[Path, Path, dict[str, Any]]) -> None:
    root, _, manifest = workspaces
    agentskills = sorted((root / "skills").glob("*/*/SKILL.md"))
    adk = sorted((root / ".skills").glob("*/*.md"))
    conventions = [p for p in root.rglob("*.md") if p.name in ("AGENTS.md", "CLAUDE.md", "GEMINI.md")]
    assert len(agentskills) + len(adk) + len(conventions) == SKILLS
    assert len(agentskills) == pytest.approx(0.85 * SKILLS, abs=2)
    assert len(adk) == pytest.approx(0.12 * SKILLS, abs=2)
    assert 1 <= len(conventions) <= 0.05 * SKILLS
    assert all(p.relative_to(root).parts[0] == "projects" for p in conventions if p.parent != root)
    assert manifest["counts"]["by_layout"] == {
        "agentskills": len(agentskills),
        "adk": len(adk),
        "convention": len(conventions),
    }
    assert {f["path"] for f in manifest["files"]} == {
        p.relative_to(root).as_posix() for p in [*agentskills, *adk, *conventions]
    }
    # no group directory is huge
    assert max(Counter(p.parent.parent for p in agentskills).values()) <= gen.GROUP_SIZE
    # about 30 % of the agentskills skills ship resources
    with_resources = [
        p for p in agentskills if (p.parent / "scripts").is_dir() or (p.parent / "references").is_dir()
    ]
    assert 0.15 * len(agentskills) <= len(with_resources) <= 0.45 * len(agentskills)


def test_mistake_share(workspaces: tuple[Path, Path, dict[str, Any]]) -> None:
    _, _, manifest = workspaces
    for layout in ("agentskills", "adk"):
        files = [f for f in manifest["files"] if f["layout"] == layout]
        broken = [f for f in files if f["mistake"]]
        assert len(broken) == pytest.approx(0.20 * len(files), abs=1)
    kinds = {f["mistake"] for f in manifest["files"] if f["layout"] == "agentskills" and f["mistake"]}
    assert kinds == {k for k, _ in gen.AGENTSKILLS_MISTAKES}


def test_valid_agentskills_match_their_directory(workspaces: tuple[Path, Path, dict[str, Any]]) -> None:
    root, _, manifest = workspaces
    valid = [f for f in manifest["files"] if f["layout"] == "agentskills" and f["mistake"] is None]
    assert len(valid) > 100
    names = set()
    for entry in valid:
        path = root / entry["path"]
        data = _frontmatter(path)
        assert data["name"] == entry["name"] == path.parent.name
        assert NAME_RE.match(data["name"]) and len(data["name"]) <= 64
        assert set(data) <= {"name", "description", "license", "compatibility", "metadata", "allowed-tools"}
        assert isinstance(data["description"], str) and 50 <= len(data["description"].strip()) <= 1024
        names.add(data["name"])
    assert len(names) == len(valid)


def test_broken_names_do_not_match(workspaces: tuple[Path, Path, dict[str, Any]]) -> None:
    root, _, manifest = workspaces
    for entry in manifest["files"]:
        if entry["mistake"] == "name-mismatch":
            path = root / entry["path"]
            assert _frontmatter(path)["name"] != path.parent.name
        elif entry["mistake"] in ("uppercase", "invalid-chars", "consecutive-hyphens"):
            assert not NAME_RE.match(_frontmatter(root / entry["path"])["name"])
        elif entry["mistake"] == "yaml-colon":
            text = (root / entry["path"]).read_text(encoding="utf-8")
            with pytest.raises(yaml.YAMLError):
                yaml.safe_load(text[4 : text.index("\n---\n", 4)])


def test_valid_skills_pass_the_reference_validator(workspaces: tuple[Path, Path, dict[str, Any]]) -> None:
    skills_ref = pytest.importorskip("skills_ref")
    root, _, manifest = workspaces
    for entry in manifest["files"]:
        if entry["layout"] == "agentskills" and entry["mistake"] is None:
            assert skills_ref.validate((root / entry["path"]).parent) == [], entry["path"]
