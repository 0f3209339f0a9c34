"""Rule profiles: which fields a file may have and which rules apply, per kind of skill.

Field sets come from the JSON Schema (`$defs/profile-<name>`); the traits below say how names,
tools and YAML are judged, and which rules are on by default.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from skills_lsp.core import schema
from skills_lsp.core.model import FileKind, Severity

NameStyle = Literal["ascii", "unicode", "free"]
ToolsStyle = Literal["string", "list", "any"]

# Rules that emulate one validator's quirks; only that validator's profile turns them on.
_SKILLS_REF_ONLY = {"SK115", "SK116", "SK117"}
# Rules for SKILL.md bodies and bundled files.
_BODY = {"SK601", "SK602", "SK603", "SK604", "SK605", "SK606", "SK607", "SK608", "SK610"}


@dataclass(frozen=True, eq=False)  # identity-hashed: profiles are singletons
class Profile:
    name: str
    name_style: NameStyle
    tools_style: ToolsStyle
    require_frontmatter: bool = True
    name_matches_directory: bool = True
    strings_only: bool = False  # every YAML scalar is text (strictyaml, as in skills-ref)
    disabled: frozenset[str] = frozenset()
    severity: dict[str, Severity] = field(default_factory=dict)

    @property
    def description(self) -> str:
        return schema.profile_description(self.name)

    @property
    def fields(self) -> dict[str, str]:
        return schema.profile_fields(self.name)

    @property
    def required(self) -> tuple[str, ...]:
        return schema.required_fields(self.name)

    def enabled(self, code: str) -> bool:
        return code not in self.disabled

    def severity_of(self, code: str, default: Severity) -> Severity:
        return self.severity.get(code, default)


PROFILES: dict[str, Profile] = {
    p.name: p
    for p in [
        Profile("agentskills", "ascii", "string", disabled=frozenset(_SKILLS_REF_ONLY)),
        Profile(
            "skills-ref",
            "unicode",
            "any",
            strings_only=True,
            # skills-ref checks frontmatter only; body, tools and style rules are not its verdicts.
            disabled=frozenset(
                _BODY | {"SK114", "SK304", "SK305", "SK404", "SK501", "SK502", "SK503", "SK504", "SK701"}
            ),
            severity={"SK401": Severity.ERROR, "SK113": Severity.ERROR},
        ),
        Profile(
            "adk-rust",
            "free",
            "list",
            name_matches_directory=False,
            disabled=frozenset(_SKILLS_REF_ONLY | {"SK605", "SK604"}),
        ),
        Profile("claude-code", "ascii", "any", disabled=frozenset(_SKILLS_REF_ONLY)),
        Profile("adk", "ascii", "string", disabled=frozenset(_SKILLS_REF_ONLY)),
        Profile(
            "convention",
            "free",
            "list",
            require_frontmatter=False,
            name_matches_directory=False,
            disabled=frozenset(_SKILLS_REF_ONLY | _BODY | {"SK305"}),
        ),
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
