"""Engine behaviour past the crate: FALLBACK mode, the injector's roots, the workspace index."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import write

from skills_lsp import (
    ByName,
    ByQuery,
    Content,
    ContextCoordinator,
    CoordinatorConfig,
    Part,
    SelectionPolicy,
    SkillInjector,
    SkillInjectorConfig,
    StaticToolRegistry,
    ValidationMode,
    load_skill_index,
    load_workspace_index,
    select_skills,
)
from skills_lsp.core.model import FileKind


def flat(name: str, description: str, tools: tuple[str, ...] = (), tags: tuple[str, ...] = ()) -> str:
    lines = [f"name: {name}", f"description: {description}"]
    if tools:
        lines += ["allowed-tools:", *(f"  - {t}" for t in tools)]
    if tags:
        lines += ["tags:", *(f"  - {t}" for t in tags)]
    return "---\n" + "\n".join(lines) + f"\n---\nInstructions for {name}.\n"


@pytest.fixture()
def workspace(tmp_path: Path) -> Path:
    write(tmp_path / ".skills" / "refunds.md", flat("refunds", "Issue refunds for orders", ("refund_api",)))
    write(tmp_path / ".skills" / "helper.md", flat("helper", "General help", ("search",), ("generalist",)))
    write(tmp_path / ".skills" / "notes.md", flat("notes", "Take notes"))
    return tmp_path


def test_fallback_mode_uses_the_generalist_when_nothing_else_resolves(workspace: Path) -> None:
    index = load_skill_index(workspace)
    registry = StaticToolRegistry(["other"])
    strict = ContextCoordinator(index, registry, CoordinatorConfig(policy=SelectionPolicy(min_score=0.1)))
    assert strict.resolve([ByQuery("refund my order")]) is None  # refund_api is missing
    config = CoordinatorConfig(policy=SelectionPolicy(min_score=0.1), validation_mode=ValidationMode.FALLBACK)
    context = ContextCoordinator(index, registry, config).resolve([ByQuery("refund my order")])
    assert context is not None and context.provenance.skill.name == "helper"
    assert context.provenance.score == 0.0 and context.active_tools == []  # `search` does not resolve
    named = CoordinatorConfig(validation_mode=ValidationMode.FALLBACK, fallback_skill="notes")
    context = ContextCoordinator(index, registry, named).resolve([ByName("missing")])
    assert context is not None and context.provenance.skill.name == "notes"


def test_fallback_is_not_used_when_a_strategy_resolves(workspace: Path) -> None:
    index = load_skill_index(workspace)
    config = CoordinatorConfig(validation_mode=ValidationMode.FALLBACK)
    context = ContextCoordinator(index, StaticToolRegistry(["refund_api"]), config).resolve(
        [ByName("refunds")]
    )
    assert context is not None and context.active_tool_names == ["refund_api"]
    assert "You have access to the following tools: refund_api." in context.system_instruction


def test_injector_from_root_with_extra_folders_prefers_project_local(workspace: Path, tmp_path: Path) -> None:
    extra = tmp_path / "global"
    write(extra / "refunds.md", flat("refunds", "Global refunds copy"))
    write(extra / "shipping.md", flat("shipping", "Track shipping of parcels"))
    injector = SkillInjector.from_root(workspace, SkillInjectorConfig(extra_paths=[extra]))
    names = {d.name: d for d in injector.index()}
    assert names["refunds"].path == workspace / ".skills" / "refunds.md"  # project-local wins
    assert "shipping" in names
    content = Content("user", [Part(text="where is my parcel shipping")])
    match = injector.inject(content)
    assert match is not None and match.skill.name == "shipping"
    assert content.parts[0].text is not None and content.parts[0].text.startswith("[skill:shipping]\n")
    assert injector.max_injected_chars() == 2000 and injector.policy().top_k == 1


def test_workspace_index_reads_agentskills_leniently(tmp_path: Path) -> None:
    write(
        tmp_path / "skills" / "pdf" / "SKILL.md",
        "---\nname: pdf\ndescription: Fill PDF forms\nallowed-tools: Bash(git log:*) Read, Grep\n"
        "metadata:\n  version: '1.0'\n---\nUse the form.\n",
    )
    write(tmp_path / ".skills" / "flat.md", flat("flat", "A flat skill"))
    write(tmp_path / "AGENTS.md", "# House rules\nRun the linters.\n")
    write(tmp_path / "skills" / "broken" / "SKILL.md", "---\nname: broken\n---\nno description\n")
    crate = {d.name for d in load_skill_index(tmp_path)}
    assert crate == {"flat", "agents"}  # the crate does not read <name>/SKILL.md outside .skills
    index = load_workspace_index(tmp_path)
    docs = {d.name: d for d in index}
    assert set(docs) == {"pdf", "flat", "agents"}
    assert docs["pdf"].kind is FileKind.AGENT_SKILL
    assert docs["pdf"].allowed_tools == ["Bash(git log:*)", "Read", "Grep"]
    assert docs["pdf"].metadata == {"version": "1.0"} and docs["pdf"].body == "Use the form."
    assert docs["agents"].kind is FileKind.CONVENTION
    assert select_skills(index, "fill the pdf form", SelectionPolicy(min_score=0.1))[0].skill.name == "pdf"


def test_unicode_tokenizer_finds_non_english_skills(tmp_path: Path) -> None:
    write(tmp_path / ".skills" / "db.md", flat("datenbank", "Datenbank-Abfragen prüfen und beschleunigen"))
    write(tmp_path / ".skills" / "cn.md", flat("shujuku", "优化 数据库 查询"))
    index = load_skill_index(tmp_path)
    policy = SelectionPolicy(min_score=0.1)
    assert select_skills(index, "数据库 查询", policy) == []  # ASCII, as the crate: no tokens at all
    unicode = SelectionPolicy(min_score=0.1, tokenizer="unicode")
    assert [m.skill.name for m in select_skills(index, "Abfragen PRÜFEN", unicode)] == ["datenbank"]
    assert [m.skill.name for m in select_skills(index, "数据库 查询", unicode)] == ["shujuku"]
