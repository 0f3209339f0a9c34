"""Frames: files in a cache folder that are either whole and written by this code, or ignored.

A frame is MAGIC, key length (u32), key (what must have written it: a format and the package
version), payload length (u64), SHA-256 of the payload, the payload (a pickle). A frame whose
magic, key, length or checksum does not match is ignored (and written again by its user): a
truncated, corrupt or foreign-version file is never trusted. The payload is read by an unpickler
that only builds the few classes a frame may hold (no arbitrary code from a file in the cache;
the one exception, server/generated_code.py's table of compiled code, is read only from a folder
and a file that this user alone can write).
Every write goes to a temporary file renamed into place, so a reader sees one whole frame or the
previous one, and of two processes writing at once the last rename wins with a whole frame.

Also what tells whether a saved walk of a tree still holds (`listing_holds`): this module imports
nothing of the package, so a warm command can check a cache before it imports the stages.
"""

from __future__ import annotations

import hashlib
import io
import math
import mmap
import os
import pickle
import struct
import tempfile
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from skills_lsp.core.files.cache import make_cache_folder

MAGIC = b"SKLSPIX\x00"
_HEADER = struct.Struct("<Q32s")
# Stamps (mtimes) this close to the moment a run started are not trusted: a change made in the same
# clock tick could keep them (as in git's index).
RACY_NS = 2_000_000_000

# What a frame may hold besides builtins: documents, their kinds and paths, YAML dates, numpy arrays
# (named, not imported: a class is imported only when a frame holds one).
ALLOWED = {
    ("skills_lsp.core.index.skill_index", "SkillDocument"),
    ("skills_lsp.core.model", "FileKind"),
    ("pathlib", "PosixPath"),
    ("pathlib", "WindowsPath"),
    ("pathlib", "Path"),
    ("datetime", "date"),
    ("datetime", "datetime"),
    ("datetime", "timedelta"),
    ("datetime", "timezone"),
    ("numpy", "ndarray"),
    ("numpy", "dtype"),
    ("numpy.core.multiarray", "_reconstruct"),
    ("numpy._core.multiarray", "_reconstruct"),
    ("numpy.core.numeric", "_frombuffer"),
    ("numpy._core.numeric", "_frombuffer"),
    ("builtins", "bytearray"),
    ("builtins", "set"),
    ("builtins", "frozenset"),
}


class _Unpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if (module, name) not in ALLOWED:
            raise pickle.UnpicklingError(f"{module}.{name} is not allowed in an index frame")
        return super().find_class(module, name)


def _header(handle: io.BufferedReader, key: bytes) -> tuple[int, bytes] | None:
    """(payload length, SHA-256) from the head of a frame written with `key`, the handle left at
    the payload; None when the frame is foreign or cut short."""
    prefix = MAGIC + struct.pack("<I", len(key)) + key
    head = handle.read(len(prefix) + _HEADER.size)
    if head[: len(prefix)] != prefix or len(head) != len(prefix) + _HEADER.size:
        return None
    length, digest = _HEADER.unpack(head[len(prefix) :])
    return length, digest


def written_with(path: Path, key: bytes) -> bool:
    """Whether `path` is a whole frame written with `key`: its head and length (its payload is
    not checked: read_frame does that)."""
    try:
        with open(path, "rb") as handle:
            header = _header(handle, key)
            return header is not None and os.fstat(handle.fileno()).st_size - handle.tell() == header[0]
    except OSError:
        return False


def read_frame(path: Path, key: bytes, whole: bool = False) -> Any | None:
    """The payload of the frame at `path`, or None when it is missing, foreign or damaged. The
    payload is checked, then unpickled, straight from the file (never held twice in memory); or,
    `whole`, read once into memory, checked and unpickled from there (faster, for a frame of
    mostly bytes whose copy is wanted anyway)."""
    try:
        with open(path, "rb") as handle:
            header = _header(handle, key)
            if header is None:
                return None
            length, digest = header
            start = handle.tell()
            if os.fstat(handle.fileno()).st_size - start != length:
                return None
            if whole:
                data = handle.read()
                if len(data) != length or hashlib.sha256(data).digest() != digest:
                    return None
                return _Unpickler(io.BytesIO(data)).load()
            sha = hashlib.sha256()
            while chunk := handle.read(1 << 20):
                sha.update(chunk)
            if sha.digest() != digest:
                return None
            handle.seek(start)
            return _Unpickler(handle).load()
    except OSError:
        return None
    except Exception:  # a checksum-valid frame that still fails to load is as good as missing
        return None


