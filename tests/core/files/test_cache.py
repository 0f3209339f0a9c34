"""Where caches go (core/files/cache.py), with real folders."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from skills_lsp.core.files.cache import cache_dir_for, user_cache_dir


def test_a_folder_with_no_config_and_no_checkout_is_cached_in_the_users_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    folder = tmp_path / "skills"
    folder.mkdir()
    found = cache_dir_for([folder], None)
    assert found.parent == tmp_path / "xdg" / "skills-lsp" and len(found.name) == 16
    assert cache_dir_for([folder / "x.md"], None) == found  # a file: its folder's


def test_a_folder_whose_name_is_not_utf8_has_a_cache_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    folder = Path(os.fsdecode(os.fsencode(tmp_path) + b"/skills-\xff\xfe"))
    folder.mkdir()
    other = Path(os.fsdecode(os.fsencode(tmp_path) + b"/skills-\xfe\xff"))
    other.mkdir()
    assert cache_dir_for([folder], None) != cache_dir_for([other], None)
    # And a check of it runs (it raised UnicodeEncodeError while naming its cache folder).
    (folder / "demo").mkdir()
    (folder / "demo" / "SKILL.md").write_text("---\nname: demo\ndescription: A demo.\n---\nBody.\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path), XDG_CACHE_HOME=str(tmp_path / "xdg"))
    run = subprocess.run(
        [sys.executable, "-m", "skills_lsp", "check", os.fsencode(folder)], capture_output=True, env=env
    )
    assert b"Traceback" not in run.stderr and run.returncode in (0, 1), run.stderr


def test_a_relative_xdg_cache_home_is_ignored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The XDG spec: relative paths are invalid. "~/.cache" unexpanded would fill the working folder.
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for value in ("~/.cache", "cache", ""):
        monkeypatch.setenv("XDG_CACHE_HOME", value)
        assert user_cache_dir() == tmp_path / "home" / ".cache" / "skills-lsp"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert user_cache_dir() == tmp_path / "xdg" / "skills-lsp"
