"""Fix on save in a real editor: headless Neovim with the README's setup and its fix-on-save
autocommand (taken from the README itself), `:write` on a skill with safe and unsafe fixes. The
file on disk gets the safe fixes (`source.fixAll.skills-lsp`) and nothing else.

Skipped when `nvim` is not on PATH (`.ci/run` installs Debian's 0.7.2); SKILLS_LSP_NVIM picks
another binary.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path

import pytest
from nvim_process import driver_result, run_nvim

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
NVIM = os.environ.get("SKILLS_LSP_NVIM") or shutil.which("nvim")
SERVER = [sys.executable, "-m", "skills_lsp", "serve", "--stdio"]
KILL_AFTER = 60

pytestmark = pytest.mark.skipif(
    NVIM is None, reason="nvim is not installed (Debian/Ubuntu: apt-get install -y neovim)"
)


def readme_fix_on_save() -> str:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    found = re.search(r"Neovim \(0\.7 and later;.*?```lua\n(.*?)```", readme, re.S)
    assert found is not None, "the README's Neovim fix-on-save snippet"
    return found.group(1)


def test_writing_a_skill_applies_its_safe_fixes(tmp_path: Path) -> None:
    assert NVIM is not None
    workspace = tmp_path / "examples"
    shutil.copytree(REPO / "examples", workspace)
    skill = workspace / "skills" / "broken-name-mismatch" / "SKILL.md"
    before = skill.read_text(encoding="utf-8")
    config = tmp_path / "config"  # ~/.config/nvim after the README's install step (0.7 - 0.10)
    (config / "lua").mkdir(parents=True)
    shutil.copy(REPO / "editors" / "neovim" / "skills_lsp.lua", config / "lua" / "skills_lsp.lua")
    snippet = tmp_path / "fix_on_save.lua"
    snippet.write_text(readme_fix_on_save(), encoding="utf-8")
    out = tmp_path / "out.json"
    xdg = tmp_path / "xdg"
    env = {
        **os.environ,
        "SKILLS_LSP_TEST_SETUP": "0.7",
        "SKILLS_LSP_TEST_CONFIG": str(config),
        "SKILLS_LSP_TEST_CMD": json.dumps(SERVER),
        "SKILLS_LSP_TEST_ROOT": str(workspace),
        "SKILLS_LSP_TEST_FILE": "skills/broken-name-mismatch/SKILL.md",
        "SKILLS_LSP_TEST_OUT": str(out),
        "XDG_CACHE_HOME": str(xdg / "cache"),
        "XDG_STATE_HOME": str(xdg / "state"),
        "XDG_DATA_HOME": str(xdg / "data"),
    }
    command = [
        NVIM, "--headless", "--clean",
        "-u", str(HERE / "nvim_init.lua"),
        "-c", f"luafile {snippet}",
        "-c", f"luafile {HERE / 'nvim_fix_on_save.lua'}",
    ]  # fmt: skip
    output = run_nvim(command, workspace, env, KILL_AFTER)
    result = driver_result(out, output)
    assert result["before"] == ["SK204", "SK205", "SK208", "SK401", "SK501", "SK505"]
    after = skill.read_text(encoding="utf-8")
    # SK501's safe fix: the list became a string; the unsafe renames were not made.
    expected = before.replace(
        "allowed-tools:\n  - Bash(git:*)\n  - Read\n  - grep\n", 'allowed-tools: "Bash(git:*) Read grep"\n'
    )
    assert expected != before and after == expected
    assert result["after"] == ["SK204", "SK205", "SK208", "SK401", "SK505"]