def read_head(handle: io.BufferedReader, key: bytes) -> tuple[Any, int] | None:
    """The payload of the frame at the start of `handle`, which more data may follow (what
    write_frame's `tail` wrote), and the offset where that data begins; None when the frame is
    foreign or damaged. The payload is read into memory: meant for a small table."""
    try:
        header = _header(handle, key)
        if header is None:
            return None
        length, digest = header
        payload = handle.read(length)
        if len(payload) != length or hashlib.sha256(payload).digest() != digest:
            return None
        return _Unpickler(io.BytesIO(payload)).load(), handle.tell()
    except OSError:
        return None
    except Exception:  # a checksum-valid frame that still fails to load is as good as missing
        return None


class _HashingWriter:
    """A file object that hashes and counts what is written through it (the pickle is streamed
    to disk, never held whole in memory)."""

    def __init__(self, handle: io.BufferedWriter) -> None:
        self.handle = handle
        self.sha = hashlib.sha256()
        self.length = 0

    def write(self, data: Any) -> int:  # bytes, or a PickleBuffer for a large array (protocol 5)
        view = memoryview(data).cast("B")
        self.sha.update(view)
        self.length += view.nbytes
        return self.handle.write(view)


def write_frame(
    path: Path, key: bytes, payload: Any, tail: Callable[[io.BufferedWriter], None] | None = None
) -> bool:
    """Write a frame atomically (temporary file + rename); False when the folder is not writable.
    `tail` writes what follows the frame in the same file (the index's bodies after their table)."""
    prefix = MAGIC + struct.pack("<I", len(key)) + key
    try:
        make_cache_folder(path.parent)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}-", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(prefix + _HEADER.pack(0, bytes(32)))  # filled in once the payload is out
                writer = _HashingWriter(handle)
                pickle.dump(payload, writer, protocol=pickle.HIGHEST_PROTOCOL)
                if tail is not None:
                    tail(handle)
                handle.seek(len(prefix))
                handle.write(_HEADER.pack(writer.length, writer.sha.digest()))
            os.replace(tmp, path)
        except Exception:  # not writable, or not picklable: a slower next run, not an error
            os.unlink(tmp)
            return False
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError:
        return False
    return True


def write_blobs(path: Path, key: bytes, head: Any, blobs: Sequence[Any]) -> bool:
    """A frame whose checked payload is `head` plus each blob's length and CRC-32, the blobs'
    bytes after it (write_frame's tail): what `read_blobs` gives back without unpickling or
    copying them (numpy arrays become views over the bytes read). `blobs`: bytes-like objects."""
    views = [memoryview(blob).cast("B") for blob in blobs]
    table = [(view.nbytes, zlib.crc32(view)) for view in views]

    def tail(handle: io.BufferedWriter) -> None:
        for view in views:
            handle.write(view)

    return write_frame(path, key, {"head": head, "blobs": table}, tail)


def _rest(handle: io.BufferedReader, start: int) -> memoryview | None:
    """What follows `start` in the file, mapped copy-on-write, or read when it cannot be mapped."""
    try:
        return memoryview(mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_COPY))[start:]
    except (OSError, ValueError):  # no mapping here (an empty file, say): one read
        handle.seek(start)
        return memoryview(bytearray(handle.read()))


def read_blobs(path: Path, key: bytes) -> tuple[Any, list[memoryview]] | None:
    """The head and blobs `write_blobs` wrote, or None when the file is missing, foreign, cut
    short, longer, or any part fails its check (the head its SHA-256, each blob its CRC-32). The
    blobs are slices of the file mapped into memory copy-on-write (its writers replace it by a
    rename, never in place, so what is mapped stays as it was checked), or of one read of it:
    writable, as the arrays they replace were (numpy pickles a read-only array differently)."""
    try:
        with open(path, "rb") as handle:
            found = read_head(handle, key)
            rest = _rest(handle, found[1]) if found is not None else None
        if found is None or rest is None:
            return None
        payload, whole = found[0], rest
        table = payload["blobs"]
        if sum(length for length, _ in table) != len(whole):
            return None
        blobs: list[memoryview] = []
        offset = 0
        for length, crc in table:
            blob = whole[offset : offset + length]
            if zlib.crc32(blob) != crc:
                return None
            blobs.append(blob)
            offset += length
        return payload["head"], blobs
    except OSError:
        return None
    except (KeyError, TypeError, ValueError):  # a head this code did not write
        return None


class FrameFolder:
    """A folder of frames keyed `kind/schema`: where an index's scorers keep what they build
    (store.py makes one per index), so that they need not import the store to use it."""

    def __init__(self, folder: Path, schema: str) -> None:
        self.folder = folder
        self.schema = schema

    def key(self, kind: str) -> bytes:
        return f"{kind}/{self.schema}".encode()

    def read(self, name: str, kind: str) -> Any | None:
        return read_frame(self.folder / name, self.key(kind))

    def write(self, name: str, kind: str, payload: Any) -> bool:
        return write_frame(self.folder / name, self.key(kind), payload)

    def read_blobs(self, name: str, kind: str) -> tuple[Any, list[memoryview]] | None:
        return read_blobs(self.folder / name, self.key(kind))

    def write_blobs(self, name: str, kind: str, head: Any, blobs: Sequence[Any]) -> bool:
        return write_blobs(self.folder / name, self.key(kind), head, blobs)


