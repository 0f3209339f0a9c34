"""The skill listing each runtime puts in front of its model, and what its budget cuts.

Runtimes list every skill's name and description so the model can choose one; Claude Code and
Codex cap that listing, and past the cap a skill's description is shortened or dropped, or the
skill itself is left out, without a word to the author. `fit_listing` reproduces each runtime's
documented policy over a workspace's skills (docs/budgets.md cites every figure):

- Claude Code: "The budget scales dynamically at 1% of the context window, with a fallback of
  8,000 characters" (`SLASH_COMMAND_TOOL_CHAR_BUDGET` overrides it); every name is kept, each
  entry is capped at 1,536 characters, and past the budget descriptions are dropped, the least
  used skills' first. With no usage history to go by, the last skills in listing order (by name)
  lose theirs first.
- Codex: "at most 2% of the model context window, or 8,000 characters when the context window is
  unknown"; it shortens descriptions first (characters shared out round-robin, so a short
  description keeps all of its own), then omits skills.
- Gemini CLI and ADK document no cap: their listing is shown whole.

Pure arithmetic on names and descriptions, so the workspace rule (SK703), the hover on
`description` and `skills-lsp budget` all give the same answer.
"""

from __future__ import annotations

import enum
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

CHARS_PER_TOKEN = 4  # both runtimes turn a token budget into characters at 4 per token
CLAUDE_BUDGET_VARIABLE = "SLASH_COMMAND_TOOL_CHAR_BUDGET"


class Strategy(enum.Enum):
    DROP_DESCRIPTIONS = "drop-descriptions"  # names kept; descriptions dropped past the budget
    SHORTEN_THEN_OMIT = "shorten-then-omit"  # descriptions shortened first, then skills omitted
    UNLIMITED = "unlimited"  # no documented cap


@dataclass(frozen=True)
class Runtime:
    name: str
    title: str
    strategy: Strategy
    context_share: float | None  # share of the context window (tokens) the listing may use
    fallback_chars: int | None  # the budget when the context window is unknown
    entry_cap: int | None  # characters of one description kept at most
    docs: str  # the vendor page the figures come from
    # How one entry is written, to count its characters: `{name}`, `{description}`, `{path}`.
    entry: str

    def budget(
        self, context_tokens: int | None = None, environ: Mapping[str, str] | None = None
    ) -> int | None:
        """The listing's budget in characters (None: no documented cap)."""
        if self.strategy is Strategy.UNLIMITED:
            return None
        if self.name == "claude-code":
            override = (os.environ if environ is None else environ).get(CLAUDE_BUDGET_VARIABLE, "")
            if override.strip().isdigit() and int(override) > 0:
                return int(override)
        if context_tokens is None or self.context_share is None:
            return self.fallback_chars
        return max(1, int(context_tokens * CHARS_PER_TOKEN * self.context_share))


RUNTIMES: dict[str, Runtime] = {
    runtime.name: runtime
    for runtime in (
        Runtime(
            "claude-code",
            "Claude Code",
            Strategy.DROP_DESCRIPTIONS,
            0.01,
            8000,
            1536,
            "https://code.claude.com/docs/en/skills#skill-descriptions-are-cut-short",
            "- {name}: {description}\n",
        ),
        Runtime(
            "codex",
            "Codex",
            Strategy.SHORTEN_THEN_OMIT,
            0.02,
            8000,
            1024,
            "https://developers.openai.com/codex/skills",
            "- {name}: {description} (file: {path})\n",
        ),
        Runtime(
            "gemini-cli",
            "Gemini CLI",
            Strategy.UNLIMITED,
            None,
            None,
            None,
            "https://geminicli.com/docs/cli/skills",
            "<skill>\n<name>\n{name}\n</name>\n<description>\n{description}\n</description>\n"
            "<location>\n{path}\n</location>\n</skill>\n",
        ),
        Runtime(
            "adk",
            "Google ADK",
            Strategy.UNLIMITED,
            None,
            None,
            None,
            "https://google.github.io/adk-docs/skills/",
            "<skill>\n<name>\n{name}\n</name>\n<description>\n{description}\n</description>\n</skill>\n",
        ),
    )
}

# The runtimes whose budget a profile's skills are checked against (SK703 and the hover).
PROFILE_RUNTIMES: dict[str, tuple[str, ...]] = {
    "claude-code": ("claude-code",),
    "agentskills": ("claude-code", "codex"),
    "adk": ("adk",),
}


class Fate(enum.Enum):
    FULL = "full"  # listed with its whole description
    SHORTENED = "shortened"  # listed with the start of its description
    NAME_ONLY = "name-only"  # listed without a description
    OMITTED = "omitted"  # not listed at all


@dataclass(frozen=True)
class ListedSkill:
    name: str
    description: str
    path: str = ""


@dataclass(frozen=True)
class Placement:
    """One skill in a runtime's listing: what is left of its description."""

    skill: ListedSkill
    fate: Fate
    kept: int  # characters of the description the model sees

    @property
    def cut(self) -> bool:
        return self.fate is not Fate.FULL

    def describe(self) -> str:
        total = len(self.skill.description)
        if self.fate is Fate.FULL:
            return "listed in full"
        if self.fate is Fate.SHORTENED:
            return f"description cut to {self.kept:,} of {total:,} characters"
        if self.fate is Fate.NAME_ONLY:
            return "listed by name only: its description is dropped"
        return "left out of the listing"


