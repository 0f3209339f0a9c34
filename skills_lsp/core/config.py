"""`[tool.skills-lsp]` in pyproject.toml, or a `skills-lsp.toml`: roots, profiles, rule selection.

A broken config never raises: `load_config` returns the defaults plus findings (code SK001)
that point at the line of the config file that is wrong.
"""

from __future__ import annotations

import difflib
import re
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import Any

from skills_lsp.core.discovery import DEFAULT_AGENT_SKILL_ROOTS, DEFAULT_MAX_DEPTH
from skills_lsp.core.model import Finding, Range, Severity

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib  # type: ignore[import-not-found, unused-ignore]

CONFIG_FILES = ("skills-lsp.toml", "pyproject.toml")
CONFIG_CODE = "SK001"
DEFAULT_TOOL_MANIFEST = "skill-tools.yaml"
DEFAULT_QUERY_FILE = "skill-queries.yaml"


@dataclass(frozen=True)
class Config:
    source: Path | None = None  # the file it came from
    root: Path | None = None  # paths in the config are relative to this directory
    roots: tuple[str, ...] = DEFAULT_AGENT_SKILL_ROOTS
    max_depth: int = DEFAULT_MAX_DEPTH
    profile: str | None = None  # one profile for every file, overriding the per-layout defaults
    profiles: tuple[tuple[str, str], ...] = ()  # (glob, profile), first match wins
    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    severity: dict[str, Severity] = field(default_factory=dict)
    exclude: tuple[str, ...] = ()
    tool_manifest: str = DEFAULT_TOOL_MANIFEST
    query_file: str = DEFAULT_QUERY_FILE

    def with_overrides(self, **changes: Any) -> Config:
        return replace(self, **{k: v for k, v in changes.items() if v is not None})

    def relative(self, path: Path) -> str | None:
        if self.root is None:
            return None
        try:
            return PurePosixPath(path.resolve().relative_to(self.root.resolve())).as_posix()
        except ValueError:
            return None

    def profile_for_path(self, path: Path) -> str | None:
        if self.profile:
            return self.profile
        if not self.profiles:
            return None
        rel = self.relative(path)
        if rel is None:
            return None
        for pattern, name in self.profiles:
            if glob_match(pattern, rel):
                return name
        return None

    def excluded(self, path: Path) -> bool:
        if not self.exclude:
            return False
        rel = self.relative(path)
        return rel is not None and any(glob_match(p, rel) for p in self.exclude)

    def fingerprint(self) -> str:
        """Everything that changes findings, for the check cache key."""
        cached: str | None = self.__dict__.get("_fingerprint")
        if cached is not None:
            return cached
        text = repr(
            (
                self.profile,
                self.profiles,
                self.select,
                self.extend_select,
                self.ignore,
                sorted((k, int(v)) for k, v in self.severity.items()),
            )
        )
        object.__setattr__(self, "_fingerprint", text)  # frozen: computed once
        return text


_GLOB_CACHE: dict[str, re.Pattern[str]] = {}


def glob_match(pattern: str, path: str) -> bool:
    """Gitignore-like glob: `*` within a segment, `**` across segments, `?` one character.
    A pattern without `/` matches the file name at any depth."""
    regex = _GLOB_CACHE.get(pattern)
    if regex is None:
        pat = pattern if "/" in pattern else f"**/{pattern}"
        out = ""
        i = 0
        while i < len(pat):
            if pat.startswith("**/", i):
                out += "(?:.*/)?"
                i += 3
            elif pat.startswith("**", i):
                out += ".*"
                i += 2
            elif pat[i] == "*":
                out += "[^/]*"
                i += 1
            elif pat[i] == "?":
                out += "[^/]"
                i += 1
            else:
                out += re.escape(pat[i])
                i += 1
        regex = _GLOB_CACHE[pattern] = re.compile(out + r"(?:/.*)?\Z")
    return regex.match(path) is not None


def find_config(start: Path) -> Path | None:
    """The nearest `skills-lsp.toml`, or `pyproject.toml` with a `[tool.skills-lsp]` table,
    in `start` or its parents."""
    current = start.resolve()
    if current.is_file():
        current = current.parent
    for directory in (current, *current.parents):
        for name in CONFIG_FILES:
            candidate = directory / name
            if not candidate.is_file():
                continue
            if name == "pyproject.toml":
                try:
                    if "[tool.skills-lsp" not in candidate.read_text(encoding="utf-8", errors="replace"):
                        continue
                except OSError:
                    continue
            return candidate
    return None


