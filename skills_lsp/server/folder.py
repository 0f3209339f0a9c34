"""One workspace folder as the server keeps it: its config (the client's settings on top), skill
index, tool manifest and test queries, and the role each of its files plays."""

from __future__ import annotations

import asyncio
import enum
import itertools
import logging
import math
import operator
import os
import posixpath
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from skills_lsp.core.errors import ScorerUnavailable
from skills_lsp.core.files.cache import find_config
from skills_lsp.core.files.config import Config
from skills_lsp.core.files.discovery import kind_of, workspace_kind
from skills_lsp.core.files.ignore import IgnoreFilter
from skills_lsp.core.index.documents_digest import documents_digest
from skills_lsp.core.index.skill_index import SkillDocument, SkillIndex
from skills_lsp.core.index.store import SavedCheck
from skills_lsp.core.model import FileKind, Finding
from skills_lsp.core.parse.frontmatter import Document
from skills_lsp.core.routing.kept_rankings import (
    KeptRankings,
    read_rankings,
    request_of,
    same_documents,
    save_rankings,
)
from skills_lsp.core.routing.overlap import Collision
from skills_lsp.core.routing.queries import (
    EVAL_QUERIES_FILE,
    QueryCase,
    QueryResult,
    judge_case,
    load_query_file,
    parse_query_file,
    run_case,
    run_cases,
)
from skills_lsp.core.routing.scorer import SCORERS, ScorerName, built_scorers, prepare, select_skills
from skills_lsp.core.rules.check import Manifest, load_manifest
from skills_lsp.core.rules.listing import (
    Listed,
    ListingBase,
    ListingTable,
    Runtime,
    budget_variables,
    listed_columns,
    listing_table,
)
from skills_lsp.core.rules.profiles import PROFILES
from skills_lsp.core.workspace.scorers import (
    FALLBACK,
    default_scorer,
    load_folder_index,
    load_saved_folder_index,
    warm_up,
)
from skills_lsp.core.workspace.settings import load_config, unknown_overlap_names

log = logging.getLogger(__name__)

# How long a lens or hover request scores test queries before it lets the event loop read a cancel.
RESULTS_STEP_SECONDS = 0.02
# How long after the test queries are scored their rankings are saved: the lenses waiting for them
# are answered first.
KEEP_RANKINGS_AFTER = 0.1


class FileRole(enum.Enum):
    SKILL = "skill"
    MANIFEST = "manifest"
    QUERIES = "queries"
    CONFIG = "config"
    OTHER = "other"


class Outcome(enum.Enum):
    """What a file's change did to its folder."""

    CHANGED = "changed"  # the folder's index, manifest or queries changed: other documents may too
    UNCHANGED = "unchanged"  # nothing the server keeps depends on it
    RELOAD = "reload"  # the config changed: the folder must be read again


@dataclass(frozen=True)
class Role:
    """How the server keeps up with one kind of file (one module of `server/roles/`)."""

    # A file of this role changed (text None: deleted, or unreadable).
    update: Callable[[Folder, Path, str | None], Outcome]
    # The findings of an open buffer of this role (`doc`: the parsed buffer, for skill files).
    findings: Callable[[Folder, Path, str, Document | None], list[Finding]]
    # The same, quickly: rules that rank the buffer over the whole workspace (SK704) give their
    # last result instead of running again (None: `findings` is quick already).
    quick_findings: Callable[[Folder, Path, str, Document | None], list[Finding]] | None = None


