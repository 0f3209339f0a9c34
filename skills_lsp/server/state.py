"""What the server knows: one `Folder` per workspace folder (config, skill index, tool manifest,
test queries) and the analysis of one document. Everything here calls `skills_lsp.core`; nothing
here knows LSP types.
"""

from __future__ import annotations

import enum
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from skills_lsp.core.errors import ScorerUnavailable
from skills_lsp.core.files.config import Config, find_config
from skills_lsp.core.files.discovery import is_convention_file, kind_of
from skills_lsp.core.index.skill_index import SkillIndex, document_from_text, load_workspace_index
from skills_lsp.core.model import FileKind, Finding, Range, SkillFile
from skills_lsp.core.parse.frontmatter import Document, parse_text
from skills_lsp.core.routing.queries import (
    QueryCase,
    QueryResult,
    load_query_file,
    parse_query_file,
    run_cases,
)
from skills_lsp.core.routing.scorer import (
    SCORERS,
    ScorerName,
    built_scorers,
    optional_scorers,
    prepare,
    scorer_name,
)
from skills_lsp.core.routing.semantic import VECTOR_FILE, VECTORS, workspace_keys
from skills_lsp.core.rules.check import (
    Manifest,
    default_cache_dir,
    load_manifest,
    named_skill,
    workspace_findings,
)
from skills_lsp.core.rules.profiles import PROFILES, Profile
from skills_lsp.core.rules.registry import RoutingRun, rule_named
from skills_lsp.core.rules.validate import (
    check_document,
    resolve_profile,
    routing_findings,
)
from skills_lsp.core.rules.workspace import NamedSkill
from skills_lsp.core.workspace.settings import load_config, parse_config, parse_tool_manifest

QUERY_FAILURE_CODE = rule_named("failing-test-query").code  # SK702
PREPARE_ALL_UP_TO = 2000  # skills: below this, building every scorer takes about a second


class FileRole(enum.Enum):
    SKILL = "skill"
    MANIFEST = "manifest"
    QUERIES = "queries"
    CONFIG = "config"
    OTHER = "other"


def served_kind(path: Path) -> FileKind | None:
    """The layout of a file the server checks, or None for files it leaves alone."""
    if path.name == "SKILL.md":
        return FileKind.AGENT_SKILL
    parts = [p.lower() for p in path.parts]
    if path.suffix == ".md" and (".skills" in parts or ("skills" in parts and ".claude" in parts)):
        return kind_of(path)
    if is_convention_file(path.name):
        return FileKind.CONVENTION
    return None


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
    query_parse: tuple[str | None, list[Finding]] = (None, [])
    _results: list[QueryResult] | None = None
    # Why test queries are not scored with the configured scorer (its extra is not installed).
    scorer_problem: str | None = None

    @property
    def scorer(self) -> str:
        """The scorer test queries, lenses and hovers use: the configured one, or bm25f in its
        place when that one needs an extra this environment lacks."""
        if self._results is None:
            self.results()  # settles scorer_problem
        return "bm25f" if self.scorer_problem else self.config.scorer

    def comparable(self) -> list[ScorerName]:
        """The scorers a hover compares: those whose index is built (never build one on the
        event loop: seconds over 20,000 skills)."""
        return built_scorers(self.index)

    def results(self) -> list[QueryResult]:
        """Every test query's result, computed once per change of the index or the queries."""
        if self._results is None:
            try:
                self._results = run_cases(self.index, self.cases, scorer=self.config.scorer)
                self.scorer_problem = None
            except ScorerUnavailable as error:
                self.scorer_problem = f"scorer {self.config.scorer!r} is not available here: {error}"
                self._results = run_cases(self.index, self.cases, scorer="bm25f")
        return self._results

    def changed(self) -> None:
        self._results = None

    def role(self, path: Path) -> FileRole:
        if self.manifest.path is not None and _same(path, self.manifest.path):
            return FileRole.MANIFEST
        if _same(path, self.root / self.config.tool_manifest):
            return FileRole.MANIFEST
        if _same(path, self.query_path):
            return FileRole.QUERIES
        if path.name in ("skills-lsp.toml", "pyproject.toml") and path.parent == self.root:
            return FileRole.CONFIG
        if self.config.source is not None and _same(path, self.config.source):
            return FileRole.CONFIG
        if served_kind(path) is not None:
            return FileRole.SKILL
        return FileRole.OTHER


def _same(a: Path, b: Path) -> bool:
    return os.path.normpath(a) == os.path.normpath(b)


