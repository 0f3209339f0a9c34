"""SkillsShellTool: driven through ADK's runner by a scripted model, and a security table."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("google.adk")

from adk_harness import ScriptedModel, run_agent
from google.adk.agents import LlmAgent
from helpers import write

from skills_lsp.adk import ShellRefused, SkillsShellTool, parse_command, skill_tools

SECRET = "s3cr3t-shell-value"


async def shell_run(tool: SkillsShellTool, *commands: str) -> list[dict[str, Any]]:
    model = ScriptedModel(turns=[[("shell", {"command": c}) for c in commands], "ok"])
    agent = LlmAgent(name="a", model=model, tools=[tool])
    run = await run_agent(agent, model, "go")
    assert run.final_text() == "ok"
    return [response for _, response in run.responses()]


async def test_agent_uses_the_shell_with_the_skill_tools(skills_root: Path) -> None:
    tools = [*skill_tools(skills_root), SkillsShellTool(skills_root)]
    model = ScriptedModel(
        turns=[
            [("use_skill", {"name": "pdf-report"})],
            [("shell", {"command": "ls pdf-report/references"})],
            [("shell", {"command": "grep -rn A4 pdf-report"})],
            [("shell", {"command": "python pdf-report/scripts/summarize.py x y"})],
            "done",
        ]
    )
    run = await run_agent(LlmAgent(name="a", model=model, tools=tools), model, "go")
    assert run.calls() == ["use_skill", "shell", "shell", "shell"]
    _, (_, listed), (_, grepped), (_, ran) = run.responses()
    assert listed["stdout"].split() == ["guide.md", "leak.md"] and listed["returncode"] == 0
    assert grepped["stdout"] == "pdf-report/references/guide.md:3:Use A4 pages.\n"
    assert ran["stdout"] == "rows: 2\n"
    assert "shell" in model.seen[0].tool_names
    assert str(skills_root.resolve()) not in repr(run.responses())


SHELL_REFUSALS = {
    "pipe": ("cat pdf-report/SKILL.md | head", "Shell operators and substitutions are not allowed ('|')"),
    "sequence": ("ls; cat /etc/passwd", "(';')"),
    "and": ("ls && ls", "('&')"),
    "redirect out": ("ls > out.txt", "('>')"),
    "redirect in": ("cat < /etc/passwd", "('<')"),
    "command substitution": ("cat $(echo x)", "('$')"),
    "backticks": ("cat `echo x`", "('`')"),
    "variable": ("cat $HOME/.ssh/id_rsa", "('$')"),
    "newline": ("ls\nrm -rf x", "('\\\\n')"),
    "not allowed": ("rm -rf pdf-report", "Command 'rm' is not allowed."),
    "path to a program": ("/bin/ls", "Command '/bin/ls' is not allowed."),
    "absolute path": ("cat /etc/passwd", "Path outside the skills root: '/etc/passwd'."),
    "traversal": ("cat ../secret.txt", "Path escapes the skills root ('..' segment): '../secret.txt'."),
    "traversal inside": ("cat pdf-report/../../secret.txt", "('..' segment)"),
    "symlink escape": (
        "cat pdf-report/references/leak.md",
        "Path outside the skills root: 'pdf-report/references/leak.md'.",
    ),
    "long option path": ("grep --file=/etc/passwd x", "Path outside the skills root: '--file=/etc/passwd'."),
    "attached option path": ("grep -f/etc/passwd x", "not attached to an option: '-f/etc/passwd'"),
    "python -c": ("python -c 'import os'", "Option '-c' of 'python' is not allowed."),
    "python combined -Sc": ("python -Sc 'import os'", "Option '-Sc' of 'python' is not allowed."),
    "python with no script but -i": ("python3 -i", "Option '-i' of 'python3' is not allowed."),
    "python -m": ("python -m http.server", "Option '-m' of 'python' is not allowed."),
    "find -exec": ("find . -exec cat {} +", "Option '-exec' of 'find' is not allowed."),
    "find -delete": ("find . -delete", "Option '-delete' of 'find' is not allowed."),
    "grep -R follows links": ("grep -R secret .", "Option '-R' of 'grep' is not allowed."),
    "grep -R combined": ("grep -rR secret .", "Option '-rR' of 'grep' is not allowed."),
    "grep -R combined after -i": ("grep -iR secret pdf-report", "Option '-iR' of 'grep' is not allowed."),
    "grep long option prefix": (
        "grep --recursive --dereference-r secret pdf-report",
        "Option '--dereference-r' of 'grep' is not allowed.",
    ),
    "ls -L combined": ("ls -RL pdf-report", "Option '-RL' of 'ls' is not allowed."),
    "ls --deref prefix": ("ls --deref pdf-report", "Option '--deref' of 'ls' is not allowed."),
    "find -files0-from": ("find -files0-from pdf-report/list", "Option '-files0-from' of 'find'"),
    "wc --files0-from=": ("wc -c --files0-from=pdf-report/list", "of 'wc' is not allowed."),
    "empty": ("   ", "Empty command."),
    "unbalanced quote": ("cat 'x", "Cannot parse the command"),
}


@pytest.mark.parametrize("case", SHELL_REFUSALS.values(), ids=SHELL_REFUSALS.keys())
async def test_shell_refusals(skills_root: Path, case: tuple[str, str]) -> None:
    command, message = case
    [response] = await shell_run(SkillsShellTool(skills_root), command)
    assert set(response) == {"error"}, response
    assert message in response["error"]
    assert "top secret" not in repr(response)


async def test_shell_timeout_output_cap_and_environment(
    skills_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SKILLS_LSP_TEST_SECRET", SECRET)
    scripts = skills_root / "pdf-report" / "scripts"
    write(scripts / "forever.py", "import time\nwhile True:\n    time.sleep(0.1)\n")
    write(scripts / "flood.py", "import sys\nsys.stdout.write('x' * 500000)\n")
    write(scripts / "env.py", "import os\nprint(os.environ.get('SKILLS_LSP_TEST_SECRET', 'absent'))\n")
    tool = SkillsShellTool(skills_root, timeout=0.5, max_output=1000)
    forever, flood, env = await shell_run(
        tool,
        "python pdf-report/scripts/forever.py",
        "python pdf-report/scripts/flood.py",
        "python pdf-report/scripts/env.py",
    )
    assert (
        forever["timed_out"] is True and forever["error"] == "Command timed out after 0.5 s and was killed."
    )
    assert flood["truncated"] is True and len(flood["stdout"]) == 1000
    assert env["stdout"] == "absent\n"


def test_parse_command_allow_list_and_paths(skills_root: Path) -> None:
    root = skills_root.resolve()
    argv = parse_command("head -n 2 'pdf-report/SKILL.md'", root)
    assert argv[1:] == ["-n", "2", "pdf-report/SKILL.md"]
    assert parse_command("python pdf-report/scripts/summarize.py", root)[0] == sys.executable
    # after the script, options are the script's own
    assert parse_command("python -u pdf-report/scripts/summarize.py -c -m", root)[1:] == [
        "-u",
        "pdf-report/scripts/summarize.py",
        "-c",
        "-m",
    ]
    assert parse_command(f"cat {root / 'weather' / 'SKILL.md'}", root)[-1] == str(
        root / "weather" / "SKILL.md"
    )
    with pytest.raises(ShellRefused, match="Command 'cat' is not allowed"):
        parse_command("cat x", root, allowed=["ls"])
    assert os.path.isabs(parse_command("ls", root, allowed=["ls"])[0])
