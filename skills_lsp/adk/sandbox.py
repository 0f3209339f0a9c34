"""Run one of a skill's scripts: only from its `scripts/` folder, interpreter chosen by extension,
arguments as a list (never a shell), a timeout that kills the whole process group, output capped
per stream, and a scrubbed environment.

Each run also goes through the strongest isolation layer that works on the machine
(`skills_lsp.adk.isolation`: bubblewrap, then unprivileged namespaces, then containment only):
read-only system and skill folder, a private /tmp as HOME, no other host paths, no network unless
`allow_network=True`, CPU/memory/process limits. Results name the layer (`isolation`) and carry a
warning when there is none; `process_isolation()` says which layer is in effect.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath, PureWindowsPath

from skills_lsp.adk.isolation import (
    DEFAULT_LIMITS,
    SCRATCH,
    Isolation,
    Jail,
    Limits,
    SandboxUnavailable,
    choose_layer,
    collect_outputs,
    describe,
    prepare_workdir,
    process_isolation,
    sandboxed,
)

__all__ = [
    "DEFAULT_LIMITS",
    "Isolation",
    "Limits",
    "PathRefused",
    "ScriptRefused",
    "ScriptResult",
    "process_isolation",
    "run_command",
    "run_script",
]

# Names always passed through from the parent environment (HOME and TMPDIR are replaced).
BASE_ENV = ("PATH", "LANG", "LC_ALL")
_READ_CHUNK = 8192
_POLL = 0.2  # seconds between checks that the script is still running
_DRAIN_AFTER_EXIT = 0.5  # seconds to keep reading after the script itself has exited


class ScriptRefused(Exception):
    """The script was not run; the message says why."""


@dataclass(frozen=True)
class ScriptResult:
    stdout: str
    stderr: str
    returncode: int | None  # None when the script was killed before it exited on its own
    timed_out: bool = False
    truncated: bool = False  # stdout or stderr was cut at max_output bytes
    isolation: str = "none"  # the layer the script ran in: bubblewrap, namespaces or none
    warning: str | None = None  # set when the layer gives no OS isolation


def _interpreter(path: Path) -> list[str]:
    suffix = path.suffix.lower()
    if suffix == ".py":
        return [sys.executable]
    if suffix in (".sh", ".bash"):
        shell = shutil.which("bash") or "/bin/sh"
        return [shell]
    if suffix in (".js", ".mjs", ".cjs"):
        node = shutil.which("node")
        if node is None:
            raise ScriptRefused(f"Script {path.name!r} needs Node.js, but `node` is not on PATH.")
        return [node]
    raise ScriptRefused(
        f"Unsupported script type {suffix or '(none)'!r} for {path.name!r}: only .py, .sh, .bash and .js run."
    )


class PathRefused(ScriptRefused):
    """A path inside a skill was refused (absolute, `..`, NUL, symlink escape, missing)."""


def relative_parts(path: str, what: str, where: str) -> tuple[str, ...]:
    """The `/`-separated segments of a path relative to a skill folder, checked without touching
    the disk: empty names, NUL bytes, absolute paths, drive letters and `..` segments are refused
    (`PathRefused`, naming `what` and the folder `where`)."""
    if not path or not path.strip():
        raise PathRefused(f"Empty {what.lower()} name.")
    if "\x00" in path:
        raise PathRefused(f"{what} name contains a NUL byte.")
    posix = path.replace("\\", "/")
    if posix.startswith("/") or PureWindowsPath(path).is_absolute() or PureWindowsPath(path).drive:
        raise PathRefused(f"Absolute paths are not allowed: {path!r}.")
    if ".." in posix.split("/"):
        raise PathRefused(f"Path escapes {where} ('..' segment): {path!r}.")
    return tuple(p for p in PurePosixPath(posix).parts if p != ".")


def resolve_inside(base: Path, parts: Sequence[str], shown: str, what: str, where: str, short: str) -> Path:
    """The real path of `base/parts` (symlinks resolved); `PathRefused` unless it lies inside the
    real `base` and is a regular file. `shown` is the name in messages, `where`/`short` the folder."""
    real_base = base.resolve()
    target = real_base.joinpath(*parts).resolve()
    try:
        target.relative_to(real_base)
    except ValueError:
        raise PathRefused(f"{what} resolves outside {where}: {shown!r}.") from None
    if not target.is_file():
        raise PathRefused(f"No such {what.lower()} in {short}: {shown!r}.")
    return target


def resolve_skill_file(skill_dir: Path, path: str) -> Path:
    """The real path of `path` (relative to the skill folder) inside `skill_dir`, or `PathRefused`."""
    parts = relative_parts(path, "File", "the skill's folder")
    if not parts:
        raise PathRefused(f"Not a file: {path!r}.")
    return resolve_inside(Path(skill_dir), parts, path, "File", "the skill's folder", "the skill")


def resolve_script(skill_dir: Path, script: str) -> Path:
    """The real path of `script` inside `skill_dir/scripts`, or ScriptRefused.

    `script` is relative to `scripts/` (a leading `scripts/` is accepted). Absolute paths, drive
    letters, `..` segments and empty names are refused before touching the disk; then the real
    path (symlinks resolved) must lie inside the real `scripts/` folder and be a regular file.
    """
    parts = relative_parts(script, "Script", "the skill's scripts/ folder")
    if parts and parts[0] == "scripts":
        parts = parts[1:]
    if not parts:
        raise PathRefused(f"Not a script: {script!r}.")
    scripts_dir = Path(skill_dir) / "scripts"
    if not scripts_dir.resolve().is_dir():
        raise PathRefused(f"The skill has no scripts/ folder: {skill_dir}.")
    return resolve_inside(scripts_dir, parts, script, "Script", "the skill's scripts/ folder", "scripts/")


def scrubbed_env(home: str, env_allow: Iterable[str] = ()) -> dict[str, str]:
    """PATH, LANG, LC_ALL and the explicitly allowed names from os.environ; HOME and TMPDIR
    point at a fresh temporary folder. Nothing else (API keys, tokens) passes."""
    env = {name: os.environ[name] for name in (*BASE_ENV, *env_allow) if name in os.environ}
    env.setdefault("PATH", os.defpath)
    env["HOME"] = home
    env["TMPDIR"] = home
    return env


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


def run_script(
    skill_dir: Path,
    script: str,
    args: Sequence[str] = (),
    *,
    timeout: float = 30.0,
    max_output: int = 64_000,
    env_allow: Iterable[str] = (),
    outputs: Path | None = None,
    allow_network: bool = False,
    limits: Limits = DEFAULT_LIMITS,
    sandbox: str | None = None,
) -> ScriptResult:
    """Run `skill_dir/scripts/<script>` with `args`; ScriptRefused if it may not run.

    `outputs` names a folder the script may write (created if missing); `allow_network` lets it
    reach the network; `limits` bound CPU, memory, processes and files; `sandbox` forces a layer
    (bubblewrap, namespaces, none; default: the strongest that works, or $SKILLS_LSP_SANDBOX).

    The timeout covers the whole run; on expiry the script's process group is killed
    (SIGKILL) and `timed_out` is set. Each of stdout and stderr keeps at most `max_output` bytes
    (read incrementally; the rest is drained and dropped, `truncated` is set)."""
    if isinstance(args, (str, bytes)):
        raise ScriptRefused("Arguments must be a list of strings, not one string.")
    arg_list = [str(a) for a in args]
    skill_dir = Path(skill_dir)
    path = resolve_script(skill_dir, script)
    command = [*_interpreter(path), str(path), *arg_list]
    return run_command(
        command,
        skill_dir,
        timeout=timeout,
        max_output=max_output,
        env_allow=env_allow,
        outputs=outputs,
        allow_network=allow_network,
        limits=limits,
        sandbox=sandbox,
    )


def run_command(
    command: Sequence[str],
    cwd: Path,
    *,
    timeout: float = 30.0,
    max_output: int = 64_000,
    env_allow: Iterable[str] = (),
    read_only: Sequence[Path] = (),
    outputs: Path | None = None,
    allow_network: bool = False,
    limits: Limits = DEFAULT_LIMITS,
    sandbox: str | None = None,
) -> ScriptResult:
    """Run `command` (an argument list, never a shell) in `cwd` with the timeout, output caps,
    scrubbed environment and isolation described in `run_script`; `cwd` and `read_only` are the
    host folders it may read. The checks of what may run are the caller's."""
    try:
        layer = choose_layer(sandbox)
    except SandboxUnavailable as exc:
        raise ScriptRefused(str(exc)) from None
    if outputs is not None:
        outputs = Path(outputs)
        outputs.mkdir(parents=True, exist_ok=True)
    jail = Jail(Path(cwd), tuple(Path(p) for p in read_only), outputs, allow_network, limits, timeout)
    with tempfile.TemporaryDirectory(prefix="skills-lsp-script-") as home:
        workdir = Path(home)
        prepare_workdir(workdir, jail)
        try:
            argv = sandboxed(layer, command, jail, workdir)
        except SandboxUnavailable as exc:
            raise ScriptRefused(str(exc)) from None
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=scrubbed_env(home if layer == "none" else SCRATCH, env_allow),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            close_fds=True,
        )
        buffers = {"stdout": bytearray(), "stderr": bytearray()}
        truncated = False
        timed_out = False
        deadline = time.monotonic() + timeout
        exited_at: float | None = None
        assert proc.stdout is not None and proc.stderr is not None
        with selectors.DefaultSelector() as selector:
            selector.register(proc.stdout, selectors.EVENT_READ, "stdout")
            selector.register(proc.stderr, selectors.EVENT_READ, "stderr")
            while selector.get_map():
                now = time.monotonic()
                if exited_at is None and proc.poll() is not None:
                    exited_at = now  # done; a background child may still hold the pipes open
                if exited_at is not None and now - exited_at > _DRAIN_AFTER_EXIT:
                    break
                if now >= deadline:
                    timed_out = exited_at is None
                    break
                for key, _ in selector.select(min(deadline - now, _POLL)):
                    chunk = os.read(key.fd, _READ_CHUNK)
                    if not chunk:
                        selector.unregister(key.fileobj)
                        continue
                    buffer = buffers[key.data]
                    room = max_output - len(buffer)
                    if len(chunk) > room:
                        truncated = True
                    buffer += chunk[: max(room, 0)]
        returncode: int | None = None
        if not timed_out:
            try:  # output closed: the script gets what is left of its time to exit
                returncode = proc.wait(timeout=max(deadline - time.monotonic(), 0))
            except subprocess.TimeoutExpired:
                timed_out = True
        _kill_group(proc)  # the script on timeout; else children left behind (background jobs)
        proc.wait()
        proc.stdout.close()
        proc.stderr.close()
        collect_outputs(workdir, jail)
    isolation = describe(layer, allow_network)
    return ScriptResult(
        stdout=buffers["stdout"].decode("utf-8", "replace"),
        stderr=buffers["stderr"].decode("utf-8", "replace"),
        returncode=returncode,
        timed_out=timed_out,
        truncated=truncated,
        isolation=isolation.layer,
        warning=isolation.warning,
    )
