"""The whole-run cache of `check`: what a run printed, and everything it rested on, so that running
the same check again over an unchanged tree reads one file instead of checking anything.

Saved (a frame, `files.frames`: checked, atomic) in the check cache folder after a run whose
output can be reused: not with `--fix`, `--diff`, `--baseline`, `--write-baseline` or `--no-cache`.
Reused only when all of these hold, else the run is done in full (and saved again):

- the same command: the options that change the output, the targets as spelt, the working folder
  (paths are printed relative to it), the package version, the environment variables read;
- the same files to check: every directory the walk listed has the mtime it had before it was
  listed, every ignore file and `.git` marker the filters looked for is as it was (as for the
  index's cached listing, `frames.listing_holds`);
- the same content: every checked file, the config file, the tool manifest and every test-query
  file has the (size, mtime, ctime) stamp it had after the run;
- the same answers to the rules' probes (does `references/x.md` exist? what does a file read by a
  rule hold?): a present path keeps its entry while its directory keeps its mtime, a missing one
  stays missing while its nearest existing folder does; a symlink, or a path under something that
  is not a folder, is probed itself.

A stamp within `frames.RACY_NS` of the run's start is never trusted (a change in the same clock
tick would keep it): such a run is done in full. Stamps are taken after the run, so a change made
while it ran shows as one too recent.
"""

from __future__ import annotations

import codecs
import os
import stat
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, TextIO

from skills_lsp._version import __version__
from skills_lsp.core.files.frames import (
    RACY_NS,
    file_stamp,
    listing_holds,
    needed_probes,
    outside,
    read_frame,
    write_frame,
)

RUN_FILE = "check-run.bin"
FORMAT = 1
_FRAME_KEY = f"check-run/{FORMAT}/{__version__}".encode()
_CONTENT_PROBE = "sha256:"  # CheckCache's prefix of a content probe

# A file's stamp: (size, mtime in ns, ctime in ns); None when it cannot be stat'ed.
Stamp = tuple[int, int, int] | None


class RunRecord:
    """What one `check` run rested on, gathered while it runs (see the module doc)."""

    def __init__(self) -> None:
        self.started = time.time_ns()
        self.dirs: dict[str, int] = {}  # directory -> mtime (ns), -1: none
        self.files: set[str] = set()  # files whose content the output depends on
        self.watched: set[str] = set()  # files that may exist (their content if they do)
        self.probes: dict[str, Any] = {}  # the rules' probes (CheckResult.probes)
        self.ignore_probes: list[str] = []  # ignore files and `.git` markers looked for
        self.env: dict[str, str | None] = {}  # the environment variables the run read
        self.cache_dir: Path | None = None  # where the run kept its per-file cache

    def watch_target(self, target: str) -> None:
        """A folder named on the command line: whether it holds a skill of its own is read from
        its entries (`expand_targets`); a file: its content."""
        if os.path.isdir(target):
            try:
                self.dirs.setdefault(target, os.stat(target).st_mtime_ns)
            except OSError:
                self.dirs.setdefault(target, -1)
        else:
            self.files.add(target)


class _Recorder:
    """Turns a `RunRecord` into what a later run stats: directories, stamps, direct probes."""

    def __init__(self, dirs: Mapping[str, int]) -> None:
        self.dirs = dict(dirs)
        self.stamps: dict[str, Stamp] = {}
        self.exists: dict[str, bool] = {}
        self.consistent = True  # False: a directory changed between two looks at it
        self._kinds: dict[str, tuple[str, int]] = {}

    def _cover(self, folder: str, mtime: int) -> None:
        if self.dirs.setdefault(folder, mtime) != mtime:
            self.consistent = False

    def _kind(self, path: str) -> tuple[str, int]:
        """("dir", mtime), ("missing", 0), or ("other", 0): a file, a symlink, or not known."""
        if path not in self._kinds:
            try:
                info = os.lstat(path)
            except FileNotFoundError:
                self._kinds[path] = ("missing", 0)
            except OSError:
                self._kinds[path] = ("other", 0)
            else:
                dir_kind = "dir" if stat.S_ISDIR(info.st_mode) else "other"
                self._kinds[path] = (dir_kind, info.st_mtime_ns)
        return self._kinds[path]

    def present(self, path: str) -> None:
        """`path` exists: it keeps existing while its folder keeps its mtime, unless it is a
        symlink (its target may go)."""
        try:
            link = os.path.islink(path)
            folder = os.path.dirname(path)
            mtime = os.stat(folder).st_mtime_ns
        except OSError:
            link = True
        if link:
            self.exists[path] = os.path.exists(path)
        else:
            self._cover(folder, mtime)

    def absent(self, path: str) -> None:
        """`path` is missing: it stays missing while its nearest existing folder keeps its mtime
        (a real folder; a symlink or a file on the way is probed directly)."""
        current = path
        while (parent := os.path.dirname(current)) != current:
            kind, mtime = self._kind(parent)
            if kind == "missing":
                current = parent
                continue
            if kind == "dir":
                self._cover(parent, mtime)
                return
            break
        self.exists[path] = os.path.exists(path)

    def watch(self, path: str) -> None:
        """A file read when it exists: its stamp, or that it stays missing."""
        stamp = file_stamp(path)
        if stamp is None:
            self.absent(path)
        else:
            self.stamps[path] = stamp
            self.present(path)


