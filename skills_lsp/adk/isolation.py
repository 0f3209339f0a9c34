"""The layers that isolate a skill's script from the machine, strongest first.

- `bubblewrap`: `bwrap` builds an empty root from a plan of mounts: the system read-only (`/usr`,
  the library folders, a short list of `/etc` files; never `/home`, `/root` or `/etc/shadow`), the
  folders the command needs read-only at their own paths, a fresh size-capped tmpfs as `/tmp`
  (`HOME` and `TMPDIR`), an optional writable outputs folder, a new `/proc` and a minimal `/dev`;
  new user, PID, network, IPC and UTS namespaces, `--die-with-parent` and `--new-session`.
- `namespaces`: the same plan of mounts made by a short `sh` prelude inside `unshare` (user,
  mount, PID, network, IPC and UTS namespaces), then `chroot` and every capability dropped, for
  machines with unprivileged namespaces but no bubblewrap.
- `none`: today's containment only (scrubbed environment, process group killed on timeout,
  capped output); results carry a warning.

Both real layers end in `prlimit` (CPU seconds, address space, processes, file size, open
files) applied inside the new namespaces, so the process count is the sandbox's own. A sandbox
started by root runs the script as `nobody` (65534): root is exempt from the process limit, and
no stranger's code should run as root. The network is cut unless the caller passes
`allow_network=True`.

`process_isolation()` names the strongest layer that works here; `SKILLS_LSP_SANDBOX` forces one.
"""

from __future__ import annotations

import functools
import math
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

Layer = Literal["bubblewrap", "namespaces", "none"]
LAYERS: tuple[Layer, ...] = ("bubblewrap", "namespaces", "none")
SANDBOX_ENV = "SKILLS_LSP_SANDBOX"  # force a layer: bubblewrap, namespaces, none (or auto)

NOBODY = 65534
SCRATCH = "/tmp"  # inside the sandbox: HOME and TMPDIR, a fresh tmpfs

# Read-only system folders (or the symlinks merged-/usr systems have in their place).
SYSTEM_PATHS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt")
# /etc entries a script may need to start and run; no secrets among them.
ETC_FILES = (
    "alternatives",
    "group",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "locale.alias",
    "localtime",
    "mime.types",
    "nsswitch.conf",
    "os-release",
    "passwd",
)
# And only with the network: name resolution and certificates.
ETC_NETWORK_FILES = (
    "ca-certificates",
    "ca-certificates.conf",
    "gai.conf",
    "host.conf",
    "hosts",
    "resolv.conf",
    "ssl",
)
DEVICES = ("null", "zero", "full", "random", "urandom", "tty")


class SandboxUnavailable(Exception):
    """A layer was asked for by name but does not work on this machine; the message says why."""


@dataclass(frozen=True)
class Limits:
    """Resource limits inside the sandbox (`prlimit`), plus the size of its scratch tmpfs."""

    cpu_seconds: int | None = None  # None: the timeout, rounded up, plus one second
    memory_bytes: int = 2 << 30  # address space; runtimes reserve more than they use
    processes: int = 64
    file_bytes: int = 64 << 20
    open_files: int = 256
    scratch_bytes: int = 256 << 20


DEFAULT_LIMITS = Limits()


@dataclass(frozen=True)
class Isolation:
    """The layer in effect, in words a tool result can carry."""

    layer: Layer
    summary: str
    warning: str | None = None


SUMMARIES: dict[Layer, str] = {
    "bubblewrap": (
        "bubblewrap: read-only system and skill folder, private /tmp as HOME, no other host paths, "
        "no network, own PID namespace, CPU/memory/process limits"
    ),
    "namespaces": (
        "unprivileged namespaces: read-only system and skill folder, private /tmp as HOME, no other "
        "host paths, no network, own PID namespace, CPU/memory/process limits"
    ),
    "none": "containment only: scrubbed environment, timeout, capped output",
}
NO_ISOLATION_WARNING = (
    "No OS sandbox on this machine (neither bubblewrap nor unprivileged namespaces work): the "
    "script ran as your user and could read your files and use the network."
)


@dataclass(frozen=True)
class Jail:
    """What one run may see: `cwd` and `read_only` folders read-only, `outputs` writable."""

    cwd: Path
    read_only: tuple[Path, ...] = ()
    outputs: Path | None = None
    allow_network: bool = False
    limits: Limits = DEFAULT_LIMITS
    timeout: float = 30.0


