"""`UploadStagingPlugin`: files the user sends are saved to disk where the shell and scripts can read them.

On `on_user_message_callback` every file part of the user message (`inline_data` with bytes) is
written to a per-session staging directory, `<base>/<app_name>/<session_id>/uploads/<file name>`,
and replaced in the message by a text part naming the saved path *relative to the session's
staging root* (`uploads/report.csv`). All other parts are kept as they are. This is kagent's
"runner-managed staging area" without the separate `stage_artifacts` tool call.

- The file name comes from `display_name` reduced to its last path segment and to
  `[A-Za-z0-9._-]` (so `../../x` becomes `x`), or is generated (`upload-1.<ext>` from the MIME
  type); an existing file is never overwritten (`name-1.ext`, ...).
- The app name and session id are sanitized the same way, so neither can leave `base`.
- A file over `max_file_bytes`, or one that would take the message over `max_message_bytes`, is
  not saved; its part is replaced by a text note saying so (the model can tell the user).

ADK's plugin manager stops at the first plugin whose `on_user_message_callback` returns a message,
so by default (`in_place=True`) the message is rewritten in place and the callback returns None:
list this plugin *before* others that rewrite the user message (e.g. `SkillInjectorPlugin`) and
they see the path notes. `in_place=False` returns a rewritten copy instead (then it must be the
last such plugin).

To let the shell see both the uploads and the skills, use `StagingShellTool(plugin, skills_root)`
(or `plugin.shell_tool(skills_root)`): a `SkillsShellTool` whose working directory is the calling
session's staging root, which holds `uploads/` and a `skills` symlink to the skills root
(`link_skills`); paths may resolve into the staging root or the real skills root, nowhere else,
and `python` runs only scripts inside the skills root (an uploaded `.py` file is data, not code).
So the model runs `python skills/csv-data-cleaning/scripts/x.py uploads/data.csv`.
"""

from __future__ import annotations

import hashlib
import mimetypes
import os
import re
import sys
import tempfile
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from google.adk.agents.invocation_context import InvocationContext
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.tools.tool_context import ToolContext
from google.genai import types

from skills_lsp.adk.shell import DEFAULT_COMMANDS, ShellRefused, SkillsShellTool

DEFAULT_MAX_FILE_BYTES = 10 * 1024 * 1024
DEFAULT_MAX_MESSAGE_BYTES = 25 * 1024 * 1024
UPLOADS_DIR = "uploads"
SKILLS_LINK = "skills"

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_name(value: str | None, *, max_length: int = 100) -> str:
    """`value`'s last path segment with only `[A-Za-z0-9._-]`, no leading dots; "" if nothing is left."""
    if not value:
        return ""
    last = value.replace("\\", "/").rstrip("/").split("/")[-1]
    cleaned = _UNSAFE.sub("_", last).strip("_").lstrip(".")
    if len(cleaned) > max_length:
        stem, dot, ext = cleaned.rpartition(".")
        keep = ext[:16] if dot and stem else ""
        cleaned = cleaned[: max_length - len(keep) - 1] + "." + keep if keep else cleaned[:max_length]
    return cleaned


def _safe_id(value: str, fallback: str) -> str:
    """`safe_name(value)`, plus a hash of `value` when sanitizing changed it (so ids stay distinct)."""
    cleaned = safe_name(value)
    if cleaned == value:
        return cleaned
    digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"{cleaned or fallback}-{digest}"


def staging_root(base: str | os.PathLike[str], app_name: str, session_id: str) -> Path:
    """The staging directory of one session: `<base>/<app_name>/<session_id>`, both sanitized (with a
    hash suffix when that changed them, so `a/b` and `a_b` get different folders)."""
    return Path(base) / _safe_id(app_name, "app") / _safe_id(session_id, "session")


def link_skills(root: str | os.PathLike[str], skills_root: str | os.PathLike[str]) -> Path:
    """Create `<root>/skills` as a symlink to `skills_root` (kept if it is already one); return `root`.

    A plain `SkillsShellTool(root)` follows the link and refuses it (outside its root); give it the
    skills root as an extra root, as `StagingShellTool` does."""
    target = Path(root)
    target.mkdir(parents=True, exist_ok=True)
    link = target / SKILLS_LINK
    if not link.is_symlink():
        link.symlink_to(Path(skills_root).resolve(), target_is_directory=True)
    return target


@dataclass(frozen=True)
class StagedFile:
    """One file part handled by the plugin: saved (with its relative path) or refused (with why)."""

    session_id: str
    name: str
    mime_type: str
    size: int
    path: str | None  # relative to the session's staging root; None when refused
    refused: str | None = None


def _extension(mime_type: str) -> str:
    guessed = mimetypes.guess_extension(mime_type, strict=False) or ""
    return guessed if re.fullmatch(r"\.[A-Za-z0-9]{1,10}", guessed) else ".bin"


def _unique(directory: Path, name: str) -> Path:
    candidate = directory / name
    stem, dot, ext = name.rpartition(".")
    if not dot or not stem:
        stem, ext = name, ""
    counter = 1
    while candidate.exists() or candidate.is_symlink():
        candidate = directory / (f"{stem}-{counter}.{ext}" if ext else f"{stem}-{counter}")
        counter += 1
    return candidate


RECENT_UPLOADS = 1000  # staged-file records kept on the plugin


