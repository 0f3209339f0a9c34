"""Finding skill files on disk.

Two families of functions:
- `discover_skill_files` and `discover_instruction_files` reproduce adk-skill 0.6.0 exactly
  (its walk, skip rules and order), quirks included, for crate parity.
- `discover_agent_skills` and `discover_workspace` are ours: every layout at once, a richer skip
  list (hidden caches, virtualenvs), bounded depth, no symlink loops, deterministic order.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from skills_lsp.core.errors import InvalidSkillsRoot
from skills_lsp.core.files.ignore import IgnoreFilter
from skills_lsp.core.model import BUNDLE_DIRS, FileKind, SkillFile, ascii_lower, ascii_upper

CONVENTION_FILES = ("AGENTS.md", "AGENT.md", "CLAUDE.md", "GEMINI.md", "COPILOT.md", "SKILLS.md", "SOUL.md")
_CONVENTION_UPPER = frozenset(n.upper() for n in CONVENTION_FILES)
IGNORED_DIRS = (".git", ".hg", ".svn", "target", "node_modules", ".next", "dist", "build", "coverage")
_IGNORED_LOWER = frozenset(d.lower() for d in IGNORED_DIRS)
SUPPORT_DIRS = ("references", "agents", "scripts")  # the crate's skip list (not our BUNDLE_DIRS)
SKILL_DIRS = (".skills", ".claude/skills")

# Our workspace walk also skips tool caches and environments nobody writes skills in.
_EXTRA_SKIPPED = frozenset(
    {
        "__pycache__",
        ".venv",
        "venv",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".hypothesis",
        ".cache",
        ".gradle",
        ".idea",
        ".skills-lsp-cache",
        "site-packages",
        ".eggs",
    }
)
# Each runtime's own project folder too (Claude Code, Codex, Gemini CLI, Copilot): their skills get
# their runtime's profile (rules/profiles.LOCATION_PROFILES).
DEFAULT_AGENT_SKILL_ROOTS = (
    "",
    "skills",
    ".agents/skills",
    ".claude/skills",
    ".codex/skills",
    ".gemini/skills",
    ".github/skills",
    ".skills",
)
DEFAULT_MAX_DEPTH = 8


# Rust's `Component` order: RootDir < CurDir < ParentDir < Normal(name); encoded as prefixes so a
# tuple of plain strings compares like the crate's `Path` (`/a` < `../x` < `-y`).
_ROOT, _CUR, _PARENT, _NORMAL = "\x01", "\x02", "\x03", "\x04"


def path_sort_key(path: str | os.PathLike[str]) -> tuple[str, ...]:
    """Rust `Path` order, component by component (`a/b` < `a-b`): repeated and trailing
    separators and inner `.` components are ignored, a leading `.` and every `..` count."""
    text = os.fspath(path)
    if os.sep != "/":  # pragma: no cover - Windows
        text = text.replace(os.sep, "/")
    # Most paths are plain names between single separators: each is a Normal component, made in
    # one map (a corpus sorts some 16,000; the loop below took 30 ms more).
    absolute = text.startswith("/")
    names = (text[1:] if absolute else text).split("/")
    if "" not in names and "." not in names and ".." not in names:
        plain = map(_NORMAL.__add__, names)
        return (_ROOT, *plain) if absolute else tuple(plain)
    key: list[str] = [_ROOT] if absolute else []
    for index, part in enumerate(text.split("/")):
        if not part:
            continue
        if part == ".":
            if index == 0:
                key.append(_CUR)
        elif part == "..":
            key.append(_PARENT)
        else:
            key.append(_NORMAL + part)
    return tuple(key)


# Directories a walk listed, each with its mtime (ns) from a stat made before the listing, or -1
# when the stat failed: what a cached listing checks to know the walk would find the same (an entry
# added, removed or renamed in a directory changes its mtime). See files/frames.py.
Visited = dict[str, int]


@dataclass
class WalkRecord:
    """What walks listed (`dirs`, see `Visited`) and the ignore files and `.git` markers their
    filters looked for (`probed`): what a cache of their result must find unchanged."""

    dirs: Visited = field(default_factory=dict)
    probed: list[str] = field(default_factory=list)


# Listings by directory path, handed from one walk to the next: the crate's skill walk keeps its
# listings, and its convention walk, which covers `.skills/` again, takes them (each once, so that
# nothing outside the skill folders is held: a listing is about 360 bytes an entry).
Listings = dict[str, list[os.DirEntry[str]]]


def _list_dir(
    path: str,
    visited: Visited | None,
    listings: Listings | None = None,
    keep: bool = False,
    fixed: Listings | None = None,
) -> list[os.DirEntry[str]]:
    """The entries of `path` (raises OSError), its mtime recorded in `visited` first. With
    `listings`: one found there is taken from it; with `keep`, one made is put there. `fixed`:
    listings a walk takes as they are, every time, never listed nor recorded in `visited` (a
    share of a walk split between processes, `discover_instruction_share`; no walk with
    `visited` takes fixed listings)."""
    if fixed is not None:
        given = fixed.get(path)
        if given is not None:
            return given
    if listings is not None:
        known = listings.pop(path, None)
        if known is not None:
            return known
    if visited is not None:
        try:
            visited[path] = os.stat(path).st_mtime_ns
        except OSError:
            visited[path] = -1
    entries = list(os.scandir(path))
    if listings is not None and keep:
        listings[path] = entries
    return entries


def regular_files(
    top: Path | str,
    enter: Callable[[str], bool] = lambda name: True,
    visited: Visited | None = None,
    listings: Listings | None = None,
    keep: bool = False,
    fixed: Listings | None = None,
) -> Iterator[os.DirEntry[str]]:
    """Regular files under `top`, never following symlinks (walkdir's default, as the crate
    uses it); a directory is entered when `enter(name)` is true. `listings`, `keep`, `fixed`: see
    `_list_dir`."""
    stack = [str(top)]
    while stack:
        current = stack.pop()
        try:
            entries = _list_dir(current, visited, listings, keep, fixed)
        except OSError:
            continue
        for entry in entries:
            if entry.is_symlink():
                continue
            if entry.is_dir(follow_symlinks=False):
                if enter(entry.name):
                    stack.append(entry.path)
            elif entry.is_file(follow_symlinks=False):
                yield entry


def component_pattern(*names: str) -> re.Pattern[str]:
    """A search for any of `names` as a whole component of a path, in any ASCII case (as the
    crate compares them): what `PurePath(path).parts` would show, without making the path
    (a cold index asks it of 15,000). On Windows both separators count, and a drive's letter."""
    alternatives = "|".join(re.escape(name) for name in names)
    if os.sep != "/":  # pragma: no cover - Windows
        return re.compile(rf"(?:^|[/\\]|^[A-Za-z]:)(?:{alternatives})(?:[/\\]|\Z)", re.I | re.A)
    return re.compile(rf"(?:^|/)(?:{alternatives})(?:/|\Z)", re.I | re.A)


