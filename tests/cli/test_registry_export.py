"""`skills-lsp registry export MODULE:ATTR`: a real ADK agent module written to tmp_path."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path

import jsonschema
import pytest
import yaml
from helpers import run_cli as run

pytest.importorskip("google.adk")

from skills_lsp.core.workspace.settings import load_tool_manifest

REPO = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((REPO / "schema" / "tool-registry.schema.json").read_text(encoding="utf-8"))

AGENT_MODULE = '''
import asyncio
import warnings

from google.adk.agents import LlmAgent, SequentialAgent
from google.adk.tools import FunctionTool
from google.adk.tools.base_toolset import BaseToolset

print("module-level print goes to stderr")


def get_forecast(city: str, days: int = 3) -> dict:
    """Return the weather forecast for a city.

    Args:
      city: the city name.
      days: how many days.
    """
    return {"city": city, "days": days}


def send_email(to: str, body: str) -> dict:
    """Send an email."""
    return {"sent": True}


def render_pdf(table: str) -> dict:
    """Render a table as a PDF."""
    return {"pdf": "x.pdf"}


def fetch_table(name: str) -> dict:
    """Fetch a table by name."""
    return {}


class TableToolset(BaseToolset):
    async def get_tools(self, readonly_context=None):
        return [FunctionTool(fetch_table)]


class SlowToolset(BaseToolset):
    async def get_tools(self, readonly_context=None):
        await asyncio.sleep(30)
        return []


class BrokenToolset(BaseToolset):
    async def get_tools(self, readonly_context=None):
        raise ConnectionError("no server")


helper = LlmAgent(name="helper", model="gemini-2.5-flash", tools=[render_pdf, TableToolset()])
root_agent = LlmAgent(
    name="root",
    model="gemini-2.5-flash",
    tools=[FunctionTool(get_forecast), send_email, BrokenToolset()],
    sub_agents=[helper],
)
with warnings.catch_warnings():  # SequentialAgent is deprecated in favour of Workflow
    warnings.simplefilter("ignore", DeprecationWarning)
    only = LlmAgent(name="only", model="gemini-2.5-flash", tools=[send_email])
    pipeline = SequentialAgent(name="pipeline", sub_agents=[only])
bare = LlmAgent(name="bare", model="gemini-2.5-flash")
slow = LlmAgent(name="slow", model="gemini-2.5-flash", tools=[send_email, SlowToolset()])
tool_list = [FunctionTool(get_forecast), send_email]
not_an_agent = 42
'''


@pytest.fixture()
def agent_module(tmp_path: Path) -> Iterator[str]:
    name = f"export_agent_{uuid.uuid4().hex[:8]}"  # each test imports its own module
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(AGENT_MODULE), encoding="utf-8")
    old_path = list(sys.path)
    yield name
    sys.path[:] = old_path
    sys.modules.pop(name, None)


def test_export_an_agent_tree_to_stdout(tmp_path: Path, agent_module: str) -> None:
    code, out, err = run("registry", "export", f"{agent_module}:root_agent", cwd=tmp_path)
    assert code == 0, err
    assert out.startswith(f"# The tools of {agent_module}:root_agent")
    manifest = yaml.safe_load(out)
    jsonschema.validate(manifest, SCHEMA)
    tools = {t["name"]: t for t in manifest["tools"]}
    assert list(tools) == ["get_forecast", "send_email", "render_pdf", "fetch_table"]
    forecast = tools["get_forecast"]
    assert forecast["description"] == "Return the weather forecast for a city."
    assert forecast["source"] == f"adk:{agent_module}:root_agent"
    assert forecast["parameters"]["required"] == ["city"]
    assert forecast["parameters"]["properties"]["days"]["type"] == "integer"
    skipped = "skipped toolset BrokenToolset of agent 'root': get_tools failed (ConnectionError: no server)"
    assert skipped in err
    assert "module-level print" not in out


def test_export_writes_a_file_the_registry_loads(tmp_path: Path, agent_module: str) -> None:
    target = tmp_path / "skill-tools.yaml"
    code, out, err = run(
        "registry", "export", f"{agent_module}:root_agent", "-o", str(target), "--no-sub-agents", cwd=tmp_path
    )
    assert code == 0, err
    assert out == f"Wrote 2 tools to {target}.\n"
    jsonschema.validate(yaml.safe_load(target.read_text(encoding="utf-8")), SCHEMA)
    registry, findings = load_tool_manifest(target)
    assert findings == []
    assert registry.available_tools() == ["get_forecast", "send_email"]


def test_export_a_workflow_agent_and_a_tool_list(tmp_path: Path, agent_module: str) -> None:
    code, out, _ = run("registry", "export", f"{agent_module}:pipeline", cwd=tmp_path)
    assert code == 0 and [t["name"] for t in yaml.safe_load(out)["tools"]] == ["send_email"]
    code, out, _ = run("registry", "export", f"{agent_module}:tool_list", cwd=tmp_path)
    assert code == 0
    manifest = yaml.safe_load(out)
    jsonschema.validate(manifest, SCHEMA)
    assert [t["name"] for t in manifest["tools"]] == ["get_forecast", "send_email"]


def test_a_slow_toolset_is_skipped_after_the_timeout(tmp_path: Path, agent_module: str) -> None:
    code, out, err = run(
        "registry", "export", f"{agent_module}:slow", "--toolset-timeout", "0.2", cwd=tmp_path
    )
    assert code == 0
    assert [t["name"] for t in yaml.safe_load(out)["tools"]] == ["send_email"]
    assert (
        "skills-lsp: warning: skipped toolset SlowToolset of agent 'slow': get_tools failed (timed out)."
        in err
    )


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("no_colon", "expected MODULE:ATTR (e.g. `my_agent.agent:root_agent`), got 'no_colon'"),
        ("a:b:c", "expected MODULE:ATTR"),
        ("../x:y", "expected MODULE:ATTR"),
        ("missing_module_xyz:agent", "cannot import module 'missing_module_xyz': ModuleNotFoundError"),
        ("{module}:nope", "module '{module}' has no attribute 'nope'"),
        ("{module}:bare", "{module}:bare: agent 'bare' (LlmAgent) has no tools."),
        (
            "{module}:not_an_agent",
            "an object of type 'int' is neither an ADK agent (BaseAgent, e.g. LlmAgent) nor",
        ),
    ],
)
def test_export_errors_exit_2_without_a_traceback(
    tmp_path: Path, agent_module: str, target: str, message: str
) -> None:
    code, out, err = run("registry", "export", target.format(module=agent_module), cwd=tmp_path)
    assert code == 2 and out == ""
    assert err.startswith("skills-lsp: error: ") and message.format(module=agent_module) in err
    assert "Traceback" not in err


def test_a_module_that_fails_on_import(tmp_path: Path) -> None:
    (tmp_path / "broken_agent_mod.py").write_text("raise RuntimeError('boom')\n", encoding="utf-8")
    (tmp_path / "exits_agent_mod.py").write_text("import sys\nsys.exit(3)\n", encoding="utf-8")
    try:
        code, _, err = run("registry", "export", "broken_agent_mod:agent", cwd=tmp_path)
        assert code == 2 and "cannot import module 'broken_agent_mod': RuntimeError: boom" in err
        code, _, err = run("registry", "export", "exits_agent_mod:agent", cwd=tmp_path)
        assert code == 2 and "cannot import module 'exits_agent_mod': SystemExit: 3" in err
    finally:
        sys.modules.pop("broken_agent_mod", None)
        sys.modules.pop("exits_agent_mod", None)
        if str(tmp_path) in sys.path:
            sys.path.remove(str(tmp_path))


def test_the_command_line_end_to_end(tmp_path: Path, agent_module: str) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "skills_lsp",
            "registry",
            "export",
            f"{agent_module}:root_agent",
            "-o",
            "t.yaml",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    jsonschema.validate(yaml.safe_load((tmp_path / "t.yaml").read_text(encoding="utf-8")), SCHEMA)
    proc = subprocess.run(
        [sys.executable, "-m", "skills_lsp", "registry", "export", "nope"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