class UploadStagingPlugin(BasePlugin):
    """Save the user's file parts under `<base>/<app>/<session>/uploads/` and point the model at them."""

    def __init__(
        self,
        base: str | os.PathLike[str] | None = None,
        *,
        max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        in_place: bool = True,
        name: str = "skills_lsp_uploads",
    ) -> None:
        super().__init__(name=name)
        self.in_place = in_place
        self.base = Path(base) if base is not None else Path(tempfile.mkdtemp(prefix="skills-lsp-staging-"))
        self.base.mkdir(parents=True, exist_ok=True)
        self.max_file_bytes = max_file_bytes
        self.max_message_bytes = max_message_bytes
        # The most recent files handled, for inspection (bounded: a server runs for a long time).
        self.staged: deque[StagedFile] = deque(maxlen=RECENT_UPLOADS)

    def session_root(self, app_name: str, session_id: str) -> Path:
        """The staging root of one session (created, and checked to be inside `base`)."""
        root = staging_root(self.base, app_name, session_id)
        base = self.base.resolve()
        root.mkdir(parents=True, exist_ok=True)
        root.resolve().relative_to(base)  # ValueError if it escaped (it cannot after sanitizing)
        return root

    async def on_user_message_callback(
        self, *, invocation_context: InvocationContext, user_message: types.Content
    ) -> types.Content | None:
        parts = user_message.parts or []
        if not any(p.inline_data is not None for p in parts):
            return None
        session = invocation_context.session
        root = self.session_root(session.app_name, session.id)
        uploads = root / UPLOADS_DIR
        used = 0
        generated = 0
        new_parts: list[types.Part] = []
        for part in parts:
            blob = part.inline_data
            if blob is None:
                new_parts.append(part)
                continue
            data = blob.data or b""
            mime_type = blob.mime_type or "application/octet-stream"
            name = safe_name(blob.display_name)
            if not name:
                generated += 1
                name = f"upload-{generated}{_extension(mime_type)}"
            shown = blob.display_name or name
            refused = None
            if len(data) > self.max_file_bytes:
                refused = f"it is {len(data)} bytes, over the {self.max_file_bytes}-byte limit per file"
            elif used + len(data) > self.max_message_bytes:
                limit = self.max_message_bytes
                refused = f"the message's files would exceed the {limit}-byte limit per message"
            if refused is not None:
                self.staged.append(StagedFile(session.id, name, mime_type, len(data), None, refused))
                new_parts.append(
                    types.Part(text=f"[upload refused: {shown!r} ({mime_type}) was not saved: {refused}.]")
                )
                continue
            uploads.mkdir(parents=True, exist_ok=True)
            target = _unique(uploads, name)
            with open(target, "xb") as handle:  # never follows or replaces an existing entry
                handle.write(data)
            used += len(data)
            relative = target.relative_to(root).as_posix()
            self.staged.append(StagedFile(session.id, target.name, mime_type, len(data), relative))
            new_parts.append(
                types.Part(
                    text=(
                        f"[uploaded file {shown!r} ({mime_type}, {len(data)} bytes) saved as {relative!r}, "
                        "relative to the session's working directory]"
                    )
                )
            )
        if self.in_place:
            user_message.parts = new_parts  # later plugins see it; ADK stops at the first non-None
            return None
        return user_message.model_copy(update={"parts": new_parts})

    def shell_tool(self, skills_root: str | os.PathLike[str], **options: Any) -> StagingShellTool:
        """A shell working in each session's staging root, with `skills/` linked to `skills_root`."""
        return StagingShellTool(self, skills_root, **options)


class StagingShellTool(SkillsShellTool):
    """`SkillsShellTool` run in the calling session's staging root (`uploads/` + a `skills` link)."""

    def __init__(
        self,
        staging: UploadStagingPlugin,
        skills_root: str | os.PathLike[str],
        *,
        commands: Iterable[str] = DEFAULT_COMMANDS,
        timeout: float = 30.0,
        max_output: int = 64_000,
        env_allow: Iterable[str] = (),
        name: str = "shell",
    ) -> None:
        super().__init__(
            skills_root,
            commands=commands,
            timeout=timeout,
            max_output=max_output,
            env_allow=env_allow,
            name=name,
        )
        self.staging = staging
        self.description = (
            f"Run one command in this conversation's working directory: `{UPLOADS_DIR}/` holds the files "
            f"the user uploaded, `{SKILLS_LINK}/` the skills. Allowed commands: {', '.join(self.commands)}. "
            "No pipes, redirections, `;`, `&&`, `$(...)` or globbing; paths must stay inside these folders. "
            f"Times out after {timeout:g} s."
        )

    def _check_argv(self, argv: list[str], root: Path) -> None:
        """python runs skill scripts only, never an uploaded file (it may come from anyone)."""
        if argv[0] != sys.executable:
            return
        script = next((arg for arg in argv[1:] if not arg.startswith("-")), None)
        if script is None:
            raise ShellRefused("python needs a script: one of the skills' scripts.")
        try:
            (root / script).resolve().relative_to(self.root)
        except ValueError:
            raise ShellRefused(
                f"python runs only the skills' own scripts ({SKILLS_LINK}/<skill>/scripts/...), "
                f"not {script!r}."
            ) from None

    def _hide_root(self, text: str, root: Path | None = None) -> str:
        """Also show the real skills root as `skills` (a script's traceback names its real path)."""
        return super()._hide_root(text, root).replace(str(self.root), SKILLS_LINK)

    def _roots(self, tool_context: ToolContext) -> tuple[Path, tuple[Path, ...]]:
        session = tool_context.session
        root = link_skills(self.staging.session_root(session.app_name, session.id), self.root)
        return root.resolve(), (self.root,)
