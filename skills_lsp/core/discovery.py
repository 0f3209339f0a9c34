"""Finding skill files on disk.

Two families of functions:
- `discover_skill_files` and `discover_instruction_files` reproduce adk-skill 0.6.0 exactly
  (its walk, skip rules and order), quirks included, for crate parity.
- `discover_agent_skills` and `discover_workspace` are ours: every layout at once, a richer skip
  list (hidden caches, virtualenvs), bounded depth, no symlink loops, deterministic order.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path, PurePosixPath

from skills_lsp.core.errors import InvalidSkillsRoot
from skills_lsp.core.model import FileKind, SkillFile

CONVENTION_FILES = ("AGENTS.md", "AGENT.md", "CLAUDE.md", "GEMINI.md", "COPILOT.md", "SKILLS.md", "SOUL.md")
_CONVENTION_UPPER = frozenset(n.upper() for n in CONVENTION_FILES)
IGNORED_DIRS = (".git", ".hg", ".svn", "target", "node_modules", ".next", "dist", "build", "coverage")
_IGNORED_LOWER = frozenset(d.lower() for d in IGNORED_DIRS)
SUPPORT_DIRS = ("references", "agents", "scripts")
_SUPPORT_LOWER = frozenset(SUPPORT_DIRS)
SKILL_DIRS = (".skills", ".claude/skills")

# Our workspace walk also skips tool caches and environments nobody writes skills in.
_EXTRA_SKIPPED = frozenset(
    {
        "__pycache__", ".venv", "venv", ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".ruff_cache",
        ".hypothesis", ".cache", ".gradle", ".idea", ".skills-lsp-cache", "site-packages", ".eggs",
    }
)
DEFAULT_AGENT_SKILL_ROOTS = ("", "skills", ".agents/skills", ".claude/skills", ".github/skills", ".skills")
DEFAULT_MAX_DEPTH = 8


def path_sort_key(path: Path | str) -> tuple[str, ...]:
    """Rust `PathBuf` order: component by component (`a/b` < `a-b`)."""
    return PurePosixPath(str(path).replace(os.sep, "/")).parts


def _sorted_unique(paths: Iterable[Path]) -> list[Path]:
    return sorted(set(paths), key=path_sort_key)


def _walk_files(top: Path) -> Iterator[Path]:
    """Regular files under `top`, not following symlinks (walkdir's default)."""
    stack = [top]
    while stack:
        current = stack.pop()
        try:
            entries = list(os.scandir(current))
        except OSError:
            continue
        for entry in entries:
            if entry.is_symlink():
                continue
            if entry.is_dir(follow_symlinks=False):
                stack.append(Path(entry.path))
            elif entry.is_file(follow_symlinks=False):
                yield Path(entry.path)


def _has_support_component(path: Path) -> bool:
    return any(part.lower() in _SUPPORT_LOWER for part in path.parts)


def discover_skill_files(root: str | os.PathLike[str]) -> list[Path]:
    """adk-skill's skill files: `.skills/**/*.md` and `.claude/skills/**/*.md` under `root`.

    Lowercase `.md` only, symlinks skipped, and a file is dropped when any component of its
    path (ancestors of `root` included) is `references`, `agents` or `scripts`.
    """
    base = Path(root)
    found: list[Path] = []
    for sub in SKILL_DIRS:
        top = base / sub
        if not top.is_dir():
            continue
        for path in _walk_files(top):
            if path.suffix == ".md" and not _has_support_component(path):
                found.append(path)
    return _sorted_unique(found)


def is_convention_file(name: str) -> bool:
    return name.upper() in _CONVENTION_UPPER


def _convention_walk(base: Path) -> Iterator[Path]:
    if base.name.lower() in _IGNORED_LOWER:
        return
    stack = [base]
    while stack:
        current = stack.pop()
        try:
            entries = list(os.scandir(current))
        except OSError:
            continue
        for entry in entries:
            if entry.is_symlink():
                continue
            if entry.is_dir(follow_symlinks=False):
                if entry.name.lower() not in _IGNORED_LOWER:
                    stack.append(Path(entry.path))
            elif entry.is_file(follow_symlinks=False) and is_convention_file(entry.name):
                path = Path(entry.path)
                if entry.name.upper() == "SOUL.MD" and path.parent != base:
                    continue
                yield path


def discover_instruction_files(root: str | os.PathLike[str]) -> list[Path]:
    """adk-skill's instruction files: skill files plus convention files anywhere under `root`
    (AGENTS.md, CLAUDE.md, ...; SOUL.md only at the root), in `PathBuf` order.

    Raises `InvalidSkillsRoot` when `root` exists but is not a directory.
    """
    base = Path(root)
    if not base.exists():
        return []
    if not base.is_dir():
        raise InvalidSkillsRoot(base)
    return _sorted_unique([*discover_skill_files(base), *_convention_walk(base)])


def _skip_dir(name: str, hidden_ok: bool = False) -> bool:
    lower = name.lower()
    if lower in _IGNORED_LOWER or lower in _EXTRA_SKIPPED:
        return True
    return name.startswith(".") and not hidden_ok


def discover_agent_skills(
    root: str | os.PathLike[str],
    roots: Sequence[str] = DEFAULT_AGENT_SKILL_ROOTS,
    max_depth: int = DEFAULT_MAX_DEPTH,
) -> list[Path]:
    """agentskills.io skills: `SKILL.md` files (exact name) in directories under the given roots.

    `roots` are relative to `root` ("" is `root` itself, walked without entering hidden
    directories; the hidden roots such as `.agents/skills` are listed explicitly). Symlinked
    directories are followed once (a real-path set prevents loops); support folders inside a
    skill (`scripts/`, `references/`, `assets/`) are not searched for nested skills.
    """
    base = Path(root)
    found: set[Path] = set()
    visited: set[str] = set()
    for rel in roots:
        top = base / rel if rel else base
        if not top.is_dir():
            continue
        stack: list[tuple[Path, int]] = [(top, 0)]
        while stack:
            current, depth = stack.pop()
            try:
                real = os.path.realpath(current)
            except OSError:  # pragma: no cover - realpath rarely fails
                continue
            if real in visited:
                continue
            visited.add(real)
            try:
                entries = sorted(os.scandir(current), key=lambda e: e.name)
            except OSError:
                continue
            is_skill = any(e.name == "SKILL.md" and e.is_file() for e in entries)
            if is_skill:
                found.add(current / "SKILL.md")
            if depth >= max_depth:
                continue
            for entry in entries:
                if not entry.is_dir() or _skip_dir(entry.name):
                    continue
                if is_skill and entry.name in ("scripts", "references", "assets", "evals"):
                    continue
                stack.append((Path(entry.path), depth + 1))
    return _sorted_unique(found)


def discover_workspace(
    root: str | os.PathLike[str],
    roots: Sequence[str] = DEFAULT_AGENT_SKILL_ROOTS,
    max_depth: int = DEFAULT_MAX_DEPTH,
) -> list[SkillFile]:
    """Every skill and instruction file of a workspace, each with its layout, in path order."""
    base = Path(root)
    files: dict[Path, FileKind] = {}
    for path in discover_agent_skills(base, roots, max_depth):
        files[path] = FileKind.AGENT_SKILL
    for path in discover_skill_files(base):
        files.setdefault(path, FileKind.FLAT_SKILL)
    for path in _workspace_conventions(base, max_depth):
        files.setdefault(path, FileKind.CONVENTION)
    return [SkillFile(str(p), files[p], str(base)) for p in sorted(files, key=path_sort_key)]


def _workspace_conventions(base: Path, max_depth: int) -> Iterator[Path]:
    stack: list[tuple[Path, int]] = [(base, 0)]
    while stack:
        current, depth = stack.pop()
        try:
            entries = list(os.scandir(current))
        except OSError:
            continue
        for entry in entries:
            if entry.is_symlink():
                continue
            if entry.is_dir(follow_symlinks=False):
                if depth < max_depth and not _skip_dir(entry.name, hidden_ok=entry.name in (".claude", ".github", ".skills", ".agents")):
                    stack.append((Path(entry.path), depth + 1))
            elif entry.is_file(follow_symlinks=False) and is_convention_file(entry.name):
                path = Path(entry.path)
                if entry.name.upper() == "SOUL.MD" and path.parent != base:
                    continue
                yield path


def kind_of(path: str | os.PathLike[str]) -> FileKind:
    """The layout a single file belongs to, judged from its path."""
    p = Path(path)
    if p.name == "SKILL.md":
        return FileKind.AGENT_SKILL
    lowered = [part.lower() for part in p.parts]
    if is_convention_file(p.name) and ".skills" not in lowered:
        return FileKind.CONVENTION
    return FileKind.FLAT_SKILL
