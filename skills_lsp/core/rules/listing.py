"""The skill listing each runtime puts in front of its model, and what its budget cuts.

Runtimes list every skill's name and description so the model can choose one; Claude Code and
Codex cap that listing, and past the cap a skill's description is shortened or dropped, or the
skill itself is left out, without a word to the author. `fit_listing` reproduces each runtime's
documented policy over a workspace's skills (docs/budgets.md cites every figure):

- Claude Code: "The budget scales dynamically at 1% of the context window, with a fallback of
  8,000 characters" (`SLASH_COMMAND_TOOL_CHAR_BUDGET` overrides it); every name is kept, each
  entry (`description` and `when_to_use` together) is capped at 1,536 characters, and past the
  budget descriptions are dropped, the least used skills' first. With no usage history to go
  by, the last skills in listing order (by name) lose theirs first.
- Codex: "at most 2% of the model context window, or 8,000 characters when the context window is
  unknown"; it shortens descriptions first (characters shared out round-robin, so a short
  description keeps all of its own), then omits skills.
- Gemini CLI, ADK and VS Code Copilot document no cap: their listing is shown whole.

Pure arithmetic on names and descriptions, so the workspace rule (SK703), the hover on
`description` and `skills-lsp budget` all give the same answer.
"""

from __future__ import annotations

import bisect
import enum
import itertools
import operator
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

CHARS_PER_TOKEN = 4  # both runtimes turn a token budget into characters at 4 per token
CLAUDE_BUDGET_VARIABLE = "SLASH_COMMAND_TOOL_CHAR_BUDGET"


def budget_variables(environ: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """The variables of `environ` that change a listing budget. No rule reads the environment:
    the CLI and the server pass theirs through here (into `Config.budget_variables`)."""
    return tuple((name, environ[name]) for name in (CLAUDE_BUDGET_VARIABLE,) if name in environ)


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
    # Claude Code's entry is the skill's `description` and `when_to_use` together (capped
    # together at 1,536 characters); the others list the description alone.
    lists_when_to_use: bool = False

    @cached_property
    def overhead(self) -> int:
        """Characters of an entry beyond its name, description and path."""
        return len(self.entry.format(name="", description="", path=""))

    @cached_property
    def counts_path(self) -> bool:
        return "{path}" in self.entry

    def budget(
        self, context_tokens: int | None = None, environ: Mapping[str, str] | None = None
    ) -> int | None:
        """The listing's budget in characters (None: no documented cap); `environ`: the variables
        the caller read (see `budget_variables`), none when None."""
        if self.strategy is Strategy.UNLIMITED:
            return None
        if self.name == "claude-code":
            override = (environ or {}).get(CLAUDE_BUDGET_VARIABLE, "")
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
            lists_when_to_use=True,
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
            "https://google.github.io/adk-docs/skills",
            "<skill>\n<name>\n{name}\n</name>\n<description>\n{description}\n</description>\n</skill>\n",
        ),
        Runtime(
            "vscode-copilot",
            "VS Code Copilot",
            Strategy.UNLIMITED,
            None,
            None,
            None,
            # "Copilot always knows which skills are available by reading their name and
            # description": no cap, and no documented form of the listing (counted in the open
            # standard's `<available_skills>` form).
            "https://code.visualstudio.com/docs/copilot/customization/agent-skills#_how-copilot-uses-skills",
            "<skill>\n<name>\n{name}\n</name>\n<description>\n{description}\n</description>\n"
            "<location>\n{path}\n</location>\n</skill>\n",
        ),
    )
}

