"""`[tool.skills-lsp]` in pyproject.toml, or a `skills-lsp.toml`: roots, profiles, rule selection.

A broken config never raises: `load_config` returns the defaults plus problems (reported as
SK001) that point at the line of the config file that is wrong.

Names that later stages define (profiles, rule codes, scorers) are checked against the
`ConfigNames` the caller passes: this stage sits below them and cannot know them.
`skills_lsp.core.workspace.settings` passes every one.
"""

from __future__ import annotations

import difflib
import os
import re
import sys
from bisect import bisect_right
from collections.abc import Collection
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import Any

from skills_lsp.core.files.cache import CONFIG_FILES as CONFIG_FILES  # found without this module
from skills_lsp.core.files.discovery import DEFAULT_AGENT_SKILL_ROOTS, DEFAULT_MAX_DEPTH
from skills_lsp.core.files.ignore import GitIgnorePatterns, IgnoreFilter, valid_pattern
from skills_lsp.core.model import Problem, Range, Severity

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib  # type: ignore[import-not-found, unused-ignore]

CONFIG_PROBLEM = "invalid-config"  # the rule that reports these (SK001)
DEFAULT_TOOL_MANIFEST = "skill-tools.yaml"
DEFAULT_QUERY_FILE = "skill-queries.yaml"


@dataclass(frozen=True)
class ConfigNames:
    """The names a config may use, defined by later stages; None leaves that kind unchecked."""

    profiles: Collection[str] | None = None
    rule_codes: Collection[str] | None = None
    scorers: Collection[str] | None = None


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
    # (glob, codes): rule codes or prefixes not reported for the files a glob matches (as ruff's)
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    severity: dict[str, Severity] = field(default_factory=dict)
    # gitignore patterns relative to the config's folder (`extend-exclude` adds to `exclude`)
    exclude: tuple[str, ...] = ()
    extend_exclude: tuple[str, ...] = ()
    respect_gitignore: bool = True  # read .gitignore / .ignore files while discovering
    tool_manifest: str = DEFAULT_TOOL_MANIFEST
    query_file: str = DEFAULT_QUERY_FILE
    # How skills are ranked: lexical (adk-skill's), bm25f, semantic, hybrid. None: the default of
    # the workspace's profile (core/workspace/scorers.default_scorer).
    scorer: str | None = None
    # Pairs of skills known to overlap and accepted as they are (`overlap = [["a", "b"]]`): no
    # collision is reported between them (SK704, `skills-lsp overlap`).
    overlap: tuple[tuple[str, str], ...] = ()
    # Environment variables that change a runtime's listing budget (SLASH_COMMAND_TOOL_CHAR_BUDGET),
    # as the CLI or the server read them: not a config key, and no rule reads the environment (core
    # reads only XDG_CACHE_HOME, for the cache folder, and SKILLS_LSP_EMBEDDING_MODEL).
    budget_variables: tuple[tuple[str, str], ...] = ()

    def accepted_overlaps(self) -> frozenset[frozenset[str]]:
        return frozenset(frozenset(pair) for pair in self.overlap)

    def with_overrides(self, **changes: Any) -> Config:
        return replace(self, **{k: v for k, v in changes.items() if v is not None})

    def relative(self, path: Path) -> str | None:
        if self.root is None:
            return None
        try:
            return PurePosixPath(path.resolve().relative_to(self.root.resolve())).as_posix()
        except ValueError:
            return None

    def roots_for(self, target: Path) -> tuple[str, ...]:
        """`roots` (relative to the config's folder) re-expressed relative to `target`, a folder
        being checked: a root inside `target` becomes its path below it, a root containing
        `target` becomes "" (all of `target`), and a root elsewhere is dropped. Without a config
        file, or with the default roots (workspace conventions, valid wherever one looks), the
        roots are returned unchanged."""
        if self.root is None or self.roots == DEFAULT_AGENT_SKILL_ROOTS:
            return self.roots
        rebased: list[str] = []
        for root in self.roots:
            rel = _rebase(self.root, root, target)
            if rel is not None and rel not in rebased:
                rebased.append(rel)
        return tuple(rebased)

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

    def ignore_filter(self, root: str | os.PathLike[str]) -> IgnoreFilter:
        """What discovery under `root` leaves out: ignore files (unless `respect-gitignore` is
        off) and `exclude` + `extend-exclude`, read relative to the config's folder."""
        return IgnoreFilter(
            root,
            respect_gitignore=self.respect_gitignore,
            patterns=(*self.exclude, *self.extend_exclude),
            patterns_base=self.root if self.root is not None else root,
        )

    def ignored_for(self, path: str | os.PathLike[str]) -> tuple[str, ...]:
        """The rule codes or prefixes `per-file-ignores` turns off for `path`."""
        if not self.per_file_ignores:
            return ()
        rel = self.relative(Path(path))
        if rel is None:
            return ()
        return tuple(code for glob, codes in self.per_file_ignores if glob_match(glob, rel) for code in codes)

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


