"""The escape table: every row run through every isolation layer, with real scripts and real
processes. A row a layer is documented to stop (docs/sandbox.md) must be refused or fail
harmlessly there; a layer missing on this machine skips with the reason. CI has bubblewrap and
namespaces (`.ci/run` installs bubblewrap), so both real layers run there."""

from __future__ import annotations

import asyncio
import os
import re
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("google.adk")

from adk_harness import ScriptedModel, run_agent
from google.adk.agents import LlmAgent
from google.genai import types

from skills_lsp.adk import SkillsShellTool, UploadStagingPlugin
from skills_lsp.adk.isolation import LAYERS, Layer, Limits, choose_layer, layer_works
from skills_lsp.adk.sandbox import ScriptRefused, ScriptResult, run_script

SECRET = "s3cr3t-" + uuid.uuid4().hex
DOCS = Path(__file__).resolve().parents[2] / "docs" / "sandbox.md"


@dataclass
class Host:
    """What a row sees of the machine: the skill, a fake user home with an SSH key, a folder
    outside everything the script may touch, and a unique mark for its processes."""

    skill: Path
    home: Path
    outside: Path
    layer: Layer
    mark: str = field(default_factory=lambda: "skills-lsp-mark-" + uuid.uuid4().hex)

    def run(self, source: str, *args: str, **options: Any) -> ScriptResult:
        name = f"row_{uuid.uuid4().hex[:8]}.py"
        (self.skill / "scripts" / name).write_text(source, encoding="utf-8")
        return run_script(self.skill, name, list(args), sandbox=self.layer, **options)


@pytest.fixture(params=LAYERS)
def host(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Host]:
    layer: Layer = request.param
    why = layer_works(layer)
    if why is not None:
        pytest.skip(f"the {layer} layer does not work on this machine: {why}")
    skill = tmp_path / "skills" / "probe"
    (skill / "scripts").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: probe\ndescription: Probe.\n---\n", encoding="utf-8")
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text(f"-----BEGIN KEY-----\n{SECRET}\n", encoding="utf-8")
    outside = tmp_path / "outside"
    outside.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("MY_SECRET_TOKEN", SECRET)
    made = Host(skill, home, outside, layer)
    yield made
    assert not _processes_with(made.mark), "a process the row started outlived it"


def _processes_with(mark: str, wait: float = 5.0) -> list[str]:
    """Host processes whose command line carries `mark`, after giving the dying a moment."""
    deadline = time.monotonic() + wait
    while True:
        found = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            except OSError:
                continue
            if mark.encode() in cmdline:
                found.append(pid)
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


# Each row: what a hostile script tries, and the layers that stop it. The docs table must agree.
@dataclass(frozen=True)
class Row:
    title: str
    stopped_by: frozenset[str]
    check: Callable[[Host], None]


SANDBOXES = frozenset({"bubblewrap", "namespaces"})
EVERY_LAYER = frozenset(LAYERS)


def read_secrets(host: Host) -> None:
    source = (
        "import sys\n"
        "for path in sys.argv[1:]:\n"
        "    try:\n"
        "        print(path, 'READ', open(path).read())\n"
        "    except OSError as exc:\n"
        "        print(path, 'DENIED', type(exc).__name__)\n"
    )
    key = host.home / ".ssh" / "id_rsa"
    result = host.run(source, str(key), "/etc/shadow", "/etc/gshadow", os.path.expanduser("~/.ssh/id_rsa"))
    assert result.returncode == 0, result.stderr
    assert SECRET not in result.stdout
    assert "READ" not in result.stdout, result.stdout


def write_outside(host: Host) -> None:
    marker = "pwned-" + uuid.uuid4().hex
    targets = [
        host.skill / marker,  # the skill folder is read-only
        host.skill / "scripts" / marker,
        host.outside / marker,  # a host folder beside the skill
        host.home / marker,  # the user's home
        Path("/var/tmp") / marker,
        Path("/dev/shm") / marker,
    ]
    source = (
        "import sys\n"
        "for path in sys.argv[1:]:\n"
        "    try:\n"
        "        open(path, 'w').write('x')\n"
        "        print(path, 'WROTE')\n"
        "    except OSError as exc:\n"
        "        print(path, 'DENIED', type(exc).__name__)\n"
        "scratch = '/tmp/' + sys.argv[1].rsplit('/', 1)[1]\n"
        "open(scratch, 'w').write('scratch is writable')\n"
        "print('scratch', open(scratch).read())\n"
    )
    result = host.run(source, *map(str, targets))
    assert result.returncode == 0, result.stderr
    for target in targets:
        assert not target.exists(), f"{target} was written"
    assert "scratch scratch is writable" in result.stdout  # /tmp inside is the sandbox's own
    assert not (Path("/tmp") / marker).exists()  # /tmp inside was not the host's


