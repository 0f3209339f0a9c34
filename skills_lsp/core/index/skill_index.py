"""The skill index: adk-skill 0.6.0's `load_skill_index` exactly, plus what the crate lacks.

- `load_skill_index(root)` and `load_skill_index_with_extras(root, extras)` reproduce the crate:
  its discovery, strict UTF-8 reads, silent skipping of unreadable or unparsable files, SHA-256 of
  the raw bytes, ids `normalize_id(name) + "-" + hash[:12]`, order by (name, path).
- `SkillIndex` also supports incremental `upsert` and `remove` (the crate has no reload); after any
  sequence of changes it equals a fresh build.
- `load_workspace_index(root)` adds the agentskills `<name>/SKILL.md` skills our discovery finds,
  read leniently (an `allowed-tools` string is split as the spec writes it).
"""

from __future__ import annotations

import bisect
import contextlib
import hashlib
import os
import posixpath
import re
import string
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, fields
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from skills_lsp.core import forked
from skills_lsp.core.errors import SkillError
from skills_lsp.core.files.discovery import (
    DEFAULT_AGENT_SKILL_ROOTS,
    DEFAULT_MAX_DEPTH,
    Visited,
    discover_instruction_files,
    discover_instruction_share,
    discover_skill_files,
    discover_workspace,
    has_support_component,
    kind_of,
    path_sort_key,
    regular_files,
    skill_folder_path,
    walk_order,
    walk_top,
)
from skills_lsp.core.files.frames import FrameFolder
from skills_lsp.core.files.ignore import IgnoreFilter
from skills_lsp.core.index.document_path import path_text as path_text  # re-exported
from skills_lsp.core.index.documents_digest import documents_digest
from skills_lsp.core.memory import no_collection
from skills_lsp.core.model import FileKind
from skills_lsp.core.parse.allowed_tools import split_tools
from skills_lsp.core.parse.frontmatter import (
    Document,
    parse_text,
    read_limited,
    read_open_file,
    to_python,
    when_to_use,
)
from skills_lsp.core.parse.skill_parser import (
    ParsedSkill,
    parse_instruction_markdown,
    parse_skill_markdown,
    rust_trim,
)

Derived = TypeVar("Derived")


_NOT_IN_ID = re.compile(r"[^A-Za-z0-9 _-]+")
_TO_ID = str.maketrans({**{c: c.lower() for c in string.ascii_uppercase}, " ": "-", "_": "-"})


def normalize_id(value: str) -> str:
    """The crate's id stem: ASCII letters and digits lowercased, space/`-`/`_` to `-`, the rest dropped."""
    return _NOT_IN_ID.sub("", value).translate(_TO_ID) or "skill"


@dataclass
class SkillSummary:
    """A skill without its body (the crate's `SkillSummary`)."""

    id: str
    name: str
    description: str
    version: str | None
    license: str | None
    compatibility: str | None
    tags: list[str]
    allowed_tools: list[str]
    references: list[str]
    trigger: bool
    hint: str | None
    metadata: dict[str, Any]
    path: Path
    hash: str
    last_modified: int | None
    triggers: list[str]


