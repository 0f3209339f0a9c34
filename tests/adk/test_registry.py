"""`SkillsLspRegistry` behind ADK's own `SkillToolset(registry=...)`, driven through
`InMemoryRunner` by a scripted model that calls `search_skills`, then `load_skill`."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("google.adk")

from adk_harness import ScriptedModel, run_agent
from google.adk.agents import LlmAgent
from google.adk.tools.skill_toolset import SkillToolset
from helpers import write

from skills_lsp.adk import SkillsLspRegistry
from skills_lsp.core.index.skill_index import load_workspace_index
from skills_lsp.core.routing.scorer import SCORERS

pytestmark = pytest.mark.asyncio


async def test_the_model_searches_then_loads_through_the_runner(skills_root: Path) -> None:
    registry = SkillsLspRegistry(skills_root, scorer="bm25f")
    model = ScriptedModel(
        turns=[
            [("search_skills", {"query": "build a PDF report from the sales table"})],
            [("load_skill", {"skill_name": "pdf-report"})],
            "Here is your report.",
        ]
    )
    agent = LlmAgent(
        name="assistant", model=model, instruction="Help.", tools=[SkillToolset(registry=registry)]
    )
    run = await run_agent(agent, model, "Make me a PDF report of the sales table")
    assert run.calls() == ["search_skills", "load_skill"]
    (search_name, found), (load_name, loaded) = run.responses()
    assert search_name == "search_skills"
    # A list result comes back wrapped by ADK as {"result": [...]}.
    results = found["result"]
    assert [r["name"] for r in results] == ["pdf-report"]
    assert results[0]["description"].startswith("Build PDF reports from tables.")
    assert load_name == "load_skill"
    assert loaded["skill_name"] == "pdf-report"
    assert "Fetch the table, then render it." in loaded["instructions"]
    # The model was told what a good query looks like, by the registry.
    first = model.seen[0]
    assert first.tool_descriptions["search_skills"] == registry.search_tool_description()
    assert "full sentence" in first.tool_descriptions["search_skills"]
    assert run.final_text() == "Here is your report."


async def test_nothing_is_found_under_the_calibrated_threshold(skills_root: Path) -> None:
    registry = SkillsLspRegistry(skills_root, scorer="bm25f")
    assert registry.policy.min_score == SCORERS["bm25f"].default_min_score
    assert await registry.search_skills(query="what is the capital of France") == []
    weather = await registry.search_skills(query="look up the weather forecast for Paris")
    assert [f.name for f in weather] == ["weather"]
    # The same ranking `skills-lsp test` gives with that scorer: the threshold is the one CI checks.
    loose = SkillsLspRegistry(skills_root, scorer="bm25f", min_score=0.0, top_k=2)
    assert len(await loose.search_skills(query="report the weather as a PDF")) == 2


async def test_a_skill_the_rules_reject_is_neither_found_nor_served(skills_root: Path) -> None:
    write(
        skills_root / "bad-skill" / "SKILL.md",
        "---\nname: Bad_Skill\ndescription: Build PDF reports from tables, badly.\n---\n# Bad\n",
    )
    registry = SkillsLspRegistry(skills_root, scorer="bm25f", min_score=0.0)
    assert any(path.endswith("bad-skill/SKILL.md") for path in registry.report.skipped)
    names = [f.name for f in await registry.search_skills(query="build PDF reports from tables")]
    assert "Bad_Skill" not in names and names[0] == "pdf-report"
    with pytest.raises(KeyError, match="no skill named 'Bad_Skill'"):
        await registry.get_skill(name="Bad_Skill")
    model = ScriptedModel(turns=[[("load_skill", {"skill_name": "Bad_Skill"})], "ok"])
    agent = LlmAgent(name="a", model=model, tools=[SkillToolset(registry=registry)])
    run = await run_agent(agent, model, "go")
    ((_, response),) = run.responses()
    assert response["error_code"] == "REGISTRY_ERROR"


async def test_an_index_source_and_the_default_scorer(skills_root: Path) -> None:
    write(skills_root.parent / "skills-lsp.toml", 'scorer = "lexical"\n')
    registry = SkillsLspRegistry(load_workspace_index(skills_root.parent))
    assert registry.scorer == "lexical"  # the config's scorer, as `skills-lsp test` would use
    assert sorted(s.name for s in registry.skills) == ["pdf-report", "weather"]
    assert [f.name for f in await registry.search_skills(query="weather forecast city")] == ["weather"]


@pytest.mark.skipif(not SCORERS["semantic"].available(), reason="needs the semantic extra")
async def test_an_embedding_scorer_keeps_its_vectors_in_the_workspace_cache(skills_root: Path) -> None:
    from skills_lsp.core.routing.semantic import VECTOR_FILE

    write(skills_root.parent / "skills-lsp.toml", 'scorer = "semantic"\n')
    registry = SkillsLspRegistry(skills_root)
    assert registry.scorer == "semantic"
    assert (skills_root.parent / ".skills-lsp-cache" / VECTOR_FILE).is_file()
    found = await registry.search_skills(query="look up the weather forecast for Paris")
    assert [f.name for f in found][:1] == ["weather"]