class State:
    """Workspace folders and client settings."""

    def __init__(self) -> None:
        self.folders: dict[str, Folder] = {}
        self.settings: dict[str, Any] = {}

    # --- folders --------------------------------------------------------------------------------

    def configured(self, config: Config) -> Config:
        """The folder's config with the client's settings on top."""
        s = self.settings
        changes: dict[str, Any] = {}
        if isinstance(s.get("profile"), str) and s["profile"] in PROFILES:
            changes["profile"] = s["profile"]
        for key, attr in (("select", "select"), ("ignore", "ignore")):
            value = s.get(key)
            if isinstance(value, list) and all(isinstance(v, str) for v in value) and value:
                changes[attr] = tuple(value)
        if s.get("scorer") in SCORERS:
            changes["scorer"] = s["scorer"]
        for key, attr in (("toolManifest", "tool_manifest"), ("queryFile", "query_file")):
            if isinstance(s.get(key), str) and s[key]:
                changes[attr] = s[key]
        return replace(config, **changes) if changes else config

    def load_folder(self, root: Path) -> Folder:
        source = find_config(root)
        if source is not None and root.resolve() not in (
            source.parent.resolve(),
            *source.parent.resolve().parents,
        ):
            source = None
        config, problems = load_config(source) if source is not None else (Config(root=root), [])
        if config.root is None:
            config = replace(config, root=root)
        config = self.configured(config)
        index = load_workspace_index(root, config.roots_for(root), config.max_depth)
        # Built here, off the event loop: the first lens or hover must not stall the editor (the
        # configured scorer's index too: bm25f and semantic take seconds over 20,000 skills).
        # In a small workspace every scorer is built, so a hover can compare them all at once;
        # in a large one (seconds each) the configured one, and bm25f in its place if need be.
        wanted = list(SCORERS) if len(index) <= PREPARE_ALL_UP_TO else [scorer_name(config.scorer)]
        # Skill vectors are kept on disk only for a folder that chose an embedding scorer (the
        # same file the CLI uses), and only that folder's.
        keep_vectors = config.scorer in optional_scorers()
        if keep_vectors:
            cache_config = config if config.source is not None else replace(config, root=None)
            VECTORS.attach(default_cache_dir([root], cache_config) / VECTOR_FILE)
        for name in wanted:
            try:
                prepare(index, name)
            except ScorerUnavailable:
                keep_vectors = False
                prepare(index, "bm25f")  # what results() falls back to, and says so
        if keep_vectors:
            VECTORS.flush(keep=workspace_keys(index))
        manifest, manifest_problems = load_manifest(root, config)
        query_path = root / config.query_file
        cases, query_problems = load_query_file(query_path) if query_path.is_file() else ([], [])
        folder = Folder(
            root, config, problems, index, manifest, manifest_problems, query_path, cases, query_problems
        )
        self.folders[str(root)] = folder
        return folder

    def drop_folder(self, root: Path) -> None:
        self.folders.pop(str(root), None)

    def folder_for(self, path: Path) -> Folder | None:
        best: Folder | None = None
        for folder in self.folders.values():
            try:
                path.relative_to(folder.root)
            except ValueError:
                continue
            if best is None or len(str(folder.root)) > len(str(best.root)):
                best = folder
        return best

    # --- keeping folders current ----------------------------------------------------------------

    def update(self, path: Path, text: str | None) -> FileRole:
        """A file changed (text None: read it from disk, or it was deleted)."""
        folder = self.folder_for(path)
        if folder is None:
            return FileRole.OTHER
        role = folder.role(path)
        if text is None and path.is_file():
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                text = None
        if role is FileRole.SKILL:
            kind = served_kind(path) or kind_of(path)
            document = document_from_text(path, text, kind) if text is not None else None
            if document is None:
                folder.index.remove(path)
            else:
                folder.index.upsert(document)
        elif role is FileRole.MANIFEST:
            if text is None:
                folder.manifest, folder.manifest_problems = Manifest(), []
            else:
                import hashlib

                registry, problems = parse_tool_manifest(text, str(path))
                digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
                folder.manifest, folder.manifest_problems = Manifest(registry, digest, path), problems
        elif role is FileRole.QUERIES:
            folder.cases, folder.query_problems = parse_query_file(text, str(path)) if text else ([], [])
        elif role is FileRole.CONFIG:
            if (
                path.name == "pyproject.toml"
                and "skills-lsp" not in (text or "")
                and folder.config.source != path
            ):
                return FileRole.OTHER  # a pyproject without our table changes nothing
            self.load_folder(folder.root)
            return role
        folder.changed()
        return role

    # --- analysis -------------------------------------------------------------------------------

    def profile_for(self, folder: Folder, path: Path) -> Profile:
        kind = served_kind(path) or kind_of(path)
        return resolve_profile(path, kind, None, folder.config)

    def findings(self, path: Path, text: str) -> tuple[Document | None, list[Finding]]:
        """The findings for a document's current text (an open buffer)."""
        folder = self.folder_for(path)
        if folder is None:
            return None, []
        role = folder.role(path)
        if role is FileRole.MANIFEST:
            return None, parse_tool_manifest(text, str(path))[1]
        if role is FileRole.QUERIES:
            if folder.query_parse[0] != text:  # re-checked on every skill edit: parse once per text
                folder.query_parse = (text, parse_query_file(text, str(path))[1])
            return None, folder.query_parse[1] + self._query_failures(folder, path)
        if role is FileRole.CONFIG:
            if path.name == "pyproject.toml" and "skills-lsp" not in text:
                return None, []
            return None, parse_config(text, path)[1]
        if role is not FileRole.SKILL:
            return None, []
        doc = parse_text(text)
        kind = served_kind(path) or kind_of(path)
        result = check_document(
            doc,
            path,
            kind=kind,
            config=folder.config,
            tools=folder.manifest.registry,
            manifest_path=folder.manifest.path,
        )
        return doc, result.findings + self._duplicates(folder, path, result.context)

    def _duplicates(self, folder: Folder, path: Path, ctx: Any) -> list[Finding]:
        """The workspace rules' findings for this buffer (SK701), as `check` computes them: this
        buffer's name against the other indexed skills of that name."""
        if ctx.kind is FileKind.CONVENTION:
            return []
        me = named_skill(ctx, SkillFile(str(path), ctx.kind))
        if me.name is None:
            return []
        others = [
            NamedSkill(str(d.path), d.kind, d.name, Range.point(0, 0))
            for d in folder.index.all_named(me.name)
            if d.kind is not FileKind.CONVENTION and not _same(d.path, path)
        ]
        if not others:
            return []
        found = workspace_findings([me, *others], folder.config, ctx.profile.name)
        return [f for f in found if f.path == str(path)]

    def _query_failures(self, folder: Folder, path: Path) -> list[Finding]:
        results = folder.results()
        return routing_findings(path, RoutingRun(results, folder.scorer_problem))