@dataclass
class SkillDocument:
    """An indexed skill (the crate's `SkillDocument`), in the crate's serde field order."""

    id: str
    name: str
    description: str
    version: str | None
    license: str | None
    compatibility: str | None
    tags: list[str]
    allowed_tools: list[str]
    references: list[str]
    trigger: bool
    hint: str | None
    metadata: dict[str, Any]
    body: str
    path: Path
    hash: str
    last_modified: int | None
    triggers: list[str]
    kind: FileKind = field(default=FileKind.FLAT_SKILL, compare=False)
    # Not the crate's: Claude Code lists it with the description (its skill-listing budget).
    when_to_use: str = field(default="", compare=False)

    if not TYPE_CHECKING:  # kept from mypy: it would type every unknown attribute as Any

        def __getattr__(self, name):
            # Only reached for an attribute that is not set: the body of a document from the
            # persistent store, read from its file each time it is asked for and not kept (store.py:
            # 20,000 bodies are most of an index's memory, and few are read twice); its path, made
            # from the text the store keeps when first asked for (path_text).
            state = self.__dict__
            if name == "path" and "_path_text" in state:
                path = state["path"] = Path(state["_path_text"])
                return path
            loader = state.get("_body_loader")
            if name == "body" and loader is not None:
                return loader(self)
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

        def __getstate__(self):
            state = dict(self.__dict__)
            if state.pop("_body_loader", None) is not None:
                state["body"] = self.body
            if state.pop("_path_text", None) is not None:
                state["path"] = self.path
            return state

    def summary(self) -> SkillSummary:
        return SkillSummary(**{f.name: getattr(self, f.name) for f in fields(SkillSummary)})

    def to_json(self) -> dict[str, Any]:
        data = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("kind", "when_to_use")}
        data["path"] = str(self.path)
        return data

    def sort_key(self) -> tuple[str, tuple[str, ...]]:
        return (self.name, path_sort_key(self.path))

    def engineer_prompt_block(self, max_chars: int) -> str:
        """`[skill:<name>]`, the body cut to `max_chars` characters, `[/skill]` (no marker)."""
        return f"[skill:{self.name}]\n{self.body[:max_chars]}\n[/skill]"

    def engineer_instruction(self, max_chars: int, active_tools: Sequence[str]) -> str:
        """The ContextCoordinator's system instruction for this skill."""
        body = self.body
        if len(body) > max_chars:
            body = body[:max_chars] + "\n[... truncated]"
        parts = [f"[skill:{self.name}]", f"# {self.name}\n{self.description}"]
        if active_tools:
            parts.append(f"You have access to the following tools: {', '.join(active_tools)}.")
        parts += [f"## Instructions\n{body}", "[/skill]"]
        return "\n\n".join(parts)


def document_from_parsed(
    parsed: ParsedSkill,
    path: Path,
    data: bytes,
    kind: FileKind = FileKind.FLAT_SKILL,
    mtime: float | None = None,
) -> SkillDocument:
    """`mtime`: the file's, when the caller has it (else it is read now; None if that fails)."""
    digest = hashlib.sha256(data).hexdigest()
    if mtime is None:
        with contextlib.suppress(OSError):
            mtime = os.stat(path).st_mtime
    # Before 1970 (or unknown): None, as the crate.
    last_modified = int(mtime) if mtime is not None and mtime >= 0 else None
    return SkillDocument(
        id=f"{normalize_id(parsed.name)}-{digest[:12]}",
        name=parsed.name,
        description=parsed.description,
        version=parsed.version,
        license=parsed.license,
        compatibility=parsed.compatibility,
        tags=parsed.tags,
        allowed_tools=parsed.allowed_tools,
        references=parsed.references,
        trigger=parsed.trigger,
        hint=parsed.hint,
        metadata=parsed.metadata,
        body=parsed.body,
        path=path,
        hash=digest,
        last_modified=last_modified,
        triggers=parsed.triggers,
        kind=kind,
    )


def read_crate_document(path: Path) -> SkillDocument | None:
    """One file as the crate indexes it, or None where the crate skips it (any read, UTF-8 or
    parse error)."""
    try:
        data, mtime = _read_whole(path)
        content = data.decode("utf-8")
        parsed = parse_instruction_markdown(path, content)
    except (OSError, UnicodeDecodeError, SkillError):
        return None
    return document_from_parsed(parsed, path, data, mtime=mtime)


