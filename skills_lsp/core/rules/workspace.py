"""SK7xx: findings that need the whole workspace, not one file.

Workspace rules take the `NamedSkill` summaries of every checked file (kept in the check cache,
so they work without re-parsing; the language server builds them from its index) and yield
`(skill, report)` pairs. Routing rules take the routing tests' outcomes, which the routing stage
computes: this stage never imports a scorer.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from skills_lsp.core.model import FileKind, Range, Severity
from skills_lsp.core.rules.listing import (
    PROFILE_RUNTIMES,
    Fate,
    ListedSkill,
    Placement,
    Runtime,
    fit_listing,
    runtimes_for,
)
from skills_lsp.core.rules.registry import Report, Rivalry, RoutingRun, Target, except_in, rule


@dataclass
class NamedSkill:
    """What workspace rules need to know of one checked file."""

    path: str
    kind: FileKind
    name: str | None
    name_range: Range | None
    description: str | None = None
    description_range: Range | None = None
    profile: str | None = None  # the profile it is checked in (the runtimes whose listing it is in)
    when_to_use: str = ""  # Claude Code lists it with the description


@dataclass(frozen=True)
class WorkspaceRun:
    """What workspace rules see: every checked file, and the environment variables that change a
    listing budget as the caller read them (`listing.budget_variables`)."""

    skills: Sequence[NamedSkill]
    budget_variables: tuple[tuple[str, str], ...] = ()


@rule(
    "SK701",
    "duplicate-name",
    Severity.WARNING,
    "Two skills in the workspace share a name",
    target=Target.WORKSPACE,
    profiles=except_in("skills-ref"),
)
def duplicate_name(run: WorkspaceRun) -> Iterator[tuple[NamedSkill, Report]]:
    """Agents load skills by name; when two skills share one, which one wins depends on the
    client (the first found, the project-local one, or the last). Rename one of them.
    Convention files (several AGENTS.md in one repo) are exempt."""
    by_name: dict[str, list[NamedSkill]] = defaultdict(list)
    for skill in run.skills:
        if skill.kind is not FileKind.CONVENTION and skill.name and skill.name_range is not None:
            by_name[skill.name].append(skill)
    for name, group in by_name.items():
        if len(group) < 2:
            continue
        for skill in group:
            assert skill.name_range is not None
            others = ", ".join(o.path for o in group if o is not skill)
            yield skill, Report(skill.name_range, f"Skill name `{name}` is also used by {others}.")


@rule(
    "SK702",
    "failing-test-query",
    Severity.WARNING,
    "A routing test in the test-query file fails",
    target=Target.ROUTING,
)
def failing_test_query(run: RoutingRun) -> Iterator[Report]:
    """A case of the test-query file (`skill-queries.yaml`) does not select the skill it expects
    (or selects one where it expects `none`, or wins by less than its `margin`). The language
    server reports it on the case's `query`; `skills-lsp test` prints the whole table. When the
    configured scorer's extra is missing, the tests run with bm25f and a finding at the top of the
    file says so."""
    if run.fallback:
        yield Report(Range.point(0, 0), f"Routing tests run with bm25f: {run.fallback}.")
    for outcome in run.outcomes:
        if not outcome.passed:
            yield Report(outcome.range, f"Routing test fails: {outcome.reason}.")


@rule(
    "SK703",
    "listing-over-budget",
    Severity.WARNING,
    "A runtime's skill listing cuts this skill's description, or leaves the skill out",
    target=Target.WORKSPACE,
    profiles=tuple(profile for profile, runtimes in PROFILE_RUNTIMES.items() if runtimes),
)
def listing_over_budget(run: WorkspaceRun) -> Iterator[tuple[NamedSkill, Report]]:
    """Runtimes list every skill's name and description for the model to choose from, within a
    budget: Claude Code 1% of the context window (8,000 characters when it is not known), each
    entry cut at 1,536 characters, descriptions dropped past the budget; Codex 2% of the context
    window or 8,000 characters, descriptions shortened first, then skills left out. A skill whose
    description is cut is chosen on whatever is left of it. Shorten the descriptions (front-load
    the use case), or split the workspace. Checked against the runtimes of the skill's profile:
    `agentskills` against Claude Code and Codex, `claude-code`, `codex`, `gemini-cli`, `adk` and
    `vscode-copilot` against their own runtime (the last three document no cap);
    `skills-lsp budget --runtime NAME` prints the whole listing. docs/budgets.md cites each figure."""
    skills = run.skills
    listed = [s for s in skills if s.kind is not FileKind.CONVENTION and s.name and s.description is not None]
    # Codex writes each skill's absolute path into its entry: count it as such.
    entries = [
        ListedSkill(s.name or "", s.description or "", os.path.abspath(s.path), s.when_to_use) for s in listed
    ]
    checked = {profile: runtimes_for(profile) for profile in {s.profile or "" for s in listed}}
    runtimes = {r.name: r for found in checked.values() for r in found}
    # By name: the profiles come from a set, whose order changes with the string hash seed, and
    # one skill's findings for two runtimes share a range, so their order is this loop's.
    environ = dict(run.budget_variables)
    for name in sorted(runtimes):
        runtime = runtimes[name]
        if runtime.budget(None, environ) is None:  # no documented cap: nothing to fit
            continue
        listing = fit_listing(runtime, entries, environ=environ)
        # Over budget only: a description cut at the runtime's per-entry cap alone is longer than
        # the spec's 1,024 characters, which SK303 reports already.
        if listing.budget is None or listing.needed <= listing.budget:
            continue
        placements = {(p.skill.name, p.skill.path): p for p in listing.placements}
        applies = {profile for profile, found in checked.items() if runtime in found}
        # One message per fate, length kept and length listed: a corpus over budget gives most
        # skills one of a few (28,000 reports on 15,000 skills, one f-string each before).
        messages: dict[tuple[Fate, int, int], str] = {}
        for skill, entry in zip(listed, entries, strict=True):
            if (skill.profile or "") not in applies:
                continue
            placement = placements.get((entry.name, entry.path))
            if placement is None or placement.fate is Fate.FULL:  # not `cut` (28,000 property calls)
                continue
            key = (placement.fate, placement.kept, len(placement.skill.description))
            message = messages.get(key)
            if message is None:
                message = messages[key] = _listing_message(runtime, placement, listing.needed, listing.budget)
            yield skill, Report(_listing_anchor(skill), message)


def listing_report(
    runtime: Runtime, placement: Placement, needed: int, budget: int | None, skill: NamedSkill
) -> Report | None:
    """SK703's report for one skill's place in an over-budget listing (None: nothing to say)."""
    if budget is None or needed <= budget or not placement.cut:
        return None
    return Report(_listing_anchor(skill), _listing_message(runtime, placement, needed, budget))


_FILE_START = Range.point(0, 0)


def _listing_anchor(skill: NamedSkill) -> Range:
    """Where a listing report points: the description, else the name, else the file's start."""
    return skill.description_range or skill.name_range or _FILE_START