@dataclass(frozen=True)
class Listing:
    runtime: Runtime
    budget: int | None
    needed: int  # characters the whole listing would take with every description in full
    used: int  # characters it takes after the cuts
    placements: tuple[Placement, ...]

    def placement(self, name: str, path: str | None = None) -> Placement | None:
        for p in self.placements:
            if p.skill.name == name and (path is None or p.skill.path == path):
                return p
        return None

    @property
    def cut(self) -> list[Placement]:
        return [p for p in self.placements if p.cut]

    def summary(self) -> str:
        """One line: the runtime, its budget and how full the listing is."""
        if self.budget is None:
            return (
                f"{self.runtime.title}: {self.needed:,} characters for {len(self.placements)} skills "
                "(no documented limit)"
            )
        share = self.needed / self.budget if self.budget else 0.0
        return (
            f"{self.runtime.title}: {self.needed:,} of {self.budget:,} characters ({share:.0%}) for "
            f"{len(self.placements)} skills; {len(self.cut)} cut"
        )


def entry_cost(runtime: Runtime, skill: ListedSkill, description: str | None) -> int:
    """Characters of one entry with `description` (None: the name alone)."""
    if description is None:  # Claude Code's name-only entry: `- {name}`
        return len(skill.name) + 3
    return len(runtime.entry.format(name=skill.name, description=description, path=skill.path))


def fit_listing(
    runtime: Runtime,
    skills: Sequence[ListedSkill],
    context_tokens: int | None = None,
    environ: Mapping[str, str] | None = None,
) -> Listing:
    """What of each skill the runtime's listing keeps, in listing order (by name, then path)."""
    ordered = sorted(skills, key=lambda s: (s.name, s.path))
    budget = runtime.budget(context_tokens, environ)
    capped = [s.description[: runtime.entry_cap] if runtime.entry_cap else s.description for s in ordered]
    full = [entry_cost(runtime, s, d) for s, d in zip(ordered, capped, strict=True)]
    needed = sum(full)
    if budget is None or needed <= budget:
        placements = [
            Placement(s, Fate.FULL if len(d) == len(s.description) else Fate.SHORTENED, len(d))
            for s, d in zip(ordered, capped, strict=True)
        ]
        return Listing(runtime, budget, needed, needed, tuple(placements))
    if runtime.strategy is Strategy.DROP_DESCRIPTIONS:
        return _drop_descriptions(runtime, ordered, capped, budget, needed)
    return _shorten_then_omit(runtime, ordered, capped, budget, needed)


def _drop_descriptions(
    runtime: Runtime, ordered: list[ListedSkill], capped: list[str], budget: int, needed: int
) -> Listing:
    """Claude Code: every name stays; descriptions are kept in listing order while they fit."""
    bare = [entry_cost(runtime, s, None) for s in ordered]
    used = sum(bare)
    placements: list[Placement] = []
    room = True
    for skill, description, name_only in zip(ordered, capped, bare, strict=True):
        extra = entry_cost(runtime, skill, description) - name_only
        if room and used + extra <= budget:
            used += extra
            fate = Fate.FULL if len(description) == len(skill.description) else Fate.SHORTENED
            placements.append(Placement(skill, fate, len(description)))
        else:
            room = False  # past the first that does not fit, none is kept (usage order, not size)
            placements.append(Placement(skill, Fate.NAME_ONLY, 0))
    return Listing(runtime, budget, needed, used, tuple(placements))


def _shorten_then_omit(
    runtime: Runtime, ordered: list[ListedSkill], capped: list[str], budget: int, needed: int
) -> Listing:
    """Codex: names and paths first; the characters left are shared out round-robin among the
    descriptions; when even the bare entries do not fit, skills are omitted from the end."""
    bare = [entry_cost(runtime, s, "") for s in ordered]
    kept_count = len(ordered)
    while kept_count and sum(bare[:kept_count]) > budget:
        kept_count -= 1
    left = budget - sum(bare[:kept_count])
    shares = [0] * kept_count
    wanting = [i for i in range(kept_count) if capped[i]]
    while left > 0 and wanting:
        each = max(1, left // len(wanting))
        still: list[int] = []
        for i in wanting:
            give = min(each, len(capped[i]) - shares[i], left)
            shares[i] += give
            left -= give
            if shares[i] < len(capped[i]):
                still.append(i)
            if left <= 0:
                break
        wanting = still
    placements: list[Placement] = []
    used = 0
    for i, skill in enumerate(ordered):
        if i >= kept_count:
            placements.append(Placement(skill, Fate.OMITTED, 0))
            continue
        kept = shares[i]
        if kept == len(skill.description):
            fate = Fate.FULL
        else:
            fate = Fate.NAME_ONLY if kept == 0 else Fate.SHORTENED
        used += bare[i] + kept
        placements.append(Placement(skill, fate, kept))
    return Listing(runtime, budget, needed, used, tuple(placements))


def runtimes_for(profile: str) -> tuple[Runtime, ...]:
    """The runtimes whose listing a skill of `profile` is checked against."""
    return tuple(RUNTIMES[name] for name in PROFILE_RUNTIMES.get(profile, ()))


def runtime_named(name: str) -> Runtime:
    if name not in RUNTIMES:
        raise ValueError(f"unknown runtime {name!r}; choose from {', '.join(RUNTIMES)}")
    return RUNTIMES[name]