def _read_whole(path: Path) -> tuple[bytes, float]:
    """A file's bytes and its mtime, from one open (not `read_bytes` and a `stat`: a cold index
    reads 15,000 files, and the open file object and the second path lookup were a third of it)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        info = os.fstat(fd)
        return read_open_file(fd, info.st_size), info.st_mtime
    finally:
        os.close(fd)


class SkillIndex:
    """Documents sorted by (name, path), with the crate's lookups and incremental updates."""

    def __init__(
        self,
        documents: Iterable[SkillDocument] = (),
        *,
        ordered: bool = False,
        path_ordered: bool = False,
        normalised: Sequence[str] | None = None,
    ) -> None:
        """`ordered`: the documents already are in (name, path) order (the persistent store
        keeps that order), so neither sorted nor keyed until a change needs the keys.
        `path_ordered`: they are in path order (as discovery lists them), so a stable sort by name
        puts them in (name, path) order without a path key each. `normalised`, with `ordered`:
        `os.path.normpath` of each document's path, in their order (the store's own keys), so that
        the path table is made without reading a path (normalised_paths)."""
        if path_ordered:
            documents, ordered, normalised = sorted(documents, key=_name_of), True, None
        self._docs = list(documents) if ordered else sorted(documents, key=SkillDocument.sort_key)
        self._sort_keys: list[tuple[str, tuple[str, ...]]] | None = (
            None if ordered else [d.sort_key() for d in self._docs]
        )
        # normalised path -> documents read from it, so an editor's update is not a full scan;
        # made on first use (_paths): a CLI's one query never asks, and 15,000 paths normalised
        # were 0.05 s of a cold index
        self._by_path: dict[str, list[SkillDocument]] | None = None
        # Those normalised paths in index order, made with _by_path and kept with it: SK703's listing
        # labels each skill with its path (server/folder.py) from these, not normalising them again.
        self._normalised: list[str] | None = None
        if ordered and normalised is not None:
            if len(normalised) != len(self._docs):
                raise ValueError(f"{len(normalised)} normalised paths for {len(self._docs)} documents")
            self._normalised = list(normalised)  # a copy: the index changes it with the documents
        self._paths_lock = threading.Lock()  # not _derived_lock: a scorer's build holds that for seconds
        self._by_name: dict[str, list[SkillDocument]] = {}
        for doc in self._docs:
            self._by_name.setdefault(doc.name, []).append(doc)
        self.version = 0  # bumped on every change; search structures rebuild or follow it
        self._listeners: list[Any] = []
        # Structures built from the index that follow its changes (scorers' searches), by key.
        self._derived: dict[str, Any] = {}
        # Re-entrant: building hybrid's search builds bm25f's and semantic's.
        self._derived_lock = threading.RLock()
        # Where structures built from this index may be kept between runs (store.py); None: nowhere.
        self.cache_dir: Path | None = None
        self.frames: FrameFolder | None = None  # the frames in cache_dir (store.py)
        # What its documents rest on, when they are the store's saved ones (store.Stamps).
        self.stamps: Any = None
        # (version, documents_digest of its documents then): made once per version, or given by
        # the store that saved it with them.
        self.digest: tuple[int, str] | None = None

    def _paths(self) -> dict[str, list[SkillDocument]]:
        table = self._by_path
        if table is None:
            with self._paths_lock:  # two threads' first lookups make it once
                if self._by_path is None:
                    docs = self._docs
                    normalised = self._normalised
                    if normalised is None:
                        normalised = _normalised(list(map(path_text, docs)))
                    made = dict(zip(normalised, ([doc] for doc in docs), strict=True))
                    if len(made) < len(docs):  # a path read twice: each of its documents in its list
                        made = {}
                        for key, doc in zip(normalised, docs, strict=True):
                            made.setdefault(key, []).append(doc)
                    self._normalised, self._by_path = normalised, made
                table = self._by_path
        return table

    def normalised_paths(self) -> list[str]:
        """`os.path.normpath` of each document's path, in index order (the list the index keeps:
        not to be changed)."""
        self._paths()
        assert self._normalised is not None
        return self._normalised

    # the crate's API
    def is_empty(self) -> bool:
        return not self._docs

    def len(self) -> int:
        return len(self._docs)

    def __len__(self) -> int:
        return len(self._docs)

    def __iter__(self) -> Iterator[SkillDocument]:
        return iter(self._docs)

    def skills(self) -> list[SkillDocument]:
        return list(self._docs)

    def summaries(self) -> list[SkillSummary]:
        return [d.summary() for d in self._docs]

    def find_by_name(self, name: str) -> SkillDocument | None:
        docs = self._by_name.get(name)
        return min(docs, key=SkillDocument.sort_key) if docs else None

    def all_named(self, name: str) -> list[SkillDocument]:
        """Every document with this name, in index order."""
        return sorted(self._by_name.get(name, ()), key=SkillDocument.sort_key)

    def find_by_id(self, skill_id: str) -> SkillDocument | None:
        return next((d for d in self._docs if d.id == skill_id), None)

    # past the crate
    def find_by_path(self, path: str | os.PathLike[str]) -> SkillDocument | None:
        """The document read from `path` (`./a/b/` and `a/b` name the same file)."""
        docs = self._paths().get(os.path.normpath(path))
        return min(docs, key=SkillDocument.sort_key) if docs else None

    def remove(self, path: str | os.PathLike[str]) -> SkillDocument | None:
        """Drop the document read from `path`, if any."""
        paths = self._paths()
        docs = paths.get(os.path.normpath(path))
        if not docs:
            return None
        doc = min(docs, key=SkillDocument.sort_key)
        at = self._bisect(bisect.bisect_left, doc.sort_key())
        while self._docs[at] is not doc:
            at += 1
        del self._docs[at]
        if self._sort_keys is not None:
            del self._sort_keys[at]
        assert self._normalised is not None  # made with `paths`
        del self._normalised[at]
        _drop(docs, doc)
        if not docs:
            del paths[os.path.normpath(path)]
        named = self._by_name[doc.name]
        _drop(named, doc)
        if not named:
            del self._by_name[doc.name]
        self._changed("remove", doc)
        return doc

    def upsert(self, document: SkillDocument) -> None:
        """Add a document, replacing the one read from the same path."""
        self.remove(document.path)
        paths = self._paths()  # made before the insert below: made after, it would hold `document` twice
        normalised = os.path.normpath(document.path)
        key = document.sort_key()
        at = self._bisect(bisect.bisect_right, key)
        self._docs.insert(at, document)
        if self._sort_keys is not None:
            self._sort_keys.insert(at, key)
        assert self._normalised is not None
        self._normalised.insert(at, normalised)
        paths.setdefault(normalised, []).append(document)
        self._by_name.setdefault(document.name, []).append(document)
        self._changed("add", document)

    def _bisect(self, search: Callable[..., int], key: tuple[str, tuple[str, ...]]) -> int:
        """Where `key` goes among the documents' sort keys. After an ordered load the keys are not
        made: the search makes the few it compares (an editor's first change at start-up)."""
        if self._sort_keys is None:
            return search(self._docs, key, key=SkillDocument.sort_key)
        return search(self._sort_keys, key)

    def derived(self, key: str, build: Callable[[SkillIndex], Derived]) -> Derived:
        """The structure under `key` built from this index, built on first use (once, even when
        two threads ask at once) and then kept: it subscribes to the index to follow it."""
        found: Derived | None = self._derived.get(key)
        if found is None:
            with self._derived_lock:
                if key not in self._derived:
                    self._derived[key] = build(self)
                found = self._derived[key]
        assert found is not None
        return found

    def has_derived(self, key: str) -> bool:
        return key in self._derived

    def documents_digest(self) -> str:
        """documents_digest of its documents in order, made once per version."""
        known = self.digest
        if known is None or known[0] != self.version:
            known = self.digest = (self.version, documents_digest(self._docs))
        return known[1]

    def forget_derived(self, key: str) -> None:
        """Drop a built structure (it is built again on next use)."""
        with self._derived_lock:
            self._derived.pop(key, None)

    def subscribe(self, listener: Any) -> None:
        """`listener(change, document)` is called after each upsert or remove."""
        self._listeners.append(listener)

    def _changed(self, change: str, document: SkillDocument) -> None:
        self.version += 1
        for listener in self._listeners:
            listener(change, document)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SkillIndex) and self._docs == other._docs

    __hash__ = None  # type: ignore[assignment]


