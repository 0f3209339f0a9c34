"""Baselines: record today's findings so that only new ones are reported (adopting the checker on
a big repository without fixing everything first).

A finding is recorded by its rule, its file (relative to the baseline file's folder, so the
baseline works from any working directory) and a fingerprint of its content: the text the
finding covers and the line it starts on, blanks collapsed. Line numbers are not part of it, so
lines added above a finding do not make it new; changing the text it points at does. Identical
findings are counted, so a second copy of a recorded problem is new.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from pathlib import Path, PurePath

from skills_lsp.core.model import Finding
from skills_lsp.core.parse.frontmatter import BOM, read_limited, split_lines

BASELINE_FORMAT = 1
_MAX_COVERED = 2000  # characters of the covered text that count


class BaselineError(Exception):
    """A baseline file that cannot be read or is not a skills-lsp baseline."""


Key = tuple[str, str, str]  # (path relative to the baseline's folder, code, fingerprint)
LinesOf = Callable[[str], Sequence[str]]


def _squash(text: str) -> str:
    return " ".join(text.split())


def fingerprint(finding: Finding, lines: Sequence[str]) -> str:
    """A digest of the finding's rule and content, independent of where its lines are."""
    r = finding.range
    if r.start.line < len(lines):
        last = min(r.end.line, len(lines) - 1)
        if last == r.start.line:
            covered = lines[r.start.line][r.start.character : r.end.character]
        else:
            covered = "\n".join(
                [
                    lines[r.start.line][r.start.character :],
                    *lines[r.start.line + 1 : last],
                    lines[last][: r.end.character],
                ]
            )
        line = lines[r.start.line]
    else:
        covered = line = ""
    text = f"{finding.code}\0{_squash(covered)[:_MAX_COVERED]}\0{_squash(line)[:_MAX_COVERED]}"
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:20]


@lru_cache(maxsize=4096)
def _file_lines(path: str, stamp: tuple[int, int, int]) -> tuple[str, ...]:
    try:
        text = read_limited(path).decode("utf-8", errors="replace")
    except OSError:
        return ()
    return tuple(split_lines(text.removeprefix(BOM)))


def file_lines(path: str) -> Sequence[str]:
    """The lines of a file on disk, as positions count them (read again when its size, mtime or
    inode changed)."""
    try:
        info = os.stat(path)
    except OSError:
        return ()
    return _file_lines(path, (info.st_size, info.st_mtime_ns, info.st_ino))


def forget_lines() -> None:
    """Files changed (fixes were written): read them again."""
    _file_lines.cache_clear()


def _relative(path: str, root: Path) -> str:
    absolute = os.path.abspath(path)
    try:
        rel = os.path.relpath(absolute, root)
    except ValueError:  # pragma: no cover - another Windows drive
        rel = absolute
    return PurePath(rel).as_posix()


class Baseline:
    """The recorded findings of a baseline file."""

    def __init__(self, root: Path, counts: Counter[Key]) -> None:
        self.root = root
        self.counts = counts

    def key(self, finding: Finding, lines_of: LinesOf = file_lines) -> Key:
        return (
            _relative(finding.path, self.root),
            finding.code,
            fingerprint(finding, lines_of(finding.path)),
        )

    def new(self, findings: Iterable[Finding], lines_of: LinesOf = file_lines) -> list[Finding]:
        """The findings the baseline does not record (each record matches one finding)."""
        left = Counter(self.counts)
        fresh: list[Finding] = []
        for finding in findings:
            key = self.key(finding, lines_of)
            if left[key] > 0:
                left[key] -= 1
            else:
                fresh.append(finding)
        return fresh

    @staticmethod
    def load(path: Path) -> Baseline:
        try:
            text = path.read_text(encoding="utf-8")
            data = json.loads(text)
        except FileNotFoundError:
            raise BaselineError(f"baseline file not found: {path}") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise BaselineError(f"cannot read baseline {path}: {exc}") from None
        except json.JSONDecodeError as exc:
            raise BaselineError(f"{path}:{exc.lineno}:{exc.colno}: not valid JSON: {exc.msg}") from None
        if (
            not isinstance(data, dict)
            or data.get("tool") != "skills-lsp"
            or not isinstance(data.get("findings"), list)
        ):
            raise BaselineError(f"{path}: not a skills-lsp baseline (write one with --write-baseline)")
        if data.get("format") != BASELINE_FORMAT:
            raise BaselineError(
                f"{path}: baseline format {data.get('format')!r} is not {BASELINE_FORMAT}; write it again"
            )
        counts: Counter[Key] = Counter()
        starts: list[int] | None = None
        for index, row in enumerate(data["findings"]):
            problem = _row_problem(row)
            if problem is not None:
                starts = _finding_starts(text) if starts is None else starts
                where = _line_column(text, starts[index]) if index < len(starts) else ""
                raise BaselineError(f"{path}:{where} finding {index + 1}{problem}")
            counts[(row["path"], row["code"], row["fingerprint"])] += 1
        return Baseline(path.resolve().parent, counts)


