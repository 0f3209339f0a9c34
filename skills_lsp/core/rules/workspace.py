"""SK7xx: findings that need the whole workspace, not one file.

Workspace rules take the `NamedSkill` summaries of every checked file (kept in the check cache,
so they work without re-parsing; the language server builds them from its index) and yield
`(skill, report)` pairs. Routing rules take the routing tests' outcomes, which the routing stage
computes: this stage never imports a scorer.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from skills_lsp.core.model import FileKind, Range, Severity
from skills_lsp.core.rules.registry import Report, RoutingRun, Target, except_in, rule


@dataclass
class NamedSkill:
    """What workspace rules need to know of one checked file."""

    path: str
    kind: FileKind
    name: str | None
    name_range: Range | None


@rule(
    "SK701",
    "duplicate-name",
    Severity.WARNING,
    "Two skills in the workspace share a name",
    target=Target.WORKSPACE,
    profiles=except_in("skills-ref"),
)
def duplicate_name(skills: Sequence[NamedSkill]) -> Iterator[tuple[NamedSkill, Report]]:
    """Agents load skills by name; when two skills share one, which one wins depends on the
    client (the first found, the project-local one, or the last). Rename one of them.
    Convention files (several AGENTS.md in one repo) are exempt."""
    by_name: dict[str, list[NamedSkill]] = defaultdict(list)
    for skill in skills:
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
