"""Where a run keeps its caches (the check results, the workspace index): light enough for a warm
command to find them before it imports the stages."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from skills_lsp.core.files.config import Config

CACHE_DIR_NAME = ".skills-lsp-cache"


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
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "skills-lsp" / hashlib.sha256(str(start).encode()).hexdigest()[:16]
