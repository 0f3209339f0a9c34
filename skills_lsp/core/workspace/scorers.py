"""Scorers made ready for a folder before anyone asks: built off the editor's event loop, with
the skill vectors of an embedding scorer kept on disk between runs (the file the CLI uses)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from skills_lsp.core.errors import ScorerUnavailable
from skills_lsp.core.files.config import Config
from skills_lsp.core.index.skill_index import SkillIndex
from skills_lsp.core.routing.scorer import SCORERS, ScorerName, prepare
from skills_lsp.core.routing.semantic import VECTOR_FILE, VECTORS, workspace_keys
from skills_lsp.core.rules.check import default_cache_dir

PREPARE_ALL_UP_TO = 2000  # skills: below this, building every scorer takes about a second
FALLBACK: ScorerName = "bm25f"  # what routing tests use when the configured scorer's extra is missing


def warm_up(index: SkillIndex, config: Config, root: Path) -> list[ScorerName]:
    """Build the scorers a folder will use, and return their names. In a small workspace every
    scorer is built, so a hover can compare them all at once; in a large one (seconds each)
    the configured one, and the fallback in its place if its extra is missing. Skill vectors are
    kept on disk only for a folder that chose an embedding scorer, and only that folder's."""
    wanted = list(SCORERS) if len(index) <= PREPARE_ALL_UP_TO else [config.scorer]
    keep_vectors = SCORERS[config.scorer].extra == "semantic"
    if keep_vectors:
        cache_config = config if config.source is not None else replace(config, root=None)
        VECTORS.attach(default_cache_dir([root], cache_config) / VECTOR_FILE)
    built: list[ScorerName] = []
    for name in wanted:
        try:
            prepare(index, name)
            built.append(name)
        except ScorerUnavailable:
            keep_vectors = False
            prepare(index, FALLBACK)
    if keep_vectors:
        VECTORS.flush(keep=workspace_keys(index))
    return built
