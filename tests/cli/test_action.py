"""action.yml, the composite GitHub Action: linted by actionlint (with shellcheck on its scripts),
and its shell steps run here the way a runner runs them (inputs through `env:`, GITHUB_OUTPUT,
GITHUB_PATH), without GitHub: the `uses:` steps (setup-python, upload-sarif) are GitHub's own."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
ACTION = REPO / "action.yml"
BIN = Path(sys.executable).parent


def _tool(name: str) -> str | None:
    local = BIN / name
    return str(local) if local.exists() else shutil.which(name)


ACTIONLINT = _tool("actionlint")
needs_actionlint = pytest.mark.skipif(
    ACTIONLINT is None, reason="actionlint is not installed (the `test` extra has it)"
)


def _action() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(ACTION.read_text())
    return data


def _readme_workflow() -> str:
    """The workflow the README shows for the action."""
    readme = (REPO / "README.md").read_text()
    section = readme.split("### GitHub Action", 1)[1]
    match = re.search(r"```yaml\n(.*?)```", section, re.DOTALL)
    assert match is not None, "the README's GitHub Action section has no yaml block"
    return match.group(1)


def _lint(tmp_path: Path, workflow: str, *, with_action: bool = True) -> subprocess.CompletedProcess[str]:
    assert ACTIONLINT is not None
    (tmp_path / ".git").mkdir(exist_ok=True)  # actionlint looks for the repository root
    workflows = tmp_path / ".github" / "workflows"
    workflows.mkdir(parents=True, exist_ok=True)
    (workflows / "skills.yml").write_text(workflow)
    if with_action:
        shutil.copy(ACTION, tmp_path / "action.yml")
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}  # shellcheck, if installed
    return subprocess.run(
        [ACTIONLINT, "-no-color", ".github/workflows/skills.yml"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@needs_actionlint
def test_the_readme_workflow_and_the_action_pass_actionlint(tmp_path: Path) -> None:
    workflow = _readme_workflow()
    assert re.search(r"uses: \S+/skills-lsp@\S+", workflow)
    local = re.sub(r"uses: \S+/skills-lsp@\S+", "uses: ./", workflow)  # actionlint reads ./action.yml
    done = _lint(tmp_path, local)
    assert done.returncode == 0, done.stdout + done.stderr


@needs_actionlint
def test_actionlint_really_reads_the_action(tmp_path: Path) -> None:
    local = re.sub(r"uses: \S+/skills-lsp@\S+", "uses: ./", _readme_workflow())
    wrong = local.replace("paths:", "pathz:", 1)
    done = _lint(tmp_path, wrong)
    assert done.returncode == 1 and 'input "pathz" is not defined in action' in done.stdout, done.stdout


@needs_actionlint
def test_the_action_steps_pass_actionlint_as_a_reusable_workflow(tmp_path: Path) -> None:
    """actionlint checks expressions and (with shellcheck) scripts in workflows, not in action
    metadata: the same steps, with the same inputs, as a `workflow_call` workflow get that check."""
    action = _action()
    inputs = {
        name: {"type": "string", "required": False, "default": spec.get("default", ""), "description": "x"}
        for name, spec in action["inputs"].items()
    }
    steps = []
    for step in action["runs"]["steps"]:
        step = dict(step)
        if "env" in step:  # a workflow has no github.action_path: the repository stands in
            step["env"] = {
                k: str(v).replace("github.action_path", "github.workspace") for k, v in step["env"].items()
            }
        steps.append(step)
    workflow = {
        "name": "action steps",
        "on": {"workflow_call": {"inputs": inputs}},
        "permissions": {"contents": "read", "security-events": "write"},
        "jobs": {"check": {"runs-on": "ubuntu-latest", "steps": steps}},
    }
    done = _lint(tmp_path, yaml.safe_dump(workflow, sort_keys=False), with_action=False)
    assert done.returncode == 0, done.stdout + done.stderr
    if shutil.which("shellcheck", path=f"{BIN}{os.pathsep}{os.environ['PATH']}") is None:
        pytest.skip("shellcheck is not installed: the scripts were not checked")


# --- the shell steps, run the way a runner runs them -------------------------------------------

_EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


class LocalRunner:
    """Runs the action's `shell: bash` steps in order: `${{ }}` in `env:` and `if:` evaluated
    (inputs with their defaults, github.action_path, steps.<id>.outputs), GITHUB_OUTPUT and
    GITHUB_PATH read back after each step. `uses:` steps are recorded, not run."""

    def __init__(self, workspace: Path, temp: Path, inputs: dict[str, str]) -> None:
        action = _action()
        self.inputs = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()}
        self.inputs.update(inputs)
        self.steps = action["runs"]["steps"]
        self.workspace, self.temp = workspace, temp
        self.outputs: dict[str, dict[str, str]] = {}
        self.path: list[str] = []
        self.skipped: list[str] = []
        self.failed = False

    def value(self, expression: str) -> str:
        if expression.startswith("inputs."):
            return self.inputs[expression.removeprefix("inputs.")]
        if expression == "github.action_path":
            return str(REPO)
        match = re.fullmatch(r"steps\.([\w-]+)\.outputs\.([\w-]+)", expression)
        if match:
            return self.outputs.get(match.group(1), {}).get(match.group(2), "")
        raise AssertionError(f"the local runner does not know `{expression}`")

    def condition(self, text: str) -> bool:
        result = True
        for part in (p.strip() for p in text.split("&&")):
            if part == "always()":
                continue
            match = re.fullmatch(r"(\S+)\s*(==|!=)\s*'([^']*)'", part)
            assert match is not None, f"the local runner cannot evaluate `{part}`"
            equal = self.value(match.group(1)) == match.group(3)
            result = result and (equal if match.group(2) == "==" else not equal)
        return result and (not self.failed or "always()" in text)

    def run(self) -> list[subprocess.CompletedProcess[str]]:
        done = []
        for step in self.steps:
            if "if" in step and not self.condition(str(step["if"])):
                continue
            if "uses" in step:
                self.skipped.append(step["uses"])
                continue
            assert step["shell"] == "bash"
            output, path_file = self.temp / "output", self.temp / "path"
            output.write_text("")
            path_file.write_text("")
            env = {
                **os.environ,
                "PATH": os.pathsep.join([*self.path, os.environ["PATH"]]),
                "GITHUB_OUTPUT": str(output),
                "GITHUB_PATH": str(path_file),
                "RUNNER_TEMP": str(self.temp),
            }
            for name, raw in step.get("env", {}).items():
                env[name] = _EXPRESSION.sub(lambda m: self.value(m.group(1)), str(raw))
            result = subprocess.run(
                ["bash", "--noprofile", "--norc", "-e", "-o", "pipefail", "-c", step["run"]],
                cwd=self.workspace,
                env=env,
                capture_output=True,
                text=True,
                timeout=900,
            )
            done.append(result)
            if "id" in step:
                self.outputs[step["id"]] = dict(
                    line.split("=", 1) for line in output.read_text().splitlines() if "=" in line
                )
            self.path = [*reversed(path_file.read_text().split()), *self.path]
            if result.returncode != 0:
                self.failed = True
        return done


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The install step, run once: a venv with skills-lsp from this checkout (the index supplies its
    dependencies, as on a runner)."""
    temp = tmp_path_factory.mktemp("runner-temp")
    runner = LocalRunner(tmp_path_factory.mktemp("empty-workspace"), temp, {})
    runner.steps = [s for s in runner.steps if s.get("id") == "install"]
    [result] = runner.run()
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("skills-lsp "), result.stdout
    assert runner.path == [str(temp / "skills-lsp-venv" / "bin")]
    return temp


