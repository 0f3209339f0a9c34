"""The persistent workspace index: what `index`, `select`, `prompt`, `test`, `eval` and the
language server read instead of parsing every skill again.

Kept in the cache folder `check` uses (`default_cache_dir`), in a folder per workspace root
(`store_dir`), one file per structure, each a frame (`files.frames`: checked, never trusted when
truncated, corrupt or of another version, written atomically) keyed by the format, the package
version and the document schema.

The document store keys each file by its path, with its (size, mtime in ns, kind) stamp and the
SHA-256 of its bytes: an unchanged stamp reuses the document without reading the file; a changed
stamp with the same content reuses it too (only `last_modified` follows the new mtime). As in
git's index, a file modified in the same clock tick as the previous save could keep its stamp, so
stamps that recent are never trusted on their own: such a file is hashed again.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import io
import os
import tempfile
import threading
import time
import weakref
import zlib
from array import array
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from skills_lsp._version import __version__
from skills_lsp.core.files.cache import make_cache_folder
from skills_lsp.core.files.cache import store_dir as store_dir  # re-exported
from skills_lsp.core.files.discovery import DEFAULT_AGENT_SKILL_ROOTS, DEFAULT_MAX_DEPTH, Visited
from skills_lsp.core.files.frames import MAGIC as MAGIC  # re-exported: the scorers save frames too
from skills_lsp.core.files.frames import (
    RACY_NS,
    FrameFolder,
    folders_hold,
    listing_holds,
    listing_trusted,
    needed_probes,
    outside,
    probes_hold,
    read_head,
    stamps_hold,
    written_with,
)
from skills_lsp.core.files.frames import read_frame as read_frame
from skills_lsp.core.files.frames import write_frame as write_frame
from skills_lsp.core.files.ignore import IgnoreFilter
from skills_lsp.core.files.stats_child import stats_in_child
from skills_lsp.core.files.stats_child import stopped as stats_child_stopped
from skills_lsp.core.index.skill_index import (
    SkillDocument,
    SkillIndex,
    path_text,
    read_each,
    read_workspace_document,
    workspace_files,
)
from skills_lsp.core.memory import no_collection
from skills_lsp.core.model import FileKind
from skills_lsp.core.parse.frontmatter import read_limited

FORMAT = 3  # 2: documents without their bodies, which have a file of their own; 3: read one at a time
DOCUMENTS_FILE = "index-documents.bin"
BODIES_FILE = "index-bodies.bin"
LISTING_FILE = "index-listing.bin"
_COPY_BYTES = 1 << 20  # what a save copies of the spooled bodies at a time
# FileKind by value and back, by lookup: Enum's call and `.value` were 0.04 s of a warm load's 16,000 files.
_KINDS = {kind.value: kind for kind in FileKind}
_KIND_VALUES = {kind: kind.value for kind in FileKind}


def schema_key(kind: str) -> bytes:
    """What a frame of `kind` must have been written by: this format, this package version and
    the fields of a document (a development change of SkillDocument invalidates old frames)."""
    return f"{kind}/{_schema()}".encode()


def _schema() -> str:
    fields = ",".join(f.name for f in dataclasses.fields(SkillDocument))
    return f"{FORMAT}/{__version__}/{fields}"


# One file's record: (size, mtime_ns, kind value, sha256 hex of its bytes or None, document or None)
Record = tuple[int, int, str, str | None, SkillDocument | None]
# A document as saved: its attributes without the body, the path as text.
_SavedRecord = tuple[int, int, str, str | None, dict[str, Any] | None]


def _saved(record: Record) -> _SavedRecord:
    size, mtime, kind, digest, doc = record
    if doc is None:
        return size, mtime, kind, digest, None
    state = {k: v for k, v in doc.__dict__.items() if k not in ("body", "_body_loader", "_path_text")}
    state["path"] = path_text(doc)
    return size, mtime, kind, digest, state


# Where a body lies in the bodies file: (offset after the table, length in bytes, CRC-32 of them).
_BodyEntry = tuple[int, int, int]


def write_bodies(path: Path, spool: _Spool) -> bool:
    """The bodies file: a frame whose payload is the table of where each body lies, then every
    body's UTF-8, so that one body is read without the others (168 million characters at 20,000
    skills: a language server keeps none of them in memory). The bodies are copied from `spool`,
    where they were written as their documents were read, in the same order and places."""

    def tail(handle: io.BufferedWriter) -> None:
        offset = 0
        while offset < spool.end:
            chunk = spool._read(offset, min(_COPY_BYTES, spool.end - offset))
            if not chunk:
                raise OSError("the spooled bodies are cut short")
            handle.write(chunk)
            offset += len(chunk)

    assert spool.table is not None
    return write_frame(path, schema_key("bodies"), spool.table, tail)


class _Bodies:
    """The bodies of a store's documents, read one at a time from their file (its table when the
    first one is asked for: a warm `select` over saved postings never asks). Keyed by (path,
    content hash), so bodies saved by another process for the same content serve as well. The file
    stays open while documents need it: one that replaces it does not move what is read. A body the
    file lacks or whose checksum fails (damaged meanwhile) is read from the skill's file again."""

    def __init__(self, file: Path) -> None:
        self.table: dict[tuple[str, str], _BodyEntry] | None = None
        self.start = 0  # where the bodies begin
        self.lock = threading.Lock()
        try:  # opened now (its table read on first use): the file of the documents' own load
            self.fd = os.open(file, os.O_RDONLY | getattr(os, "O_BINARY", 0))
        except OSError:
            self.fd = -1
        else:
            weakref.finalize(self, os.close, self.fd)

    def _open(self) -> None:
        """Read the table (checked against its SHA-256); an empty one when it is missing or damaged."""
        table: Any = None
        if self.fd >= 0:
            with os.fdopen(os.dup(self.fd), "rb") as handle:
                head = read_head(handle, schema_key("bodies"))
            if head is not None:
                table, self.start = head
        self.table = table if isinstance(table, dict) else {}

    def _read(self, offset: int, length: int) -> bytes:
        if hasattr(os, "pread"):
            return os.pread(self.fd, length, self.start + offset)
        with self.lock:  # no positional read (Windows): one seek and read at a time
            os.lseek(self.fd, self.start + offset, os.SEEK_SET)
            return os.read(self.fd, length)

    def __call__(self, doc: SkillDocument) -> str:
        if self.table is None:
            with self.lock:
                if self.table is None:
                    self._open()
        assert self.table is not None
        entry = self.table.get((path_text(doc), doc.hash))  # no Path made for the lookup
        if entry is not None and isinstance(entry, tuple) and len(entry) == 3:
            offset, length, crc = entry
            try:
                data = self._read(offset, length)
                if len(data) == length and zlib.crc32(data) == crc:
                    return data.decode("utf-8", "surrogatepass")
            except (OSError, UnicodeDecodeError, TypeError, ValueError):
                pass
        fresh = read_workspace_document(Path(doc.path), doc.kind)
        return fresh.body if fresh is not None else ""


