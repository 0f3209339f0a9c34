"""Scorers made ready for a folder before anyone asks: built off the editor's event loop, with
the skill vectors of an embedding scorer kept on disk between runs (the file the CLI uses)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from skills_lsp.core.errors import ScorerUnavailable
from skills_lsp.core.files.cache import default_cache_dir
from skills_lsp.core.files.config import Config
from skills_lsp.core.files.ignore import IgnoreFilter
from skills_lsp.core.index.skill_index import SkillIndex
from skills_lsp.core.index.store import SavedCheck, load_cached_workspace_index, load_saved_workspace_index
from skills_lsp.core.model import FileKind
from skills_lsp.core.routing.scorer import SCORERS, ScorerName, embeds, prepare
from skills_lsp.core.routing.semantic import VECTORS, keep_vectors_in, load_model, workspace_keys

# Skills: below this every scorer is built, so that hovers compare them all. Cheap but for the
# embedding scorers, whose first build embeds every skill (about 13 ms each with minilm, in the
# indexing thread; cached on disk afterwards).
PREPARE_ALL_UP_TO = 2000
FALLBACK: ScorerName = "bm25f"  # what routing tests use when the configured scorer's extra is missing


# The profile whose runtime picks skills by adk-skill's own formula: its workspaces keep `lexical`
# so that lenses and tests show exactly what that runtime selects.
LEXICAL_PROFILES = frozenset({"adk-rust"})


def default_scorer(config: Config, index: SkillIndex) -> ScorerName:
    """The scorer a workspace uses when neither its config nor the command line names one.

    Runtimes that route with an LLM (Claude Code, Codex, Gemini CLI, ADK) understand a request in
    the user's own words, so every profile gets the best calibrated scorer installed: `hybrid`
    with the `semantic` extra, else `bm25f`. adk-skill (the `adk-rust` profile: a config's
    `profile`, or a workspace whose skills are all flat `.skills/*.md` files) selects by its
    lexical formula, and `lexical` is that formula bit for bit."""
    if config.scorer is not None:
        return config.scorer
    if config.profile is not None:
        lexical = config.profile in LEXICAL_PROFILES
    else:
        # Stops at the first other kind: a SKILL.md workspace answers at once, not after 20,000.
        lexical = len(index) > 0 and all(doc.kind is FileKind.FLAT_SKILL for doc in index)
    if lexical:
        return "lexical"
    return "hybrid" if SCORERS["hybrid"].available() else FALLBACK


def folder_cache_dir(config: Config, root: Path) -> Path:
    """An editor folder's cache folder: the CLI's for the same folder (a config's folder, else
    the git checkout's root, else the user's cache)."""
    cache_config = config if config.source is not None else replace(config, root=None)
    return default_cache_dir([root], cache_config)


def load_folder_index(
    config: Config,
    root: Path,
    ignore: IgnoreFilter | None = None,
    progress: Callable[[int, int], None] | None = None,
    fresh_since: int | None = None,
) -> SkillIndex:
    """A folder's workspace index through the persistent store the CLI also uses, without what
    `ignore` leaves out (`progress(done, total)`: files read so far; `fresh_since`: see
    store.cached_workspace_files)."""
    return load_cached_workspace_index(
        root,
        config.roots_for(root),
        config.max_depth,
        folder_cache_dir(config, root),
        ignore,
        progress,
        fresh_since=fresh_since,
    )


def load_saved_folder_index(
    config: Config, root: Path, ignore: IgnoreFilter | None = None
) -> tuple[SkillIndex, SavedCheck] | None:
    """`load_folder_index` as it was saved, without a stat, and what must be checked before it
    is trusted for good (store.load_saved_workspace_index); None: load it with `load_folder_index`."""
    return load_saved_workspace_index(
        root, config.roots_for(root), config.max_depth, folder_cache_dir(config, root), ignore
    )


def warm_up(index: SkillIndex, config: Config, root: Path) -> list[ScorerName]:
    """Build the scorers a folder will use, and return their names. In a small workspace every
    scorer is built, so a hover can compare them all at once (the embedding ones only when the
    folder uses one); in a large one (seconds each) the configured one, and the fallback in its
    place if its extra is missing. Skill vectors are
    kept on disk only for a folder that chose an embedding scorer, and only that folder's."""
    chosen = default_scorer(config, index)
    keep_vectors = embeds([chosen])
    # An embedding scorer the folder does not use is left out: its vectors are not kept on disk
    # for it, so every start would load the model and embed every skill again (tens of seconds).
    small = len(index) <= PREPARE_ALL_UP_TO
    wanted = [chosen] + [
        name for name in SCORERS if name != chosen and small and (keep_vectors or SCORERS[name].extra is None)
    ]
    if keep_vectors:
        # The model first: onnxruntime's load peak is then not on top of the vectors read (at
        # 20,000 skills the server's peak fell from 482 to about 451 MiB). Missing: the loop
        # below falls back.
        with contextlib.suppress(ScorerUnavailable):
            load_model()
        keep_vectors_in(folder_cache_dir(config, root))
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
