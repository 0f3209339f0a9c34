"""Opt-in: the packaged VS Code extension in real VS Code.

code-server 4.139.1 (VS Code 1.139.1 in the browser, from npm) on 127.0.0.1 with the `.vsix` from
`vscode-extension/` installed, driven by headless Debian Chromium through playwright-core
(`vscode-extension/e2e/run.mjs`). It asserts that the Problems panel lists SK204 for
`skills/broken-name-mismatch/SKILL.md`, that Ctrl+Space in an `allowed-tools` value offers
`code_search` from the tool manifest, and that `skill-queries.yaml` shows a `✓ name (score)` code
lens.

It costs about 1 GB of disk and a few minutes the first time, so it runs only with
SKILLS_LSP_E2E_VSCODE=1. Then it installs what is missing: Debian's `chromium` and `libkrb5-dev`
(apt-get, as root), `vscode-extension/e2e/node_modules` (`setup.sh`: code-server, Node 24 for it,
playwright-core) and the `.vsix` (`npm ci && npm run package` in `vscode-extension/`) when none
exists and SKILLS_LSP_VSIX names none. Screenshots go to pytest's temporary directory, or to
SKILLS_LSP_E2E_SCREENSHOTS (e.g. `docs/images` to refresh the README's pictures).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXTENSION = REPO / "vscode-extension"
E2E = EXTENSION / "e2e"
CHROMIUM = "/usr/bin/chromium"

pytestmark = pytest.mark.skipif(
    os.environ.get("SKILLS_LSP_E2E_VSCODE") != "1",
    reason="opt-in (about 1 GB, a few minutes): set SKILLS_LSP_E2E_VSCODE=1",
)


def _run(cmd: list[str], cwd: Path, timeout: float, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    out = proc.stdout + proc.stderr
    if proc.returncode != 0:
        pytest.fail(f"{' '.join(cmd)} (in {cwd}) exited {proc.returncode}:\n{out[-6000:]}")
    return out


def _deb_installed(package: str) -> bool:
    proc = subprocess.run(
        ["dpkg-query", "-W", "-f=${Status}", package], capture_output=True, text=True, check=False
    )
    return "install ok installed" in proc.stdout


def _ensure_debian_packages() -> None:
    missing = [p for p in ("chromium", "libkrb5-dev") if not _deb_installed(p)]
    if not missing:
        return
    if shutil.which("apt-get") is None or os.geteuid() != 0:
        pytest.fail(f"missing Debian packages: run `apt-get install -y {' '.join(missing)}` as root")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = ["apt-get", "install", "-y", "-q", "--no-install-recommends", *missing]
    if subprocess.run(install, env=env, capture_output=True, check=False, timeout=900).returncode:
        _run(["apt-get", "update", "-q"], REPO, 600, env)
        _run(install, REPO, 900, env)


def _ensure_node_modules() -> None:
    modules = E2E / "node_modules"
    # A native module that code-server's postinstall builds, and the browser driver.
    spdlog = modules / "code-server/lib/vscode/node_modules/@vscode/spdlog/build/Release/spdlog.node"
    if spdlog.exists() and (modules / "playwright-core").exists():
        return
    _run(["sh", str(E2E / "setup.sh")], E2E, 1800)


def _ensure_vsix() -> None:
    if os.environ.get("SKILLS_LSP_VSIX") or list(EXTENSION.glob("*.vsix")):
        return
    _run(["npm", "ci"], EXTENSION, 900)
    _run(["npm", "run", "package"], EXTENSION, 600)
    assert list(EXTENSION.glob("*.vsix")), f"`npm run package` made no .vsix in {EXTENSION}"


def test_vscode_extension_in_code_server(tmp_path: Path) -> None:
    assert shutil.which("npm") and shutil.which("node"), "node and npm are needed"
    _ensure_debian_packages()
    assert Path(CHROMIUM).exists()
    _ensure_node_modules()
    _ensure_vsix()
    shots = Path(os.environ.get("SKILLS_LSP_E2E_SCREENSHOTS") or tmp_path / "screenshots").resolve()
    env = {**os.environ, "SKILLS_LSP_PYTHON": os.environ.get("SKILLS_LSP_PYTHON", sys.executable)}
    try:
        proc = subprocess.run(
            ["node", str(E2E / "run.mjs"), "--screenshots", str(shots)],
            cwd=E2E,
            env=env,
            capture_output=True,
            text=True,
            timeout=420,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:  # run.mjs bounds itself at 300 s; this is the backstop
        pytest.fail(f"run.mjs did not finish in 420 s:\n{exc.stdout!r}"[-6000:])
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"run.mjs exited {proc.returncode}:\n{out[-8000:]}"
    for check in ("PASS diagnostics", "PASS completion", "PASS codelens"):
        assert check in out, out[-4000:]
    for name in ("vscode-diagnostics.png", "vscode-completion.png", "vscode-codelens.png"):
        assert (shots / name).stat().st_size > 10_000, name