_SUPPORT_COMPONENT = component_pattern(*SUPPORT_DIRS)  # the crate's skip list


def has_support_component(path: str | os.PathLike[str]) -> bool:
    return _SUPPORT_COMPONENT.search(os.fspath(path)) is not None


def _is_md(name: str) -> bool:
    """`Path(name).suffix == ".md"`: `.md` alone is a hidden file without a suffix."""
    return name.endswith(".md") and len(name) > 3


def _skill_file_paths(
    base: Path,
    crate_quirks: bool,
    visited: Visited | None,
    listings: Listings | None = None,
    fixed: Listings | None = None,
) -> list[str]:
    """`discover_skill_files`' paths as strings, unsorted (a cold index finds 15,000: paths are
    made and sorted once, by the caller)."""
    found: list[str] = []
    skip = 0 if crate_quirks else len(os.path.join(walk_top(base), ""))  # the part below `base` only
    for sub in SKILL_DIRS:
        top = skill_folder_path(base, sub)
        if not os.path.isdir(top):
            continue
        for entry in regular_files(top, visited=visited, listings=listings, keep=True, fixed=fixed):
            path = entry.path
            if _is_md(entry.name) and not has_support_component(path[skip:]):
                found.append(path)
    return found


def walk_order(path: str) -> str:
    """`path_sort_key`'s order for paths that walks made under one top (one spelling of it, then
    plain names joined by `/`), as one string: `/` as the lowest character, so a name sorts
    before any longer one it begins (`a/b` < `a-b`, as Rust compares components). 15,000 keys
    made this way cost a tenth of the tuples."""
    return path.replace("/", "\x00")


