"""What the command modules share: the usage error, how paths are shown, rule-code options and
the workspace an engine command works on."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from skills_lsp.core.files.cache import default_cache_dir

if TYPE_CHECKING:  # the stages are imported by the commands that use them (a warm `check` uses none)
    from typing import TypeAlias

    from skills_lsp.core.files.config import Config
    from skills_lsp.core.index.skill_index import SkillIndex

    # What each command module's register() adds its commands to.
    Subparsers: TypeAlias = argparse._SubParsersAction[argparse.ArgumentParser]


class UsageError(Exception):
    """Bad command-line input: exit status 2."""


class DeferredHelp(str):
    """An option's help text made when help is printed (argparse formats help with `%`): for
    a text drawn from a table whose import a command should not pay for when it only runs."""

    make: Callable[[], str]

    def __new__(cls, make: Callable[[], str]) -> DeferredHelp:
        help_text = super().__new__(cls, "(help)")
        help_text.make = make
        return help_text

    def __mod__(self, params: Any) -> str:
        text: str = self.make() % params
        return text


_LEFT_TO_EXIT = "left_to_exit"


def leave_to_exit(args: argparse.Namespace, *built: object) -> None:
    """Hand what a command built, and has written out, to the process's end: `main`, when it is
    the program (not called from Python), ends the process without freeing it one object at a
    time, nor the interpreter's modules (a check of 15,000 files holds some 100,000 findings: the
    two took 0.1-0.15 s after the last line was written). Nothing the command does is skipped:
    its output is flushed, its files written and its workers stopped before it returns."""
    setattr(args, _LEFT_TO_EXIT, built)


def left_to_exit(args: argparse.Namespace) -> bool:
    """Whether the command handed what it built to the process's end (`leave_to_exit`)."""
    return hasattr(args, _LEFT_TO_EXIT)


def end_process(code: int, *streams: TextIO) -> None:
    """Flush `streams` (and the standard ones) and end the process with `code` at once, as a
    program's last step. If a stream cannot be flushed (a closed pipe), this returns: the
    interpreter's own exit then reports it as it would have."""
    try:
        for stream in (*streams, sys.stdout, sys.stderr):
            stream.flush()
    except (OSError, ValueError):
        return
    os._exit(code)


def split_codes(text: str | None) -> tuple[str, ...] | None:
    """The rule codes or prefixes of a comma-separated option, as given (not checked)."""
    if text is None:
        return None
    return tuple(c.strip().upper() for c in text.split(",") if c.strip())


def parse_codes(text: str | None, option: str) -> tuple[str, ...] | None:
    from skills_lsp.core.rules import RULES

    codes = split_codes(text)
    if codes is None:
        return None
    if not codes:
        raise UsageError(f"{option} needs at least one rule code or prefix, such as SK2 or SK401 (or ALL)")
    for code in codes:
        if code != "ALL" and not any(c.startswith(code) for c in RULES):
            raise UsageError(f"no rule code starts with {code!r}; see `skills-lsp rules`")
    return codes


def printable(text: str) -> str:
    """`text` with the undecodable bytes of a file name (`os.fsdecode`'s lone surrogates) shown
    as backslash escapes, `\\xff`, so it can be written to any UTF-8 stream and into JSON."""
    if text.isascii():  # most messages: nothing to encode to know
        return text
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    try:
        raw = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate that is no escaped byte
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return raw.decode("utf-8", "backslashreplace")


def relative(path: str) -> str | None:
    """`path` relative to the working directory with `/` separators, or None when it is not
    below it."""
    absolute = os.path.abspath(path)
    cwd = os.getcwd()
    # POSIX: no drives, no case folding (and `//x`, which normpath keeps, is left to relpath)
    if os.sep == "/" and os.path.altsep is None and not absolute.startswith("//") and cwd[1:2] != "/":
        return _below(absolute, cwd)
    try:
        rel = os.path.relpath(absolute, cwd)
    except ValueError:  # pragma: no cover - another Windows drive
        return None
    if rel == os.pardir or rel.startswith(os.pardir + os.sep):
        return None
    return rel.replace(os.sep, "/")


