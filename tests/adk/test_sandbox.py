"""skills_lsp.adk.sandbox.run_script: a security table of refusals and containments, on real files
and real subprocesses."""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

# The sandbox itself needs only the standard library, but `skills_lsp.adk` (its package) requires
# google-adk on import.
pytest.importorskip("google.adk")

from skills_lsp.adk.sandbox import ScriptRefused, ScriptResult, process_isolation, run_script, scrubbed_env

SECRET = "s3cr3t-value-never-leaks"


@pytest.fixture
def skill(tmp_path: Path) -> Path:
    folder = tmp_path / "skills" / "demo"
    scripts = folder / "scripts"
    (scripts / "sub").mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: demo\ndescription: Demo.\n---\n", encoding="utf-8")
    (scripts / "echo.py").write_text("import sys, os\nprint(' '.join(sys.argv[1:]))\nprint(os.getcwd())\n")
    (scripts / "sub" / "nested.py").write_text("print('nested')\n")
    (scripts / "hello.sh").write_text('echo "hello $1"\n')
    (scripts / "forever.py").write_text("import time\nwhile True:\n    time.sleep(0.1)\n")
    (scripts / "forever.sh").write_text("sleep 1000 &\nwhile true; do sleep 0.1; done\n")
    (scripts / "flood.py").write_text(
        "import sys\nchunk = 'x' * 65536\nfor _ in range(300):\n"
        "    sys.stdout.write(chunk)\n    sys.stderr.write(chunk)\n"
    )
    (scripts / "env.py").write_text(
        "import os\nprint(os.environ.get('MY_SECRET_TOKEN'))\nprint(sorted(os.environ))\n"
        "print('HOME=' + os.environ['HOME'])\n"
    )
    (scripts / "tool.rb").write_text("puts 1\n")
    (scripts / "noext").write_text("echo 1\n")
    outside = tmp_path / "outside.py"
    outside.write_text("print('escaped')\n")
    (scripts / "link.py").symlink_to(outside)
    (scripts / "dirlink").symlink_to(tmp_path, target_is_directory=True)
    (folder / "top.py").write_text("print('not in scripts')\n")
    return folder


def test_runs_python_with_list_args_in_the_skill_dir(skill: Path) -> None:
    result = run_script(skill, "echo.py", ["a b", "$(whoami)", ";", "|", "`id`"])
    layer = process_isolation()
    assert result == ScriptResult(
        stdout=f"a b $(whoami) ; | `id`\n{skill}\n",
        stderr="",
        returncode=0,
        timed_out=False,
        truncated=False,
        isolation=layer.layer,
        warning=layer.warning,
    )


def test_runs_shell_scripts_and_nested_paths(skill: Path) -> None:
    assert run_script(skill, "hello.sh", ["world; rm -rf /"]).stdout == "hello world; rm -rf /\n"
    assert run_script(skill, "scripts/sub/nested.py", []).stdout == "nested\n"


@dataclass(frozen=True)
class Refusal:
    script: str
    message: str  # a substring of the error


REFUSALS = {
    "path traversal": Refusal(
        "../SKILL.md", "Path escapes the skill's scripts/ folder ('..' segment): '../SKILL.md'."
    ),
    "traversal to a file beside scripts/": Refusal("../top.py", "('..' segment): '../top.py'."),
    "dotdot inside a name": Refusal("sub/../../top.py", "('..' segment): 'sub/../../top.py'."),
    "backslash dotdot": Refusal("sub\\..\\..\\top.py", "('..' segment)"),
    "absolute path": Refusal("/etc/passwd", "Absolute paths are not allowed: '/etc/passwd'."),
    "absolute path to a python file": Refusal(sys.executable, "Absolute paths are not allowed"),
    "windows drive": Refusal("C:\\x.py", "Absolute paths are not allowed"),
    "symlink escape (file)": Refusal(
        "link.py", "Script resolves outside the skill's scripts/ folder: 'link.py'."
    ),
    "symlink escape (folder)": Refusal("dirlink/outside.py", "resolves outside the skill's scripts/ folder"),
    "empty name": Refusal("", "Empty script name."),
    "blank name": Refusal("   ", "Empty script name."),
    "only the folder": Refusal("scripts/", "Not a script: 'scripts/'."),
    "missing script": Refusal("nope.py", "No such script in scripts/: 'nope.py'."),
    "a folder": Refusal("sub", "No such script in scripts/: 'sub'."),
    "unknown extension": Refusal("tool.rb", "Unsupported script type '.rb' for 'tool.rb'"),
    "no extension": Refusal("noext", "Unsupported script type '(none)' for 'noext'"),
    "NUL byte": Refusal("echo.py\x00.sh", "Script name contains a NUL byte."),
}