def file_stamp(path: str) -> tuple[int, int, int] | None:
    """(size, mtime in ns, ctime in ns) of `path`; None when it cannot be stat'ed."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_size, info.st_mtime_ns, info.st_ctime_ns


def stamp(path: str) -> tuple[int, int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_size, info.st_mtime_ns


def probe(path: str) -> tuple[int, int] | bool | None:
    """What an ignore filter read at `path`: for a `.git` marker whether it exists, for an
    ignore file its (size, mtime in ns) stamp or None when missing."""
    if os.path.basename(path) == ".git":
        return os.path.exists(path)
    return stamp(path)


def outside(dirs: Mapping[str, int], folder: Path) -> dict[str, int]:
    """The listed directories of `dirs` that are not in `folder` (a cache folder: what its owner
    writes there changes their mtimes, so a saved listing would never hold)."""
    own = (os.path.abspath(folder) + os.sep, os.path.realpath(folder) + os.sep)
    return {
        path: mtime for path, mtime in dirs.items() if not (os.path.abspath(path) + os.sep).startswith(own)
    }


def needed_probes(paths: Iterable[str], listed: Iterable[str]) -> list[tuple[str, Any]]:
    """Each of `paths` (ignore files, `.git` markers) with its `probe`, but for the missing ones in
    a `listed` directory: one appearing there would change that directory's mtime, which a saved
    listing checks already, so only those that exist or lie outside need a stat of their own."""
    folders = {os.path.abspath(path) for path in listed}
    return [
        (path, seen)
        for path, seen in ((path, probe(path)) for path in paths)
        if seen or os.path.dirname(os.path.abspath(path)) not in folders
    ]


def listing_trusted(payload: Any, key: str, fresh_since: int | None = None) -> float | None:
    """The time before which the stamps of a saved listing are trusted, when `payload` is a listing
    saved under `key` and none of its stamps is too recent to trust; else None. No stat is made:
    `listing_holds` then checks them against the tree. Stamps within `RACY_NS` of the walk are not
    trusted (a change in the same clock tick would keep them), unless the walk started at or after
    `fresh_since` (time.time_ns()): then it is as fresh as a walk the caller would make now, which
    could miss such a change too."""
    try:
        if not isinstance(payload, dict) or payload.get("key") != key:
            return None
        started = payload["started"]
        fresh = fresh_since is not None and isinstance(started, int) and started >= fresh_since
        trusted_before = math.inf if fresh else started - RACY_NS
        if max(payload["dirs"].values(), default=-math.inf) >= trusted_before:
            return None
        if any(isinstance(seen, tuple) and seen[1] >= trusted_before for _, seen in payload["probes"]):
            return None
        return float(trusted_before)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError):
        return None


def listing_holds(payload: Any, key: str, fresh_since: int | None = None) -> bool:
    """Whether a saved listing still describes the tree: its stamps are trusted (`listing_trusted`),
    every directory the walk listed has the mtime it had before it was listed, and every ignore
    file and `.git` the filter looked for is as it was."""
    trusted_before = listing_trusted(payload, key, fresh_since)
    if trusted_before is None:
        return False
    try:
        dirs = payload["dirs"]
        if not folders_hold(dirs, dirs.values()):
            return False
        return probes_hold(payload["probes"], trusted_before)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError):
        return False


def folders_hold(paths: Iterable[str], mtimes: Iterable[int]) -> bool:
    """Whether each listed folder of `paths` has its mtime: -1 for one that could not be statted,
    as the walk records it (one that still cannot be holds)."""
    stat = os.stat
    for path, mtime in zip(paths, mtimes, strict=True):
        try:
            now = stat(path).st_mtime_ns
        except OSError:
            now = -1
        if now != mtime:
            return False
    return True


def stamps_hold(paths: Sequence[str], mtimes: Sequence[int], sizes: Sequence[int]) -> bool:
    """Whether each of `paths` has its mtime and (unless -1, as for a directory) its size."""
    stat = os.stat
    try:
        for path, mtime, size in zip(paths, mtimes, sizes, strict=True):
            info = stat(path)
            if info.st_mtime_ns != mtime or (size != -1 and info.st_size != size):
                return False
    except OSError:  # gone, or no longer reachable
        return False
    return True


def probes_hold(probes: Iterable[tuple[str, Any]], trusted_before: float) -> bool:
    """Whether every ignore file and `.git` a saved listing's filter looked for (its `probes`)
    is as it was, and no stamp of one is as recent as `trusted_before`."""
    for path, seen in probes:
        if isinstance(seen, tuple) and seen[1] >= trusted_before:
            return False
        if probe(path) != seen:
            return False
    return True
