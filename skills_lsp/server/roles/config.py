"""The config file (`skills-lsp.toml`, or `pyproject.toml` with `[tool.skills-lsp]`): a change
reloads the folder; SK001 on the file."""

from __future__ import annotations

from pathlib import Path

from skills_lsp.core.model import Finding
from skills_lsp.core.parse.frontmatter import Document
from skills_lsp.core.workspace.settings import parse_config, unknown_overlap_names
from skills_lsp.server.folder import Folder, Outcome, Role


def _ours(folder: Folder, path: Path, text: str | None) -> bool:
    """A pyproject.toml without our table changes nothing (unless it was the config)."""
    return path.name != "pyproject.toml" or "skills-lsp" in (text or "") or folder.config.source == path


def update(folder: Folder, path: Path, text: str | None) -> Outcome:
    return Outcome.RELOAD if _ours(folder, path, text) else Outcome.UNCHANGED


def findings(folder: Folder, path: Path, text: str, doc: Document | None) -> list[Finding]:
    if path.name == "pyproject.toml" and "skills-lsp" not in text:
        return []
    config, found = parse_config(text, path)
    if folder.config.source is not None and folder.config.source == path:  # the folder's own config
        found += unknown_overlap_names(config, {d.name for d in folder.index}, text)
    return found


ROLE = Role(update, findings)