def _sorted_paths(paths: Iterable[str]) -> list[Path]:
    """A walk's paths (see `walk_order`), once each, in `PathBuf` order."""
    return [Path(p) for p in sorted(set(paths), key=walk_order if os.sep == "/" else path_sort_key)]


def discover_skill_files(
    root: str | os.PathLike[str], *, crate_quirks: bool = True, visited: Visited | None = None
) -> list[Path]:
    """adk-skill's skill files: `.skills/**/*.md` and `.claude/skills/**/*.md` under `root`.

    Lowercase `.md` only, symlinks skipped, and a file is dropped when any component of its
    path is `references`, `agents` or `scripts`. The crate checks the whole path, ancestors of
    `root` included (so a checkout under `/src/agents/` finds nothing); `crate_quirks=False`
    checks only the part below `root`, as our workspace discovery does.
    """
    return _sorted_paths(_skill_file_paths(Path(root), crate_quirks, visited))


def is_convention_file(name: str) -> bool:
    return ascii_upper(name) in _CONVENTION_UPPER


def _convention_walk(
    base: Path,
    visited: Visited | None = None,
    listings: Listings | None = None,
    fixed: Listings | None = None,
) -> Iterator[str]:
    if ascii_lower(base.name) in _IGNORED_LOWER:
        return
    top = walk_top(base)
    for entry in regular_files(top, _not_ignored, visited, listings, fixed=fixed):
        if is_convention_file(entry.name):
            if ascii_upper(entry.name) == "SOUL.MD" and os.path.dirname(entry.path) != top:
                continue
            yield entry.path


def _not_ignored(name: str) -> bool:
    return ascii_lower(name) not in _IGNORED_LOWER


def discover_instruction_files(root: str | os.PathLike[str], visited: Visited | None = None) -> list[Path]:
    """adk-skill's instruction files: skill files plus convention files anywhere under `root`
    (AGENTS.md, CLAUDE.md, ...; SOUL.md only at the root), in `PathBuf` order.

    Raises `InvalidSkillsRoot` when `root` exists but is not a directory.
    """
    return _instruction_files(root, visited, None)


def discover_instruction_share(root: str | os.PathLike[str], listings: Listings) -> list[Path]:
    """The instruction files of one share of the crate's walk of `root`, in `PathBuf` order: the
    walks take the directories' `listings` as given (their paths spelt as `walk_top` and
    `skill_folder_path` spell them), so one process can walk some of `.skills/`'s entries and
    another the rest (skill_index._read_split)."""
    return _instruction_files(root, None, listings)


def _instruction_files(
    root: str | os.PathLike[str], visited: Visited | None, fixed: Listings | None
) -> list[Path]:
    base = Path(root)
    if not base.exists():
        return []
    if not base.is_dir():
        raise InvalidSkillsRoot(os.fspath(root))  # the path as given, as the crate prints it
    listings: Listings = {}
    skills = _skill_file_paths(base, True, visited, listings, fixed)
    return _sorted_paths([*skills, *_convention_walk(base, visited, listings, fixed)])


def walk_top(root: str | os.PathLike[str]) -> str:
    """`root` as the crate's walks spell it (the convention walk's top)."""
    return str(Path(root))


def skill_folder_path(root: str | os.PathLike[str], folder: str) -> str:
    """`root`'s skill folder (one of SKILL_DIRS) as the crate's walks spell it: `./.skills`
    under the root `.`, so the two walks' paths compare equal as strings and share listings."""
    return os.path.join(os.path.join(walk_top(root), ""), *folder.split("/"))


def _skip_dir(name: str, hidden_ok: bool = False) -> bool:
    lower = ascii_lower(name)
    if lower in _IGNORED_LOWER or lower in _EXTRA_SKIPPED:
        return True
    return name.startswith(".") and not hidden_ok


