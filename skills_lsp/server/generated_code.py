"""The code that attrs and cattrs generate for lsprotocol's types, kept compiled between starts.

lsprotocol defines about 560 attrs classes. For each, attrs writes `__init__`, `__eq__`,
`__repr__`... as source text and compiles it, and pygls' cattrs converter does the same for every
message type the server meets. Compiling that text is about half of lsprotocol's import and of the
converters' first use: 0.2-0.3 s of every start, on one core, before the server can answer.
The same text compiled with the same flags by the same Python gives the same code, so the code
objects are kept, marshalled, in the user's cache folder, and looked up by (filename, text,
flags): a start that finds them all compiles nothing.

The hook is the name `compile` in the modules that generate code (GENERATORS): a global of the
module shadows the builtin for that module alone, so nothing of theirs is replaced, and a version of
them that no longer calls `compile` just finds no hook. The file is a frame (core/files/frames.py:
written atomically, checked by SHA-256, ignored when cut short or altered) whose key holds Python's
bytecode magic number, its optimisation level (`-O`) and the generating modules' files (path,
size, mtime), so an upgrade starts a new file. A table that does not unmarshal to code objects is
ignored. It is saved when something new was compiled: once the server has run for SAVE_AFTER
seconds (from its event loop: no thread of its own, as a process with threads must not fork), and
at exit.
"""

from __future__ import annotations
import __future__

import atexit
import builtins
import contextlib
import functools
import hashlib
import importlib
import importlib.util
import logging
import marshal
import operator
import os
import stat
import sys
import threading
from pathlib import Path
from types import CodeType, ModuleType
from typing import Any

from skills_lsp.core.files.cache import remove_unused_beside, user_cache_dir
from skills_lsp.core.files.frames import read_frame, write_frame

# The modules whose `compile` calls make the generated code (attrs' classes, cattrs' hooks).
GENERATORS = ("attr._make", "cattrs.gen", "cattrs.gen.typeddicts")
FORMAT = b"generated-code 1"
SAVE_AFTER = 20.0  # seconds: by then a start has made its converters for the first messages

log = logging.getLogger(__name__)

Key = tuple[str, str, int]  # filename, source text, compiler flags


# Every `from __future__` compiler flag: what `compile` inherits from the code that calls it.
FUTURE_FLAGS = functools.reduce(
    operator.or_, (getattr(__future__, name).compiler_flag for name in __future__.all_feature_names)
)
# Folder or file mode bits that let another user write: such a table is not read (it is code).
WRITABLE_BY_OTHERS = stat.S_IWGRP | stat.S_IWOTH