def _listing_message(runtime: Runtime, placement: Placement, needed: int, budget: int) -> str:
    return (
        f"{runtime.title}'s skill listing: {placement.describe()} (the listing needs "
        f"{needed:,} of its {budget:,} characters)."
    )


@rule(
    "SK704",
    "competing-descriptions",
    Severity.WARNING,
    "Another skill competes for the requests this description is for",
    target=Target.COLLISION,
    profiles=except_in("adk-rust", "convention"),
)
def competing_descriptions(rivalry: Rivalry) -> Iterator[Report]:
    """Each sentence of the description (a "Use when ..." clause read as the request it
    describes) is ranked against the workspace with its scorer. When another skill reaches the
    scorer's threshold and scores at least 90% of this skill's own score, a model choosing from
    the listing sees two descriptions for the same request and may pick either: say what sets
    this skill apart, or merge the two. A rival that scores higher is a warning; one that comes
    close, information. The language server keeps it current as the description is typed;
    `skills-lsp overlap` lists every pair of a workspace. Accept a known pair with `overlap =
    [["a", "b"]]` in the config."""
    goes = "go to" if rivalry.rival_score > rivalry.score else "nearly go to"
    digits = 2 if f"{rivalry.rival_score:.2f}" != f"{rivalry.score:.2f}" else 4
    message = (
        f'Requests like "{rivalry.request}" {goes} `{rivalry.rival}` '
        f"({rivalry.rival_score:.{digits}f} against {rivalry.score:.{digits}f} for this skill)."
    )
    lesser = None if rivalry.rival_score > rivalry.score else Severity.INFO
    yield Report(rivalry.range, message, severity=lesser)