def _inside(path: str, folder: str) -> str | None:
    """`path` relative to `folder` ("" for the folder itself) when it is inside, else None."""
    try:
        rel = os.path.relpath(path, folder)
    except ValueError:  # pragma: no cover - different Windows drives
        return None
    if rel == os.curdir:
        return ""
    if rel == os.pardir or rel.startswith(os.pardir + os.sep) or os.path.isabs(rel):
        return None
    return PurePosixPath(Path(rel)).as_posix()


def _rebase(base: Path, root: str, target: Path) -> str | None:
    """Root `root` of the config in `base`, relative to `target` ("" when `target` lies inside
    the root), or None when neither contains the other. Compared as written first, then with
    symlinks resolved (a target reached through a link, a root that is a link)."""
    absolute_base, absolute_target = os.path.abspath(base), os.path.abspath(target)
    real_base, real_target = os.path.realpath(base), os.path.realpath(target)
    candidates = (
        (os.path.normpath(os.path.join(absolute_base, root)), absolute_target),
        (os.path.normpath(os.path.join(real_base, root)), real_target),
        (os.path.realpath(os.path.join(real_base, root)), real_target),
    )
    for full, folder in candidates:
        below = _inside(full, folder)
        if below is not None:
            return below
        if _inside(folder, full) is not None:
            return ""
    return None


_GLOB_CACHE: dict[str, GitIgnorePatterns] = {}


def glob_match(pattern: str, path: str) -> bool:
    """Whether gitignore pattern `pattern` matches file `path` (relative to the config's folder) or
    a folder on the way to it: the one dialect of `exclude`, `per-file-ignores` and `profiles`
    (`*`, `**`, `?`, `[a-z]`, a leading or inner `/` anchors, a trailing `/` matches folders)."""
    matcher = _GLOB_CACHE.get(pattern)
    if matcher is None:
        matcher = _GLOB_CACHE[pattern] = GitIgnorePatterns.from_lines([pattern])
    return matcher.matches(path)


def _glob_problem(glob: str) -> str | None:
    """Why `glob` cannot be a `per-file-ignores` / `profiles` key, or None."""
    if glob.startswith("!"):
        return f"`{glob}`: a glob here cannot start with `!` (write the files it applies to)"
    if not valid_pattern(glob):
        return f"`{glob}` is not a valid gitignore pattern"
    if not len(GitIgnorePatterns.from_lines([glob])):
        return f"`{glob}` is blank or a comment and matches no file"
    return None


_KEYS = {
    "roots",
    "max-depth",
    "profile",
    "profiles",
    "select",
    "extend-select",
    "ignore",
    "per-file-ignores",
    "severity",
    "exclude",
    "extend-exclude",
    "respect-gitignore",
    "tool-manifest",
    "query-file",
    "scorer",
    "overlap",
}
_AT_LINE = re.compile(r"\(at line (\d+), column (\d+)\)")


_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_BASIC_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')
_LITERAL_STRING = re.compile(r"'[^'\n]*'")
_ML_BASIC = re.compile(r'"""(?:[^\\]|\\.)*?"""(?:""?)?', re.DOTALL)  # a closing """ may follow 2 more "
_ML_LITERAL = re.compile(r"'''.*?'''(?:''?)?", re.DOTALL)
_SCALAR_END = re.compile(r"[,\]}#\n]")
KeyPath = tuple[str, ...]


