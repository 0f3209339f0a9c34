"""The on-demand tools, the injection plugin and the coordinator binding, driven through ADK's own
runner by a scripted model (real `LlmAgent`, `App`, `InMemoryRunner`; no network)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("google.adk")

from adk_harness import ScriptedModel, run_agent
from google.adk.agents import LlmAgent
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.function_tool import FunctionTool
from helpers import write

from skills_lsp.adk import (
    AdkToolRegistry,
    SkillBindError,
    SkillInjectorPlugin,
    ValidationMode,
    bind_skill,
    skill_agent,
    skill_index,
    skill_tools,
)
from skills_lsp.core.engine.catalog import to_prompt
from skills_lsp.core.routing.scorer import SelectionPolicy


def fetch_table(name: str) -> dict[str, Any]:
    """Fetch a table by name."""
    return {"rows": [[1, 2]], "name": name}


def render_pdf(title: str) -> dict[str, Any]:
    """Render a PDF."""
    return {"pdf": f"{title}.pdf"}


def get_forecast(city: str) -> dict[str, Any]:
    """The forecast for a city."""
    return {"city": city, "sky": "clear"}


def delete_everything() -> dict[str, Any]:
    """A tool no skill names."""
    return {"deleted": True}


REGISTRY: dict[str, Any] = {
    "fetch_table": fetch_table,
    "render_pdf": render_pdf,
    "get_forecast": get_forecast,
    "delete_everything": delete_everything,
}


def tools_agent(model: ScriptedModel, skills_root: Path) -> LlmAgent:
    return LlmAgent(name="assistant", model=model, instruction="Help.", tools=skill_tools(skills_root))


# --- on-demand tools through the runner ------------------------------------------------------------


async def test_agent_calls_use_skill_read_reference_and_run_script(skills_root: Path) -> None:
    model = ScriptedModel(
        turns=[
            [("use_skill", {"name": "pdf-report"})],
            [("read_reference", {"skill": "pdf-report", "path": "references/guide.md"})],
            [("run_script", {"skill": "pdf-report", "script": "summarize.py", "args": ["a", "b", "c"]})],
            "Report ready.",
        ]
    )
    run = await run_agent(tools_agent(model, skills_root), model, "Make me a report")

    assert run.calls() == ["use_skill", "read_reference", "run_script"]
    (use_name, used), (read_name, read), (run_name, ran) = run.responses()
    assert use_name == "use_skill"
    assert used["skill"] == "pdf-report"
    assert used["instructions"] == "# PDF report\n\nFetch the table, then render it."
    assert sorted(used["resources"]) == ["references/guide.md", "scripts/summarize.py"]
    assert "references/leak.md" not in used["resources"]  # a symlink is never listed
    assert str(skills_root) not in repr(used)  # no host path in the result
    assert read_name == "read_reference"
    assert read == {
        "skill": "pdf-report",
        "path": "references/guide.md",
        "content": "# Guide\n\nUse A4 pages.\n",
        "truncated": False,
    }
    assert run_name == "run_script"
    assert ran["stdout"] == "rows: 3\n"
    assert ran["returncode"] == 0
    assert ran["timed_out"] is False and "error" not in ran
    assert run.final_text() == "Report ready."

    # The model is told of the three tools, and use_skill's description carries the core catalog.
    first = model.seen[0]
    assert first.tool_names == ["use_skill", "read_reference", "run_script"]
    catalog = to_prompt(skill_index(skills_root), locations=False)
    assert catalog in first.tool_descriptions["use_skill"]
    assert "<location>" not in catalog and str(skills_root) not in first.tool_descriptions["use_skill"]
    assert "<name>\npdf-report\n</name>" in catalog and "<name>\nweather\n</name>" in catalog
    # The tool results reach the model on the next turn.
    last = model.seen[-1]
    sent = [p.function_response for c in last.contents for p in c.parts or [] if p.function_response]
    assert [r.name for r in sent] == ["use_skill", "read_reference", "run_script"]


REFUSED_CALLS = {
    "traversal": (
        "read_reference",
        {"skill": "pdf-report", "path": "../weather/SKILL.md"},
        "Path escapes the skill's folder ('..' segment): '../weather/SKILL.md'.",
    ),
    "deep traversal": (
        "read_reference",
        {"skill": "pdf-report", "path": "references/../../../secret.txt"},
        "('..' segment)",
    ),
    "absolute path": (
        "read_reference",
        {"skill": "pdf-report", "path": "/etc/passwd"},
        "Absolute paths are not allowed: '/etc/passwd'.",
    ),
    "symlink escape": (
        "read_reference",
        {"skill": "pdf-report", "path": "references/leak.md"},
        "File resolves outside the skill's folder: 'references/leak.md'.",
    ),
    "missing file": (
        "read_reference",
        {"skill": "pdf-report", "path": "references/nope.md"},
        "No such file in the skill: 'references/nope.md'.",
    ),
    "unknown skill": (
        "use_skill",
        {"name": "nope"},
        "Unknown skill 'nope'. Available skills: pdf-report, weather.",
    ),
    "unknown skill for a file": (
        "read_reference",
        {"skill": "nope", "path": "SKILL.md"},
        "Unknown skill 'nope'.",
    ),
    "script traversal": (
        "run_script",
        {"skill": "pdf-report", "script": "../SKILL.md"},
        "Path escapes the skill's scripts/ folder ('..' segment): '../SKILL.md'.",
    ),
    "script absolute": (
        "run_script",
        {"skill": "pdf-report", "script": "/bin/sh"},
        "Absolute paths are not allowed: '/bin/sh'.",
    ),
    "skill without scripts": (
        "run_script",
        {"skill": "weather", "script": "x.py"},
        "The skill has no scripts/ folder",
    ),
    "arguments as one string": (
        "run_script",
        {"skill": "pdf-report", "script": "summarize.py", "args": "a; rm -rf /"},
        "Arguments must be a list of strings, not one string.",
    ),
}


@pytest.mark.parametrize("case", REFUSED_CALLS.values(), ids=REFUSED_CALLS.keys())
async def test_refusals_come_back_as_error_results(
    skills_root: Path, case: tuple[str, dict[str, Any], str]
) -> None:
    tool, args, message = case
    model = ScriptedModel(turns=[[(tool, args)], "ok"])
    run = await run_agent(tools_agent(model, skills_root), model, "go")

    [(name, response)] = run.responses()
    assert name == tool
    assert set(response) == {"error"}
    assert message in response["error"]
    assert "top secret" not in repr(run.events)
    assert run.final_text() == "ok"  # the run goes on: the model sees the error and answers


async def test_read_reference_reads_any_file_of_the_skill_but_not_binary(skills_root: Path) -> None:
    (skills_root / "pdf-report" / "assets").mkdir()
    (skills_root / "pdf-report" / "assets" / "logo.bin").write_bytes(b"\xff\xfe\x00")
    model = ScriptedModel(
        turns=[
            [
                ("read_reference", {"skill": "pdf-report", "path": "SKILL.md"}),
                ("read_reference", {"skill": "pdf-report", "path": "assets/logo.bin"}),
            ],
            "ok",
        ]
    )
    run = await run_agent(tools_agent(model, skills_root), model, "go")
    (_, skill_md), (_, binary) = run.responses()
    assert skill_md["content"].startswith("---\nname: pdf-report\n")
    assert binary == {"error": "'assets/logo.bin' is not a UTF-8 text file."}


async def test_run_script_timeout_is_an_error_result(skills_root: Path) -> None:
    write(
        skills_root / "pdf-report" / "scripts" / "forever.py",
        "import time\nwhile True:\n    time.sleep(0.1)\n",
    )
    from skills_lsp.adk import RunScriptTool, UseSkillTool

    index = skill_index(skills_root)
    model = ScriptedModel(turns=[[("run_script", {"skill": "pdf-report", "script": "forever.py"})], "ok"])
    agent = LlmAgent(name="a", model=model, tools=[UseSkillTool(index), RunScriptTool(index, timeout=0.5)])
    run = await run_agent(agent, model, "go")
    [(_, response)] = run.responses()
    assert response["timed_out"] is True and response["returncode"] is None
    assert response["error"] == "Script 'forever.py' timed out after 0.5 s and was killed."


def test_skill_tools_leave_out_invalid_skills_and_can_drop_scripts(skills_root: Path) -> None:
    write(skills_root / "broken" / "SKILL.md", "---\nname: other-name\ndescription: Mismatched.\n---\nBody\n")
    tools = skill_tools(skills_root, scripts=False)
    assert [t.name for t in tools] == ["use_skill", "read_reference"]
    assert all(isinstance(t, BaseTool) for t in tools)
    assert sorted(d.name for d in skill_index(skills_root)) == ["pdf-report", "weather"]


# --- the injection plugin --------------------------------------------------------------------------


async def test_injector_plugin_puts_the_top_skill_in_front_of_the_user_message(skills_root: Path) -> None:
    plugin = SkillInjectorPlugin(skills_root, max_injected_chars=12)
    model = ScriptedModel(turns=["Here is the PDF report."])
    agent = LlmAgent(name="assistant", model=model, instruction="Help.")
    run = await run_agent(agent, model, "Please build a PDF report of sales", plugins=[plugin])

    block = "[skill:pdf-report]\n# PDF report\n[/skill]"  # the body cut to 12 characters
    expected = f"{block}\n\nPlease build a PDF report of sales"
    # What the model receives.
    user_turns = [c for c in model.seen[0].contents if c.role == "user"]
    assert [p.text for p in user_turns[-1].parts or []] == [expected]
    # What the event stream records: the rewritten user event and the state delta.
    [user_event] = [e for e in run.stored if e.author == "user"]
    assert user_event.content is not None and user_event.content.parts is not None
    assert [p.text for p in user_event.content.parts] == [expected]
    [injection] = plugin.injections
    assert injection.skill == "pdf-report" and injection.block == block and injection.score > 0
    recorded = run.state["skills_lsp_injection"]
    assert recorded["skill"] == "pdf-report" and recorded["block"] == block
    assert any(e.actions.state_delta.get("skills_lsp_injection") == recorded for e in run.stored)


async def test_injector_plugin_leaves_unmatched_messages_alone(skills_root: Path) -> None:
    plugin = SkillInjectorPlugin(skills_root, policy=SelectionPolicy(min_score=100.0))
    model = ScriptedModel(turns=["hi"])
    run = await run_agent(LlmAgent(name="a", model=model), model, "PDF report please", plugins=[plugin])
    user_turns = [c for c in model.seen[0].contents if c.role == "user"]
    assert user_turns[-1].parts[0].text == "PDF report please"  # type: ignore[index]
    assert not plugin.injections and "skills_lsp_injection" not in run.state


async def test_injector_plugin_respects_tag_filters(skills_root: Path) -> None:
    plugin = SkillInjectorPlugin(skills_root, policy=SelectionPolicy(include_tags=["nothing-has-this"]))
    model = ScriptedModel(turns=["hi"])
    await run_agent(LlmAgent(name="a", model=model), model, "PDF report please", plugins=[plugin])
    assert not plugin.injections


async def injected(skills_root: Path, policy: SelectionPolicy, message: str) -> list[str]:
    plugin = SkillInjectorPlugin(skills_root, policy=policy)
    model = ScriptedModel(turns=["ok"])
    await run_agent(LlmAgent(name="a", model=model), model, message, plugins=[plugin])
    return [i.skill for i in plugin.injections]


async def test_injector_plugin_routes_with_the_policys_scorer(skills_root: Path) -> None:
    # The crate's lexical scorer matches the stop word "a" ("for a city") and injects weather into
    # a request no skill handles; hybrid's calibrated threshold says "no skill".
    joke = "tell me a joke about cats"
    assert await injected(skills_root, SelectionPolicy(), joke) == ["weather"]
    assert await injected(skills_root, SelectionPolicy(scorer="hybrid"), joke) == []
    # A request sharing no word with the weather skill reaches it by meaning alone.
    umbrella = "will I need an umbrella in Paris tomorrow?"
    assert await injected(skills_root, SelectionPolicy(), umbrella) == []
    assert await injected(skills_root, SelectionPolicy(scorer="semantic", min_score=0.2), umbrella) == [
        "weather"
    ]


# --- coordinator binding ---------------------------------------------------------------------------


async def test_bound_agent_gets_exactly_the_skills_tools(skills_root: Path) -> None:
    binding = bind_skill(skills_root, REGISTRY, "pdf-report")
    assert binding.tool_names == ["fetch_table", "render_pdf"]
    assert "You have access to the following tools: fetch_table, render_pdf." in binding.instruction
    assert binding.instruction.startswith("[skill:pdf-report]")

    model = ScriptedModel(turns=[[("fetch_table", {"name": "sales"})], "done"])
    run = await run_agent(skill_agent(binding, model=model), model, "go")
    seen = model.seen[0]
    assert sorted(seen.tool_names) == ["fetch_table", "render_pdf"]  # never delete_everything
    assert "[skill:pdf-report]" in seen.system_instruction
    assert "delete_everything" not in seen.system_instruction
    assert run.responses() == [("fetch_table", {"rows": [[1, 2]], "name": "sales"})]


def test_strict_refuses_a_skill_naming_a_missing_tool(skills_root: Path) -> None:
    with pytest.raises(
        SkillBindError, match=r"Skill 'weather' requires tools not in registry: \[\"send_email\"\]"
    ):
        bind_skill(skills_root, REGISTRY, "weather")


async def test_permissive_binds_only_the_tools_that_resolve(skills_root: Path) -> None:
    binding = bind_skill(skills_root, REGISTRY, "weather", mode="permissive")
    assert binding.tool_names == ["get_forecast"]
    assert "send_email" not in binding.instruction
    model = ScriptedModel(turns=["sunny"])
    await run_agent(skill_agent(binding, model=model), model, "weather?")
    assert model.seen[0].tool_names == ["get_forecast"]
    assert "send_email" not in model.seen[0].system_instruction


def test_fallback_binds_the_generalist_when_strict_fails(skills_root: Path) -> None:
    registry = {"fetch_table": fetch_table, "get_forecast": get_forecast}  # render_pdf is missing
    binding = bind_skill(
        skills_root, registry, "pdf-report", mode=ValidationMode.FALLBACK, fallback_skill="weather"
    )
    assert binding.skill == "weather"
    assert binding.tool_names == ["get_forecast"]


def test_bind_by_query_and_errors(skills_root: Path) -> None:
    assert bind_skill(skills_root, REGISTRY, query="build a PDF report").skill == "pdf-report"
    with pytest.raises(SkillBindError, match="Unknown skill 'nope'"):
        bind_skill(skills_root, REGISTRY, "nope")
    with pytest.raises(SkillBindError, match="No skill matches the query"):
        bind_skill(skills_root, REGISTRY, query="zzz qqq")
    with pytest.raises(ValueError, match="exactly one of"):
        bind_skill(skills_root, REGISTRY)


def test_registry_keys_must_be_the_tools_names() -> None:
    with pytest.raises(ValueError, match="Registry key 'fetch' names a tool called 'fetch_table'"):
        AdkToolRegistry({"fetch": fetch_table})
    registry = AdkToolRegistry([FunctionTool(fetch_table), render_pdf])
    assert registry.available_tools() == ["fetch_table", "render_pdf"]
    assert registry.resolve("missing") is None


async def test_skill_text_with_braces_is_not_templated(skills_root: Path) -> None:
    write(
        skills_root / "braces" / "SKILL.md",
        "---\nname: braces\ndescription: Uses braces.\n---\nWrite {user_name} and {missing_key} literally.\n",
    )
    binding = bind_skill(skills_root, REGISTRY, "braces")
    model = ScriptedModel(turns=["ok"])
    await run_agent(skill_agent(binding, model=model), model, "go")
    assert "Write {user_name} and {missing_key} literally." in model.seen[0].system_instruction
    assert model.seen[0].tool_names == []
