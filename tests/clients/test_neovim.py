"""A real editor: headless Neovim with the setup the README documents, driven by
`nvim_driver.lua` through diagnostics, hover, `allowed-tools` completion and resolved code lenses
on a copy of examples/. Two setups: Neovim 0.7 - 0.10 (`editors/neovim/skills_lsp.lua`, no
plugins; also runs on newer Neovim) and Neovim 0.11+ (`editors/neovim/lsp/skills_lsp.lua` with
`init-0.11.lua`, skipped on older Neovim).

Skipped when `nvim` is not on PATH; `.ci/run` installs Debian's `neovim` (0.7.2). Set
SKILLS_LSP_NVIM to try another Neovim binary.
"""

from __future__ import annotations

import functools
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
from nvim_process import driver_result, run_nvim

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
NVIM = os.environ.get("SKILLS_LSP_NVIM") or shutil.which("nvim")
SERVER = [sys.executable, "-m", "skills_lsp", "serve", "--stdio"]
EXPECTED_CODES = ["SK204", "SK205", "SK208", "SK401", "SK501", "SK505"]
KILL_AFTER = 60  # seconds; the driver bounds each wait at 20 s and quits by itself after 50 s

pytestmark = pytest.mark.skipif(
    NVIM is None, reason="nvim is not installed (Debian/Ubuntu: apt-get install -y neovim)"
)


def _vim_path(path: Path) -> str:
    return str(path).replace("\\", "\\\\").replace(" ", "\\ ")


@functools.cache
def _nvim_version() -> tuple[int, ...]:
    assert NVIM is not None
    first = subprocess.run([NVIM, "--version"], capture_output=True, text=True, timeout=20).stdout
    found = re.search(r"v(\d+)\.(\d+)\.(\d+)", first)
    return tuple(int(n) for n in found.groups()) if found else (0, 0, 0)


def _log_tail(xdg: Path, lines: int = 40) -> str:
    logs = sorted(xdg.rglob("lsp.log"))
    if not logs:
        return "(no lsp.log)"
    return "\n".join(logs[0].read_text(errors="replace").splitlines()[-lines:])