def same_file(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    return os.path.normpath(a) == os.path.normpath(b)


@dataclass
class Folder:
    """One workspace folder: its config, index, manifest and test queries, kept current."""

    root: Path
    config: Config
    config_problems: list[Finding]
    index: SkillIndex
    manifest: Manifest
    manifest_problems: list[Finding]
    query_path: Path
    cases: list[QueryCase] = field(default_factory=list)
    query_problems: list[Finding] = field(default_factory=list)
    # Each test-query file's last text and its parse (cases, problems), by normalised path: the
    # load, the open buffer and its diagnostics parse the same text once.
    query_parses: dict[str, tuple[str, list[QueryCase], list[Finding]]] = field(default_factory=dict)
    _results: list[QueryResult] | None = None
    # Why test queries are not scored with the configured scorer (its extra is not installed).
    scorer_problem: str | None = None
    _chosen: ScorerName | None = None  # default_scorer's answer until the folder changes
    _partial: list[QueryResult] = field(default_factory=list)  # results so far, in case order
    _scoring: str | None = None  # the scorer `_partial` was made with (chosen, or the fallback)
    # What discovery left out (.gitignore, .ignore, exclude): kept out of the index on changes too.
    ignore: IgnoreFilter | None = None
    # An index loaded as saved, without a stat (folder_index's trust_saved): what the server must
    # check once its first answers are out, and load the folder again if it fails (sync.py).
    saved_check: SavedCheck | None = None
    # The skills' trigger evals (`<skill>/evals/eval_queries.json`), by normalised path: read
    # when first asked for (eval_cases_of), or given by their buffer.
    eval_cases: dict[str, list[QueryCase]] = field(default_factory=dict)
    _evals_sought: set[str] = field(default_factory=set)  # paths eval_cases_of looked for on disk
    _eval_results: dict[str, list[QueryResult]] = field(default_factory=dict)
    # Changes of the index, in all and per path: the other skills of a buffer are unchanged while
    # the two counts move together, and their listing (SK703) need not be summed up again.
    _changes: int = 0
    _changes_of: dict[str, int] = field(default_factory=dict)
    _listing_bases: dict[tuple[str, str], tuple[int, ListingBase]] = field(default_factory=dict)
    # (changes, every skill's entry, its table per runtime name)
    _listed: tuple[int, Listed, dict[str, ListingTable]] | None = None
    _awaiting_results: int = 0  # requests inside results_async
    _lens_answered: float = -math.inf  # time.monotonic() when a lens of this folder was last resolved
    # Each skill buffer's last SK704 collisions, by normalised path: what its quick findings show
    # while they are computed again (roles/skill.py).
    kept_collisions: dict[str, list[Collision]] = field(default_factory=dict)
    # The index's documents as loaded: test-query rankings are kept for those (routing/
    # kept_rankings.py), by scorer; `_kept`: those of the scoring under way, with the index's
    # version when it began.
    _loaded: list[SkillDocument] = field(default_factory=list)
    _loaded_digest: str | None = None  # their documents_digest, when the index knew it at the load
    _rankings: dict[str, KeptRankings] = field(default_factory=dict)
    _kept: tuple[int, KeptRankings] | None = None
    # Saves waiting, by scorer: the timer and the save (made at once when the server stops).
    _saving: dict[str, tuple[asyncio.TimerHandle, Callable[[], None]]] = field(default_factory=dict)
    rankings_kept: int = 0  # test queries answered from a kept ranking, and ranked, so far
    rankings_scored: int = 0

    def __post_init__(self) -> None:
        self.index.subscribe(self._count_change)
        self._loaded = list(self.index)
        # The store gives it at a warm load, a scorer's build makes it at a cold one.
        known = self.index.digest
        self._loaded_digest = known[1] if known is not None and known[0] == self.index.version else None

    def ignores(self, path: Path) -> bool:
        return self.ignore is not None and self.ignore.active and self.ignore.ignored(path)

    def _count_change(self, change: str, document: SkillDocument) -> None:
        key = os.path.normpath(document.path)
        self._changes += 1
        self._changes_of[key] = self._changes_of.get(key, 0) + 1

    def listing_base(self, runtime: Runtime, path: Path) -> ListingBase:
        """`runtime`'s listing of every skill of the folder but the one at `path`, summed up once
        for as long as none of them changes (typing in `path` changes only that one)."""
        key = os.path.normpath(path)
        version = self._changes - self._changes_of.get(key, 0)
        cached = self._listing_bases.get((runtime.name, key))
        if cached is not None and cached[0] == version:
            return cached[1]
        if self._listed is None or self._listed[0] != self._changes:
            # Every skill's entry, sorted once per change of the index for all runtimes and paths:
            # the first diagnostics of a skill at start-up ask for two runtimes over 15,000 skills.
            self._listed = (self._changes, _listed_skills(self.index), {})
        tables = self._listed[2]
        table = tables.get(runtime.name)
        if table is None:
            table = tables[runtime.name] = listing_table(runtime, self._listed[1])
        base = table.base(environ=dict(self.config.budget_variables), without=key)
        self._listing_bases[(runtime.name, key)] = (version, base)
        return base

    @property
    def scorer(self) -> str:
        """The scorer test queries, lenses, hovers and collisions use: the configured one, or the
        fallback in its place when that one cannot be built here (its extra is missing). Settled
        without scoring a single test query: the folder's load built it (or failed to)."""
        chosen = self.chosen_scorer()
        if self.scorer_problem is None and chosen not in built_scorers(self.index):
            try:
                prepare(self.index, chosen)
            except ScorerUnavailable as error:
                self.scorer_problem = f"scorer {chosen!r} is not available here: {error}"
        return FALLBACK if self.scorer_problem else chosen

    def chosen_scorer(self) -> ScorerName:
        """The configured scorer, else the default of the workspace's profile (lexical for
        adk-skill's `.skills/`, the best calibrated one installed for the others). Kept until
        the folder changes: finding the profile reads every skill, and every lens asks."""
        if self._chosen is None:
            self._chosen = default_scorer(self.config, self.index)
        return self._chosen

    def comparable(self) -> list[ScorerName]:
        """The scorers a hover compares: those whose index is built (never build one on the
        event loop: seconds over 20,000 skills)."""
        return built_scorers(self.index)

    def results(self) -> list[QueryResult]:
        """Every test query's result, computed once per change of the index or the queries."""
        while not self.advance_results():
            pass
        assert self._results is not None
        return self._results

    async def results_async(self, step_seconds: float = RESULTS_STEP_SECONDS) -> list[QueryResult]:
        """`results()` in steps of about `step_seconds`, yielding to the event loop between them so
        a `$/cancelRequest` is read and honoured (the request's task is cancelled at the next
        step). The queries scored before a cancel are kept for the next request."""
        self._awaiting_results += 1
        try:
            while not self.advance_results(step_seconds):
                await asyncio.sleep(0)
        finally:
            self._awaiting_results -= 1
        assert self._results is not None
        return self._results

    def results_pending(self) -> bool:
        """Whether a request is scoring the test queries right now (a lens, a hover, the test-query
        file's diagnostics): other work that can wait lets it finish first."""
        return self._results is None and self._awaiting_results > 0

    def lens_answered(self) -> None:
        """A code lens showing test-query results was resolved."""
        self._lens_answered = time.monotonic()

    def lenses_busy(self, quiet: float) -> bool:
        """Whether the editor is asking for lenses: a request is scoring the test queries, or a lens
        was resolved less than `quiet` seconds ago (an editor resolves the visible ones at once)."""
        return self.results_pending() or time.monotonic() - self._lens_answered < quiet

    def advance_results(self, seconds: float = float("inf")) -> bool:
        """Score further test queries for up to `seconds`; True once every one is scored. While
        the index holds the documents it was loaded with, a query ranked over them before (this
        run, or the last one: routing/kept_rankings.py) is not ranked again."""
        if self._results is not None:
            return True
        deadline = time.monotonic() + seconds
        if self._scoring is None:
            self._scoring = self.scorer
            self._kept = self._kept_rankings(self._scoring)
        while len(self._partial) < len(self.cases):
            case = self.cases[len(self._partial)]
            try:
                self._partial.append(self._result(case, self._scoring))
            except ScorerUnavailable as error:
                # The configured scorer's extra is missing: every query with the fallback instead.
                self.scorer_problem = f"scorer {self._scoring!r} is not available here: {error}"
                self._scoring = FALLBACK
                self._kept = self._kept_rankings(FALLBACK)
                self._partial.clear()
                continue
            if time.monotonic() >= deadline:
                return False
        if self._scoring == self.chosen_scorer():
            self.scorer_problem = None
        self._results, self._partial = self._partial, []
        self._keep_rankings(self._scoring)
        log.info(
            "%s: test queries ranked %d times, answered %d times from kept rankings",
            self.root,
            self.rankings_scored,
            self.rankings_kept,
        )
        return True

    def _result(self, case: QueryCase, scorer: str) -> QueryResult:
        """`case`'s result: from its kept ranking when there is one, else ranked now."""
        kept = self._kept
        if kept is None or kept[0] != self.index.version:  # no longer the documents they are for
            self.rankings_scored += 1
            return run_case(self.index, case, select_skills, scorer)
        request = request_of(case.query, case.ranking_policy(scorer))
        ranking = kept[1].ranking(request)
        if ranking is None:
            self.rankings_scored += 1
            ranking = tuple(select_skills(self.index, case.query, case.ranking_policy(scorer)))
            kept[1].keep(request, ranking)
        else:
            self.rankings_kept += 1
        return judge_case(case, ranking, scorer)

    def _kept_rankings(self, scorer: str) -> tuple[int, KeptRankings] | None:
        """The rankings kept for `scorer` over the documents the index was loaded with (read from
        the last run's file the first time), with the index's version now; None when the index
        holds other documents, or keeps nothing between runs."""
        docs = list(self.index)
        if not same_documents(self._loaded, docs):
            return None
        kept = self._rankings.get(scorer)
        if kept is None:
            if self._loaded_digest is None:  # not known at the load (no scorer asked for it)
                self._loaded_digest = documents_digest(self._loaded)
            kept = read_rankings(self.index, scorer, docs, self._loaded_digest)
            if kept is None:
                return None
            self._rankings[scorer] = kept
        # The documents now (the same, or read the same): a kept ranking's skills are theirs.
        kept.docs = docs
        return self.index.version, kept

    def _keep_rankings(self, scorer: str) -> None:
        """Once every query is scored: save the rankings of today's cases when some were scored
        over the loaded documents (just now, in a running server: after the answers are sent)."""
        kept = self._kept
        if kept is None or kept[0] != self.index.version or not kept[1].new or self.index.frames is None:
            return
        requests = [request_of(case.query, case.ranking_policy(scorer)) for case in self.cases]
        rankings = kept[1].to_save(requests)
        if rankings is None:
            return
        frames, key = self.index.frames, kept[1].key
        kept[1].positions, kept[1].new = rankings, {}

        def save() -> None:
            self._saving.pop(scorer, None)
            save_rankings(frames, scorer, key, rankings)

        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no event loop (a test, a script): now
            save()
            return
        # Typing in the query file scores its cases again and again: only the last save is made.
        pending = self._saving.pop(scorer, None)
        if pending is not None:
            pending[0].cancel()
        self._saving[scorer] = (loop.call_later(KEEP_RANKINGS_AFTER, save), save)

    def save_now(self) -> None:
        """Make the saves still waiting (the server stops: an editor closed right after its
        first lenses would otherwise keep nothing, and the next start rank every query again)."""
        for timer, save in list(self._saving.values()):
            timer.cancel()
            save()

    def parse_queries(self, path: Path, text: str) -> tuple[list[QueryCase], list[Finding]]:
        """A test-query file's cases and problems for this text, parsed once per text."""
        key = os.path.normpath(path)
        parsed = self.query_parses.get(key)
        if parsed is None or parsed[0] != text:
            parsed = self.query_parses[key] = (text, *parse_query_file(text, str(path)))
        return parsed[1], parsed[2]

    def cases_for(self, path: Path) -> list[QueryCase]:
        """The cases of a test-query file: the configured one or a skill's trigger evals."""
        if same_file(path, self.query_path):
            return self.cases
        return self.eval_cases_of(os.path.normpath(path))

    def eval_cases_of(self, key: str) -> list[QueryCase]:
        """The cases of the trigger evals at `key` (a normalised path), when it is a skill's
        `evals/eval_queries.json`: read from disk the first time they are asked for, not looked
        for at load (a `stat` per skill: about 0.1 s of a warm start at 16,000 skills)."""
        cases = self.eval_cases.get(key)
        if cases is None and key not in self._evals_sought:
            self._evals_sought.add(key)
            folder = os.path.dirname(key)
            skill_dir = os.path.dirname(folder)
            if (
                os.path.basename(key) == EVAL_QUERIES_FILE
                and os.path.basename(folder) == "evals"
                and os.path.isfile(key)
                and any(
                    doc.kind is FileKind.AGENT_SKILL
                    and os.path.dirname(os.path.normpath(doc.path)) == skill_dir
                    for doc in self.index
                )
            ):
                cases = self.eval_cases[key] = load_query_file(Path(key))[0]
        return cases or []

    def results_for(self, path: Path) -> list[QueryResult]:
        """The results of a test-query file's cases, computed once per change of the folder."""
        if same_file(path, self.query_path):
            return self.results()
        key = os.path.normpath(path)
        if key not in self._eval_results:
            scorer = self.scorer  # the configured one, or the fallback when its extra is missing
            self._eval_results[key] = run_cases(self.index, self.eval_cases_of(key), scorer=scorer)
        return self._eval_results[key]

    def changed(self) -> None:
        self._results = None
        self._partial = []
        self._scoring = None
        self._kept = None
        self._chosen = None
        self.scorer_problem = None  # tried again: the extra may have been installed meanwhile
        self._eval_results.clear()

    def role(self, path: Path) -> FileRole:
        if self.manifest.path is not None and same_file(path, self.manifest.path):
            return FileRole.MANIFEST
        if same_file(path, self.root / self.config.tool_manifest):
            return FileRole.MANIFEST
        if same_file(path, self.query_path) or path.name == EVAL_QUERIES_FILE:
            return FileRole.QUERIES
        if path.name in ("skills-lsp.toml", "pyproject.toml") and path.parent == self.root:
            return FileRole.CONFIG
        if self.config.source is not None and same_file(path, self.config.source):
            return FileRole.CONFIG
        if workspace_kind(path, self.root) is not None:  # a file `check` checks
            return FileRole.SKILL
        return FileRole.OTHER

    def kind(self, path: Path) -> FileKind:
        """The layout of a file of this folder, as `check` gives it (else judged from its path)."""
        return workspace_kind(path, self.root) or kind_of(path)


def with_settings(config: Config, settings: dict[str, Any]) -> Config:
    """The folder's config with the client's settings on top (unknown or empty values leave the
    config file's choice alone)."""
    changes: dict[str, Any] = {}
    if isinstance(settings.get("profile"), str) and settings["profile"] in PROFILES:
        changes["profile"] = settings["profile"]
    for key in ("select", "ignore"):
        value = settings.get(key)
        if isinstance(value, list) and all(isinstance(v, str) for v in value) and value:
            changes[key] = tuple(value)
    if settings.get("scorer") in SCORERS:
        changes["scorer"] = settings["scorer"]
    for key, attr in (("toolManifest", "tool_manifest"), ("queryFile", "query_file")):
        if isinstance(settings.get(key), str) and settings[key]:
            changes[attr] = settings[key]
    return replace(config, **changes) if changes else config


# How a folder's load reports how far it got: (percentage, what it is doing).
LoadProgress = Callable[[int, str], None]
READ_UP_TO = 60  # the percentage reached once every file is read; building scorers takes the rest


def folder_config(root: Path, settings: dict[str, Any]) -> tuple[Config, list[Finding]]:
    """A folder's config (its config file's, the client's settings on top) and its problems."""
    source = find_config(root)
    if source is not None and root.resolve() not in (
        source.parent.resolve(),
        *source.parent.resolve().parents,
    ):
        source = None
    config, problems = load_config(source) if source is not None else (Config(root=root), [])
    if config.root is None:
        config = replace(config, root=root)
    config = with_settings(config, settings)
    config = replace(config, budget_variables=budget_variables(os.environ))  # core reads no environment
    return config, problems


def folder_index(
    root: Path,
    settings: dict[str, Any],
    progress: LoadProgress | None = None,
    fresh_since: int | None = None,
    indexed: Callable[[], None] | None = None,
    trust_saved: bool = False,
) -> tuple[Config, list[Finding], IgnoreFilter, SkillIndex, SavedCheck | None]:
    """A folder's config, its problems, ignore filter and index, the index's scorers built (and
    saved in the folder's cache): what `load_folder` reads first, and all that a cold build in a
    child process makes (cold_build.py). `fresh_since`: store.cached_workspace_files. `indexed`
    is called once the index is loaded (its documents saved), before its scorers are built.
    `trust_saved`: the index as saved, when it can be had without a stat, and the check it
    still needs (scorers.load_saved_folder_index); else None in its place."""

    def files_read(done: int, total: int) -> None:
        if progress is not None:
            progress(READ_UP_TO * done // max(total, 1), f"{root.name}: {done}/{total} files")

    config, problems = folder_config(root, settings)
    ignore = config.ignore_filter(root)
    saved = load_saved_folder_index(config, root, ignore) if trust_saved and fresh_since is None else None
    if saved is not None:
        index, check = saved
        files_read(len(index), len(index))
    else:
        index, check = load_folder_index(config, root, ignore, files_read, fresh_since), None
    if indexed is not None:
        indexed()
    if progress is not None:
        progress(READ_UP_TO, f"{root.name}: {len(index)} skills read, preparing the scorer")
    warm_up(index, config, root)
    return config, problems, ignore, index, check


def load_folder(
    root: Path,
    settings: dict[str, Any],
    progress: LoadProgress | None = None,
    fresh_since: int | None = None,
    indexed: Callable[[], None] | None = None,
    trust_saved: bool = False,
) -> Folder:
    """Read a workspace folder: config, index (its scorers built now, off the event loop: the
    first lens or hover must not stall the editor), tool manifest and test queries. `progress`
    hears how far the load got, from the thread that loads. `fresh_since`, `indexed`,
    `trust_saved`: see folder_index (the check goes to `Folder.saved_check`)."""
    config, problems, ignore, index, check = folder_index(
        root, settings, progress, fresh_since, indexed, trust_saved
    )
    problems = [*problems, *unknown_overlap_names(config, {d.name for d in index})]
    manifest, manifest_problems = load_manifest(root, config)
    query_path = root / config.query_file
    query_text = _read_text(query_path)
    if query_text is not None:
        cases, query_problems = parse_query_file(query_text, str(query_path))
    else:  # missing (no cases), or unreadable (SK003 says why)
        cases, query_problems = load_query_file(query_path) if query_path.is_file() else ([], [])
    folder = Folder(
        root,
        config,
        problems,
        index,
        manifest,
        manifest_problems,
        query_path,
        cases,
        query_problems,
        ignore=ignore,
        saved_check=check,
    )
    if query_text is not None:
        folder.query_parses[os.path.normpath(query_path)] = (query_text, cases, query_problems)
    return folder


def _skill_in(doc: SkillDocument, folder: str) -> bool:
    """Whether `doc` is an agentskills SKILL.md in `folder` (a normalised path)."""
    return doc.kind is FileKind.AGENT_SKILL and os.path.dirname(os.path.normpath(doc.path)) == folder


def _read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _absolute(normalised: str) -> str:
    """`os.path.abspath` of a path normalised already (indexed paths mostly are absolute)."""
    return normalised if os.path.isabs(normalised) else os.path.abspath(normalised)


def _absolute_paths(normalised: list[str]) -> list[str]:
    """`_absolute` of each path: on POSIX, where `isabs` is a leading `/`, those all absolute
    already are found so by one pass in C."""
    if os.path is posixpath and all(map(str.startswith, normalised, itertools.repeat("/"))):
        return normalised
    return list(map(_absolute, normalised))


# What SK703's listing reads of each indexed document, in one call in C per document.
_LISTED_FIELDS = operator.attrgetter("kind", "name", "description", "when_to_use")


def _listed_skills(index: SkillIndex) -> Listed:
    """Every indexed skill's listing entry but convention files' (never listed), its path made
    absolute and labelled by its normalised path: columns taken from the index whole, which keeps
    those paths (a per-document tuple and `normpath` were 0.15-0.2 s at 16,000 skills)."""
    owners = index.normalised_paths()
    if not owners:
        return listed_columns([], [], [], [], [])
    kinds, names, descriptions, when_to_use = zip(*map(_LISTED_FIELDS, index), strict=True)
    listed_kinds = map(operator.is_not, kinds, itertools.repeat(FileKind.CONVENTION))
    keep = itertools.compress(range(len(kinds)), listed_kinds)
    return listed_columns(names, descriptions, _absolute_paths(owners), when_to_use, owners, keep)