# What `os.path.normpath` changes in a POSIX path, seen in texts each between two NULs (which no
# path holds): an empty text, a `.` or `..` component, an empty component (`//`, a trailing `/`).
_NOT_NORMALISED = ("\0\0", "//", "/\0", "/./", "/../", "\0./", "\0../", "/.\0", "/..\0", "\0.\0", "\0..\0")


def _normalised(texts: list[str]) -> list[str]:
    """`os.path.normpath` of each path text. On POSIX, when a search in C over them all finds none
    it would change (the store's paths were normalised when found), the texts themselves: 16,000
    calls were a third of the path table's time at a warm start."""
    if os.path is posixpath:
        joined = "\0" + "\0".join(texts) + "\0"
        if joined.count("\0") == len(texts) + 1 and not any(odd in joined for odd in _NOT_NORMALISED):
            return texts
    return list(map(os.path.normpath, texts))


def _name_of(document: SkillDocument) -> str:
    return document.name


def _drop(documents: list[SkillDocument], document: SkillDocument) -> None:
    """Remove `document` itself from `documents`. Not `list.remove`: it compares documents by
    value, which reads the bodies of stored documents that share a name (every body, from disk)."""
    del documents[next(i for i, d in enumerate(documents) if d is document)]


MIN_PATHS_PER_JOB = 500  # below this a child process costs more than it saves
# The parent's share of the paths with one child (more children: each child's share is that of
# one). The parent also unpickles what the child read (0.1-0.2 s for the flat corpus), but a child
# pays for its memory afresh (page faults, in system time) where the parent reuses its own: at
# 15,000 files, 0.5 left the child last, 0.55-0.6 the two about even (wall 1.64-1.90 s on a quiet
# machine against 1.74-2.24 s with 0.5, in the same rounds).
PARENT_SHARE = 0.55


