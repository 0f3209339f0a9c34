"""A `google.adk.skills.SkillRegistry` over a skills folder or an index, ranked by our scorers.

ADK's `SkillToolset(registry=...)` offers the model a `search_skills` tool backed by the
registry, and fetches what `load_skill` names from it. `SkillsLspRegistry` answers both:

- Every skill goes through skills-lsp's parser and rules first (`load_adk_skills_report`): a
  skill with an error finding is neither found nor served; `report` says why.
- `search_skills(query)` ranks with the workspace's scorer (the config's `scorer`, else the
  profile's default: what `skills-lsp test` and `eval` use) at that scorer's calibrated
  threshold, so the thresholds `skills-lsp eval` checks in CI are the ones the agent routes by.
  An empty list means no skill clears the threshold.
- `search_tool_description()` tells the model what a good query is.

Scoring runs in a worker thread: embedding a request takes tens of milliseconds, never to be
spent on the runner's event loop. The scorer is built when the registry is made; an embedding
scorer's skill vectors persist in the workspace's cache folder between runs.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from pathlib import Path

from google.adk.skills import Frontmatter, Skill, SkillRegistry

from skills_lsp.adk.loader import AdkLoadReport, load_adk_skills_report
from skills_lsp.core.files.config import Config
from skills_lsp.core.index.skill_index import SkillIndex, read_workspace_document
from skills_lsp.core.model import FileKind
from skills_lsp.core.routing.scorer import (
    SCORERS,
    ScorerName,
    SelectionPolicy,
    embeds,
    prepare,
    scorer_name,
    select_skills,
)
from skills_lsp.core.rules.check import default_cache_dir
from skills_lsp.core.workspace.scorers import default_scorer
from skills_lsp.core.workspace.settings import resolve_config

DEFAULT_TOP_K = 5


class SkillsLspRegistry(SkillRegistry):
    """Skills from folders (or the agentskills skills of an existing `SkillIndex`), checked by
    skills-lsp, searched with its scorers."""

    def __init__(
        self,
        source: SkillIndex | str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
        *,
        scorer: ScorerName | None = None,
        top_k: int = DEFAULT_TOP_K,
        min_score: float | None = None,
        config: Config | None = None,
        profile: str | None = None,
    ) -> None:
        """`source`: skill folders (as `skills-lsp check` takes them) or an index whose
        SKILL.md skills are re-read through the rules. `scorer`: default the config's, else the
        profile's. `min_score`: default that scorer's calibrated threshold."""
        if isinstance(source, SkillIndex):
            roots: list[str | os.PathLike[str]] = [d.path for d in source if d.kind is FileKind.AGENT_SKILL]
        elif isinstance(source, (str, os.PathLike)):
            roots = [source]
        else:
            roots = list(source)
        if config is None:
            config, _ = resolve_config(roots)
        self.report: AdkLoadReport = load_adk_skills_report(roots, profile, config=config)
        self._skills: dict[str, Skill] = {skill.name: skill for skill in self.report.skills}
        # Exactly the files the loader accepted: a rejected namesake is never ranked.
        documents = [
            document
            for path in self.report.loaded
            if (document := read_workspace_document(Path(path), FileKind.AGENT_SKILL)) is not None
        ]
        self.index = SkillIndex(documents)
        self.scorer: ScorerName = scorer_name(scorer) if scorer else default_scorer(config, self.index)
        spec = SCORERS[self.scorer]
        self.policy = SelectionPolicy(
            top_k, spec.default_min_score if min_score is None else min_score, scorer=self.scorer
        )
        self._build(roots, config)

    def _build(self, roots: Sequence[str | os.PathLike[str]], config: Config) -> None:
        """Build the scorer now, not on the model's first search. An embedding scorer keeps its
        skill vectors on disk in the workspace's cache folder (the one `skills-lsp check`, `test`
        and the editor use), so an agent that starts again embeds only what changed."""
        if not embeds([self.scorer]):
            prepare(self.index, self.scorer)
            return
        from skills_lsp.core.routing.semantic import VECTORS, keep_vectors_in

        keep_vectors_in(default_cache_dir(list(roots) or ["."], config))
        prepare(self.index, self.scorer)
        VECTORS.flush()

    @property
    def skills(self) -> list[Skill]:
        return list(self._skills.values())

    async def get_skill(self, *, name: str) -> Skill:
        skill = self._skills.get(name)
        if skill is None:
            known = ", ".join(sorted(self._skills)) or "none"
            raise KeyError(f"no skill named {name!r} in the registry (skills: {known})")
        return skill

    def search(self, query: str) -> list[Frontmatter]:
        """The skills selected for `query`, best first (the synchronous `search_skills`)."""
        matches = select_skills(self.index, query, self.policy)
        return [self._skills[m.skill.name].frontmatter for m in matches if m.skill.name in self._skills]

    async def search_skills(self, *, query: str) -> list[Frontmatter]:
        return await asyncio.to_thread(self.search, query)

    def search_tool_description(self) -> str:
        return (
            f"Search {len(self._skills)} skills for the ones that fit the user's task. Write the "
            "query as the user's request in a full sentence: what they want done and on what "
            "(e.g. 'turn this CSV of monthly sales into a PDF report'), not a single keyword or a "
            "skill name. Results are the skills whose descriptions match best, at most "
            f"{self.policy.top_k}, best first; an empty list means no skill fits, so carry on "
            "without one. Then call load_skill with the name of the one to use."
        )