@dataclass(frozen=True)
class Mount:
    """One step of the plan of mounts, in order: `kind` is ro, rw, tmpfs, symlink, proc or dev."""

    kind: Literal["ro", "rw", "tmpfs", "symlink", "proc", "dev"]
    dest: str
    source: str = ""  # ro/rw: the host path; symlink: the link's target
    size: int = 0  # tmpfs


def _under(path: str, folders: Iterable[str]) -> bool:
    return any(path == f or path.startswith(f.rstrip("/") + "/") for f in folders)


def program_folders(command: Sequence[str]) -> list[str]:
    """Host folders the program needs beyond the system ones: this Python's prefixes (a virtual
    environment lives outside /usr) and the install folder of an interpreter found elsewhere."""
    folders = [sys.prefix, sys.base_prefix, sys.exec_prefix]
    if command:
        real = os.path.realpath(command[0])
        parent = os.path.dirname(real)
        folders.append(os.path.dirname(parent) if os.path.basename(parent) == "bin" else parent)
    return [f for f in dict.fromkeys(folders) if f and f != "/"]


def mount_plan(jail: Jail, command: Sequence[str], outputs_source: Path | None = None) -> list[Mount]:
    """The mounts of the new root. Later mounts go on top of earlier ones, so the scratch tmpfs
    comes before folders that may lie under /tmp (a test's `tmp_path`)."""
    plan: list[Mount] = []
    system: list[str] = []
    for path in SYSTEM_PATHS:
        if os.path.islink(path):
            plan.append(Mount("symlink", path, os.readlink(path)))
        elif os.path.isdir(path):
            plan.append(Mount("ro", path, path))
            system.append(path)
    etc = ETC_FILES + (ETC_NETWORK_FILES if jail.allow_network else ())
    for name in etc:
        path = f"/etc/{name}"
        if os.path.exists(path):  # follows a symlink such as resolv.conf -> /run/...
            plan.append(Mount("ro", path, os.path.realpath(path)))
    plan.append(Mount("proc", "/proc"))
    plan.append(Mount("dev", "/dev"))
    plan.append(Mount("tmpfs", SCRATCH, size=jail.limits.scratch_bytes))
    shown = list(system)
    for folder in program_folders(command):
        if not _under(folder, shown) and os.path.isdir(folder):
            plan.append(Mount("ro", folder, folder))
            shown.append(folder)
    for given in (jail.cwd, *jail.read_only):
        real = os.path.realpath(given)
        # At its real path, and at the path given if that is a symlink: both spellings then work.
        for dest in dict.fromkeys((real, os.path.abspath(given))):
            plan.append(Mount("ro", dest, real))
    if jail.outputs is not None:
        source = outputs_source or jail.outputs
        plan.append(Mount("rw", os.path.abspath(jail.outputs), os.path.realpath(source)))
    return plan


def limits_prefix(jail: Jail, prlimit: str) -> list[str]:
    limits = jail.limits
    cpu = limits.cpu_seconds if limits.cpu_seconds is not None else math.ceil(jail.timeout) + 1
    return [
        prlimit,
        f"--cpu={cpu}",
        f"--as={limits.memory_bytes}",
        f"--nproc={limits.processes}",
        f"--fsize={limits.file_bytes}",
        f"--nofile={limits.open_files}",
        "--",
    ]