def read_documents(
    paths: Sequence[Path], read: Callable[[Path], SkillDocument | None], jobs: int | None = None
) -> list[SkillDocument]:
    """`read_each`, without the Nones."""
    return [doc for doc in read_each(paths, read, jobs) if doc is not None]


def read_each(
    paths: Sequence[Path],
    read: Callable[[Path], SkillDocument | None],
    jobs: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    each: Callable[[SkillDocument], None] | None = None,
) -> list[SkillDocument | None]:
    """`read(path)` (a document of that path, or None) of every path, in the order of `paths`;
    with `jobs` > 1 (default: the idle CPUs) runs of the paths are read in forked processes
    (forked.py) while this one reads the first. The result is the same whatever the number of
    jobs. `progress(done, total)` is called about PROGRESS_STEPS times, from this process's run.
    `each(document)` is called in this process as soon as a document is here (read here, or
    unpacked from a child), before the next: the store spools its body out of memory then."""
    jobs = forked.idle_jobs() if jobs is None else jobs
    jobs = min(jobs, len(paths) // MIN_PATHS_PER_JOB)
    unwrapped = read  # what children run: `each` belongs to this process
    if each is not None:
        read = partial(_then, read, each)
    if jobs <= 1 or not forked.may_fork():
        return _read_run(paths, read, progress, len(paths))
    first = int(len(paths) * PARENT_SHARE / (PARENT_SHARE + (1 - PARENT_SHARE) * (jobs - 1)))
    step = -(-(len(paths) - first) // (jobs - 1))
    starts = range(first, len(paths), step)
    waiting = [forked.start(partial(_packed_run, paths, at, at + step, unwrapped)) for at in starts]
    done = 0  # children waited for
    try:
        found = _read_run(paths[:first], read, progress, len(paths))
        for at, result in zip(starts, waiting, strict=True):
            done += 1  # a result is called once, even if interrupted
            packed = result(True)
            if packed is None:  # a failed child: read here
                found += map(read, paths[at : at + step])
                continue
            run: list[SkillDocument | None] = [None] * (min(at + step, len(paths)) - at)
            pending: list[Any] = packed
            for number, (index, values) in enumerate(packed):
                pending[number] = None  # the tuple (and its body) goes with the document
                doc = run[index - at] = _unpacked(values, paths[index])
                del values
                if each is not None:
                    each(doc)
            found += run
    except BaseException:  # an error here, or an interrupt: no child is left running
        for result in waiting[done:]:
            result(False)
        raise
    return found


def _then(
    read: Callable[[Path], SkillDocument | None], each: Callable[[SkillDocument], None], path: Path
) -> SkillDocument | None:
    doc = read(path)
    if doc is not None:
        each(doc)
    return doc


PROGRESS_STEPS = 50


def _read_run(
    paths: Sequence[Path],
    read: Callable[[Path], SkillDocument | None],
    progress: Callable[[int, int], None] | None,
    total: int,
) -> list[SkillDocument | None]:
    """`read` of each path; `progress` told of the share of `total` done (a forked run's share
    of it is reported as done at the same pace)."""
    if progress is None:
        return list(map(read, paths))
    found: list[SkillDocument | None] = []
    step = max(1, len(paths) // PROGRESS_STEPS)
    for number, path in enumerate(paths):
        if number % step == 0:
            progress(number * total // max(1, len(paths)), total)
        found.append(read(path))
    return found


# A document on its way from a child: its fields but the path, which the parent already holds (a
# path pickled is a path parsed again; a tuple is the cheapest thing to unpickle).
_PACKED_FIELDS = tuple(f.name for f in fields(SkillDocument) if f.name != "path")
_PATH_AT = [f.name for f in fields(SkillDocument)].index("path")


def _packed_run(
    paths: Sequence[Path], start: int, stop: int, read: Callable[[Path], SkillDocument | None]
) -> list[tuple[int, tuple[Any, ...]]]:
    packed = []
    for index in range(start, min(stop, len(paths))):
        doc = read(paths[index])
        if doc is not None:
            packed.append((index, _packed(doc)))
    return packed


def _packed(document: SkillDocument) -> tuple[Any, ...]:
    return tuple(getattr(document, name) for name in _PACKED_FIELDS)


def _unpacked(values: tuple[Any, ...], path: Path) -> SkillDocument:
    return SkillDocument(*values[:_PATH_AT], path, *values[_PATH_AT:])  # type: ignore[call-arg]


def load_skill_index(root: str | os.PathLike[str], jobs: int | None = None) -> SkillIndex:
    """The crate's index of `root`: skill files and convention files (raises InvalidSkillsRoot).
    `jobs`: processes that read the files (read_documents; a big `.skills/` is walked by two,
    _read_split)."""
    # No cycle collection meanwhile: the crate's reading leaves next to no cycles (about 110
    # objects in 3,000 files, from the exceptions of files it skips), and each collection walks
    # every document read so far: 0.45-0.55 s of 2.5-3.0 s at 15,000 skills.
    with no_collection():
        documents = _read_split(root, jobs)
        if documents is None:
            paths = discover_instruction_files(root)  # in path order, which read_documents keeps
            documents = read_documents(paths, read_crate_document, jobs)
        return SkillIndex(documents, path_ordered=True)


def _read_split(root: str | os.PathLike[str], jobs: int | None) -> list[SkillDocument] | None:
    """The crate's documents of `root` in path order, the walk itself shared with one forked
    child: when `jobs` (default: the idle CPUs) is over 1 and `.skills/` holds 2 x
    MIN_PATHS_PER_JOB entries or more, the child walks and reads the last of its entries while
    this process walks and reads the rest of the tree. None when that does not apply (then the
    files are found here and their reading shared, read_each). The walk was 0.3 s of a
    15,000-file index that only one process did."""
    jobs = forked.idle_jobs() if jobs is None else jobs
    if jobs <= 1 or not forked.may_fork():
        return None
    folder = skill_folder_path(root, ".skills")
    top = walk_top(root)
    try:
        # Names sort as their paths do (walk_order), so each share is one run of the path order.
        entries = sorted(os.scandir(folder), key=_entry_name)
        if len(entries) < 2 * MIN_PATHS_PER_JOB:
            return None
        way_in = [entry for entry in os.scandir(top) if entry.name == ".skills"]
    except OSError:  # not listable: the walk of one process reports it as it always has
        return None
    cut = int(len(entries) * PARENT_SHARE)
    parent_listings = {folder: entries[:cut]}
    # The child sees only its entries: the root's listing leads it to `.skills/` alone, and the
    # other skill folder is empty to it.
    child_listings = {folder: entries[cut:], top: way_in, skill_folder_path(root, ".claude/skills"): []}
    child = forked.start(partial(_walked_share, root, child_listings))
    try:
        paths = discover_instruction_share(root, parent_listings)
        found = list(map(read_crate_document, paths))
    except BaseException:  # an error here, or an interrupt: no child is left running
        child(False)
        raise
    packed = child(True)  # (called once: interrupted, it stops the child itself)
    if packed is None:  # a failed child: its share done here
        packed = _walked_share(root, child_listings)
    if not packed:
        return [doc for doc in found if doc is not None]
    # The child's documents are one run of the path order (`.skills/`'s last entries, after this
    # process's), and files outside `.skills/` may sort on either side of them. walk_order is
    # POSIX's order, which holds here: forking needs Linux. Path() drops a leading `./` alike
    # from every path, which keeps their order.
    first = walk_order(packed[0][0])
    at = bisect.bisect_left(paths, first, key=lambda path: walk_order(str(path)))
    merged = found[:at] + [_unpacked(values, Path(path)) for path, values in packed] + found[at:]
    return [doc for doc in merged if doc is not None]


def _entry_name(entry: os.DirEntry[str]) -> str:
    return entry.name


def _walked_share(
    root: str | os.PathLike[str], listings: dict[str, list[os.DirEntry[str]]]
) -> list[tuple[str, tuple[Any, ...]]]:
    """The crate's documents of the share of the walk `listings` gives, each as (its path, its
    fields but the path: _unpacked)."""
    packed = []
    for path in discover_instruction_share(root, listings):
        doc = read_crate_document(path)
        if doc is not None:
            packed.append((str(path), _packed(doc)))
    return packed


def _project_local(path: Path, root: Path) -> bool:
    parts = path_sort_key(path)
    return any(
        parts[: len(p)] == p
        for p in (path_sort_key(root / ".skills"), path_sort_key(root / ".claude/skills"))
    )


def load_skill_index_with_extras(
    root: str | os.PathLike[str], extra_dirs: Sequence[str | os.PathLike[str]]
) -> SkillIndex:
    """The crate's index with extra skill folders: documents are de-duplicated by name in path
    order, a project-local one (under `root/.skills` or `root/.claude/skills`) replacing an
    earlier non-local one."""
    base = Path(root)
    paths = discover_instruction_files(base)
    for extra in extra_dirs:
        paths.extend(discover_skill_files_in(Path(extra)))
    ordered = sorted(set(paths), key=path_sort_key)
    kept: dict[str, SkillDocument] = {}
    for path in ordered:
        doc = read_crate_document(path)
        if doc is None:
            continue
        current = kept.get(doc.name)
        if current is None or (_project_local(doc.path, base) and not _project_local(current.path, base)):
            kept[doc.name] = doc
    return SkillIndex(kept.values())


def discover_skill_files_in(folder: Path) -> list[Path]:
    """Skill files of an extra folder (the crate walks it like `.skills/`)."""
    if not folder.is_dir():
        return []
    found = [Path(e.path) for e in regular_files(folder)]
    return [p for p in found if p.suffix == ".md" and not has_support_component(p)]


# --- the workspace index: every layout ------------------------------------------------------------


def _lenient_strings(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, list):
        return [t for t in (rust_trim(str(v)) for v in value if v is not None) if t]
    return split_tools(str(value))


def parsed_from_document(doc: Document) -> ParsedSkill | None:
    """A SKILL.md read the agentskills way, leniently: None without a usable name and description."""
    if doc.root is None or doc.root.kind != "mapping" or doc.close_line is None:
        return None
    values: dict[str, Any] = {}
    for pair in doc.pairs:
        values.setdefault(pair.name, pair.value)

    def text(key: str) -> str | None:
        node = values.get(key)
        if node is None or node.kind != "scalar" or node.is_null:
            return None
        return str(node.value)

    name = rust_trim(text("name") or "")
    description = rust_trim(text("description") or "")
    if not name or not description:
        return None
    metadata_node = values.get("metadata")
    metadata = to_python(metadata_node) if metadata_node is not None else {}
    tools_node = values.get("allowed-tools")
    tags_node = values.get("tags")
    return ParsedSkill(
        name=name,
        description=description,
        version=text("version"),
        license=text("license"),
        compatibility=text("compatibility"),
        tags=_lenient_strings(to_python(tags_node)) if tags_node is not None else [],
        allowed_tools=_lenient_strings(to_python(tools_node)) if tools_node is not None else [],
        metadata=metadata if isinstance(metadata, dict) else {},
        body=doc.body,
    )


def document_from_text(path: Path, text: str, kind: FileKind) -> SkillDocument | None:
    """A workspace-index document from text (an editor buffer): agentskills files leniently,
    the rest as the crate reads them; None where the file is not a usable skill."""
    data = text.encode("utf-8")
    if kind is not FileKind.AGENT_SKILL:
        try:
            crate = parse_instruction_markdown(path, text)
        except SkillError:
            return None
        return document_from_parsed(crate, path, data, kind)
    doc = parse_text(text, ranges=False)  # only its values are kept
    parsed = parsed_from_document(doc)
    if parsed is None:
        try:  # a SKILL.md the crate itself can read still belongs in the index
            parsed = parse_skill_markdown(path, text)
        except SkillError:
            return None
    document = document_from_parsed(parsed, path, data, kind)
    document.when_to_use = when_to_use(doc)
    return document


def read_workspace_document(path: Path, kind: FileKind) -> SkillDocument | None:
    """One file of the workspace index: agentskills files leniently, the rest as the crate does."""
    if kind is not FileKind.AGENT_SKILL:
        doc = read_crate_document(path)
        if doc is not None:
            doc.kind = kind
        return doc
    try:
        text = read_limited(path).decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    return document_from_text(path, text, kind)


def load_workspace_index(
    root: str | os.PathLike[str],
    roots: Sequence[str] = DEFAULT_AGENT_SKILL_ROOTS,
    max_depth: int = DEFAULT_MAX_DEPTH,
    ignore: IgnoreFilter | None = None,
    jobs: int | None = None,
) -> SkillIndex:
    """Every skill of a workspace in one index: agentskills, adk-skill and convention files;
    without what `ignore` leaves out (`.gitignore`, the config's `exclude`, ...). `jobs`: processes
    that read the files (read_documents)."""
    files = workspace_files(root, roots, max_depth, ignore)
    paths = [Path(p) for p in files]
    kinds = dict(zip(paths, files.values(), strict=True))
    return SkillIndex(read_documents(paths, lambda path: read_workspace_document(path, kinds[path]), jobs))


def workspace_files(
    root: str | os.PathLike[str],
    roots: Sequence[str] = DEFAULT_AGENT_SKILL_ROOTS,
    max_depth: int = DEFAULT_MAX_DEPTH,
    ignore: IgnoreFilter | None = None,
    visited: Visited | None = None,
) -> dict[str, FileKind]:
    """The files the workspace index reads, by normalised path, with their kinds (`visited`:
    see discovery.Visited)."""
    found = discover_workspace(root, roots, max_depth, ignore, visited)
    files = {os.path.normpath(f.path): f.kind for f in found}
    try:  # everything the crate itself indexes is in too (e.g. convention files in references/)
        for path in discover_instruction_files(root, visited):
            if ignore is not None and ignore.active and ignore.ignored(path):
                continue
            files.setdefault(os.path.normpath(path), kind_of(path))
    except SkillError:
        pass
    return files


_ = discover_skill_files  # the crate's discovery, re-exported for callers of this module