def connect_to_localhost(host: Host) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        listener.settimeout(0.5)
        port = listener.getsockname()[1]
        accepted: list[object] = []

        def accept() -> None:
            deadline = time.monotonic() + 8
            while time.monotonic() < deadline and not accepted:
                try:
                    accepted.append(listener.accept()[0])
                except TimeoutError:
                    continue

        waiter = threading.Thread(target=accept)
        waiter.start()
        source = (
            "import socket, sys\n"
            "try:\n"
            "    socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=3).sendall(b'hi')\n"
            "    print('CONNECTED')\n"
            "except OSError as exc:\n"
            "    print('BLOCKED', type(exc).__name__)\n"
        )
        result = host.run(source, str(port))
        waiter.join()
        for connection in accepted:
            connection.close()  # type: ignore[attr-defined]
    assert "BLOCKED" in result.stdout, result.stdout + result.stderr
    assert not accepted


_PROC_SCAN = """import os
found, readable = [], 0
for pid in filter(str.isdigit, os.listdir('/proc')):
    try:
        data = open(f'/proc/{pid}/environ', 'rb').read()
    except OSError:
        continue
    readable += 1
    if MARK in data:
        found.append(pid)
print('found', found, 'readable', readable)
"""


def read_agent_environment(host: Host) -> None:
    # The agent (this test process) was not started with the secret, so start one that was: a
    # child Python that runs the script, with the secret in its environment from exec.
    script = host.skill / "scripts" / "scan.py"
    script.write_text(_PROC_SCAN.replace("MARK", repr(SECRET.encode())), encoding="utf-8")
    agent = (
        "import sys\nfrom pathlib import Path\nfrom skills_lsp.adk.sandbox import run_script\n"
        "r = run_script(Path(sys.argv[1]), 'scan.py', [], sandbox=sys.argv[2])\nprint(r.stdout, end='')\n"
    )
    env = {**os.environ, "MY_SECRET_TOKEN": SECRET}
    run = subprocess.run(
        [sys.executable, "-c", agent, str(host.skill), host.layer],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("found [] readable "), run.stdout
    assert int(run.stdout.split()[-1]) >= 1  # it could read /proc environments, just not the agent's


def daemonise_and_outlive(host: Host) -> None:
    # A grandchild that leaves the session and the process group, then the script exits at once;
    # and a second run that daemonises and keeps the script alive past its timeout.
    source = (
        "import os, subprocess, sys, time\n"
        "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)', sys.argv[1]],\n"
        "                 start_new_session=True, stdin=subprocess.DEVNULL,\n"
        "                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    os.execv(sys.executable, [sys.executable, '-c', 'import time; time.sleep(600)', sys.argv[1]])\n"
        "if sys.argv[2] == 'stay':\n"
        "    time.sleep(600)\n"
        "print('daemonised')\n"
    )
    quick = host.run(source, host.mark, "leave")
    assert quick.stdout == "daemonised\n" and not quick.timed_out
    assert not _processes_with(host.mark), "a daemon outlived the script"
    stayed = host.run(source, host.mark, "stay", timeout=2)
    assert stayed.timed_out
    assert not _processes_with(host.mark), "a daemon outlived the timeout"


def fork_bomb(host: Host) -> None:
    source = (
        "import os, sys, time\n"
        "made = 0\n"
        "for _ in range(5000):\n"
        "    try:\n"
        "        pid = os.fork()\n"
        "    except OSError:\n"
        "        break\n"
        "    if pid == 0:\n"
        "        sleeper = [sys.executable, '-c', 'import time; time.sleep(60)', sys.argv[1]]\n"
        "        os.execv(sys.executable, sleeper)\n"
        "    made += 1\n"
        "print('forked', made)\n"
    )
    result = host.run(source, host.mark, limits=Limits(processes=32), timeout=20)
    assert not result.timed_out, result.stderr
    made = int(result.stdout.split()[-1])
    assert made < 32, result.stdout
    assert not _processes_with(host.mark)


def memory_bomb(host: Host) -> None:
    source = (
        "blocks = []\n"
        "try:\n"
        "    for _ in range(64):\n"
        "        blocks.append(bytearray(256 << 20))\n"
        "    print('ALLOCATED', len(blocks) * 256, 'MiB')\n"
        "except MemoryError:\n"
        "    print('BOUNDED at', len(blocks) * 256, 'MiB')\n"
    )
    result = host.run(source, limits=Limits(memory_bytes=1 << 30), timeout=30)
    assert "ALLOCATED" not in result.stdout
    assert "BOUNDED" in result.stdout or result.returncode not in (0, None), result.stdout + result.stderr


def output_flood(host: Host) -> None:
    source = "import sys\nchunk = 'x' * 65536\nfor _ in range(2000):\n    sys.stdout.write(chunk)\n"
    result = host.run(source, max_output=10_000, timeout=30)
    assert result.truncated and len(result.stdout.encode()) <= 10_000
    assert not result.timed_out


def disk_flood(host: Host) -> None:
    source = (
        "import os\n"
        "written = 0\n"
        "try:\n"
        "    with open(os.path.join(os.environ['TMPDIR'], 'flood'), 'wb') as out:\n"
        "        for _ in range(4096):\n"
        "            out.write(b'x' * (1 << 20))\n"
        "            written += 1\n"
        "    print('WROTE', written, 'MiB')\n"
        "except OSError as exc:\n"
        "    print('BOUNDED at', written, 'MiB', type(exc).__name__)\n"
    )
    result = host.run(source, limits=Limits(file_bytes=32 << 20, scratch_bytes=64 << 20), timeout=30)
    assert "WROTE" not in result.stdout, result.stdout
    assert "BOUNDED" in result.stdout or result.returncode not in (0, None), result.stdout + result.stderr


def symlinks_out_of_scripts(host: Host) -> None:
    scripts = host.skill / "scripts"
    outside_script = host.outside / "evil.py"
    outside_script.write_text("print('escaped')\n", encoding="utf-8")
    (scripts / "link.py").symlink_to(outside_script)
    (scripts / "dir").symlink_to(host.outside, target_is_directory=True)
    for name in ("link.py", "dir/evil.py"):
        with pytest.raises(ScriptRefused, match="resolves outside"):
            run_script(host.skill, name, [], sandbox=host.layer)


def symlink_to_a_secret(host: Host) -> None:
    # A link the script itself follows (not a script path the sandbox checks).
    (host.skill / "key").symlink_to(host.home / ".ssh" / "id_rsa")
    source = (
        "try:\n    print('READ', open('key').read())\n"
        "except OSError as exc:\n    print('DENIED', type(exc).__name__)\n"
    )
    result = host.run(source)
    assert SECRET not in result.stdout and "DENIED" in result.stdout, result.stdout


INJECTIONS = (
    "find . -exec cat {} +",
    "find . -fprint /tmp/x",
    "find . -delete",
    "ls --output=../../x",
    "grep -r --include=../../x secret .",
    "cat $(id -u)",
    "cat `id`",
    "cat SKILL.md\nid",
    "cat SKILL.md; id",
    "python -c 'import os'",
    "grep -R secret /",
    "cat ../../outside/x",
)


def shell_argument_injection(host: Host) -> None:
    tool = SkillsShellTool(host.skill.parent, sandbox=host.layer)
    model = ScriptedModel(turns=[[("shell", {"command": c}) for c in INJECTIONS], "ok"])
    agent = LlmAgent(name="a", model=model, tools=[tool])
    run = asyncio.run(run_agent(agent, model, "go"))
    responses = [response for _, response in run.responses()]
    assert len(responses) == len(INJECTIONS)
    for command, response in zip(INJECTIONS, responses, strict=True):
        assert "error" in response, (command, response)
    assert not (host.outside / "x").exists() and not Path("/tmp/x").exists()


def upload_names(host: Host) -> None:
    staging = host.outside.parent / "staging"
    plugin = UploadStagingPlugin(staging)
    shell = plugin.shell_tool(host.skill.parent)
    shell.sandbox = host.layer
    model = ScriptedModel(turns=[[("shell", {"command": "cat uploads/x"})], "ok"])
    part = types.Part(
        inline_data=types.Blob(data=b"uploaded\n", mime_type="text/plain", display_name="../../x")
    )
    content = types.Content(role="user", parts=[types.Part(text="read it"), part])
    run = asyncio.run(run_agent(LlmAgent(name="a", model=model, tools=[shell]), model, content, [plugin]))
    ((_, shown),) = run.responses()
    assert shown["stdout"] == "uploaded\n", shown
    assert not (staging.parent / "x").exists() and not (host.outside.parent.parent / "x").exists()
    saved = [p for p in staging.rglob("x") if p.is_file()]
    assert [p.parent.name for p in saved] == ["uploads"]


ROWS = {
    "read-secrets": Row("Read `~/.ssh/id_rsa` and `/etc/shadow`", SANDBOXES, read_secrets),
    "write-outside": Row("Write outside the scratch and outputs folders", SANDBOXES, write_outside),
    "network": Row("Connect to a listener on 127.0.0.1", SANDBOXES, connect_to_localhost),
    "proc-environ": Row("Read the agent's environment through `/proc`", SANDBOXES, read_agent_environment),
    "daemonise": Row(
        "`setsid` / daemonise and outlive the script or its timeout", SANDBOXES, daemonise_and_outlive
    ),
    "fork-bomb": Row("Fork bomb", SANDBOXES, fork_bomb),
    "memory-bomb": Row("Memory bomb", SANDBOXES, memory_bomb),
    "output-flood": Row("Output flood on stdout/stderr", EVERY_LAYER, output_flood),
    "disk-flood": Row("Fill the disk through `$TMPDIR`", SANDBOXES, disk_flood),
    "script-symlinks": Row("Symlinks in `scripts/` pointing outside", EVERY_LAYER, symlinks_out_of_scripts),
    "followed-symlink": Row(
        "A symlink in the skill that the script follows out", SANDBOXES, symlink_to_a_secret
    ),
    "shell-injection": Row(
        "Argument injection through the shell tool (`-exec`, `--output=`, `$(…)`, backticks, newlines)",
        EVERY_LAYER,
        shell_argument_injection,
    ),
    "upload-names": Row("Upload names like `../../x`", EVERY_LAYER, upload_names),
}


@pytest.mark.parametrize("row", ROWS.values(), ids=ROWS.keys())
def test_escape_table(host: Host, row: Row) -> None:
    if host.layer not in row.stopped_by:
        pytest.skip(f"the {host.layer} layer does not stop this row (docs/sandbox.md says so)")
    row.check(host)


def test_network_is_there_when_the_caller_allows_it(host: Host) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        source = (
            "import socket, sys\n"
            "socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=3).close()\n"
            "print('CONNECTED')\n"
        )
        result = host.run(source, str(listener.getsockname()[1]), allow_network=True)
    assert result.stdout == "CONNECTED\n", result.stderr


def test_the_outputs_folder_is_the_one_writable_host_folder(host: Host) -> None:
    outputs = host.outside / "out"
    source = (
        "import os, sys\n"
        "os.makedirs(os.path.join(sys.argv[1], 'sub'), exist_ok=True)\n"
        "open(os.path.join(sys.argv[1], 'sub', 'report.txt'), 'w').write('done')\n"
        "os.symlink('/etc/hostname', os.path.join(sys.argv[1], 'link'))\n"
        "print('ok')\n"
    )
    result = host.run(source, str(outputs), outputs=outputs)
    assert result.stdout == "ok\n", result.stderr
    assert (outputs / "sub" / "report.txt").read_text() == "done"


def test_the_result_names_the_layer_and_warns_without_one(host: Host) -> None:
    result = host.run("print('hi')\n")
    assert result.isolation == host.layer
    assert (result.warning is not None) == (host.layer == "none")


def test_a_layer_asked_for_by_name_never_downgrades_silently(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")  # no bwrap, unshare, setpriv or prlimit to be found
    layer_works.cache_clear()
    try:
        with pytest.raises(Exception, match="does not work here"):
            choose_layer("bubblewrap")
        assert choose_layer("auto") == "none"
        with pytest.raises(Exception, match="Unknown sandbox layer"):
            choose_layer("docker")
    finally:
        layer_works.cache_clear()


def test_the_docs_table_matches_the_tested_rows() -> None:
    text = DOCS.read_text(encoding="utf-8")
    table = text[text.index("| Escape attempt") :].split("\n\n", 1)[0].splitlines()
    header = [cell.strip() for cell in table[0].strip("|").split("|")]
    assert header[1:] == ["bubblewrap", "namespaces", "none"]
    documented = {}
    for line in table[2:]:
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        row_id = re.search(r"`#([\w-]+)`", cells[0])
        assert row_id, line
        documented[row_id.group(1)] = frozenset(
            layer for layer, cell in zip(header[1:], cells[1:], strict=True) if cell.startswith("stopped")
        )
    assert documented == {key: row.stopped_by for key, row in ROWS.items()}
