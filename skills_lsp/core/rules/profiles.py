"""Rule profiles: which fields a file may have and how it is judged, per kind of skill.

Field sets come from the JSON Schema (`$defs/profile-<name>`); the traits below say how names,
tools and YAML are judged. Which rules run in a profile is said by each rule (`profiles=` in its
`@rule` entry), not here.
"""

from __future__ import annotations

from dataclasses import dataclass
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

    @property
    def description(self) -> str:
        return schema.profile_description(self.name)

    @property
    def fields(self) -> dict[str, str]:
        return schema.profile_fields(self.name)

    @property
    def required(self) -> tuple[str, ...]:
        return schema.required_fields(self.name)


PROFILES: dict[str, Profile] = {
    p.name: p
    for p in [
        Profile("agentskills", "ascii", "string"),
        Profile("skills-ref", "unicode", "any", strings_only=True),
        Profile("adk-rust", "free", "list", name_matches_directory=False),
        Profile("claude-code", "ascii", "any"),
        Profile("adk", "ascii", "string"),
        Profile("convention", "free", "list", require_frontmatter=False, name_matches_directory=False),
    ]
}

DEFAULT_PROFILE = {
    FileKind.AGENT_SKILL: "agentskills",
    FileKind.FLAT_SKILL: "adk-rust",
    FileKind.CONVENTION: "convention",
}


def get_profile(name: str) -> Profile:
    try:
        return PROFILES[name]
    except KeyError:
        raise ValueError(f"unknown profile {name!r}; choose one of: {', '.join(PROFILES)}") from None