def save(
    cache_dir: Path,
    key: str,
    record: RunRecord,
    output: str,
    code: int,
) -> bool:
    """Save a run's output and what it rested on (False when it cannot be reused or written)."""
    recorder = _Recorder(outside(record.dirs, cache_dir))  # this run's own writes change those
    for path in record.files:
        recorder.stamps[path] = file_stamp(path)
    for path in record.watched:
        recorder.watch(path)
    for name, seen in record.probes.items():
        if name.startswith(_CONTENT_PROBE):
            recorder.watch(name[len(_CONTENT_PROBE) :])
        elif seen:
            recorder.present(name)
        else:
            recorder.absent(name)
    if not recorder.consistent:
        return False
    ignore_probes = needed_probes(sorted(set(record.ignore_probes)), recorder.dirs)
    payload = {
        "key": key,
        "started": record.started,
        "dirs": recorder.dirs,
        "probes": ignore_probes,
        "stamps": recorder.stamps,
        "exists": recorder.exists,
        "env": record.env,
        "output": output.encode("utf-8", "surrogateescape"),
        "code": code,
    }
    return write_frame(cache_dir / RUN_FILE, _FRAME_KEY, payload)


def load(cache_dir: Path, key: str, environ: Mapping[str, str]) -> tuple[bytes, int] | None:
    """The saved output and exit status of the same run, when everything it rested on holds."""
    payload = read_frame(cache_dir / RUN_FILE, _FRAME_KEY, whole=True)
    if not _holds(payload, key, environ):
        return None
    assert isinstance(payload, dict)
    return payload["output"], payload["code"]


def _holds(payload: Any, key: str, environ: Mapping[str, str]) -> bool:
    try:
        if not isinstance(payload, dict) or not isinstance(payload.get("output"), bytes):
            return False
        if not isinstance(payload.get("code"), int) or payload.get("key") != key:
            return False
        if any(environ.get(name) != value for name, value in payload["env"].items()):
            return False
        trusted_before = payload["started"] - RACY_NS
        for stamp in payload["stamps"].values():
            if stamp is not None and (stamp[1] >= trusted_before or stamp[2] >= trusted_before):
                return False
        if not listing_holds(payload, key):  # the directories and ignore files
            return False
        for path, stamp in payload["stamps"].items():
            if file_stamp(path) != stamp:
                return False
        exists = os.path.exists
        return all(exists(path) == seen for path, seen in payload["exists"].items())
    except (KeyError, TypeError, ValueError, AttributeError, IndexError):
        return False


def write_output(output: bytes, out: TextIO) -> None:
    """Write saved output as the run wrote it: the bytes straight to a UTF-8 stream's buffer
    (no decoding and encoding again of many megabytes), else as text."""
    buffer = getattr(out, "buffer", None)
    encoding = getattr(out, "encoding", None) or ""
    if buffer is not None and encoding and os.linesep == "\n" and codecs.lookup(encoding).name == "utf-8":
        out.flush()
        buffer.write(output)
        return
    out.write(output.decode("utf-8", "surrogateescape"))


def run_key(cwd: str, targets: Iterable[str], options: Mapping[str, Any], config_file: str | None) -> str:
    """What must be the same for a run's saved output to be its output (see the module doc)."""
    return repr((cwd, tuple(targets), sorted(options.items()), config_file))
