"""How each profile treats a frontmatter key: it accepts it (its runtime documents it), allows
but ignores it (the open standard's field, not in the runtime's docs), or skills-lsp reports it
(SK401: a warning, or an error under skills-ref). The hover on a key and the table in
docs/profiles.md are both made here."""

from __future__ import annotations

import enum
from typing import NamedTuple

from skills_lsp.core import schema
from skills_lsp.core.model import Severity
from skills_lsp.core.rules import RULES
from skills_lsp.core.rules.profiles import PROFILES, Profile

UNKNOWN_KEY = "SK401"


class Verdict(enum.Enum):
    READS = "accepts"  # the profile allows the key and its runtime documents it
    IGNORES = "ignores"  # allowed (the open standard's), but the runtime's docs do not list it
    WARNS = "warns"  # SK401 as a warning
    REFUSES = "refuses"  # SK401 as an error

    @property
    def mark(self) -> str:
        return {"accepts": "✓", "ignores": "○", "warns": "⚠", "refuses": "✗"}[self.value]


class KeySupport(NamedTuple):
    profile: Profile
    verdict: Verdict


def verdict(profile: Profile, key: str) -> Verdict:
    if key not in profile.fields:
        severe = RULES[UNKNOWN_KEY].severity_for(profile.name) is Severity.ERROR
        return Verdict.REFUSES if severe else Verdict.WARNS
    return Verdict.READS if profile.reads(key) else Verdict.IGNORES


def key_support(key: str) -> list[KeySupport]:
    """Every profile's verdict on a top-level key, in profile order."""
    return [KeySupport(profile, verdict(profile, key)) for profile in PROFILES.values()]


_LINES = {
    Verdict.READS: "accepts",
    Verdict.IGNORES: "accepts, but its runtime's docs do not list it (ignored)",
    Verdict.WARNS: f"warns ({UNKNOWN_KEY})",
    Verdict.REFUSES: f"refuses ({UNKNOWN_KEY} is an error)",
}


def support_markdown(key: str) -> str:
    """The hover's runtime section: one line per verdict, naming the profiles that give it."""
    lines = ["**Runtimes**", ""]
    support = key_support(key)
    for kind in Verdict:
        names = [f"`{s.profile.name}`" for s in support if s.verdict is kind]
        if names:
            lines.append(f"- {kind.mark} {_LINES[kind]}: {', '.join(names)}")
    return "\n".join(lines)


def support_table() -> str:
    """Every key any profile knows against every profile (docs/profiles.md)."""
    names = list(PROFILES)
    lines = [
        "| key | " + " | ".join(names) + " |",
        "|---|" + "---|" * len(names),
    ]
    for key in schema.all_fields():
        marks = [verdict(PROFILES[name], key).mark for name in names]
        lines.append(f"| `{key}` | " + " | ".join(marks) + " |")
    return "\n".join(lines)