# A skill's own material: not searched for more skills or project instructions.
_SKILL_MATERIAL = frozenset({*BUNDLE_DIRS, "evals"})


def _walk_workspace(
    base: Path,
    roots: Sequence[str],
    max_depth: int,
    ignore: IgnoreFilter | None = None,
    visited: Visited | None = None,
    found: Callable[[str], object] | None = None,
) -> tuple[list[str], list[str]]:
    """One walk of the workspace: (agentskills SKILL.md paths, convention file paths). `found`
    is called with each SKILL.md path as the walk finds it (in walk order, not path order).

    Hidden directories are entered only on the way to a configured root (`.agents/skills`, ...)
    or, for convention files, `.claude`, `.github`, `.skills` and `.agents`. A skill's bundled
    folders (`scripts/`, `references/`, `assets/`, `evals/`) are not entered: what they hold is
    the skill's material, not more skills or project instructions. Symlinked directories are
    followed; a (device, inode) set prevents loops and double visits. With `ignore`, what it
    leaves out (`.gitignore`, `exclude`, ...) is neither entered nor reported.
    """
    if ignore is not None and not ignore.active:
        ignore = None
    root_parts = [tuple(PurePosixPath(r).parts) for r in roots]
    everywhere = () in root_parts  # the workspace root itself is a root
    hidden_ok = {part for parts in root_parts for part in parts if part.startswith(".")}
    hidden_ok |= {".claude", ".codex", ".gemini", ".github", ".skills", ".agents"}  # runtimes' own folders
    skills: list[str] = []
    conventions: list[str] = []
    seen: set[tuple[int, int]] = set()
    try:
        st = base.stat()
    except OSError:
        return skills, conventions
    seen.add((st.st_dev, st.st_ino))
    # (path as walked, path relative to the workspace, device, absolute path for `ignore`)
    stack: list[tuple[str, tuple[str, ...], int, str]] = [(str(base), (), st.st_dev, os.path.abspath(base))]
    while stack:
        current, rel, device, absolute = stack.pop()
        try:
            entries = _list_dir(current, visited)
        except OSError:
            continue
        if ignore is not None:  # only what the walk could use is judged (not every script or image)
            ignore.listed(absolute, (e.name for e in entries))
            entries = [
                e
                for e in entries
                if not (
                    (e.name == "SKILL.md" or e.is_dir() or is_convention_file(e.name))
                    and ignore.ignored_entry(absolute, e.name, e.is_dir())
                )
            ]
        in_root = everywhere or any(rel[: len(parts)] == parts for parts in root_parts)
        is_skill = False
        if in_root:
            for entry in entries:
                if entry.name == "SKILL.md" and entry.is_file():
                    is_skill = True
                    break
        # os.path.join(absolute, name) for each folder below, as a prefix made once (a corpus has
        # some 22,000 folders, and os.path.join is a Python function of several steps).
        absolute_inside = os.path.join(absolute, "")
        if is_skill:
            skills.append(os.path.join(current, "SKILL.md"))
            if found is not None:
                found(skills[-1])
        depth = len(rel)
        for entry in entries:
            name = entry.name
            if entry.is_dir():
                if depth >= max_depth or _skip_dir(name, hidden_ok=name in hidden_ok):
                    continue
                if is_skill and name in _SKILL_MATERIAL:
                    continue
                if entry.is_symlink():
                    try:
                        info = entry.stat()
                    except OSError:
                        continue
                    key = (info.st_dev, info.st_ino)
                else:  # a plain directory: its inode comes with the listing, no stat needed
                    key = (device, entry.inode())
                if key in seen:
                    continue
                seen.add(key)
                stack.append((entry.path, (*rel, name), key[0], absolute_inside + name))
            elif is_convention_file(name) and not entry.is_symlink() and entry.is_file():
                if ascii_upper(name) == "SOUL.MD" and depth:
                    continue
                conventions.append(entry.path)
    return skills, conventions