def _drop_privileges(layer: Layer, setpriv: str) -> list[str]:
    """Inside the new root: no capabilities and no way to regain them; `nobody` if we are root.
    Unprivileged bubblewrap already drops every capability and sets no_new_privs itself."""
    if layer == "bubblewrap" and os.geteuid() != 0:
        return []
    drop = [setpriv, "--no-new-privs", "--bounding-set=-all", "--inh-caps=-all"]
    if os.geteuid() == 0:
        drop += [f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
    return [*drop, "--"]


def bubblewrap_command(bwrap: str, plan: Sequence[Mount], jail: Jail, inner: Sequence[str]) -> list[str]:
    argv = [bwrap, "--die-with-parent", "--new-session", "--unshare-pid", "--unshare-ipc", "--unshare-uts"]
    argv += ["--unshare-cgroup-try"]
    if not jail.allow_network:
        argv.append("--unshare-net")
    if os.geteuid() == 0:
        # Root needs no user namespace to mount; setpriv then becomes nobody (it needs these).
        argv += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_SETPCAP"]
    else:
        argv.append("--unshare-user")
    mounted: set[str] = set()
    for mount in plan:
        # bwrap makes missing parents with the host parents' modes (/root is 0700), which would
        # hide a bound folder from `nobody`: make them traversable first.
        for parent in reversed(Path(mount.dest).parents):
            name = str(parent)
            if name != "/" and name not in mounted:
                argv += ["--perms", "0755", "--dir", name]
                mounted.add(name)
        mounted.add(mount.dest)
        if mount.kind == "ro":
            argv += ["--ro-bind", mount.source, mount.dest]
        elif mount.kind == "rw":
            argv += ["--bind", mount.source, mount.dest]
        elif mount.kind == "symlink":
            argv += ["--symlink", mount.source, mount.dest]
        elif mount.kind == "tmpfs":
            argv += ["--perms", "1777", "--size", str(mount.size), "--tmpfs", mount.dest]
        elif mount.kind == "proc":
            argv += ["--proc", mount.dest]
        else:
            argv += ["--dev", mount.dest]
    argv += ["--chdir", str(jail.cwd), "--"]
    return [*argv, *inner]


def namespaces_prelude(plan: Sequence[Mount], root: str) -> str:
    """`sh` that builds the plan's root at `root` (a fresh tmpfs); the command after it
    (`chroot root ...`) comes as "$@"."""
    q = shlex.quote
    lines = ["set -eu", f"mount -t tmpfs -o mode=755 skills-lsp-root {q(root)}"]
    for mount in plan:
        dest = q(root + mount.dest)
        if mount.kind in ("ro", "rw"):
            if os.path.isdir(mount.source):
                lines.append(f"mkdir -p {dest}")
            else:
                lines.append(f"mkdir -p $(dirname {dest}) && : > {dest}")
            lines.append(f"mount --rbind {q(mount.source)} {dest}")
            if mount.kind == "ro":
                lines.append(f"mount -o remount,bind,ro {dest}")
        elif mount.kind == "symlink":
            lines.append(f"mkdir -p $(dirname {dest}) && ln -s {q(mount.source)} {dest}")
        elif mount.kind == "tmpfs":
            options = f"size={mount.size},mode=1777"
            lines.append(f"mkdir -p {dest} && mount -t tmpfs -o {options} skills-lsp-tmp {dest}")
        elif mount.kind == "proc":
            lines.append(f"mkdir -p {dest} && mount -t proc proc {dest}")
        else:
            lines.append(f"mkdir -p {dest}")
            for device in DEVICES:
                node = q(f"{root}{mount.dest}/{device}")
                bind = f": > {node} && mount --bind /dev/{device} {node}"
                lines.append(f"if [ -e /dev/{device} ]; then {bind}; fi")
            lines.append(f"ln -s /proc/self/fd {q(root + mount.dest + '/fd')}")
    lines.append(f"mount -o remount,ro {q(root)}")
    lines.append('exec "$@"')
    return "\n".join(lines)


def namespaces_command(
    unshare: str, plan: Sequence[Mount], jail: Jail, root: str, inner: Sequence[str]
) -> list[str]:
    namespaces = ["--mount", "--pid", "--fork", "--ipc", "--uts", "--kill-child"]
    if not jail.allow_network:
        namespaces.append("--net")
    if os.geteuid() != 0:
        namespaces = ["--user", "--map-root-user", *namespaces]
    chroot = shutil.which("chroot") or "/usr/sbin/chroot"
    prelude = namespaces_prelude(plan, root)
    # chroot(1) always changes into the new "/": a shell inside changes back into `cwd`.
    enter = ["/bin/sh", "-c", 'cd "$0" && exec "$@"', str(jail.cwd)]
    build = ["/bin/sh", "-c", prelude, "skills-lsp-sandbox"]
    return [unshare, *namespaces, *build, chroot, root, *enter, *inner]


@dataclass(frozen=True)
class Tools:
    bwrap: str | None
    unshare: str | None
    setpriv: str | None
    prlimit: str | None


def _tools() -> Tools:
    if not sys.platform.startswith("linux"):
        return Tools(None, None, None, None)
    which = shutil.which
    return Tools(which("bwrap"), which("unshare"), which("setpriv"), which("prlimit"))


def sandboxed(layer: Layer, command: Sequence[str], jail: Jail, workdir: Path) -> list[str]:
    """`command` wrapped in `layer`. `workdir` is an empty host folder the caller removes after the
    run (the namespaces layer mounts its new root there). SandboxUnavailable if a tool is missing."""
    if layer == "none":
        return list(command)
    tools = _tools()
    if tools.setpriv is None or tools.prlimit is None:
        raise SandboxUnavailable(
            "`setpriv` and `prlimit` (util-linux) are needed to drop privileges and set limits."
        )
    inner = [*_drop_privileges(layer, tools.setpriv), *limits_prefix(jail, tools.prlimit), *command]
    outputs_source = workdir / "outputs" if jail.outputs is not None and os.geteuid() == 0 else None
    plan = mount_plan(jail, command, outputs_source)
    if layer == "bubblewrap":
        if tools.bwrap is None:
            raise SandboxUnavailable("`bwrap` (bubblewrap) is not installed.")
        return bubblewrap_command(tools.bwrap, plan, jail, inner)
    if tools.unshare is None:
        raise SandboxUnavailable("`unshare` (util-linux) is not installed.")
    root = workdir / "root"
    root.mkdir(exist_ok=True)
    return namespaces_command(tools.unshare, plan, jail, str(root), inner)


def prepare_workdir(workdir: Path, jail: Jail) -> None:
    """Root's sandbox runs as nobody, who cannot write the caller's outputs folder: it writes a
    staging folder of its own, copied out by `collect_outputs` after the run."""
    if jail.outputs is not None and os.geteuid() == 0:
        staging = workdir / "outputs"
        staging.mkdir()
        os.chown(staging, NOBODY, NOBODY)
        workdir.chmod(0o755)


def collect_outputs(workdir: Path, jail: Jail) -> None:
    """Copy regular files (never links or devices) from root's staging folder into `outputs`."""
    if jail.outputs is None or os.geteuid() != 0:
        return
    staging = workdir / "outputs"
    target = Path(jail.outputs).resolve()
    for folder, dirs, files in os.walk(staging, followlinks=False):
        relative = Path(folder).relative_to(staging)
        for name in files:
            source = Path(folder) / name
            if not source.is_file() or source.is_symlink():
                continue
            destination = target / relative / name
            destination.parent.mkdir(parents=True, exist_ok=True)
            partial = destination.with_name(f".{name}.skills-lsp-partial")
            shutil.copyfile(source, partial, follow_symlinks=False)
            os.replace(partial, destination)
        dirs[:] = [d for d in dirs if not (Path(folder) / d).is_symlink()]


_PROBE = "test -r /proc/self/status && ! test -e /etc/shadow && test -w /tmp"


@functools.cache
def layer_works(layer: Layer) -> str | None:
    """None if `layer` runs a trivial command here, else why not (cached per process)."""
    if layer == "none":
        return None
    with tempfile.TemporaryDirectory(prefix="skills-lsp-probe-") as folder:
        workdir = Path(folder)
        jail = Jail(cwd=workdir, timeout=10)
        try:
            argv = sandboxed(layer, ["/bin/sh", "-c", _PROBE], jail, workdir)
            env = {"PATH": os.environ.get("PATH", os.defpath)}
            probe = subprocess.run(argv, capture_output=True, timeout=20, env=env, cwd=workdir)
        except SandboxUnavailable as exc:
            return str(exc)
        except (OSError, subprocess.SubprocessError) as exc:
            return f"{layer} could not start: {exc}"
        if probe.returncode != 0:
            detail = probe.stderr.decode("utf-8", "replace").strip().splitlines()
            return f"{layer} failed on this machine: {detail[-1] if detail else f'exit {probe.returncode}'}"
    return None


def choose_layer(requested: str | None = None) -> Layer:
    """The layer to use: `requested` (or $SKILLS_LSP_SANDBOX) if named, else the strongest that
    works. SandboxUnavailable if a named layer does not work here (never a silent downgrade)."""
    name = (requested or os.environ.get(SANDBOX_ENV) or "auto").strip().lower()
    if name == "auto":
        return next(layer for layer in LAYERS if layer_works(layer) is None)
    if name not in LAYERS:
        raise SandboxUnavailable(f"Unknown sandbox layer {name!r}: use one of {', '.join(LAYERS)} or auto.")
    layer: Layer = name
    why = layer_works(layer)
    if why is not None:
        raise SandboxUnavailable(f"The {layer} sandbox was asked for but does not work here: {why}")
    return layer


def describe(layer: Layer, allow_network: bool = False) -> Isolation:
    summary = SUMMARIES[layer]
    if allow_network and layer != "none":
        summary = summary.replace("no network", "network allowed")
    return Isolation(layer, summary, NO_ISOLATION_WARNING if layer == "none" else None)


def process_isolation(requested: str | None = None) -> Isolation:
    """The isolation a script run gets here: the layer, what it means, and a warning for `none`."""
    return describe(choose_layer(requested))