class _Spool(_Bodies):
    """Bodies written to an unnamed temporary file in the cache folder as their documents are read,
    and read back from it, until the store is saved (then copied into the bodies file, whose
    table this is). A cold load of 16,000 skills held every body in memory until then, about
    130 MB of text at the peak of its memory. The file is made on the first body; where it
    cannot be, documents keep their bodies and the store is not saved (nor could its frames be)."""

    def __init__(self, folder: Path | None) -> None:
        self.table = {}
        self.start = 0
        self.end = 0  # bytes written
        self.lock = threading.Lock()
        self.fd = -1
        self.folder = folder

    def ready(self) -> bool:
        """Whether the file is there (made now if it is not yet)."""
        if self.fd < 0 and self.folder is not None:
            folder, self.folder = self.folder, None  # tried once
            try:
                folder.mkdir(parents=True, exist_ok=True)
                with tempfile.TemporaryFile(dir=folder) as handle:
                    self.fd = os.dup(handle.fileno())
            except OSError:
                return False
            weakref.finalize(self, os.close, self.fd)
        return self.fd >= 0

    def _write(self, data: bytes) -> bool:
        if hasattr(os, "pwrite"):
            return os.pwrite(self.fd, data, self.end) == len(data)
        with self.lock:  # no positional write (Windows): one seek and write at a time
            os.lseek(self.fd, self.end, os.SEEK_SET)
            return os.write(self.fd, data) == len(data)

    def keep(self, doc: SkillDocument) -> None:
        """Write `doc`'s body here (once per path and content) and read it from here from now on."""
        if not self.ready():
            return
        assert self.table is not None
        key = (path_text(doc), doc.hash)
        if key not in self.table:
            data = doc.body.encode("utf-8", "surrogatepass")
            try:
                if data and not self._write(data):
                    return
            except OSError:
                return
            self.table[key] = (self.end, len(data), zlib.crc32(data))
            self.end += len(data)
        doc.__dict__.pop("body", None)
        doc.__dict__["_body_loader"] = self


