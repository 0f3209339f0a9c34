"""Rule profiles: which fields a file may have and how it is judged, per kind of skill.

Field sets come from the JSON Schema (`$defs/profile-<name>`); the traits below say how names,
tools and YAML are judged, and which of the allowed keys the runtime's own documentation says it
reads (docs/profiles.md cites each vendor's page). Which rules run in a profile is said by each
rule (`profiles=` in its `@rule` entry), not here.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import PurePath
from typing import Literal

from skills_lsp.core import schema
from skills_lsp.core.model import FileKind

NameStyle = Literal["ascii", "unicode", "free"]
ToolsStyle = Literal["string", "list", "any"]


@dataclass(frozen=True, eq=False)  # identity-hashed: profiles are singletons
class Profile:
    name: str
    name_style: NameStyle
    tools_style: ToolsStyle
    require_frontmatter: bool = True
    name_matches_directory: bool = True
    strings_only: bool = False  # every YAML scalar is text (strictyaml, as in skills-ref)
    # The allowed keys the runtime documents as read; None: all of them. An allowed key outside
    # this set draws no warning (it is the open standard's), but the runtime ignores it.
    documented: frozenset[str] | None = None

    @property
    def description(self) -> str:
        return schema.profile_description(self.name)

    @property
    def fields(self) -> dict[str, str]:
        return schema.profile_fields(self.name)

    @property
    def required(self) -> tuple[str, ...]:
        return schema.required_fields(self.name)

    def reads(self, key: str) -> bool:
        """Whether the runtime documents `key` as a field it reads (an allowed key it does not
        document is ignored; a key outside the profile draws SK401)."""
        return key in self.fields and (self.documented is None or key in self.documented)


# What Codex's and Gemini CLI's skills pages document; VS Code adds its invocation keys.
NAME_AND_DESCRIPTION = frozenset({"name", "description"})
VSCODE_KEYS = NAME_AND_DESCRIPTION | {
    "argument-hint",
    "user-invocable",
    "disable-model-invocation",
    "context",
}

PROFILES: dict[str, Profile] = {
    p.name: p
    for p in [
        Profile("agentskills", "ascii", "string"),
        Profile("skills-ref", "unicode", "any", strings_only=True),
        Profile("adk-rust", "free", "list", name_matches_directory=False),
        Profile(
            "claude-code",
            "ascii",
            "any",
            # Its skills page documents these; `license`, `compatibility`, `metadata` are the
            # open standard's and the page does not mention them.
            documented=frozenset(
                {
                    "name",
                    "description",
                    "allowed-tools",
                    "when_to_use",
                    "argument-hint",
                    "arguments",
                    "disable-model-invocation",
                    "user-invocable",
                    "disallowed-tools",
                    "model",
                    "effort",
                    "context",
                    "agent",
                    "hooks",
                    "paths",
                    "shell",
                    "background",
                }
            ),
        ),
        Profile("adk", "ascii", "string"),
        Profile("codex", "ascii", "string", documented=NAME_AND_DESCRIPTION),
        Profile("gemini-cli", "ascii", "string", documented=NAME_AND_DESCRIPTION),
        Profile("vscode-copilot", "ascii", "string", documented=VSCODE_KEYS),
        Profile("convention", "free", "list", require_frontmatter=False, name_matches_directory=False),
    ]
}

DEFAULT_PROFILE = {
    FileKind.AGENT_SKILL: "agentskills",
    FileKind.FLAT_SKILL: "adk-rust",
    FileKind.CONVENTION: "convention",
}


# A runtime's own skills folder: `<dir>/<name>/SKILL.md` below it gets that runtime's profile, so a
# Claude Code skill's `context: fork` is not reported as unknown. `.agents/skills/` is shared by
# Codex, Gemini CLI and Copilot, so it keeps the open standard's profile.
LOCATION_PROFILES: tuple[tuple[tuple[str, str], str], ...] = (
    ((".claude", "skills"), "claude-code"),
    ((".codex", "skills"), "codex"),
    ((".gemini", "skills"), "gemini-cli"),
    ((".github", "skills"), "vscode-copilot"),
)


_RUNTIME_FOLDERS = tuple(folder for (folder, _), _ in LOCATION_PROFILES)


def default_profile(path: str | os.PathLike[str], kind: FileKind) -> str:
    """The profile a file gets when nothing configures one: its runtime's, for a `SKILL.md`
    inside a runtime's skills folder (the innermost one), else its layout's."""
    # Most paths name no runtime folder at all: a substring test spares splitting them.
    if kind is FileKind.AGENT_SKILL and any(folder in os.fspath(path) for folder in _RUNTIME_FOLDERS):
        parts = PurePath(path).parts[:-1]
        for index in range(len(parts) - 2, -1, -1):
            for folder, name in LOCATION_PROFILES:
                if parts[index : index + 2] == folder:
                    return name
    return DEFAULT_PROFILE[kind]


def get_profile(name: str) -> Profile:
    try:
        return PROFILES[name]
    except KeyError:
        raise ValueError(f"unknown profile {name!r}; choose one of: {', '.join(PROFILES)}") from None
