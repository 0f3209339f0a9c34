"""Which paths a workspace walk leaves out: `.gitignore` and `.ignore` files (nested ones too) and
the config's `exclude` / `extend-exclude` patterns, all with git's own semantics through `pathspec`
(negation with `!`, character classes, anchoring with a leading or inner `/`, `dir/` for
directories only, `**`).

As in git, a deeper ignore file overrides a shallower one, a later line overrides an earlier one,
and nothing inside an ignored directory can be re-included. `.ignore` (ripgrep's, fd's) is read
after `.gitignore` in the same folder, so it wins. Above the folder walked, the ignore files of
the enclosing git repository (up to the folder holding `.git`) and its `.git/info/exclude` apply
too; outside a repository only the walked folder and what is below it count.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence

from pathspec import GitIgnoreSpec
from pathspec.pattern import RegexPattern

IGNORE_FILES = (".gitignore", ".ignore")
_MAX_IGNORE_FILE = 1 << 20  # a larger "ignore file" is not one; reading it would only cost time


class GitIgnorePatterns:
    """The patterns of one ignore file, matched the way git matches them.

    pathspec's `GitIgnoreSpec` answers for files: asked about a folder it lets a pattern that
    matches the folder's contents (`*`) beat a later directory pattern (`!*/`), so
    `*` / `!*/` / `!SKILL.md` ignored every folder. Here, as in git, each path (file or folder) is
    judged on its own by the last pattern that matches it exactly, a pattern ending in `/` matches
    folders only, and the walk (top down) keeps what is inside an ignored folder out. pathspec
    still translates each pattern (anchoring, `**`, character classes, escapes)."""

    def __init__(self, patterns: Sequence[tuple[RegexPattern, bool]]) -> None:
        self._patterns = tuple(patterns)  # (pattern, folders only), in file order

    @classmethod
    def from_lines(cls, lines: Sequence[str]) -> GitIgnorePatterns:
        """The patterns of `lines`; raises ValueError or TypeError on a line pathspec rejects."""
        patterns: list[tuple[RegexPattern, bool]] = []
        for line in lines:
            text = _TRAILING_BLANKS.sub("", line)
            folders_only = text.endswith("/") and not text.endswith("\\/") and text.lstrip("!") != "/"
            for pattern in GitIgnoreSpec.from_lines([text[:-1] if folders_only else line]).patterns:
                if pattern.include is not None:  # None: a blank line or a comment
                    patterns.append((pattern, folders_only))
        return cls(patterns)

    def __len__(self) -> int:
        return len(self._patterns)

    def verdict(self, path: str, is_dir: bool) -> bool | None:
        """True: `path` (relative, `/`-separated) is ignored; False: a negation re-includes it;
        None: no pattern matches it."""
        for pattern, folders_only in reversed(self._patterns):
            if folders_only and not is_dir:
                continue
            match = pattern.match_file(path)
            # a match through the `ps_d` group is one of the path's folders, not the path itself
            if match is not None and not match.match.groupdict().get(_DIR_MARK):
                return bool(pattern.include)
        return None

    def matches(self, path: str, is_dir: bool = False) -> bool:
        """Whether `path` is ignored, or one of the folders on its way is (a folder's contents go
        with it, as in git)."""
        parts = path.split("/")
        for depth in range(1, len(parts) + 1):
            if self.verdict("/".join(parts[:depth]), is_dir or depth < len(parts)):
                return True
        return False


# A layer: the folder whose ignore file it is (with a trailing separator) and its patterns.
_Layer = tuple[str, GitIgnorePatterns]
_TRAILING_BLANKS = re.compile(r"(?<!\\)[ \t]+$")  # git drops trailing blanks unless escaped
_DIR_MARK = "ps_d"  # pathspec's group name for "matched as one of the path's folders"


def _read_lines(path: str) -> list[str]:
    try:
        with open(path, "rb") as handle:
            data = handle.read(_MAX_IGNORE_FILE)
    except OSError:  # missing, a directory, unreadable: no patterns
        return []
    return data.decode("utf-8", errors="replace").splitlines()


def _spec(lines: Sequence[str]) -> GitIgnorePatterns | None:
    try:
        spec = GitIgnorePatterns.from_lines(lines)
    except (ValueError, TypeError):  # pathspec rejects a malformed line; git ignores such lines
        spec = GitIgnorePatterns.from_lines([line for line in lines if valid_pattern(line)])
    return spec if len(spec) else None


def valid_pattern(line: str) -> bool:
    """Whether pathspec accepts `line` as a gitignore pattern."""
    try:
        GitIgnorePatterns.from_lines([line])
    except (ValueError, TypeError):
        return False
    return True


def _repository_root(folder: str, probed: list[str] | None = None) -> str | None:
    """The nearest folder at or above `folder` that holds `.git` (a directory or a worktree file);
    each `.git` looked for is added to `probed`."""
    current = folder
    while True:
        marker = os.path.join(current, ".git")
        if probed is not None:
            probed.append(marker)
        if os.path.exists(marker):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


class IgnoreFilter:
    """Decides whether a path under `root` is left out of discovery.

    `patterns` (the config's `exclude` and `extend-exclude`) are relative to `patterns_base`, the
    config's folder, and exclude whatever they match whether or not ignore files are read.
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        respect_gitignore: bool = True,
        patterns: Sequence[str] = (),
        patterns_base: str | os.PathLike[str] | None = None,
    ) -> None:
        self.root = os.path.abspath(root)
        self.respect_gitignore = respect_gitignore
        # What the filter decides from besides the walked folders' listings (a cached listing
        # checks these): the config's patterns, and every ignore file and `.git` looked for.
        self.probed: list[str] = []
        self._patterns = _spec(patterns) if patterns else None
        base = os.path.abspath(patterns_base) if patterns_base is not None else self.root
        self.fingerprint = repr((respect_gitignore, tuple(patterns), base))
        self._patterns_prefix = base.rstrip(os.sep) + os.sep
        self._layers: dict[str, tuple[_Layer, ...]] = {}
        # The ignore files a walk saw in a folder's listing (`listed`): the others are not opened.
        self._present: dict[str, list[str]] = {}
        self._dir_verdicts: dict[str, bool] = {}
        if respect_gitignore:
            self._layers[self.root] = self._outer_layers() + self._own_layers(self.root)

    @property
    def active(self) -> bool:
        """False when nothing can ever be left out (no patterns, ignore files not read)."""
        return self.respect_gitignore or self._patterns is not None

    def _outer_layers(self) -> tuple[_Layer, ...]:
        """The layers in force at `root` from the enclosing repository's folders above it."""
        repository = _repository_root(self.root, self.probed)
        if repository is None or repository == self.root:
            layers: list[_Layer] = []
            if repository is not None:
                layers += self._exclude_file_layer(repository)
            return tuple(layers)
        layers = list(self._exclude_file_layer(repository))
        folders: list[str] = []
        current = os.path.dirname(self.root)
        while True:
            folders.append(current)
            if current == repository:
                break
            parent = os.path.dirname(current)
            if parent == current:
                break
            current = parent
        for folder in reversed(folders):
            layers += self._own_layers(folder)
        # A folder asked for by name is walked even where the repository ignores it (a corpus kept
        # in an ignored folder): then the rules above it, written for the repository, stay out.
        relative = self.root[len(repository.rstrip(os.sep)) + 1 :].replace(os.sep, "/")
        parts = relative.split("/")
        for depth in range(1, len(parts) + 1):
            folder_rel = "/".join(parts[:depth]) + "/"
            folder_abs = repository.rstrip(os.sep) + os.sep + folder_rel
            for prefix, spec in reversed(layers):
                if not folder_abs.startswith(prefix):
                    continue
                verdict = spec.verdict(folder_abs[len(prefix) :].rstrip("/"), True)
                if verdict is not None:
                    if verdict:
                        return ()
                    break
        return tuple(layers)

    def _exclude_file_layer(self, repository: str) -> tuple[_Layer, ...]:
        path = os.path.join(repository, ".git", "info", "exclude")
        self.probed.append(path)
        spec = _spec(_read_lines(path))
        return ((repository.rstrip(os.sep) + os.sep, spec),) if spec is not None else ()

    def listed(self, folder: str, names: Iterable[str]) -> None:
        """The names in `folder` (absolute, as `ignored_entry` gets it), as a walk just listed them:
        the ignore files not among them are not looked for when its entries are judged (a corpus
        has some 28,000 folders and few ignore files)."""
        self._present[folder] = [name for name in names if name in IGNORE_FILES]

    def _own_layers(self, folder: str) -> tuple[_Layer, ...]:
        lines: list[str] = []
        present = self._present.pop(folder, None)
        inside = os.path.join(folder, "")  # a name added to it: os.path.join(folder, name), once per folder
        for name in IGNORE_FILES:  # .ignore after .gitignore: its lines win
            path = inside + name
            self.probed.append(path)
            if present is None or name in present:
                lines += _read_lines(path)
        spec = _spec(lines) if lines else None
        return ((folder.rstrip(os.sep) + os.sep, spec),) if spec is not None else ()

    def _layers_in(self, folder: str) -> tuple[_Layer, ...]:
        """The layers that judge the entries of `folder` (a folder at or below `root`)."""
        found = self._layers.get(folder)
        if found is None:
            parent = os.path.dirname(folder)
            inherited = self._layers_in(parent) if parent != folder and parent.startswith(self.root) else ()
            found = self._layers[folder] = inherited + self._own_layers(folder)
        return found

    def ignored_entry(self, folder: str, name: str, is_dir: bool) -> bool:
        """Whether entry `name` of `folder` (absolute, at or below `root`, itself not ignored) is
        left out. The walk asks this for each entry it meets, top down (a corpus has some 43,000:
        the path is made only when a pattern or an ignore file is there to judge it)."""
        path = ""
        if self._patterns is not None:
            path = os.path.join(folder, name)
            if path.startswith(self._patterns_prefix):
                rel = path[len(self._patterns_prefix) :].replace(os.sep, "/")
                if self._patterns.matches(rel, is_dir):  # folders above the walked one count too
                    return True
        if not self.respect_gitignore:
            return False
        layers = self._layers_in(folder)
        if not layers:
            return False
        path = path or os.path.join(folder, name)
        for prefix, spec in reversed(layers):  # the deepest file decides first
            rel = path[len(prefix) :].replace(os.sep, "/")
            verdict = spec.verdict(rel, is_dir)
            if verdict is not None:
                return verdict
        return False

    def ignored(self, path: str | os.PathLike[str], is_dir: bool = False) -> bool:
        """Whether any path below `root` is left out: it, or a folder on the way to it, is ignored.
        Paths outside `root` are never left out."""
        full = os.path.abspath(path)
        if not full.startswith(self.root.rstrip(os.sep) + os.sep):
            return False
        parts = full[len(self.root) :].strip(os.sep).split(os.sep)
        folder = self.root
        for part in parts[:-1]:
            path_so_far = os.path.join(folder, part)
            verdict = self._dir_verdicts.get(path_so_far)
            if verdict is None:
                verdict = self._dir_verdicts[path_so_far] = self.ignored_entry(folder, part, True)
            if verdict:
                return True
            folder = path_so_far
        return self.ignored_entry(folder, parts[-1], is_dir)