def discover_agent_skills(
    root: str | os.PathLike[str],
    roots: Sequence[str] = DEFAULT_AGENT_SKILL_ROOTS,
    max_depth: int = DEFAULT_MAX_DEPTH,
    ignore: IgnoreFilter | None = None,
) -> list[Path]:
    """agentskills.io skills: `SKILL.md` files (exact name) in directories under the given roots.

    `roots` are relative to `root` ("" is `root` itself, walked without entering hidden
    directories; the hidden roots such as `.agents/skills` are listed explicitly). Symlinked
    directories are followed once; support folders inside a skill (`scripts/`, `references/`,
    `assets/`, `evals/`) are not searched for nested skills. Depth is bounded.
    """
    found = _walk_workspace(Path(root), roots, max_depth, ignore)[0]
    return [Path(p) for p in sorted(set(found), key=path_sort_key)]


def discover_workspace(
    root: str | os.PathLike[str],
    roots: Sequence[str] = DEFAULT_AGENT_SKILL_ROOTS,
    max_depth: int = DEFAULT_MAX_DEPTH,
    ignore: IgnoreFilter | None = None,
    visited: Visited | None = None,
    found: Callable[[str], object] | None = None,
) -> list[SkillFile]:
    """Every skill and instruction file of a workspace, each with its layout, in path order;
    without what `ignore` leaves out (`.gitignore`, `.ignore`, the config's `exclude`). With
    `visited`, the directories listed are recorded there (see `Visited`). `found` is called with
    each `SKILL.md` path as the walk finds it, before the list is complete (`check` starts
    checking them meanwhile); the list gives it `os.path.normpath`'s spelling."""
    base = Path(root)
    skills, conventions = _walk_workspace(base, roots, max_depth, ignore, visited, found)
    # One spelling per file (`./.claude/x` and `.claude/x` are the same file).
    files: dict[str, FileKind] = dict.fromkeys(map(os.path.normpath, skills), FileKind.AGENT_SKILL)
    for path in discover_skill_files(base, crate_quirks=False, visited=visited):
        if ignore is not None and ignore.active and ignore.ignored(path):
            continue
        files.setdefault(os.path.normpath(path), FileKind.FLAT_SKILL)
    for conv in conventions:
        files.setdefault(os.path.normpath(conv), FileKind.CONVENTION)
    return [SkillFile(p, files[p], str(base)) for p in sorted(files, key=path_sort_key)]


def workspace_kind(path: Path, root: Path) -> FileKind | None:
    """The layout `discover_workspace(root)` gives `path`, judged from the path alone (the
    editor asks of one open file; ignore files, skill roots and depth are not consulted), or
    None for a file it never lists: a `SKILL.md` anywhere; a lowercase `.md` under `root`'s
    `.skills/` or `.claude/skills/` outside the crate's support folders; a convention file
    outside ignored folders (`SOUL.md` only at `root`). Outside `root`, judged by `kind_of`'s
    rules."""
    if path.name == "SKILL.md":
        return FileKind.AGENT_SKILL
    try:
        relative = path.relative_to(root)
    except ValueError:  # not in the folder: the path's own parts decide
        lowered = [ascii_lower(p) for p in path.parts]
        if path.suffix == ".md" and (".skills" in lowered or ("skills" in lowered and ".claude" in lowered)):
            return kind_of(path)
        return FileKind.CONVENTION if is_convention_file(path.name) else None
    parts = relative.parts
    if (
        path.suffix == ".md"
        and any(parts[: len(PurePosixPath(sub).parts)] == PurePosixPath(sub).parts for sub in SKILL_DIRS)
        and not has_support_component(relative)
    ):
        return FileKind.FLAT_SKILL
    if not is_convention_file(path.name) or any(ascii_lower(p) in _IGNORED_LOWER for p in parts[:-1]):
        return None
    if ascii_upper(path.name) == "SOUL.MD" and len(parts) > 1:
        return None
    return FileKind.CONVENTION


def kind_of(path: str | os.PathLike[str]) -> FileKind:
    """The layout a single file belongs to, judged from its path."""
    p = Path(path)
    if p.name == "SKILL.md":
        return FileKind.AGENT_SKILL
    lowered = [ascii_lower(part) for part in p.parts]
    if is_convention_file(p.name) and ".skills" not in lowered:
        return FileKind.CONVENTION
    return FileKind.FLAT_SKILL