class _KeyScanner:
    """Where every key of a (valid) TOML document is defined: full dotted key path -> the range of
    its last part. Table headers, dotted keys, quoted keys and inline tables are understood;
    comments and string contents are skipped, so only real keys are found. For an array of
    tables the first occurrence is kept."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.found: dict[KeyPath, tuple[int, int]] = {}
        self._line_starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def range_of(self, path: KeyPath) -> Range | None:
        span = self.found.get(path)
        if span is None:
            return None
        start, end = span
        line = bisect_right(self._line_starts, start) - 1
        end_line = bisect_right(self._line_starts, end) - 1
        return Range.of(line, start - self._line_starts[line], end_line, end - self._line_starts[end_line])

    def scan(self) -> _KeyScanner:
        table: KeyPath = ()
        try:
            while True:
                self._skip(newlines=True)
                if self.pos >= len(self.text):
                    break
                if self.text[self.pos] == "[":
                    double = self.text.startswith("[[", self.pos)
                    self.pos += 2 if double else 1
                    table = self._key(())
                    self._skip()
                    self.pos += 2 if double else 1  # "]" or "]]"
                else:
                    path = self._key(table)
                    self._skip()
                    self.pos += 1  # "="
                    self._value(path)
        except (IndexError, ValueError):  # not valid TOML after all: keep what was found
            pass
        return self

    def _skip(self, newlines: bool = False) -> None:
        """Skip blanks and comments (and newlines when `newlines`)."""
        text = self.text
        while self.pos < len(text):
            char = text[self.pos]
            if char in " \t" or (newlines and char in "\r\n"):
                self.pos += 1
            elif char == "#":
                end = text.find("\n", self.pos)
                self.pos = len(text) if end < 0 else end
            else:
                break

    def _key(self, prefix: KeyPath, record: bool = True) -> KeyPath:
        """A dotted key; every prefix of it is recorded under `prefix` (when `record`)."""
        path = prefix
        while True:
            self._skip()
            start = self.pos
            char = self.text[start]
            if char == '"':
                match = _BASIC_STRING.match(self.text, start)
                if match is None:
                    raise ValueError("unterminated key")
                part = tomllib.loads(f"k = {match.group()}")["k"]
            elif char == "'":
                match = _LITERAL_STRING.match(self.text, start)
                if match is None:
                    raise ValueError("unterminated key")
                part = match.group()[1:-1]
            else:
                match = _BARE_KEY.match(self.text, start)
                if match is None:
                    raise ValueError("not a key")
                part = match.group()
            self.pos = match.end()
            path = (*path, part)
            if record:
                self.found.setdefault(path, (start, self.pos))
            self._skip()
            if self.text[self.pos] != ".":
                return path
            self.pos += 1

    def _value(self, path: KeyPath | None) -> None:
        """Skip one value; keys inside inline tables are recorded under `path` (None: an inline
        table inside an array, whose keys are not recorded)."""
        self._skip()
        text = self.text
        multiline = _ML_BASIC if text.startswith('"""', self.pos) else _ML_LITERAL
        if text.startswith(('"""', "'''"), self.pos):
            match = multiline.match(text, self.pos)
            if match is None:
                raise ValueError("unterminated string")
            self.pos = match.end()
        elif text[self.pos] in "\"'":
            match = (_BASIC_STRING if text[self.pos] == '"' else _LITERAL_STRING).match(text, self.pos)
            if match is None:
                raise ValueError("unterminated string")
            self.pos = match.end()
        elif text[self.pos] == "[":
            self.pos += 1
            while True:
                self._skip(newlines=True)
                if text[self.pos] == "]":
                    break
                self._value(None)
                self._skip(newlines=True)
                if text[self.pos] == ",":
                    self.pos += 1
            self.pos += 1
        elif text[self.pos] == "{":
            self.pos += 1
            while True:
                self._skip(newlines=True)
                if text[self.pos] == "}":
                    break
                key = self._key(path or (), record=path is not None)
                self._skip()
                self.pos += 1  # "="
                self._value(key if path is not None else None)
                self._skip(newlines=True)
                if text[self.pos] == ",":
                    self.pos += 1
            self.pos += 1
        else:  # number, boolean, date-time
            match = _SCALAR_END.search(text, self.pos)
            self.pos = len(text) if match is None else match.start()