# The runtimes whose budget a profile's skills are checked against (SK703 and the hover), for
# every profile (tests/core/rules/test_listing.py checks): an empty tuple means no runtime's listing
# applies (skills-ref and adk-rust are validators and a lexical router, not a model's listing;
# conventions are always-on instructions, never listed).
PROFILE_RUNTIMES: dict[str, tuple[str, ...]] = {
    "agentskills": ("claude-code", "codex"),
    "skills-ref": (),
    "adk-rust": (),
    "claude-code": ("claude-code",),
    "adk": ("adk",),
    "codex": ("codex",),
    "gemini-cli": ("gemini-cli",),
    "vscode-copilot": ("vscode-copilot",),
    "convention": (),
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
    when_to_use: str = ""  # Claude Code lists it with the description

    def as_listed_by(self, runtime: Runtime) -> ListedSkill:
        """The skill with the text `runtime` lists as its description. Claude Code joins
        `description` and `when_to_use`; how is not documented, so one space is counted."""
        if not (runtime.lists_when_to_use and self.when_to_use):
            return self
        return ListedSkill(self.name, f"{self.description} {self.when_to_use}", self.path)


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
    needed: int  # characters the whole listing takes with every description (each within its entry cap)
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


def entry_cost(runtime: Runtime, skill: ListedSkill, description_length: int | None) -> int:
    """Characters of one entry with that much description (None: Claude Code's name-only entry,
    `- {name}`). Counted, not written: a listing of 20,000 skills is re-fitted as a
    description is typed."""
    if description_length is None:
        return len(skill.name) + 3
    path = len(skill.path) if runtime.counts_path else 0
    return runtime.overhead + len(skill.name) + description_length + path


def _capped(runtime: Runtime, skill: ListedSkill) -> int:
    return min(len(skill.description), runtime.entry_cap) if runtime.entry_cap else len(skill.description)


def _bare(runtime: Runtime, skill: ListedSkill) -> int:
    """An entry without its description: Claude Code's `- name`, Codex's entry with an empty one."""
    return entry_cost(runtime, skill, None if runtime.strategy is Strategy.DROP_DESCRIPTIONS else 0)


def _level(sorted_lengths: Sequence[int], prefix: Sequence[int], room: int, one_more: int = 0) -> int:
    """The largest L with sum(min(length, L)) <= room over the lengths and `one_more`: Codex's
    round-robin sharing, where every description gets the same number of characters unless it
    is shorter (`prefix[i]` is the sum of the first i sorted lengths)."""

    def spent(level: int) -> int:
        at = bisect.bisect_right(sorted_lengths, level)
        return prefix[at] + level * (len(sorted_lengths) - at) + min(one_more, level)

    low, high = 0, max(sorted_lengths[-1] if sorted_lengths else 0, one_more)
    while low < high:
        middle = (low + high + 1) // 2
        if spent(middle) <= room:
            low = middle
        else:
            high = middle - 1
    return low


def _fate(skill: ListedSkill, kept: int) -> Fate:
    if kept == len(skill.description):
        return Fate.FULL
    return Fate.NAME_ONLY if kept == 0 else Fate.SHORTENED


def fit_listing(
    runtime: Runtime,
    skills: Sequence[ListedSkill],
    context_tokens: int | None = None,
    environ: Mapping[str, str] | None = None,
) -> Listing:
    """What of each skill the runtime's listing keeps, in listing order (by name, then path).

    Claude Code keeps every name and the descriptions in listing order while they fit (the
    first that does not fit ends it: its real order is by use, not size). Codex keeps names and
    paths, omitting skills from the end (and then every description) when even those do not
    fit; otherwise each description gets the same share of what is left, or all of its own if
    shorter."""
    ordered = sorted((s.as_listed_by(runtime) for s in skills), key=lambda s: (s.name, s.path))
    budget = runtime.budget(context_tokens, environ)
    capped = [_capped(runtime, s) for s in ordered]
    needed = sum(entry_cost(runtime, s, length) for s, length in zip(ordered, capped, strict=True))
    if budget is None or needed <= budget:
        kept = capped
    elif runtime.strategy is Strategy.DROP_DESCRIPTIONS:
        kept = _claude_kept(runtime, ordered, capped, budget)
    else:
        kept = _codex_kept(runtime, ordered, capped, budget)
    placements: list[Placement] = []
    used = 0
    for skill, share in zip(ordered, kept, strict=True):
        if share < 0:
            placements.append(Placement(skill, Fate.OMITTED, 0))
            continue
        name_only = share == 0 and runtime.strategy is Strategy.DROP_DESCRIPTIONS
        used += _bare(runtime, skill) if name_only else entry_cost(runtime, skill, share)
        placements.append(Placement(skill, _fate(skill, share), share))
    return Listing(runtime, budget, needed, used, tuple(placements))


def _claude_kept(runtime: Runtime, ordered: list[ListedSkill], capped: list[int], budget: int) -> list[int]:
    used = sum(_bare(runtime, s) for s in ordered)
    kept: list[int] = []
    room = True
    for skill, length in zip(ordered, capped, strict=True):
        extra = entry_cost(runtime, skill, length) - _bare(runtime, skill)
        if room and used + extra <= budget:
            used += extra
            kept.append(length)
        else:
            room = False  # past the first that does not fit, none is kept (usage order, not size)
            kept.append(0)
    return kept


def _codex_kept(runtime: Runtime, ordered: list[ListedSkill], capped: list[int], budget: int) -> list[int]:
    """Shares of each description; -1 for an omitted skill."""
    bare = [_bare(runtime, s) for s in ordered]
    total = sum(bare)
    if total > budget:  # names and paths alone overflow: skills go from the end, every description with them
        kept_count = len(ordered)
        while kept_count and total > budget:
            kept_count -= 1
            total -= bare[kept_count]
        return [0] * kept_count + [-1] * (len(ordered) - kept_count)
    lengths = sorted(capped)
    level = _level(lengths, list(itertools.accumulate(lengths, initial=0)), budget - total)
    return [min(length, level) for length in capped]


@dataclass(frozen=True)
class ListingBase:
    """A runtime's listing of every skill but one, summed up so that where one more skill lands
    is found in O(log n): what the editor asks on each keystroke in a description, over a
    workspace whose other skills did not change."""

    runtime: Runtime
    budget: int | None
    keys: list[tuple[str, str]]  # (name, path) in listing order
    extra_prefix: list[int]  # Claude Code: characters of the first i descriptions' entries beyond the name
    bare_prefix: list[int]  # the first i entries without descriptions
    full_total: int
    lengths: list[int]  # the capped description lengths, sorted
    length_prefix: list[int]


@dataclass(frozen=True)
class Listed:
    """Skills to list, column by column, in listing order (by name, then path; stable): sorted
    once for every runtime's `ListingTable`. `owners` label each skill for `ListingTable.base`
    (the server's normalised paths)."""

    names: list[str]
    descriptions: list[str]
    paths: list[str]
    when_to_use: list[str]
    owners: list[str]

    # Made once for every runtime's table (each list is only read).
    @cached_property
    def keys(self) -> list[tuple[str, str]]:
        return list(zip(self.names, self.paths, strict=True))

    @cached_property
    def name_lengths(self) -> list[int]:
        return list(map(len, self.names))

    @cached_property
    def path_lengths(self) -> list[int]:
        return list(map(len, self.paths))

    @cached_property
    def description_lengths(self) -> list[int]:
        return list(map(len, self.descriptions))


def listed(rows: Iterable[tuple[str, str, str, str, str]]) -> Listed:
    """`Listed` of (name, description, path, when_to_use, owner) rows, in any order."""
    columns = list(zip(*rows, strict=True))
    if not columns:
        return Listed([], [], [], [], [])
    names, descriptions, paths, when_to_use, owners = columns
    return listed_columns(names, descriptions, paths, when_to_use, owners)


def listed_columns(
    names: Sequence[str],
    descriptions: Sequence[str],
    paths: Sequence[str],
    when_to_use: Sequence[str],
    owners: Sequence[str],
    keep: Iterable[int] | None = None,
) -> Listed:
    """`listed` of the rows these columns make (the rows at the positions `keep`, in order; None:
    all of them): the server's columns of 15,000 skills come from its index whole, each a pass in
    C, not as a tuple per skill."""
    keys = list(zip(names, paths, strict=True))
    order = sorted(range(len(keys)) if keep is None else keep, key=keys.__getitem__)  # stable

    def column(values: Sequence[str]) -> list[str]:
        return list(map(values.__getitem__, order))

    made = Listed(column(names), column(descriptions), column(paths), column(when_to_use), column(owners))
    made.__dict__["keys"] = list(map(keys.__getitem__, order))  # its cached `keys`, not zipped again
    return made


@dataclass(frozen=True)
class ListingTable:
    """A runtime's entry of every skill of `Listed`, in listing order: the `ListingBase` of all of
    them but one owner's is made from these lists by slicing and summing, with no work per skill
    (an editor's first diagnostics of a skill at start-up place it among 16,000 others, for two
    runtimes)."""

    runtime: Runtime
    listed: Listed
    capped: list[int]  # each description's length as listed, within the entry cap
    bare: list[int]  # each entry without its description (`_bare`)
    full: list[int]  # each entry with its capped description (`entry_cost`)

    @property
    def keys(self) -> list[tuple[str, str]]:
        return self.listed.keys

    @cached_property
    def lengths(self) -> list[int]:
        return sorted(self.capped)

    def base(
        self,
        context_tokens: int | None = None,
        environ: Mapping[str, str] | None = None,
        without: str | None = None,
    ) -> ListingBase:
        """The listing base of every skill but those of the owner `without`."""
        listed, capped, bare, full = self.listed, self.capped, self.bare, self.full
        keys, lengths = self.keys, self.lengths
        dropped = _positions(listed.owners, without) if without is not None else []
        if dropped:
            keys, lengths, bare, full = list(keys), list(lengths), list(bare), list(full)
            for at in reversed(dropped):
                del keys[at], bare[at], full[at]
                del lengths[bisect.bisect_left(lengths, capped[at])]
        return ListingBase(
            self.runtime,
            self.runtime.budget(context_tokens, environ),
            keys,
            list(itertools.accumulate(map(operator.sub, full, bare), initial=0)),
            list(itertools.accumulate(bare, initial=0)),
            sum(full),
            lengths,
            list(itertools.accumulate(lengths, initial=0)),
        )


def _positions(values: list[str], value: str) -> list[int]:
    """Where `value` is in `values`, in order (found by `list.index`, a scan in C)."""
    found: list[int] = []
    try:
        while True:
            found.append(values.index(value, found[-1] + 1 if found else 0))
    except ValueError:
        return found


def listing_table(runtime: Runtime, skills: Listed) -> ListingTable:
    """`runtime`'s entries of `skills`: the arithmetic of `as_listed_by`, `_capped`, `_bare` and
    `entry_cost` over whole columns (tests/core/rules/test_listing.py holds them to those rules skill
    by skill, and to `fit_listing`), each a pass in C where it can be."""
    lengths = skills.description_lengths
    if runtime.lists_when_to_use and any(skills.when_to_use):
        # The description, one space and `when_to_use`, when there is one.
        lengths = [
            length + 1 + len(when) if when else length
            for length, when in zip(lengths, skills.when_to_use, strict=True)
        ]
    cap = runtime.entry_cap
    capped = list(map(min, lengths, itertools.repeat(cap))) if cap else list(lengths)
    plain = skills.name_lengths
    if runtime.counts_path:
        plain = list(map(operator.add, plain, skills.path_lengths))
    plain = list(map(runtime.overhead.__add__, plain))
    full = list(map(operator.add, plain, capped))
    # Claude Code's entry without a description is `- {name}`; the others' is their entry with an empty one.
    bare = (
        list(map((3).__add__, skills.name_lengths))
        if runtime.strategy is Strategy.DROP_DESCRIPTIONS
        else plain
    )
    return ListingTable(runtime, skills, capped, bare, full)


def listing_base(
    runtime: Runtime,
    skills: Sequence[ListedSkill],
    context_tokens: int | None = None,
    environ: Mapping[str, str] | None = None,
) -> ListingBase:
    rows = ((s.name, s.description, s.path, s.when_to_use, "") for s in skills)
    return listing_table(runtime, listed(rows)).base(context_tokens, environ)


def place(base: ListingBase, me: ListedSkill) -> tuple[Placement, int]:
    """Where `me` lands in the listing of `base`'s skills plus itself, and the characters that
    whole listing needs; the same answer as `fit_listing` over all of them."""
    runtime, budget = base.runtime, base.budget
    me = me.as_listed_by(runtime)
    capped = _capped(runtime, me)
    needed = base.full_total + entry_cost(runtime, me, capped)
    if budget is None or needed <= budget:
        return Placement(me, _fate(me, capped), capped), needed
    at = bisect.bisect_left(base.keys, (me.name, me.path))
    bare_me = _bare(runtime, me)
    bare_all = base.bare_prefix[-1] + bare_me
    if runtime.strategy is Strategy.DROP_DESCRIPTIONS:
        extra_me = entry_cost(runtime, me, capped) - bare_me
        kept = capped if bare_all + base.extra_prefix[at] + extra_me <= budget else 0
        return Placement(me, _fate(me, kept), kept), needed
    if bare_all > budget:
        omitted = base.bare_prefix[at] + bare_me > budget
        return Placement(me, Fate.OMITTED if omitted else _fate(me, 0), 0), needed
    kept = min(capped, _level(base.lengths, base.length_prefix, budget - bare_all, capped))
    return Placement(me, _fate(me, kept), kept), needed


def runtimes_for(profile: str) -> tuple[Runtime, ...]:
    """The runtimes whose listing a skill of `profile` is checked against."""
    return tuple(RUNTIMES[name] for name in PROFILE_RUNTIMES.get(profile, ()))