_KEYS = {
    "roots",
    "max-depth",
    "profile",
    "profiles",
    "select",
    "extend-select",
    "ignore",
    "severity",
    "exclude",
    "tool-manifest",
    "query-file",
}
_AT_LINE = re.compile(r"\(at line (\d+), column (\d+)\)")


def _locate(text: str, needle: str) -> Range:
    for number, line in enumerate(text.splitlines()):
        col = line.find(needle)
        if col >= 0:
            return Range.of(number, col, number, col + len(needle))
    return Range.point(0, 0)


def load_config(path: Path) -> tuple[Config, list[Finding]]:
    """Read a config file. Problems come back as findings; the rest of the config still applies."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return Config(), [
            Finding(str(path), CONFIG_CODE, Severity.ERROR, f"Cannot read config: {exc}", Range.point(0, 0))
        ]
    return parse_config(text, path)


def parse_config(text: str, path: Path) -> tuple[Config, list[Finding]]:
    problems: list[Finding] = []

    def problem(message: str, rng: Range) -> None:
        problems.append(Finding(str(path), CONFIG_CODE, Severity.ERROR, message, rng))

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        match = _AT_LINE.search(str(exc))
        if match:
            line, col = int(match.group(1)) - 1, int(match.group(2)) - 1
        else:  # "(at end of document)"
            lines = text.split("\n")
            line = max(len(lines) - 1, 0)
            if not lines[line] and line:
                line -= 1
            col = len(lines[line])
        reason = re.sub(r"\s*\(at (line \d+, column \d+|end of document)\)", "", str(exc)).strip()
        problem(f"Invalid TOML: {reason}.", Range.of(line, col, line, col + 1))
        return Config(source=path, root=path.parent), problems
    table: Any = data.get("tool", {}).get("skills-lsp", {}) if path.name == "pyproject.toml" else data
    if not isinstance(table, dict):
        problem("`[tool.skills-lsp]` must be a table.", _locate(text, "skills-lsp"))
        return Config(source=path, root=path.parent), problems
    config = Config(source=path, root=path.parent)
    changes: dict[str, Any] = {}
    for key, value in table.items():
        where = _locate(text, key)
        if key not in _KEYS:
            close = difflib.get_close_matches(key, sorted(_KEYS), n=1)
            hint = f"; did you mean `{close[0]}`?" if close else f"; known keys: {', '.join(sorted(_KEYS))}."
            problem(f"Unknown config key `{key}`{hint}", where)
            continue
        try:
            changes.update(_read_key(key, value))
        except ValueError as exc:
            problem(f"`{key}`: {exc}", where)
    return replace(config, **changes), problems


def _strings(value: Any, what: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"expected a list of {what}")
    return tuple(value)


def _codes(value: Any) -> tuple[str, ...]:
    from skills_lsp.core.rules import RULES

    codes = _strings(value, 'rule codes such as "SK2" or "SK401"')
    for code in codes:
        if code != "ALL" and not any(c.startswith(code) for c in RULES):
            raise ValueError(f"no rule code starts with `{code}` (see `skills-lsp rules`)")
    return codes


def _read_key(key: str, value: Any) -> dict[str, Any]:
    from skills_lsp.core.profiles import PROFILES

    if key == "roots":
        return {"roots": _strings(value, "directories")}
    if key == "max-depth":
        if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 64:
            raise ValueError("expected a whole number from 1 to 64")
        return {"max_depth": value}
    if key == "profile":
        if value not in PROFILES:
            raise ValueError(f"unknown profile `{value}`; choose one of {', '.join(PROFILES)}")
        return {"profile": value}
    if key == "profiles":
        if not isinstance(value, dict):
            raise ValueError('expected a table of glob = "profile"')
        for glob, name in value.items():
            if name not in PROFILES:
                raise ValueError(
                    f"unknown profile `{name}` for `{glob}`; choose one of {', '.join(PROFILES)}"
                )
        return {"profiles": tuple(value.items())}
    if key in ("select", "extend-select", "ignore"):
        return {key.replace("-", "_"): _codes(value)}
    if key == "severity":
        if not isinstance(value, dict):
            raise ValueError('expected a table of CODE = "error" | "warning" | "info" | "hint"')
        severities: dict[str, Severity] = {}
        for code, level in value.items():
            _codes([code])
            if not isinstance(level, str):
                raise ValueError(f"severity of {code} must be a string")
            severities[code] = Severity.parse(level)
        return {"severity": severities}
    if key == "exclude":
        return {"exclude": _strings(value, "globs")}
    if key in ("tool-manifest", "query-file"):
        if not isinstance(value, str) or not value:
            raise ValueError("expected a path")
        return {key.replace("-", "_"): value}
    raise ValueError("unsupported key")  # pragma: no cover - guarded by _KEYS
