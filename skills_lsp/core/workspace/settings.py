"""The workspace's own files read as a run or a folder needs them, problems as findings: the
config with every name in it checked (`files.config` parses `[tool.skills-lsp]` but sits below
the stages that define profiles, rule codes and scorers, so it is given those names here) and
the tool manifest."""

from __future__ import annotations

import os
from collections.abc import Collection, Sequence
from pathlib import Path

from skills_lsp.core.files import config as files_config
from skills_lsp.core.files.cache import find_config
from skills_lsp.core.files.config import Config, ConfigNames
from skills_lsp.core.model import Finding
from skills_lsp.core.parse import tool_manifest
from skills_lsp.core.parse.tool_manifest import StaticToolRegistry
from skills_lsp.core.routing.scorer import SCORERS
from skills_lsp.core.rules import RULES
from skills_lsp.core.rules.profiles import PROFILES
from skills_lsp.core.rules.validate import DEFAULT_CONFIG, file_findings

# The tables themselves (not copies): what the config may name is what they hold.
NAMES = ConfigNames(profiles=PROFILES, rule_codes=RULES, scorers=SCORERS)


def load_config(path: Path) -> tuple[Config, list[Finding]]:
    """Read a config file; problems (SK001) come back as findings at their line."""
    config, problems = files_config.load_config(path, NAMES)
    return config, file_findings(path, problems)


def parse_config(text: str, path: Path) -> tuple[Config, list[Finding]]:
    """A config file's text (an editor buffer) read as `load_config` reads the file."""
    config, problems = files_config.parse_config(text, path, NAMES)
    return config, file_findings(path, problems)


def unknown_overlap_names(config: Config, known: Collection[str], text: str | None = None) -> list[Finding]:
    """SK001 for names in the config's `overlap` that no skill in `known` has; `text` is the
    config's (an editor buffer), else the file is read."""
    if not config.overlap or config.source is None:
        return []
    if text is None:
        try:
            text = config.source.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return []  # load_config reports the unreadable file already
    problems = files_config.overlap_name_problems(text, config.source, config, known)
    return file_findings(config.source, problems)


def load_tool_manifest(path: str | Path) -> tuple[StaticToolRegistry, list[Finding]]:
    """Read a tool manifest; an unreadable or malformed one gives an empty registry and SK002."""
    registry, problems = tool_manifest.load_tool_manifest(path)
    return registry, file_findings(path, problems)


def parse_tool_manifest(text: str, path: str) -> tuple[StaticToolRegistry, list[Finding]]:
    """A manifest's text (an editor buffer) read as `load_tool_manifest` reads the file."""
    registry, problems = tool_manifest.parse_tool_manifest(text, path)
    return registry, file_findings(path, problems)


def resolve_config(
    targets: Sequence[str | os.PathLike[str]], explicit: Path | None = None
) -> tuple[Config, list[Finding]]:
    """The config for a run: an explicit file, else the nearest one above the first target."""
    path = explicit or (find_config(Path(targets[0])) if targets else find_config(Path.cwd()))
    if path is None:
        return DEFAULT_CONFIG, []
    return load_config(path)