class _EntryError(ValueError):
    """A bad entry of a table-valued key (`severity`, `profiles`): reported at that entry."""

    def __init__(self, message: str, entry: str) -> None:
        super().__init__(message)
        self.entry = entry


def load_config(path: Path, names: ConfigNames = ConfigNames()) -> tuple[Config, list[Problem]]:
    """Read a config file. Problems come back as findings; the rest of the config still applies."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return Config(), [Problem(CONFIG_PROBLEM, f"Cannot read config: {exc}", Range.point(0, 0))]
    return parse_config(text, path, names)


def overlap_name_problems(text: str, path: Path, config: Config, known: Collection[str]) -> list[Problem]:
    """SK001 for each name in `overlap` that no skill of the workspace has (a typo accepts
    nothing, silently), at that name in the file (else at the key). Only where the workspace's
    skills are known: the server's folder and `skills-lsp overlap`."""
    unknown = sorted({name for pair in config.overlap for name in pair if name not in known})
    if not unknown:
        return []
    base: KeyPath = ("tool", "skills-lsp") if path.name == "pyproject.toml" else ()
    key = _KeyScanner(text).scan().range_of((*base, "overlap")) or Range.point(0, 0)
    lines = text.split("\n")
    start = sum(len(line) + 1 for line in lines[: key.start.line]) + key.start.character
    problems: list[Problem] = []
    for name in unknown:
        close = difflib.get_close_matches(name, sorted(known), n=1)
        hint = f"; did you mean `{close[0]}`?" if close else ""
        rng = key
        found = re.compile(r"""(["'])""" + re.escape(name) + r"\1").search(text, start)
        if found is not None:
            line = text.count("\n", 0, found.start())
            col = found.start() - (text.rfind("\n", 0, found.start()) + 1)
            rng = Range.of(line, col, line, col + len(found.group(0)))
        problems.append(Problem(CONFIG_PROBLEM, f"`overlap`: no skill named `{name}`{hint}", rng))
    return problems


def parse_config(text: str, path: Path, names: ConfigNames = ConfigNames()) -> tuple[Config, list[Problem]]:
    problems: list[Problem] = []

    def problem(message: str, rng: Range) -> None:
        problems.append(Problem(CONFIG_PROBLEM, message, rng))

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
    base: KeyPath = ("tool", "skills-lsp") if path.name == "pyproject.toml" else ()
    tool = data.get("tool", {}) if base else None
    table: Any = (tool.get("skills-lsp", {}) if isinstance(tool, dict) else {}) if base else data
    scanned: list[_KeyScanner] = []  # scanned on the first problem only

    def locate(*keys: str) -> Range:
        """The most precise place of `base + keys` (or of a prefix of it) that the file defines."""
        if not scanned:
            scanned.append(_KeyScanner(text).scan())
        for n in range(len(keys), -1, -1):
            found = scanned[0].range_of((*base, *keys[:n]))
            if found is not None:
                return found
        return Range.point(0, 0)

    if not isinstance(table, dict):
        problem("`[tool.skills-lsp]` must be a table.", locate())
        return Config(source=path, root=path.parent), problems
    config = Config(source=path, root=path.parent)
    changes: dict[str, Any] = {}
    for key, value in table.items():
        if key not in _KEYS:
            close = difflib.get_close_matches(key, sorted(_KEYS), n=1)
            hint = f"; did you mean `{close[0]}`?" if close else f"; known keys: {', '.join(sorted(_KEYS))}."
            problem(f"Unknown config key `{key}`{hint}", locate(key))
            continue
        try:
            changes.update(_read_key(key, value, names))
        except _EntryError as exc:
            problem(f"`{key}`: {exc}", locate(key, exc.entry))
        except ValueError as exc:
            problem(f"`{key}`: {exc}", locate(key))
    return replace(config, **changes), problems


