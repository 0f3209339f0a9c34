"""Where a run keeps its caches (the check results, the workspace index) and where its config file
is: light enough for a warm command to find them before it imports the stages."""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol


class Config(Protocol):
    """What these functions read of a config (files/config.Config): where its file is. A protocol,
    not an import, because config imports this module."""

    @property
    def root(self) -> Path | None: ...


CACHE_DIR_NAME = ".skills-lsp-cache"
UNUSED_FOR = 30 * 24 * 3600  # a kept file or folder no process has used for this long is removed
ABANDONED_AFTER = 3600  # a temporary one (a name starting with a dot) this old: its writer died
CONFIG_FILES = ("skills-lsp.toml", "pyproject.toml")


def workspace_root(targets: Sequence[str | os.PathLike[str]], config: Config) -> Path:
    """Where workspace files (tool manifest, test queries) live: the config's folder, else the
    first folder checked."""
    return root_of(targets, config.root)


def root_of(targets: Sequence[str | os.PathLike[str]], config_root: Path | None) -> Path:
    """`workspace_root` for a config kept in `config_root` (None: no config file)."""
    if config_root is not None:
        return config_root
    first = Path(targets[0]) if targets else Path.cwd()
    return first if first.is_dir() else first.parent


def default_cache_dir(targets: Sequence[str | os.PathLike[str]], config: Config) -> Path:
    """Beside the config file; else at the root of the git checkout; else in the user's cache
    folder. Never inside a skill directory, which may be zipped and shipped as it is."""
    return cache_dir_for(targets, config.root)


def cache_dir_for(targets: Sequence[str | os.PathLike[str]], config_root: Path | None) -> Path:
    """`default_cache_dir` for a config kept in `config_root` (None: no config file)."""
    if config_root is not None:
        return config_root / CACHE_DIR_NAME
    start = root_of(targets, None).resolve()
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder / CACHE_DIR_NAME
    return user_cache_dir() / hashlib.sha256(os.fsencode(start)).hexdigest()[:16]


def user_cache_dir() -> Path:
    """skills-lsp's folder in the user's cache folder ($XDG_CACHE_HOME, else ~/.cache): caches of
    a workspace with no config and no git checkout, and those that belong to the machine (the
    embedding model's optimised graph)."""
    chosen = os.environ.get("XDG_CACHE_HOME", "")
    # A relative value is to be ignored (XDG spec): "~/.cache" unexpanded would fill the working folder.
    return (Path(chosen) if os.path.isabs(chosen) else Path.home() / ".cache") / "skills-lsp"


def make_cache_folder(folder: Path) -> None:
    """Make `folder` (and its parents) with a `.gitignore` that keeps everything in it out of
    git: a cache is never committed. OSError when it cannot be made."""
    folder.mkdir(parents=True, exist_ok=True)
    gitignore = folder / ".gitignore"
    if not gitignore.exists():
        gitignore.write_text("# created by skills-lsp\n*\n", encoding="utf-8")


def store_dir(cache_dir: Path, root: str | os.PathLike[str]) -> Path:
    """The folder, in a cache folder, of one workspace root's index: two roots that share a cache
    folder (two folders of one git checkout) keep an index each instead of replacing each other's."""
    resolved = os.path.realpath(root)
    return cache_dir / f"index-{hashlib.sha256(os.fsencode(resolved)).hexdigest()[:16]}"


_PYPROJECT_TABLE = re.compile(
    r"""^[ \t]*(?:\[[ \t]*)?tool[ \t]*\.[ \t]*(?:skills-lsp|"skills-lsp"|'skills-lsp')[ \t]*[.\]=]""",
    re.MULTILINE,
)


def _declares_config(pyproject: Path) -> bool:
    """Whether a pyproject.toml has a `tool.skills-lsp` table, in any spelling TOML allows
    (`[tool.skills-lsp]`, `[tool."skills-lsp"]`, a dotted `tool.skills-lsp.key = ...`)."""
    try:
        text = pyproject.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    if "skills-lsp" not in text:  # cheap: most pyproject files never mention it
        return False
    # Imported only now (about 8 ms, a tenth of a warm `select`'s imports): most runs meet no
    # pyproject.toml that names us.
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib  # type: ignore[import-not-found, unused-ignore]
    try:
        tool = tomllib.loads(text).get("tool")
    except tomllib.TOMLDecodeError:  # still ours if it looks like it, so the error gets reported
        return _PYPROJECT_TABLE.search(text) is not None
    return isinstance(tool, dict) and "skills-lsp" in tool


def find_config(start: Path) -> Path | None:
    """The nearest `skills-lsp.toml`, or `pyproject.toml` with a `[tool.skills-lsp]` table,
    in `start` or its parents."""
    current = start.resolve()
    if current.is_file():
        current = current.parent
    for directory in (current, *current.parents):
        for name in CONFIG_FILES:
            candidate = directory / name
            if not candidate.is_file():
                continue
            if name == "pyproject.toml" and not _declares_config(candidate):
                continue
            return candidate
    return None


def remove_unused_beside(keep: Path, folders: bool) -> None:
    """Remove what lies beside `keep` in its cache folder, folders or files as `folders` says:
    those no process has used (touched) for UNUSED_FOR, kept by an older version, and temporary
    ones (a name starting with a dot) left for ABANDONED_AFTER by a process that died writing
    them. The folder's `.gitignore` stays."""
    now = time.time()
    for other in keep.parent.iterdir():
        if other == keep or other.name == ".gitignore":
            continue
        with contextlib.suppress(OSError):
            limit = ABANDONED_AFTER if other.name.startswith(".") else UNUSED_FOR
            if other.is_dir() == folders and now - other.stat().st_mtime > limit:
                if folders:
                    shutil.rmtree(other, ignore_errors=True)
                else:
                    other.unlink()
