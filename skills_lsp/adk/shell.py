"""`SkillsShellTool`: a restricted shell over a skills root (the shell model of the plugin design).

A command line is split like a POSIX shell would (`shlex`), but never run by one:
- shell operators and substitutions (`;`, `&`, `|`, `<`, `>`, `` ` ``, `$`, parentheses, newlines)
  are refused before anything else;
- the program must be on the allow-list (`ls`, `cat`, `head`, `tail`, `grep`, `find`, `wc`,
  `python`, ... by bare name) and some of its options are refused (`python -c`, `find -exec`,
  `grep -R`, ...: anything that runs code or follows links out of the root);
- every other argument that could be a path (absolute, or naming something that exists, or with a
  `/`) must resolve, symlinks followed, inside the real skills root; `..` segments are refused;
- it runs in the skills root with the sandbox's timeout, output caps and scrubbed environment.

Like `run_script`, each command runs in the strongest isolation layer that works on the machine
(`skills_lsp.adk.isolation`); the root and the other trees it may reach are mounted read-only.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import shutil
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext
from google.genai import types

from skills_lsp.adk.sandbox import DEFAULT_LIMITS, Limits, ScriptRefused, run_command

DEFAULT_COMMANDS = ("ls", "cat", "head", "tail", "grep", "find", "wc", "python", "python3")

# Options refused per program: they run code, write files, or follow links out of the root.
# python takes only these options before its script (no -c, -m, -i: code from the command line).
PYTHON_OPTIONS = ("-B", "-E", "-I", "-O", "-OO", "-s", "-S", "-u")
REFUSED_OPTIONS: Mapping[str, tuple[str, ...]] = {
    "find": (
        "-exec",
        "-execdir",
        "-ok",
        "-okdir",
        "-delete",
        "-fprint",
        "-fprint0",
        "-fprintf",
        "-fls",
        "-L",
        "-follow",
        "-files0-from",  # reads the names of files to visit from a file: paths we never see
    ),
    "grep": ("-R", "--dereference-recursive"),
    "ls": ("-L", "--dereference"),
    "wc": ("--files0-from",),
}
# Programs whose short options combine (`-iR` is `-i -R`); find's options are whole words.
_CLUSTERED = frozenset({"grep", "ls", "wc", "head", "tail", "cat"})

_OPERATORS = (";", "&", "|", "<", ">", "`", "$", "(", ")", "\n", "\r", "\x00")


class ShellRefused(ScriptRefused):
    """The command was not run; the message says why."""


def _program(name: str) -> str:
    if name in ("python", "python3"):
        return sys.executable
    found = shutil.which(name)
    if found is None:
        raise ShellRefused(f"Command {name!r} is allowed but not installed.")
    return found


def _check_path(arg: str, root: Path, extra_roots: tuple[Path, ...] = ()) -> None:
    """Refuse an argument that is, or could be, a path leaving `root` (and every `extra_roots`)."""
    value = arg.split("=", 1)[1] if arg.startswith("--") and "=" in arg else arg
    if not value:
        return
    if ".." in value.replace("\\", "/").split("/"):
        raise ShellRefused(f"Path escapes the skills root ('..' segment): {arg!r}.")
    candidate = Path(value) if os.path.isabs(value) else root / value
    if not (os.path.isabs(value) or "/" in value or os.path.lexists(candidate)):
        return  # a plain word that names nothing (a grep pattern, a count)
    resolved = candidate.resolve()
    for allowed in (root, *extra_roots):
        try:
            resolved.relative_to(allowed)
            return
        except ValueError:
            continue
    raise ShellRefused(f"Path outside the skills root: {arg!r}.")


def _is_refused(program: str, arg: str, refused: tuple[str, ...]) -> bool:
    """Whether `arg` is, spells or contains a refused option of `program`. GNU tools accept any
    unambiguous prefix of a long option (`--dereference-r`) and combined short flags (`-iR`)."""
    if arg in refused:
        return True
    if arg.startswith("--") and len(arg) > 2:
        option = arg.split("=", 1)[0]
        return any(r.startswith(option) for r in refused if r.startswith("--"))
    if program in _CLUSTERED and arg.startswith("-") and len(arg) > 2:
        letters = {r[1] for r in refused if len(r) == 2 and r[0] == "-"}
        return any(letter in letters for letter in arg[1:])
    return False


def parse_command(
    command: str, root: Path, allowed: Iterable[str] = DEFAULT_COMMANDS, extra_roots: Iterable[Path] = ()
) -> list[str]:
    """The argument list for `command`, or `ShellRefused` saying why it may not run.

    Paths must resolve inside `root` or one of `extra_roots` (real paths: e.g. the target of a
    `skills` symlink in an upload staging directory)."""
    extra = tuple(Path(r).resolve() for r in extra_roots)
    if not command or not command.strip():
        raise ShellRefused("Empty command.")
    for operator in _OPERATORS:
        if operator in command:
            shown = operator.encode("unicode_escape").decode()
            raise ShellRefused(f"Shell operators and substitutions are not allowed ({shown!r}): {command!r}.")
    try:
        words = shlex.split(command)
    except ValueError as exc:
        raise ShellRefused(f"Cannot parse the command: {exc}.") from None
    if not words:
        raise ShellRefused("Empty command.")
    name, *args = words
    allow = tuple(allowed)
    if name not in allow:
        raise ShellRefused(f"Command {name!r} is not allowed. Allowed: {', '.join(allow)}.")
    refused = REFUSED_OPTIONS.get(name, ())
    python = name in ("python", "python3")
    script_seen = False  # python: the arguments after the script are the script's own
    for arg in args:
        if python and not script_seen and arg.startswith("-") and arg not in PYTHON_OPTIONS:
            raise ShellRefused(f"Option {arg!r} of {name!r} is not allowed.")
        if not python and _is_refused(name, arg, refused):
            raise ShellRefused(f"Option {arg!r} of {name!r} is not allowed.")
        script_seen = script_seen or not arg.startswith("-")
        if arg.startswith("-") and not arg.startswith("--"):
            if "/" in arg or ".." in arg:
                raise ShellRefused(f"Give a path as its own argument, not attached to an option: {arg!r}.")
        else:
            _check_path(arg, root, extra)
    return [_program(name), *args]


class SkillsShellTool(BaseTool):
    """`shell(command)`: one allow-listed command, run in the skills root without a shell."""

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        commands: Iterable[str] = DEFAULT_COMMANDS,
        timeout: float = 30.0,
        max_output: int = 64_000,
        env_allow: Iterable[str] = (),
        name: str = "shell",
        limits: Limits = DEFAULT_LIMITS,
        sandbox: str | None = None,
    ) -> None:
        self.commands = tuple(commands)
        super().__init__(
            name=name,
            description=(
                "Run one command in the skills folder (the working directory). Allowed commands: "
                f"{', '.join(self.commands)}. No pipes, redirections, `;`, `&&`, `$(...)` or globbing; "
                f"paths must stay inside the skills folder. Times out after {timeout:g} s."
            ),
        )
        self.root = Path(root).resolve()
        self.timeout = timeout
        self.max_output = max_output
        self.env_allow = tuple(env_allow)
        self.limits = limits
        self.sandbox = sandbox  # a layer to insist on; None: the strongest that works here

    def _get_declaration(self) -> types.FunctionDeclaration:
        return types.FunctionDeclaration(
            name=self.name,
            description=self.description,
            parameters=types.Schema(
                type=types.Type.OBJECT,
                properties={
                    "command": types.Schema(
                        type=types.Type.STRING, description="The command line, e.g. `ls pdf-report/scripts`."
                    )
                },
                required=["command"],
            ),
        )

    def _roots(self, tool_context: ToolContext) -> tuple[Path, tuple[Path, ...]]:
        """The working directory for this call and the other trees its paths may reach."""
        return self.root, ()

    def _check_argv(self, argv: list[str], root: Path) -> None:
        """A subclass's extra rule on the parsed arguments: raise `ShellRefused` to refuse."""

    def _hide_root(self, text: str, root: Path | None = None) -> str:
        root = root or self.root
        return text.replace(str(root) + os.sep, "").replace(str(root), ".")

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        command = args.get("command")
        if not isinstance(command, str):
            return {"error": "Missing argument 'command': one command line."}
        try:
            root, extra_roots = self._roots(tool_context)
        except (OSError, ValueError) as exc:
            return {"error": f"Cannot prepare the working directory ({type(exc).__name__})."}
        try:
            argv = parse_command(command, root, self.commands, extra_roots)
            self._check_argv(argv, root)
            result = await asyncio.to_thread(
                run_command,
                argv,
                root,
                timeout=self.timeout,
                max_output=self.max_output,
                env_allow=self.env_allow,
                read_only=extra_roots,
                limits=self.limits,
                sandbox=self.sandbox,
            )
        except ScriptRefused as exc:
            return {"error": self._hide_root(str(exc), root)}
        except OSError as exc:
            return {"error": f"Cannot run {command!r}: {exc.strerror or exc}."}
        response: dict[str, Any] = {
            "command": command,
            "returncode": result.returncode,
            "stdout": self._hide_root(result.stdout, root),
            "stderr": self._hide_root(result.stderr, root),
            "timed_out": result.timed_out,
            "truncated": result.truncated,
            "isolation": result.isolation,
        }
        if result.warning:
            response["warning"] = result.warning
        if result.timed_out:
            response["error"] = f"Command timed out after {self.timeout:g} s and was killed."
        return response