def _strings(value: Any, what: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"expected a list of {what}")
    return tuple(value)


def _codes(value: Any, names: ConfigNames) -> tuple[str, ...]:
    codes = _strings(value, 'rule codes such as "SK2" or "SK401"')
    known = names.rule_codes
    for code in codes:
        if known is not None and code != "ALL" and not any(c.startswith(code) for c in known):
            raise ValueError(f"no rule code starts with `{code}` (see `skills-lsp rules`)")
    return codes


def _profile(value: Any, names: ConfigNames) -> bool:
    return isinstance(value, str) and (names.profiles is None or value in names.profiles)


def _read_key(key: str, value: Any, names: ConfigNames) -> dict[str, Any]:
    profiles = ", ".join(names.profiles or ())
    if key == "roots":
        return {"roots": _strings(value, "directories")}
    if key == "max-depth":
        if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 64:
            raise ValueError("expected a whole number from 1 to 64")
        return {"max_depth": value}
    if key == "profile":
        if not _profile(value, names):
            raise ValueError(f"unknown profile `{value}`; choose one of {profiles}")
        return {"profile": value}
    if key == "profiles":
        if not isinstance(value, dict):
            raise ValueError('expected a table of glob = "profile"')
        for glob, name in value.items():
            if (problem := _glob_problem(glob)) is not None:
                raise _EntryError(problem, glob)
            if not _profile(name, names):
                raise _EntryError(f"unknown profile `{name}` for `{glob}`; choose one of {profiles}", glob)
        return {"profiles": tuple(value.items())}
    if key == "per-file-ignores":
        if not isinstance(value, dict):
            raise ValueError('expected a table of "glob" = ["CODE", ...]')
        ignores: list[tuple[str, tuple[str, ...]]] = []
        for glob, codes in value.items():
            if (problem := _glob_problem(glob)) is not None:
                raise _EntryError(problem, glob)
            try:
                ignores.append((glob, _codes(codes, names)))
            except ValueError as exc:
                raise _EntryError(f"`{glob}`: {exc}", glob) from None
        return {"per_file_ignores": tuple(ignores)}
    if key in ("select", "extend-select", "ignore"):
        return {key.replace("-", "_"): _codes(value, names)}
    if key == "severity":
        if not isinstance(value, dict):
            raise ValueError('expected a table of CODE = "error" | "warning" | "info" | "hint"')
        severities: dict[str, Severity] = {}
        for code, level in value.items():
            try:
                _codes([code], names)
                if not isinstance(level, str):
                    raise ValueError(f"severity of {code} must be a string")
                severities[code] = Severity.parse(level)
            except ValueError as exc:
                raise _EntryError(str(exc), code) from None
        return {"severity": severities}
    if key in ("exclude", "extend-exclude"):
        patterns = _strings(value, "gitignore patterns")
        for pattern in patterns:
            if not valid_pattern(pattern):
                raise _EntryError(f"`{pattern}` is not a valid gitignore pattern", pattern)
        return {key.replace("-", "_"): patterns}
    if key == "respect-gitignore":
        if not isinstance(value, bool):
            raise ValueError("expected true or false")
        return {"respect_gitignore": value}
    if key == "scorer":
        if not isinstance(value, str) or (names.scorers is not None and value not in names.scorers):
            choices = " or ".join(f'"{s}"' for s in names.scorers or ())
            raise ValueError(f"expected {choices} (see `skills-lsp eval --help`)")
        return {"scorer": value}
    if key == "overlap":
        pairs = value if isinstance(value, list) else None
        if pairs is None or not all(
            isinstance(p, list) and len(p) == 2 and all(isinstance(n, str) and n for n in p) for p in pairs
        ):
            raise ValueError('expected a list of skill-name pairs, e.g. [["pdf-report", "pdf-export"]]')
        return {"overlap": tuple((a, b) for a, b in pairs)}
    if key in ("tool-manifest", "query-file"):
        if not isinstance(value, str) or not value:
            raise ValueError("expected a path")
        return {key.replace("-", "_"): value}
    raise ValueError("unsupported key")  # pragma: no cover - guarded by _KEYS