class GeneratedCode:
    """A table of compiled generated code, the hook that serves it, and its file."""

    def __init__(self, file: Path, key: bytes) -> None:
        self.file = file
        self.key = key
        self.table: dict[Key, CodeType] = {}
        self.compiled = 0  # entries compiled since the table was last read or saved
        self.hits = 0
        self.used: set[Key] = set()  # served or compiled by this process: what a save keeps
        self._lock = threading.Lock()
        self._hooked: list[ModuleType] = []

    def load(self) -> None:
        """Read the kept table; a missing, damaged or foreign file leaves it empty, and so does one
        that another user could have written (it holds code this process runs)."""
        if not (_own_and_private(self.file.parent) and _own_and_private(self.file)):
            return
        data = read_frame(self.file, self.key, whole=True)
        if not isinstance(data, bytes):
            return
        try:
            table = marshal.loads(data)
        except (EOFError, ValueError, TypeError):
            return
        if isinstance(table, dict) and all(
            isinstance(k, tuple) and len(k) == 3 and isinstance(v, CodeType) for k, v in table.items()
        ):
            self.table = table
            with contextlib.suppress(OSError):
                os.utime(self.file)  # in use: kept by remove_unused_beside

    def hook(self, module: ModuleType) -> None:
        """Serve `module`'s `compile` calls from the table."""

        def compile(source: Any, filename: Any, mode: str, *args: Any, **kwargs: Any) -> Any:
            if (
                args
                or kwargs
                or mode != "exec"
                or not isinstance(source, str)
                or not isinstance(filename, str)
            ):
                return builtins.compile(source, filename, mode, *args, **kwargs)
            # The flags the builtin would inherit from its caller (`from __future__ import annotations`).
            flags = sys._getframe(1).f_code.co_flags & FUTURE_FLAGS
            key = (filename, source, flags)
            with self._lock:
                code = self.table.get(key)
                self.used.add(key)
            if code is None:
                code = builtins.compile(source, filename, mode, flags, True)
                with self._lock:
                    self.table[key] = code
                    self.compiled += 1
            else:
                self.hits += 1
            return code

        module.compile = compile  # type: ignore[attr-defined]  # a global shadowing the builtin
        self._hooked.append(module)

    def unhook(self) -> None:
        """Give the hooked modules the builtin `compile` back."""
        for module in self._hooked:
            vars(module).pop("compile", None)
        self._hooked.clear()

    def save(self) -> bool:
        """Write the table if something new was compiled since it was read or saved; False when
        nothing was written (nothing new, or the cache folder is not writable). Only what this
        process served or compiled is written: attrs puts a per-process number in some classes'
        source (a `__hash__` with `hash(filename)`, different in every run), and a table that kept
        every run's would grow at each start."""
        with self._lock:
            compiled, self.compiled = self.compiled, 0
            table = {key: self.table[key] for key in self.used}
        log.debug("generated code: %d served from %s, %d compiled", self.hits, self.file, compiled)
        if not compiled:
            return False
        with contextlib.suppress(OSError):  # write_frame says whether the folder can be written
            self.file.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        private = _own_and_private(self.file.parent)
        if not private or not write_frame(self.file, self.key, marshal.dumps(table)):
            with self._lock:
                self.compiled += compiled  # tried again at the next save
            return False
        remove_unused_beside(self.file, folders=False)  # an older attrs' or Python's table
        return True


def _own_and_private(path: Path) -> bool:
    """Whether `path` is missing, or this user's and writable by no other (as ssh asks of its
    keys): a table is code this process runs, so it is read only from where only this user writes."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    owner = getattr(os, "getuid", lambda: info.st_uid)()
    return info.st_uid == owner and not info.st_mode & WRITABLE_BY_OTHERS and not stat.S_ISLNK(info.st_mode)


def _stamp(module: ModuleType) -> bytes:
    path = getattr(module, "__file__", None) or ""
    try:
        info = os.stat(path)
    except OSError:
        return path.encode("utf-8", "surrogateescape")
    return f"{path}\0{info.st_size}\0{info.st_mtime_ns}".encode("utf-8", "surrogateescape")


_kept: GeneratedCode | None = None  # this process's table, once keep_generated_code has run


def keep_generated_code(folder: Path | None = None) -> GeneratedCode | None:
    """Serve the generating modules' `compile` from the table kept in `folder` (default: the user
    cache's `generated-code`), saved at exit and by `save_kept`. Call before lsprotocol is
    imported. None when attrs or cattrs cannot be imported."""
    global _kept
    if not hasattr(sys, "_getframe"):
        return None  # the hook needs its caller's flags (CPython, PyPy)
    try:
        modules = [importlib.import_module(name) for name in GENERATORS]
        # `python -O` compiles without asserts and `__debug__` blocks: its code is kept apart, as
        # is another Python's (a patch release keeps the magic number but may compile otherwise).
        settings = f"{sys.version}\0{sys.flags.optimize}".encode()
        key = b"\0".join([FORMAT, importlib.util.MAGIC_NUMBER, settings, *(_stamp(m) for m in modules)])
        folder = folder if folder is not None else user_cache_dir() / "generated-code"
        file = folder / f"{hashlib.sha256(key).hexdigest()[:16]}.frame"
        kept = GeneratedCode(file, key)
        kept.load()
    except Exception as exc:  # no home folder, an unreadable cache...: a slower start, never none
        log.debug("generated code not kept: %s", exc)
        return None
    for module in modules:
        kept.hook(module)
    atexit.register(kept.save)
    _kept = kept
    return kept


def save_kept() -> bool:
    """Save this process's table now if something new was compiled (the server calls it once it
    has run SAVE_AFTER seconds: a server killed outright never reaches its exit)."""
    return _kept.save() if _kept is not None else False