@pytest.fixture(scope="module", params=["0.7-0.10", "0.11+"])
def nvim(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Run Neovim once per setup; every test below asserts on part of what it saw."""
    assert NVIM is not None
    setup: str = request.param
    if setup == "0.11+" and _nvim_version() < (0, 11):
        pytest.skip(f"the Neovim 0.11+ setup needs Neovim 0.11 or later; {NVIM} is {_nvim_version()}")
    tmp = tmp_path_factory.mktemp("nvim")
    workspace = tmp / "examples"
    shutil.copytree(REPO / "examples", workspace)
    # The README's install step, with <config> standing for ~/.config/nvim.
    config = tmp / "config"
    editors = REPO / "editors" / "neovim"
    if setup == "0.11+":
        (config / "lsp").mkdir(parents=True)
        shutil.copy(editors / "lsp" / "skills_lsp.lua", config / "lsp" / "skills_lsp.lua")
        shutil.copy(editors / "init-0.11.lua", config / "init.lua")
    else:
        (config / "lua").mkdir(parents=True)
        shutil.copy(editors / "skills_lsp.lua", config / "lua" / "skills_lsp.lua")
    xdg = tmp / "xdg"  # lsp.log, shada and swap files stay out of $HOME
    out = tmp / "out.json"
    env = {
        **os.environ,
        "SKILLS_LSP_TEST_SETUP": "0.11" if setup == "0.11+" else "0.7",
        "SKILLS_LSP_TEST_CONFIG": str(config),
        "SKILLS_LSP_TEST_CMD": json.dumps(SERVER),
        "SKILLS_LSP_TEST_ROOT": str(workspace),
        "SKILLS_LSP_TEST_OUT": str(out),
        "SKILLS_LSP_TEST_CODES": json.dumps(EXPECTED_CODES),
        "XDG_CACHE_HOME": str(xdg / "cache"),
        "XDG_STATE_HOME": str(xdg / "state"),
        "XDG_DATA_HOME": str(xdg / "data"),
    }
    command = [
        NVIM, "--headless", "--clean",
        "-u", str(HERE / "nvim_init.lua"),
        "-c", f"luafile {_vim_path(HERE / 'nvim_driver.lua')}",
    ]  # fmt: skip
    output = run_nvim(command, workspace, env, KILL_AFTER, lambda: _log_tail(xdg))
    result = driver_result(out, f"{output}\nlsp.log:\n{_log_tail(xdg)}")
    result["workspace"] = str(workspace)
    result["log"] = "".join(p.read_text(errors="replace") for p in xdg.rglob("lsp.log"))
    return result


def test_one_client_per_workspace_root(nvim: dict[str, Any]) -> None:
    # Two SKILL.md files, .skills/code-search.md and skill-queries.yaml were opened: one server.
    assert [c["name"] for c in nvim["clients"]] == ["skills_lsp"]
    assert os.path.realpath(nvim["clients"][0]["root_dir"]) == os.path.realpath(nvim["workspace"])


def test_diagnostics(nvim: dict[str, Any]) -> None:
    codes = {d["code"] for d in nvim["diagnostics"]}
    assert set(EXPECTED_CODES) <= codes, nvim["diagnostics"]
    assert {d["source"] for d in nvim["diagnostics"]} == {"skills-lsp"}
    unknown_tool = next(d for d in nvim["diagnostics"] if d["code"] == "SK505")
    assert unknown_tool["lnum"] == 7 and "grep" in unknown_tool["message"]  # `  - grep`, 0-based


def test_hover_shows_schema_documentation(nvim: dict[str, Any]) -> None:
    schema = json.loads((REPO / "schema" / "skill-frontmatter.schema.json").read_text(encoding="utf-8"))
    doc: str = schema["$defs"]["description"]["description"]
    assert doc.split(".")[0] in nvim["hover"]


@pytest.mark.parametrize(
    ("form", "offered", "listed"),
    [
        # .skills/code-search.md lists code_search, read_file, list_directory.
        ("completion_list", {"Write", "Grep", "Bash"}, {"code_search", "read_file", "list_directory"}),
        # skills/csv-data-cleaning: `allowed-tools: Bash(python3:*) Read Write `.
        ("completion_string", {"code_search", "Grep"}, {"Bash", "Read", "Write"}),
    ],
)
def test_allowed_tools_completion(
    nvim: dict[str, Any], form: str, offered: set[str], listed: set[str]
) -> None:
    labels = set(nvim[form])
    assert offered <= labels, labels
    assert not labels & listed, labels


def test_omni_completion_through_the_editor_keys(nvim: dict[str, Any]) -> None:
    """`A <C-x><C-o>` on `allowed-tools: Bash(python3:*) Read Write` in a markdown buffer: the
    setup pointed 'omnifunc' at the server, and the popup lists the manifest's other tools."""
    assert nvim["omnifunc"] == "v:lua.vim.lsp.omnifunc"
    omni = nvim["omni"]
    # Neovim 0.7 - 0.10's vim.lsp.omnifunc fills the menu with complete() once the answer
    # arrives, which Vim reports as mode "eval"; a synchronous omnifunc would show "omni".
    assert omni["mode"] in ("omni", "eval") and omni["pum_visible"] == 1, omni
    assert {"code_search", "Grep"} <= set(omni["words"]), omni
    assert not set(omni["words"]) & {"Bash", "Read", "Write"}, omni
    typed = "allowed-tools: Bash(python3:*) Read Write "
    # The first match is inserted while the menu is open (default 'completeopt')...
    assert omni["line"] == typed + omni["words"][0], omni
    # ...and <C-e> takes it back; <Esc> leaves Insert mode.
    assert nvim["line_after"] == typed and nvim["mode_after"] == "n"


def test_omnifunc_the_user_set_is_kept(nvim: dict[str, Any]) -> None:
    if "omnifunc_kept" not in nvim:
        pytest.skip("the Neovim 0.11+ setup has no set_omnifunc of its own")
    assert nvim["omnifunc_kept"] == "syntaxcomplete#Complete"
    assert nvim["omnifunc_empty"] == "v:lua.vim.lsp.omnifunc"


def test_code_lenses_resolved(nvim: dict[str, Any]) -> None:
    cases = yaml.safe_load((REPO / "examples" / "skill-queries.yaml").read_text(encoding="utf-8"))["cases"]
    titles: list[str] = nvim["codelens_queries"]
    assert len(titles) == len(cases), titles
    assert all(t.startswith(("✓", "✗")) for t in titles), titles
    assert any(t.startswith("✓ pdf-form-filling") for t in titles), titles
    # On a skill file, and asked again by the module's BufEnter autocommand.
    assert nvim["codelens_on_bufenter"] is True
    assert any(re.fullmatch(r"\d+ test quer(y|ies): \d+ pass \(\w+\)", t) for t in nvim["codelens_skill"])


def test_clean_shutdown(nvim: dict[str, Any]) -> None:
    assert nvim["stopped"] is True
    assert "Traceback" not in nvim["log"], nvim["log"]