_REQUIRED = ("path", "code", "fingerprint")  # strings; `message` (optional) too


def _row_problem(row: object) -> str | None:
    """What is wrong with one recorded finding (to follow "finding N"), or None."""
    if not isinstance(row, dict):
        return " must be an object with `path`, `code` and `fingerprint`"
    missing = [key for key in _REQUIRED if key not in row]
    if missing:
        return " needs " + " and ".join(f"`{key}`" for key in missing)
    for key in (*_REQUIRED, "message"):
        if key in row and not isinstance(row[key], str):
            # str() would let `"fingerprint": 5` in, to match nothing
            return f": `{key}` must be a string, not {json.dumps(row[key])}"
    return None


def _finding_starts(text: str) -> list[int]:
    """The offsets in `text` (a JSON object) where the entries of its `findings` array start
    (json.loads gives no positions; the last `findings` key wins, as there)."""
    decoder = json.JSONDecoder()

    def blank(i: int) -> int:
        while i < len(text) and text[i] in " \t\r\n":
            i += 1
        return i

    starts: list[int] = []
    i = blank(0) + 1  # past the `{`
    while (i := blank(i)) < len(text) and text[i] != "}":
        key, i = decoder.raw_decode(text, i)
        i = blank(blank(i) + 1)  # past the `:`
        if key == "findings" and text.startswith("[", i):
            starts = []
            i = blank(i + 1)
            while i < len(text) and text[i] != "]":
                starts.append(i)
                _, i = decoder.raw_decode(text, i)
                i = blank(i)
                i = blank(i + 1) if text.startswith(",", i) else i
            i += 1
        else:
            _, i = decoder.raw_decode(text, i)
        i = blank(i)
        i = i + 1 if text.startswith(",", i) else i
    return starts


def _line_column(text: str, offset: int) -> str:
    """`line:column:` (1-based, as json's own errors count) of `offset`."""
    line, line_start = text.count("\n", 0, offset) + 1, text.rfind("\n", 0, offset) + 1
    return f"{line}:{offset - line_start + 1}:"


def write_baseline(path: Path, findings: Sequence[Finding], lines_of: LinesOf = file_lines) -> int:
    """Record `findings` in `path` (written atomically); returns how many."""
    root = path.resolve().parent
    baseline = Baseline(root, Counter())
    rows = []
    for finding in findings:
        rel, code, digest = baseline.key(finding, lines_of)
        rows.append({"path": rel, "code": code, "fingerprint": digest, "message": finding.message})
    rows.sort(key=lambda r: (r["path"], r["code"], r["fingerprint"], r["message"]))
    payload = json.dumps(
        {"tool": "skills-lsp", "format": BASELINE_FORMAT, "findings": rows}, indent=2, ensure_ascii=False
    )
    root.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=root, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape") as handle:
            handle.write(payload + "\n")
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return len(rows)
