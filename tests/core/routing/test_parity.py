"""Every case recorded from the real adk-skill 0.6.0 (../shared/parity/expected.json), exactly.

Floats are compared as float32 bit patterns; paths relative to the workspace with `/`;
`last_modified` is not recorded; Yaml errors are compared by kind only (their text is
serde_yaml's), every other error by kind and full message.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from helpers import PARITY, needs_parity

from skills_lsp import (
    ByName,
    ByQuery,
    ByTag,
    Content,
    ContextCoordinator,
    CoordinatorConfig,
    InvalidFrontmatter,
    MissingField,
    Part,
    SelectionPolicy,
    SkillError,
    StaticToolRegistry,
    ValidationMode,
    apply_skill_injection,
    discover_instruction_files,
    discover_skill_files,
    load_skill_index,
    parse_instruction_markdown,
    select_skills,
)
from skills_lsp.core.routing.lexical import f32, select_skills_plain
from skills_lsp.core.routing.tokens import f32_bits

EXPECTED_FILE = PARITY / "expected.json"
pytestmark = needs_parity
EXPECTED: dict[str, Any] = (
    json.loads(EXPECTED_FILE.read_text(encoding="utf-8")) if EXPECTED_FILE.is_file() else {}
)


def cases(section: str) -> list[Any]:
    return EXPECTED.get(section, [])


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # A byte-for-byte copy under a neutral name (the crate checks every path component).
    root = tmp_path_factory.mktemp("parity") / "workspace"
    shutil.copytree(PARITY / "workspace", root, symlinks=True)
    return root


@pytest.fixture(scope="module")
def index(workspace: Path) -> Any:
    return load_skill_index(workspace)


def rel(root: Path, path: Path | str) -> str:
    return os.path.relpath(path, root).replace(os.sep, "/")


def policy_of(data: dict[str, Any]) -> SelectionPolicy:
    policy = SelectionPolicy(
        data["top_k"], float(data["min_score"]), data["include_tags"], data["exclude_tags"]
    )
    assert f32_bits(f32(policy.min_score)) == data["min_score_bits"]
    return policy


def test_counts() -> None:
    assert len(EXPECTED["discover"]["skill_files"]) == 45
    assert len(EXPECTED["discover"]["instruction_files"]) == 57
    assert (
        len(cases("index")),
        len(cases("select")),
        len(cases("inject")),
        len(cases("coordinator")),
        len(cases("parse")),
    ) == (48, 91, 16, 15, 57)


def test_discover(workspace: Path) -> None:
    assert [rel(workspace, p) for p in discover_skill_files(workspace)] == EXPECTED["discover"]["skill_files"]
    assert [rel(workspace, p) for p in discover_instruction_files(workspace)] == (
        EXPECTED["discover"]["instruction_files"]
    )


def test_index(workspace: Path, index: Any) -> None:
    got = []
    for doc in index:
        row = doc.to_json()
        assert isinstance(row.pop("last_modified"), int)
        row["path"] = rel(workspace, doc.path)
        assert doc.path == workspace / row["path"]  # root joined with the relative path
        got.append(row)
    assert got == cases("index")


@pytest.mark.parametrize("case", cases("select"), ids=[c["id"] for c in cases("select")])
def test_select(case: dict[str, Any], workspace: Path, index: Any) -> None:
    policy = policy_of(case["policy"])
    expected = [(r["name"], r["path"], r["id"], r["score_bits"]) for r in case["results"]]
    for select in (select_skills, select_skills_plain):
        got = [
            (m.skill.name, rel(workspace, m.skill.path), m.skill.id, f32_bits(m.score))
            for m in select(index, case["query"], policy)
        ]
        assert got == expected, select.__name__
    for match, row in zip(select_skills(index, case["query"], policy), case["results"], strict=True):
        assert match.score == row["score"]


def _part(data: dict[str, Any]) -> Part:
    return Part(text=data["text"]) if data["type"] == "text" else Part(inline_data=data["label"])


def _unpart(part: Part) -> dict[str, Any]:
    return (
        {"type": "text", "text": part.text}
        if part.text is not None
        else {"type": "non_text", "label": part.inline_data}
    )


@pytest.mark.parametrize("case", cases("inject"), ids=[c["id"] for c in cases("inject")])
def test_inject(case: dict[str, Any], workspace: Path, index: Any) -> None:
    content = Content(case["input"]["role"], [_part(p) for p in case["input"]["parts"]])
    match = apply_skill_injection(content, index, policy_of(case["policy"]), case["max_injected_chars"])
    assert [_unpart(p) for p in content.parts] == case["parts_after"]
    if case["matched"] is None:
        assert match is None
    else:
        assert match is not None
        got = (match.skill.name, rel(workspace, match.skill.path), match.skill.id, f32_bits(match.score))
        assert got == tuple(case["matched"][k] for k in ("name", "path", "id", "score_bits"))


_STRATEGY = {"by_name": ByName, "by_query": ByQuery, "by_tag": ByTag}


@pytest.mark.parametrize("case", cases("coordinator"), ids=[c["id"] for c in cases("coordinator")])
def test_coordinator(case: dict[str, Any], workspace: Path, index: Any) -> None:
    strategies = [_STRATEGY[k](v) for s in case["strategies"] for k, v in s.items()]
    config = CoordinatorConfig(
        policy_of(case["policy"]), case["max_instruction_chars"], ValidationMode(case["validation_mode"])
    )
    context = ContextCoordinator(index, StaticToolRegistry(case["registry"]), config).resolve(strategies)
    expected = case["result"]
    if expected is None:
        assert context is None
        return
    assert context is not None
    skill = context.provenance.skill
    assert (skill.name, rel(workspace, skill.path), skill.id) == (
        expected["skill"],
        expected["path"],
        expected["id"],
    )
    assert f32_bits(context.provenance.score) == expected["score_bits"]
    assert context.active_tool_names == expected["active_tools"]
    assert context.system_instruction == expected["system_instruction"]


@pytest.mark.parametrize("case", cases("parse"), ids=[c["id"] for c in cases("parse")])
def test_parse(case: dict[str, Any]) -> None:
    expected = case["result"]
    try:
        got: dict[str, Any] = {
            "ok": dataclasses.asdict(parse_instruction_markdown(Path(case["path"]), case["content"]))
        }
    except SkillError as exc:
        error: dict[str, Any] = {"kind": type(exc).__name__, "message": str(exc)}
        if isinstance(exc, MissingField):
            error["field"] = exc.field
        if isinstance(exc, InvalidFrontmatter):
            error["detail"] = exc.message
        got = {"error": error}
    if "ok" in expected:
        assert got == expected
    elif expected["error"]["kind"] == "Yaml":
        assert "error" in got and got["error"]["kind"] == "Yaml"
        assert got["error"]["message"].startswith("yaml parse error: ")
    else:
        assert got == expected
