"""The VS Code extension (`vscode-extension/`) builds: `npm ci` (only when node_modules is missing
or older than package-lock.json), `npm run check` (tsc --noEmit), `npm test` (its unit tests, with
node's test runner) and `npm run package` (esbuild bundle + `vsce package`, offline), then the
.vsix holds the manifest and the bundle, and the bundle loads.

Skipped when `npm` is not on PATH, or with SKILLS_LSP_SKIP_VSCODE=1. `npm ci` needs the npm
registry (about 260 packages, 20-40 s cold); the rest is offline and takes about 15 s.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from skills_lsp.core.rules.profiles import PROFILES

REPO = Path(__file__).resolve().parents[2]
EXT = REPO / "vscode-extension"
NPM = shutil.which("npm")
NODE = shutil.which("node")

pytestmark = [
    pytest.mark.skipif(NPM is None or NODE is None, reason="npm/node are not installed (Node 20+ and npm)"),
    pytest.mark.skipif(os.environ.get("SKILLS_LSP_SKIP_VSCODE") == "1", reason="SKILLS_LSP_SKIP_VSCODE=1"),
]

# A stand-in for the `vscode` module: enough to load the bundle and see its exports.
LOAD_BUNDLE = r"""
const Module = require('module');
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  return request === 'vscode' ? 'vscode' : resolve.call(this, request, ...rest);
};
const stub = new Proxy(function () {}, {
  get: (_t, p) => (p === 'then' || p === '__esModule' ? undefined : stub),
  construct: () => stub,
  apply: () => stub,
});
require.cache['vscode'] = { id: 'vscode', filename: 'vscode', loaded: true, exports: stub };
const ext = require(process.argv[1]);
process.stdout.write(JSON.stringify({ activate: typeof ext.activate, deactivate: typeof ext.deactivate }));
"""


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        {
            "CI": "1",
            "npm_config_audit": "false",
            "npm_config_fund": "false",
            "npm_config_update_notifier": "false",
            "npm_config_progress": "false",
        }
    )
    return env


def _run(args: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    assert NPM is not None
    command = [NPM, *args]
    try:
        result = subprocess.run(
            command,
            cwd=EXT,
            env=_env(),
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="replace",
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired as exc:
        output = b"".join(o if isinstance(o, bytes) else o.encode() for o in (exc.stdout, exc.stderr) if o)
        pytest.fail(f"`npm {' '.join(args)}` took longer than {timeout} s\n{output.decode(errors='replace')}")
    if result.returncode != 0:
        tail = "\n".join((result.stdout + result.stderr).splitlines()[-60:])
        pytest.fail(f"`npm {' '.join(args)}` failed (exit {result.returncode}):\n{tail}")
    return result


@pytest.fixture(scope="module")
def node_modules() -> Path:
    """`npm ci`, unless node_modules is already installed from the current package-lock.json."""
    modules = EXT / "node_modules"
    installed = modules / ".package-lock.json"  # npm writes it on every install
    lock = EXT / "package-lock.json"
    if not installed.is_file() or installed.stat().st_mtime < lock.stat().st_mtime:
        _run(["ci"], timeout=600)
    return modules


def test_typecheck(node_modules: Path) -> None:
    _run(["run", "check"], timeout=180)


def test_unit_tests(node_modules: Path) -> None:
    result = _run(["test"], timeout=180)
    assert "# fail 0" in result.stdout, result.stdout[-3000:]


def test_package(node_modules: Path, tmp_path: Path) -> None:
    manifest = json.loads((EXT / "package.json").read_text(encoding="utf-8"))
    vsix = EXT / f"{manifest['name']}-{manifest['version']}.vsix"
    vsix.unlink(missing_ok=True)
    _run(["run", "package"], timeout=300)
    assert vsix.is_file(), f"`npm run package` made no {vsix.name}"
    assert vsix.stat().st_size < 1_000_000, f"{vsix.name} is {vsix.stat().st_size} bytes"

    with zipfile.ZipFile(vsix) as archive:
        names = set(archive.namelist())
        assert "extension/package.json" in names
        assert "extension/dist/extension.js" in names
        assert "extension.vsixmanifest" in names
        private = ("extension/node_modules/", "extension/src/", "extension/e2e/", "extension/out/")
        leaked = sorted(n for n in names if n.startswith(private))
        assert not leaked, f"the .vsix should hold only the bundle: {leaked[:10]}"
        packaged = json.loads(archive.read("extension/package.json"))
        bundle = tmp_path / "extension.js"
        bundle.write_bytes(archive.read("extension/dist/extension.js"))

    assert packaged["main"] == "./dist/extension.js"
    # The JSON Schemas the manifest hands to the YAML / JSON language services ship, unchanged.
    validations = packaged["contributes"]["yamlValidation"] + packaged["contributes"]["jsonValidation"]
    assert {Path(v["url"]).name for v in validations} == {
        "skill-queries.schema.json",
        "tool-registry.schema.json",
        "evals.schema.json",
        "eval-queries.schema.json",
    }
    with zipfile.ZipFile(vsix) as archive:
        for validation in validations:
            shipped = archive.read("extension/" + validation["url"].removeprefix("./"))
            assert shipped == (REPO / "schema" / Path(validation["url"]).name).read_bytes()
    assert "extensionDependencies" not in packaged  # the Python extension is optional
    assert packaged["contributes"]["configuration"]["properties"]["skillsLsp.trace.server"]["enum"] == [
        "off",
        "messages",
        "verbose",
    ]

    # Loaded from a folder with no node_modules: everything but `vscode` is in the bundle.
    assert NODE is not None
    loaded = subprocess.run(
        [NODE, "-e", LOAD_BUNDLE, str(bundle)], capture_output=True, text=True, timeout=60, cwd=tmp_path
    )
    assert loaded.returncode == 0, loaded.stderr
    assert json.loads(loaded.stdout) == {"activate": "function", "deactivate": "function"}


def test_the_extensions_profiles_are_the_servers() -> None:
    """settings.ts' PROFILES (which its unit test pins) and package.json's enum are the server's
    profile names, in its order: a profile added to the server shows up in the settings UI."""
    source = (EXT / "src" / "settings.ts").read_text(encoding="utf-8")
    listed = re.search(r"export const PROFILES = \[(.*?)\]", source, re.S)
    assert listed is not None
    assert re.findall(r"'([^']+)'", listed.group(1)) == list(PROFILES)
    manifest = json.loads((EXT / "package.json").read_text(encoding="utf-8"))
    setting = manifest["contributes"]["configuration"]["properties"]["skillsLsp.profile"]
    assert setting["enum"] == ["", *PROFILES]
    assert len(setting["enumDescriptions"]) == len(setting["enum"])