def _document(state: dict[str, Any], bodies: _Bodies) -> SkillDocument:
    """A saved document; its path is made when first asked for (skill_index.path_text)."""
    doc = SkillDocument.__new__(SkillDocument)
    state["_path_text"] = state.pop("path")
    state["_body_loader"] = bodies
    doc.__dict__ = state
    return doc


def _digest(path: str) -> str | None:
    try:
        return hashlib.sha256(read_limited(path)).hexdigest()
    except OSError:
        return None


class DocumentStore:
    """The documents of one workspace, by path, as last read (see the module doc)."""

    def __init__(self, cache_dir: Path | None) -> None:
        self.file = cache_dir / DOCUMENTS_FILE if cache_dir is not None else None
        self.records: dict[str, Record] = {}
        self.saved_ns = 0
        # The paths of the saved documents in their index's (name, path) order, and the digest
        # of those documents in that order (SkillIndex.documents_digest).
        self.order: list[str] | None = None
        self.digest: str | None = None
        if self.file is not None:
            with no_collection():  # 16,000 documents and their fields: nothing to collect
                self._load(self.file)
        self.reused = 0
        self.read = 0
        # The bodies of the documents read, out of memory until the store is saved (_Spool).
        self.spool = _Spool(self.file.parent if self.file is not None else None)

    def _load(self, file: Path) -> None:
        """The records, save time and order saved in `file`, when it holds a whole frame."""
        payload = read_frame(file, schema_key("documents"))
        if not isinstance(payload, dict) or not isinstance(payload.get("records"), dict):
            return
        bodies = _Bodies(file.parent / BODIES_FILE)
        try:
            self.records = {
                path: (size, mtime, kind, digest, None if state is None else _document(state, bodies))
                for path, (size, mtime, kind, digest, state) in payload["records"].items()
            }
        except (ValueError, TypeError, KeyError, AttributeError):  # not a frame this code wrote
            self.records = {}
        self.saved_ns = int(payload.get("saved_ns", 0))
        order = payload.get("order")
        self.order = order if isinstance(order, list) else None
        digest = payload.get("digest")
        self.digest = digest if isinstance(digest, str) else None

    def document(self, path: str, kind: FileKind) -> tuple[SkillDocument | None, Record | None]:
        """The document of `path` (reused when unchanged) and its new record (None: unreadable)."""
        return self.documents({path: kind}, jobs=1)[path]

    def documents(
        self,
        files: dict[str, FileKind],
        jobs: int | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> dict[str, tuple[SkillDocument | None, Record | None]]:
        """`document` of each file, in the order of `files`: those unchanged reused, the others
        read, on `jobs` processes (skill_index.read_each; default: the idle CPUs)."""
        # In the order of `files`: a file to read holds its place until it is read.
        found: dict[str, tuple[SkillDocument | None, Record | None]] = {}
        stamps: dict[str, tuple[int, int]] = {}  # of the files to read
        records, trusted_before = self.records, self.saved_ns - RACY_NS
        for path, kind in files.items():
            try:
                info = os.stat(path)
            except OSError:
                found[path] = (None, None)
                continue
            size, mtime = info.st_size, info.st_mtime_ns
            stamp = (size, mtime)
            old = records.get(path)
            # _reused's first case (the same stamp, older than the save), the warm load's 16,000
            # files, without a call each.
            if (
                old is not None
                and old[0] == size
                and old[1] == mtime
                and mtime < trusted_before
                and old[2] == _KIND_VALUES[kind]
            ):
                self.reused += 1
                found[path] = (old[4], old)
                continue
            reused = self._reused(path, kind, stamp)
            if reused is None:
                stamps[path] = stamp
                found[path] = (None, None)
            else:
                found[path] = reused
        if not stamps:
            return found  # a warm load: nothing to read
        unread = list(stamps)
        self.read += len(unread)
        paths = [Path(p) for p in unread]  # two spellings of one file are one Path: read both
        kinds = {path: files[p] for path, p in zip(paths, unread, strict=True)}
        done_before = len(files) - len(unread)

        def read_progress(done: int, total: int) -> None:
            if progress is not None:  # counted over all the files, the reused ones done first
                progress(done_before + done, done_before + total)

        # Each body spooled as soon as its document is here: not all 16,000 at once (150 MB).
        docs = read_each(
            paths, lambda p: read_workspace_document(p, kinds[p]), jobs, read_progress, self.spool.keep
        )
        for path, doc in zip(unread, docs, strict=True):
            digest = doc.hash if doc is not None else _digest(path)
            size, mtime = stamps[path]
            found[path] = (doc, (size, mtime, files[path].value, digest, doc))
        return found

    def _reused(
        self, path: str, kind: FileKind, stamp: tuple[int, int]
    ) -> tuple[SkillDocument | None, Record] | None:
        """The saved document of `path` and its record, when its content has not changed."""
        size, mtime = stamp
        old = self.records.get(path)
        if old is None or old[2] != _KIND_VALUES[kind]:
            return None
        same_stamp = old[0] == size and old[1] == mtime
        # Stamps within RACY_NS of the save are hashed again (see the module doc).
        if same_stamp and mtime < self.saved_ns - RACY_NS:
            self.reused += 1
            return old[4], old
        digest = _digest(path)
        if digest is None or digest != old[3]:
            return None
        self.reused += 1
        doc = old[4]
        if doc is not None and not same_stamp:
            seconds = mtime // 1_000_000_000
            doc = dataclasses.replace(doc, last_modified=seconds if mtime >= 0 else None)
        return doc, (size, mtime, kind.value, digest, doc)

    def save(self, records: dict[str, Record], order: list[str], digest: str | None = None) -> bool:
        """Save `records`, their documents in index `order` and those documents' digest (its
        documents_digest, kept with them: a warm load need not read 16,000 documents for it)."""
        if self.file is None:
            return False
        # The bodies first: a reader of the new documents finds their bodies (the old frame's
        # serve the documents that did not change, by content hash). Those not read this time
        # are spooled now, one at a time, from the old file.
        for record in records.values():
            if record[4] is not None:
                self.spool.keep(record[4])
        if not self.spool.ready() or not write_bodies(self.file.parent / BODIES_FILE, self.spool):
            return False
        # From now on each body is read from the file when asked for, not kept (see _Bodies).
        loader = _Bodies(self.file.parent / BODIES_FILE)
        for record in records.values():
            doc = record[4]
            if doc is not None:
                doc.__dict__.pop("body", None)
                doc.__dict__["_body_loader"] = loader
        self.records, self.order, self.digest = records, order, digest
        self.saved_ns = time.time_ns()
        saved = {path: _saved(record) for path, record in records.items()}
        payload = {"records": saved, "saved_ns": self.saved_ns, "order": order, "digest": digest}
        return write_frame(self.file, schema_key("documents"), payload)

    def ordered(self, records: dict[str, Record]) -> list[SkillDocument] | None:
        """The documents of `records` in the saved index order, when they are the saved documents
        (same paths, none read again); else None (they must be sorted)."""
        if self.read or self.order is None or records.keys() != self.records.keys():
            return None
        docs = []
        for path in self.order:
            record = records.get(path)
            if record is None or record[4] is None:
                return None
            docs.append(record[4])
        if len(docs) != sum(record[4] is not None for record in records.values()):
            return None
        return docs


def has_documents(cache_dir: Path) -> bool:
    """Whether a whole document store of this version was saved in `cache_dir` (a `store_dir`):
    a load there reuses documents (its frame's head and length are checked, not its payload)."""
    return written_with(cache_dir / DOCUMENTS_FILE, schema_key("documents"))


def _listing_key(
    root: str | os.PathLike[str], roots: Sequence[str], max_depth: int, ignore: IgnoreFilter | None
) -> str:
    # The walk's paths are spelt from `root` as given, so its spelling is part of the key (not the
    # working folder: the store's folder is per real root, where the same spelling finds the same files).
    fingerprint = ignore.fingerprint if ignore is not None and ignore.active else None
    return repr((os.fspath(root), tuple(roots), max_depth, fingerprint))


def cached_workspace_files(
    root: str | os.PathLike[str],
    roots: Sequence[str] = DEFAULT_AGENT_SKILL_ROOTS,
    max_depth: int = DEFAULT_MAX_DEPTH,
    ignore: IgnoreFilter | None = None,
    cache_dir: Path | None = None,
    fresh_since: int | None = None,
) -> dict[str, FileKind]:
    """`workspace_files`, without walking the tree when the listing saved in `cache_dir` (a
    `store_dir`) still holds: a warm call makes one `stat` per directory and per ignore file,
    none per file (the document store stats the files it reads). A file edited in place does
    not change its directory's mtime, and needs not: the listing is only which files exist.
    `fresh_since`: a listing whose walk started then or later holds even if recent changes
    (frames.listing_holds; the walk another process just made for this load).

    Not seen without a walk: a directory reached through a symlink whose target was dangling when
    it was listed and has appeared since (no directory the walk listed changed); the cache folder
    itself (written by every run, so never a reason to walk again)."""
    return _listing(root, roots, max_depth, ignore, cache_dir, fresh_since)[0]


def _listing(
    root: str | os.PathLike[str],
    roots: Sequence[str],
    max_depth: int,
    ignore: IgnoreFilter | None,
    cache_dir: Path | None,
    fresh_since: int | None = None,
) -> tuple[dict[str, FileKind], dict[str, Any] | None]:
    """`cached_workspace_files` and the listing saved for it (None: none could be saved)."""
    file = cache_dir / LISTING_FILE if cache_dir is not None else None
    key = _listing_key(root, roots, max_depth, ignore)
    if file is not None:
        saved = read_frame(file, schema_key("listing"))
        if saved is not None and listing_holds(saved, key, fresh_since):
            try:
                kinds = map(_KINDS.__getitem__, saved["kinds"])
                return dict(zip(saved["paths"], kinds, strict=True)), saved
            except (KeyError, TypeError, ValueError):
                pass
    if file is not None:
        # Made before the walk: made after it, inside the tree, it would change the mtime of a
        # folder the walk listed, and the next start would answer from the saved index only to
        # find it changed and load it again. Made before, that folder's mtime is too recent for
        # the next start to trust (frames.RACY_NS): it walks again, and the start after trusts.
        with contextlib.suppress(OSError):
            make_cache_folder(file.parent)
    started = time.time_ns()
    visited: Visited = {}
    files = workspace_files(root, roots, max_depth, ignore, visited)
    if file is not None:
        dirs = outside(visited, file.parent.parent)
        probed = sorted(set(ignore.probed)) if ignore is not None and ignore.active else []
        payload = {
            "key": key,
            "started": started,
            "dirs": dirs,
            "probes": needed_probes(probed, dirs),
            "paths": list(files),
            "kinds": [kind.value for kind in files.values()],
        }
        if write_frame(file, schema_key("listing"), payload):
            return files, payload
    return files, None


def load_cached_workspace_index(
    root: str | os.PathLike[str],
    roots: Sequence[str] = DEFAULT_AGENT_SKILL_ROOTS,
    max_depth: int = DEFAULT_MAX_DEPTH,
    cache_dir: Path | None = None,
    ignore: IgnoreFilter | None = None,
    progress: Callable[[int, int], None] | None = None,
    keep_stamps: bool = False,
    jobs: int | None = None,
    fresh_since: int | None = None,
) -> SkillIndex:
    """`load_workspace_index` through the document store in `cache_dir` (None: no store): the
    same index, reading only the files that changed since the last call, and saving the store
    when anything did. The index remembers its folder there, where its scorers keep what they
    build (`store_dir`). `progress(done, total)` is called once the files are found and then
    about skill_index.PROGRESS_STEPS times (a language server reports it while a large folder loads).
    `keep_stamps`: the index keeps what its documents rest on (`Stamps`, for a warm `select`'s
    saved state; a server does not hold the listing for nothing). `jobs`: processes that read the
    files that changed (skill_index.read_each; default: the idle CPUs). `fresh_since`: see
    `cached_workspace_files`."""
    if cache_dir is not None:
        cache_dir = store_dir(cache_dir, root)
    store = DocumentStore(cache_dir)
    records: dict[str, Record] = {}
    docs: list[SkillDocument] = []
    path_of: dict[int, str] = {}  # id(document) -> its record's path
    files, listing = _listing(root, roots, max_depth, ignore, cache_dir, fresh_since)
    if progress is not None:
        progress(0, len(files))
    for path, (doc, record) in store.documents(files, jobs, progress).items():
        if record is not None:
            records[path] = record
        if doc is not None:
            docs.append(doc)
            path_of[id(doc)] = path
    ordered = store.ordered(records)
    if ordered is not None:
        index = _saved_index(ordered, store)
        saved = True
    else:
        index = SkillIndex(docs)
        saved = store.save(records, [path_of[id(doc)] for doc in index], index.documents_digest())
    index.cache_dir = cache_dir
    index.frames = FrameFolder(cache_dir, _schema()) if cache_dir is not None else None
    if keep_stamps and saved and listing is not None and len(records) == len(files):
        index.stamps = Stamps(listing, {path: (r[0], r[1]) for path, r in records.items()}, store.saved_ns)
    return index


def _saved_index(ordered: list[SkillDocument], store: DocumentStore) -> SkillIndex:
    """The index of the store's saved documents (`ordered`: DocumentStore.ordered's answer), with
    the digest saved with them. The saved order is of the records' keys, each os.path.normpath
    of its document's path (the path it was read from, Path(key)): the index's path table made
    from them reads no path."""
    index = SkillIndex(ordered, ordered=True, normalised=store.order)
    if store.digest is not None:
        index.digest = (index.version, store.digest)
    return index


@dataclasses.dataclass(frozen=True)
class SavedCheck:
    """What an index loaded on trust (`load_saved_workspace_index`) rests on: the saved listing
    (its ignore-file probes and each listed folder's mtime) and each document file's stamp."""

    trusted_before: float  # frames.listing_trusted's answer for the listing
    probes: list[tuple[str, Any]]
    dirs: list[str]
    dir_mtimes: array[int]
    paths: list[str]
    mtimes: array[int]
    sizes: array[int]

    def holds(self) -> bool:
        """Whether the tree is as it was saved: the stats a load through the store makes first,
        every one as saved (True: `load_cached_workspace_index` would give the same index now).
        Made by a child process where one can be had (stats_child.py), else here."""
        if not probes_hold(self.probes, self.trusted_before):
            return False
        stats = stats_in_child(self.dirs + self.paths)
        if stats is None:
            if stats_child_stopped():  # shutting down: nothing is to be trusted, or statted
                return False
            return folders_hold(self.dirs, self.dir_mtimes) and stamps_hold(
                self.paths, self.mtimes, self.sizes
            )
        mtimes, sizes = stats
        return mtimes == self.dir_mtimes + self.mtimes and sizes[len(self.dirs) :] == self.sizes


def load_saved_workspace_index(
    root: str | os.PathLike[str],
    roots: Sequence[str],
    max_depth: int,
    cache_dir: Path,
    ignore: IgnoreFilter | None = None,
) -> tuple[SkillIndex, SavedCheck] | None:
    """The index `load_cached_workspace_index` gives when nothing changed since the store was
    saved, made from the saved listing and documents without a stat, with what `SavedCheck.holds`
    checks later; None unless every file of the saved listing has a saved record whose stamp is
    old enough to trust and the documents keep their saved order (then that load must run).

    For an editor's start: its first answers need not wait for 45,000 stats (0.2 s of a 1.5 s warm
    start over 16,000 skills), but must be followed by the check, and by a full load if it fails."""
    cache_dir = store_dir(cache_dir, root)
    key = _listing_key(root, roots, max_depth, ignore)
    listing = read_frame(cache_dir / LISTING_FILE, schema_key("listing"))
    listed_before = listing_trusted(listing, key)  # the listing's stamps are trusted before it
    if listed_before is None:
        return None
    assert isinstance(listing, dict)  # listing_trusted says so
    store = DocumentStore(cache_dir)
    read_before = store.saved_ns - RACY_NS  # and the documents' stamps before this
    records: dict[str, Record] = {}
    try:
        for path, kind in zip(listing["paths"], listing["kinds"], strict=True):
            record = store.records.get(path)
            if record is None or record[2] != kind or record[1] >= read_before:
                return None  # to be read, or hashed again: the full load does it
            records[path] = record
    except (KeyError, TypeError, ValueError):
        return None
    ordered = store.ordered(records)
    if ordered is None:
        return None
    index = _saved_index(ordered, store)
    index.cache_dir = cache_dir
    index.frames = FrameFolder(cache_dir, _schema())
    dirs: dict[str, int] = listing["dirs"]
    check = SavedCheck(
        listed_before,
        listing["probes"],
        list(dirs),
        array("q", dirs.values()),
        list(records),
        array("q", [r[1] for r in records.values()]),
        array("q", [r[0] for r in records.values()]),
    )
    return index, check


@dataclasses.dataclass(frozen=True)
class Stamps:
    """What the documents of an index loaded through the store rest on, all saved: the listing
    of the walk (`frames.listing_holds`), each file's (size, mtime in ns) stamp when it was read
    or last found unchanged, and when the store was saved (stamps within RACY_NS of that are not
    trusted). A warm `select` (routing/quick.py) checks these instead of loading the index."""

    listing: dict[str, Any]
    files: dict[str, tuple[int, int]]
    saved_ns: int