@pytest.mark.parametrize("case", REFUSALS.values(), ids=REFUSALS.keys())
def test_refused(skill: Path, case: Refusal) -> None:
    with pytest.raises(ScriptRefused) as info:
        run_script(skill, case.script, [])
    assert case.message in str(info.value)


def test_args_as_one_string_are_refused(skill: Path) -> None:
    with pytest.raises(ScriptRefused, match="Arguments must be a list of strings"):
        run_script(skill, "echo.py", "a; rm -rf /")  # type: ignore[arg-type]


def test_js_without_node_is_refused_clearly(skill: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (skill / "scripts" / "app.js").write_text("console.log(1)\n")
    if shutil.which("node") is None:
        with pytest.raises(ScriptRefused, match=r"needs Node\.js, but `node` is not on PATH"):
            run_script(skill, "app.js", [])
    else:
        assert run_script(skill, "app.js", []).stdout == "1\n"
        monkeypatch.setenv("PATH", "/nonexistent")
        with pytest.raises(ScriptRefused, match=r"needs Node\.js, but `node` is not on PATH"):
            run_script(skill, "app.js", [])


@dataclass(frozen=True)
class Containment:
    script: str
    check: Callable[[ScriptResult], None]
    timeout: float = 30.0
    max_output: int = 64_000


def _never_ends(result: ScriptResult) -> None:
    assert result.timed_out
    assert result.returncode is None


def _floods(result: ScriptResult) -> None:
    assert result.truncated
    assert 0 < len(result.stdout.encode()) <= 10_000
    assert 0 < len(result.stderr.encode()) <= 10_000
    assert not result.timed_out


def _no_secret(result: ScriptResult) -> None:
    assert SECRET not in result.stdout + result.stderr
    assert result.stdout.splitlines()[0] == "None"
    assert "MY_SECRET_TOKEN" not in result.stdout
    assert "ANTHROPIC_API_KEY" not in result.stdout


CONTAINED = {
    "python script that never ends": Containment("forever.py", _never_ends, timeout=1),
    "shell script that never ends (with a background child)": Containment(
        "forever.sh", _never_ends, timeout=1
    ),
    "script flooding stdout and stderr": Containment("flood.py", _floods, max_output=10_000),
    "script reading an environment secret": Containment("env.py", _no_secret),
}


@pytest.mark.parametrize("case", CONTAINED.values(), ids=CONTAINED.keys())
def test_contained(skill: Path, case: Containment, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_SECRET_TOKEN", SECRET)
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    started = time.monotonic()
    result = run_script(skill, case.script, [], timeout=case.timeout, max_output=case.max_output)
    case.check(result)
    assert time.monotonic() - started < case.timeout + 10  # generous: only "it came back"


def test_environment_is_scrubbed_and_home_is_private(skill: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_SECRET_TOKEN", SECRET)
    monkeypatch.setenv("ALLOWED_SETTING", "visible")
    result = run_script(skill, "env.py", [], env_allow=("ALLOWED_SETTING",))
    names = result.stdout.splitlines()[1]
    assert "ALLOWED_SETTING" in names and "MY_SECRET_TOKEN" not in names
    home = result.stdout.splitlines()[2].removeprefix("HOME=")
    assert home != os.environ.get("HOME")
    if result.isolation == "none":
        assert "skills-lsp-script-" in home
        assert not Path(home).exists()  # removed after the run
    else:
        assert home == "/tmp"  # the sandbox's own tmpfs, gone with it


def test_scrubbed_env_keeps_only_the_base_names(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_SECRET_TOKEN", SECRET)
    monkeypatch.setenv("LANG", "C.UTF-8")
    env = scrubbed_env("/tmp/h", ())
    assert set(env) <= {"PATH", "LANG", "LC_ALL", "HOME", "TMPDIR"}
    assert env["HOME"] == env["TMPDIR"] == "/tmp/h"
    assert env["LANG"] == "C.UTF-8"


def test_background_child_holding_the_pipes_does_not_hang(skill: Path) -> None:
    (skill / "scripts" / "bg.sh").write_text("sleep 1000 &\necho started\n")
    started = time.monotonic()
    result = run_script(skill, "bg.sh", [], timeout=20)
    assert (result.stdout, result.returncode, result.timed_out) == ("started\n", 0, False)
    assert time.monotonic() - started < 15  # the script ended at once; the child was killed


def test_nonzero_exit_is_reported(skill: Path) -> None:
    (skill / "scripts" / "fail.py").write_text("import sys\nsys.stderr.write('bad')\nsys.exit(3)\n")
    result = run_script(skill, "fail.py", [])
    assert (result.returncode, result.stderr, result.timed_out) == (3, "bad", False)


# Reading the agent's environment through /proc, per sandbox layer: test_isolation.py.