def _below(absolute: str, cwd: str) -> str | None:
    """`relative` for normalized absolute POSIX paths not led by `//`: what relpath works out part
    by part (for every file with a finding), from the prefix alone."""
    if absolute == cwd:
        return "."
    below = cwd if cwd.endswith("/") else cwd + "/"
    return absolute[len(below) :] if absolute.startswith(below) else None


@cache
def display(path: str) -> str:
    """`path` relative to the working directory when it is below it, with `/` separators;
    printable (see `printable`)."""
    rel = relative(path)
    return printable(path.replace(os.sep, "/") if rel is None else rel)


def add_root(parser: argparse.ArgumentParser) -> None:
    """The workspace folder as `--root`, like `select`, `test` and `eval`, and as the positional
    these commands took first (kept so existing scripts run)."""
    parser.add_argument("root", nargs="?", default=None, help="workspace folder (default: .; or --root)")
    parser.add_argument("--root", dest="root_option", metavar="ROOT", help="workspace folder (default: .)")


def workspace_of(args: argparse.Namespace) -> tuple[Path, Config]:
    """The workspace folder of an engine command and its config."""
    positional, option = getattr(args, "root", None), getattr(args, "root_option", None)
    if positional is not None and option is not None and Path(positional) != Path(option):
        raise UsageError(f"two workspace folders given ({positional} and --root {option}); give one")
    root = Path(positional or option or ".")
    if not root.is_dir():
        raise UsageError(f"not a directory: {root}")
    from skills_lsp.core.workspace.settings import resolve_config

    config, _ = resolve_config([root])
    return root, config


def load_index(args: argparse.Namespace, keep_stamps: bool = False) -> SkillIndex:
    """The command's index: the crate's with `--crate`, else the workspace index through the
    persistent store in the workspace's cache folder (the one `check` uses); `keep_stamps`: with
    what its documents rest on (`SkillIndex.stamps`, for `select`'s saved state)."""
    from skills_lsp.core.index.skill_index import load_skill_index

    root, config = workspace_of(args)
    if getattr(args, "crate", False):
        return load_skill_index(root)
    return load_workspace(root, config, keep_stamps)


def load_workspace(root: Path, config: Config, keep_stamps: bool = False) -> SkillIndex:
    """`root`'s workspace index as every command sees it: the config's roots, depth and ignore
    rules, through the persistent store in the workspace's cache folder (the one `check` uses)."""
    from skills_lsp.core.index.store import load_cached_workspace_index

    cache_dir = default_cache_dir([root], config)
    return load_cached_workspace_index(
        root,
        config.roots_for(root),
        config.max_depth,
        cache_dir,
        config.ignore_filter(root),
        keep_stamps=keep_stamps,
    )


def keep_vectors(args: argparse.Namespace, scorers: Sequence[str]) -> None:
    """Semantic scorers: reuse skill vectors saved by earlier runs, in the workspace's cache
    folder (the one `check` uses); main() saves what this run adds."""
    root, config = workspace_of(args)
    attach_vectors(root, config, scorers)


def attach_vectors(root: Path, config: Config, scorers: Sequence[str]) -> None:
    """Embedding scorers reuse the skill vectors kept in `root`'s cache folder (the one `check`
    uses); nothing to do for the others."""
    from skills_lsp.core.routing.scorer import embeds

    if embeds(scorers):
        from skills_lsp.core.routing.semantic import keep_vectors_in

        keep_vectors_in(default_cache_dir([root], config))


def tags(text: str | None) -> list[str]:
    return [t.strip() for t in (text or "").split(",") if t.strip()]


def scorer_help(default: str) -> str:
    """The `--scorer` help text, from the scorer table."""
    from skills_lsp.core.routing.scorer import SCORERS

    extras = [name for name, spec in SCORERS.items() if spec.extra]
    unit = [name for name, spec in SCORERS.items() if spec.unit_scale]
    return f"{', '.join(SCORERS)} ({default}); {', '.join(unit)} score 0..1" + (
        f" ({' and '.join(extras)} need the `semantic` extra)" if extras else ""
    )