def _workspace(tmp_path: Path, body: str) -> Path:
    skill = tmp_path / "repo" / "skills" / "notes" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text(
        f"---\nname: notes\ndescription: Formats notes. Use when asked for notes.\n---\n{body}\n"
    )
    return tmp_path / "repo"


def _run_action(workspace: Path, temp: Path, **inputs: str) -> LocalRunner:
    runner = LocalRunner(workspace, temp, inputs)
    runner.steps = [s for s in runner.steps if s.get("id") != "install"]  # installed once (fixture)
    runner.path = [str(temp / "skills-lsp-venv" / "bin")]
    runner.results = runner.run()  # type: ignore[attr-defined]
    return runner


def test_findings_are_written_as_sarif_uploaded_and_fail_the_job(tmp_path: Path, installed: Path) -> None:
    workspace = _workspace(tmp_path, "See [the guide](references/missing.md).")
    runner = _run_action(workspace, installed, paths="skills", args="--profile agentskills")
    check, fail = runner.results  # type: ignore[attr-defined]
    assert runner.outputs["check"] == {"exit-code": "1", "sarif-file": "skills-lsp.sarif"}
    sarif = json.loads((workspace / "skills-lsp.sarif").read_text())
    [result] = sarif["runs"][0]["results"]
    assert result["ruleId"] == "SK603"
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith("notes/SKILL.md")
    assert "::error file=skills/notes/SKILL.md,line=5" in check.stdout  # readable in the log too
    assert runner.skipped == ["actions/setup-python@v5", "github/codeql-action/upload-sarif@v3"]
    assert fail.returncode == 1 and "skills-lsp found errors (exit 1)" in fail.stdout


def test_a_clean_workspace_passes_and_upload_can_be_turned_off(tmp_path: Path, installed: Path) -> None:
    workspace = _workspace(tmp_path, "Steps.")
    runner = _run_action(
        workspace, installed, upload="false", **{"python-version": "", "sarif-file": "out.sarif"}
    )
    assert [r.returncode for r in runner.results] == [0, 0]  # type: ignore[attr-defined]
    assert runner.outputs["check"] == {"exit-code": "0", "sarif-file": "out.sarif"}
    assert json.loads((workspace / "out.sarif").read_text())["runs"][0]["results"] == []
    assert runner.skipped == []


def test_findings_need_not_fail_the_job(tmp_path: Path, installed: Path) -> None:
    workspace = _workspace(tmp_path, "See [the guide](references/missing.md).")
    runner = _run_action(workspace, installed, **{"fail-on-findings": "false"})
    assert [r.returncode for r in runner.results] == [0]  # type: ignore[attr-defined]
    assert runner.outputs["check"]["exit-code"] == "1"


def test_a_usage_error_stops_at_the_check_step(tmp_path: Path, installed: Path) -> None:
    workspace = _workspace(tmp_path, "Steps.")
    runner = _run_action(workspace, installed, paths="no-such-folder")
    [check] = runner.results  # type: ignore[attr-defined]
    assert (
        check.returncode == 2
        and "::error title=skills-lsp::skills-lsp could not run (exit 2)" in check.stdout
    )
    assert runner.outputs["check"] == {"exit-code": "2"}  # no SARIF log: nothing is uploaded
    assert runner.skipped == ["actions/setup-python@v5"]
