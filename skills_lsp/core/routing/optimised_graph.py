"""An ONNX model's optimised graph, kept in the user's cache folder so later processes skip
onnxruntime's optimisation.

Building a session for all-MiniLM-L6-v2's int8 file costs 0.23-0.4 s, most of a warm
`select --scorer hybrid`: onnxruntime folds the int8 weights into float32 ones and fuses the
graph's nodes. The graph it ends with can be written out (`optimized_model_filepath`) with its
weights in a file beside it, which onnxruntime maps instead of reading; a session on that graph,
with optimisation off, starts in 0.06-0.13 s and computes the same numbers bit for bit.

The kept graph is trusted only as far as it is checked:
- its folder's name holds what made it: the model file (path, size, mtime), onnxruntime's
  version, the machine and its CPU's flags (the graph may hold kernels for this CPU only);
- it is written to a temporary folder and renamed into place once complete, and only after a
  session on it gave the same outputs, bit for bit, as the optimising session on `PROBES`;
- each load checks both files' sizes and CRC-32s against its manifest (0.03 s for 90 MB).
Anything else (missing, cut short, altered, unreadable, unwritable) costs the optimisation, never
a wrong vector: the session is built from the model file as before.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import mmap
import os
import platform
import shutil
import tempfile
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from skills_lsp.core.files.cache import make_cache_folder, remove_unused_beside, user_cache_dir

FORMAT = 1  # of the folder's layout and manifest
GRAPH = "model.onnx"
WEIGHTS = "model.data"
MANIFEST = "manifest.json"
# Token id rows a kept graph must answer exactly as the optimising session: one text alone and a
# padded batch of three, since the model is run both ways (embedding.TransformerModel._run).
PROBES: tuple[tuple[tuple[int, ...], ...], ...] = (
    ((101, 3319, 2026, 8946, 2121, 3857, 2005, 3036, 3314, 102),),
    (
        (101, 2023, 2003, 1037, 3231, 102, 0, 0, 0, 0, 0, 0),
        (101, 19204, 2818, 1998, 3857, 1996, 7160, 2005, 1037, 4013, 2581, 102),
        (101, 7592, 102, 0, 0, 0, 0, 0, 0, 0, 0, 0),
    ),
)

Options = Callable[[bool], Any]  # optimise? -> onnxruntime.SessionOptions
_EXTERNAL = "session.optimized_model_external_initializers_"


def _open(onnxruntime: Any, path: Path, options: Any) -> Any:
    return onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def session(onnxruntime: Any, model: Path, options: Options) -> Any:
    """A session on `model`: from its kept optimised graph when one holds, else optimised now
    (and the graph kept for the next process when this one can write the cache)."""
    folder = _folder(onnxruntime, model)
    if folder is not None:
        kept = _kept_session(onnxruntime, folder, options)
        if kept is not None:
            return kept
        if os.path.lexists(folder):  # a bad one that cannot be removed (another user's): no new one
            folder = None
    return _optimise(onnxruntime, model, options, folder)


def _folder(onnxruntime: Any, model: Path) -> Path | None:
    try:
        stat = model.stat()
        flags = _cpu_flags()
        models = user_cache_dir() / "models"
    except (OSError, RuntimeError):  # RuntimeError: no home folder (a container's unnamed user)
        return None
    # The inode and ctime too: a copy that keeps size and mtime (cp -p, rsync -a) is another file.
    made_by = repr(
        (FORMAT, str(model.resolve()), stat.st_size, stat.st_mtime_ns, stat.st_ino, stat.st_ctime_ns,
         onnxruntime.__version__, platform.machine(), flags)
    )  # fmt: skip
    key = hashlib.sha256(made_by.encode()).hexdigest()[:20]
    return models / f"{model.parent.name}-{key}"


def _cpu_flags() -> str:
    """The CPU's feature flags (Linux), else what the platform says of the processor."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as info:
            for line in info:
                if line.startswith(("flags", "Features")):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def _checksums(folder: Path) -> dict[str, list[int]]:
    """Each file's [size, CRC-32], read through a map (no copy of the 90 MB of weights)."""
    sums: dict[str, list[int]] = {}
    for name in (GRAPH, WEIGHTS):
        with open(folder / name, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if not size:
                sums[name] = [0, 0]
                continue
            with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
                sums[name] = [size, zlib.crc32(mapped)]
    return sums


def _kept_session(onnxruntime: Any, folder: Path, options: Options) -> Any | None:
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        # Sizes first: a cut file must not be mapped (reading past its end would be SIGBUS).
        for name in (GRAPH, WEIGHTS):
            if (folder / name).stat().st_size != manifest["files"][name][0]:
                raise ValueError(f"{name} is not the size its manifest says")
        if _checksums(folder) != manifest["files"]:
            raise ValueError("a file's checksum differs from its manifest's")
        kept = _open(onnxruntime, folder / GRAPH, options(False))
    except Exception:  # none, part gone, altered or unreadable: removed, so a new one can take its place
        shutil.rmtree(folder, ignore_errors=True)
        return None
    with contextlib.suppress(OSError):
        os.utime(folder)  # in use: kept by remove_unused_beside
        remove_unused_beside(folder, folders=True)  # what a process killed while writing left (a few stats)
    return kept


def _optimise(onnxruntime: Any, model: Path, options: Options, folder: Path | None) -> Any:
    chosen = options(True)
    if folder is None:
        return _open(onnxruntime, model, chosen)
    try:
        make_cache_folder(folder.parent)
        building = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
    except OSError:
        return _open(onnxruntime, model, chosen)
    try:
        chosen.optimized_model_filepath = str(building / GRAPH)
        # The weights in a file of their own, which a later session maps instead of reading.
        chosen.add_session_config_entry(_EXTERNAL + "file_name", WEIGHTS)
        chosen.add_session_config_entry(_EXTERNAL + "min_size_in_bytes", "1024")
        try:
            optimising = _open(onnxruntime, model, chosen)
        except Exception:  # the graph could not be written (a full disk, a quota): not kept
            return _open(onnxruntime, model, options(True))
        with contextlib.suppress(Exception):  # kept or not, this process has its session
            _keep(onnxruntime, optimising, building, folder, options)
        return optimising
    finally:
        shutil.rmtree(building, ignore_errors=True)


def _keep(onnxruntime: Any, optimising: Any, building: Path, folder: Path, options: Options) -> None:
    kept = _open(onnxruntime, building / GRAPH, options(False))
    for rows in PROBES:
        ids = np.array(rows, dtype=np.int64)
        mask = (ids != 0).astype(np.int64)
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        if not np.array_equal(optimising.run(None, feed)[0], kept.run(None, feed)[0]):
            return  # not the same numbers here: every process optimises for itself
    del kept
    manifest = {"format": FORMAT, "files": _checksums(building)}
    (building / MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    try:
        os.rename(building, folder)  # atomic; fails if another process kept its graph first
    except OSError:
        return
    remove_unused_beside(folder, folders=True)
