"""Collisions: skills that compete for the same requests.

A skill's own description says which requests it is for. Each of its sentences (and each "Use
when ..." clause, worded as a request) is a probe: it is ranked against the whole index with the
workspace's scorer. Where another skill reaches the scorer's threshold and scores at least
`CLOSE` of what the skill itself scores, the two compete for that request: a model choosing
from the listing sees two descriptions that say the same thing.

A pair's confusability is the rival's score over the larger of the two (1.0: the rival scores at
least as high, and may well take the request). `collisions_for` looks at one skill's probes
(what the editor shows on that skill, recomputed as its description is typed: the index follows
the buffer and every scorer follows the index); `overlapping_pairs` runs it over every skill
and keeps the strongest collision of each pair (`skills-lsp overlap`).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from skills_lsp.core.index.skill_index import SkillDocument, SkillIndex
from skills_lsp.core.model import FileKind, Range
from skills_lsp.core.routing.queries import threshold_bar
from skills_lsp.core.routing.scorer import ScorerName, SelectionPolicy, SkillMatch, select_skills
from skills_lsp.core.rules.registry import Rivalry

CLOSE = 0.9  # a rival within 10% of the skill's own score competes for the request
MAX_PROBES = 4  # sentences of a description tried as requests (the first ones say the most)
_RANKED = 5  # how deep a probe's ranking is read for the skill's own score and its rivals
_MIN_WORDS = 3
_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")
# "Use this skill when the user asks for X" is about the request "the user asks for X".
_USE_WHEN = re.compile(
    r"^\s*(?:use|invoke|trigger|apply)(?:\s+(?:this|the)\s+skill)?\s+(?:when|for|to|if)\s+", re.I
)
_WHEN_CLAUSE = re.compile(
    r"\b(?:use|used|useful)\s+(?:it\s+|this\s+(?:skill\s+)?)?(?:when|for)\s+(.+)$", re.I
)


def probes(description: str, limit: int = MAX_PROBES) -> list[str]:
    """Requests a description says its skill is for: its sentences, each "Use when ..." clause as
    the request it describes; the whole description first when it is one short sentence."""
    found: list[str] = []

    def add(text: str) -> None:
        text = text.strip().strip(".;:!?").strip()
        if len(text.split()) >= _MIN_WORDS and text not in found:
            found.append(text)

    for sentence in _SENTENCE.split(description.strip()):
        lead = _USE_WHEN.match(sentence)
        if lead:
            add(sentence[lead.end() :])
            continue
        clause = _WHEN_CLAUSE.search(sentence)
        if clause:
            add(sentence[: clause.start()])
            add(clause.group(1))
        else:
            add(sentence)
    return found[:limit]


@dataclass(frozen=True)
class Collision:
    """`rival` scores close to (or above) `skill` for `request`, one of `skill`'s probes."""

    skill: str
    skill_path: str
    rival: str
    rival_path: str
    request: str
    score: float  # the skill's own score for the request
    rival_score: float

    @property
    def confusability(self) -> float:
        top = max(self.score, self.rival_score)
        return round(self.rival_score / top, 3) if top > 0 else 0.0

    @property
    def rival_wins(self) -> bool:
        return self.rival_score > self.score

    def rivalry(self, where: Range) -> Rivalry:
        """The collision as the SK704 rule reads it, reported at `where`."""
        return Rivalry(self.rival, self.request, self.score, self.rival_score, where)

    def to_json(self) -> dict[str, object]:
        return {
            "skills": [self.skill, self.rival],
            "paths": [self.skill_path, self.rival_path],
            "confusability": self.confusability,
            "request": self.request,
            "scores": {self.skill: self.score, self.rival: self.rival_score},
            "winner": self.rival if self.rival_wins else self.skill,
        }


def accepted_pair(a: str, b: str, accepted: Collection[frozenset[str]]) -> bool:
    return frozenset((a, b)) in accepted


def collisions_for(
    index: SkillIndex,
    document: SkillDocument,
    scorer: ScorerName,
    accepted: Collection[frozenset[str]] = (),
    close: float = CLOSE,
    requests: Iterable[str] | None = None,
) -> list[Collision]:
    """The rivals of `document` for its own probes (or `requests`), strongest first: one
    collision per rival, the request where it comes closest."""
    policy = SelectionPolicy(_RANKED, 0.0, scorer=scorer)
    bar = threshold_bar(SelectionPolicy(scorer=scorer))
    best: dict[str, Collision] = {}
    for request in probes(document.description) if requests is None else requests:
        ranking = select_skills(index, request, policy)
        own = _own_score(ranking, document)
        for match in ranking:
            rival = match.skill
            if rival.name == document.name or rival.path == document.path or match.score <= 0:
                continue
            if match.score < bar or match.score < close * own:
                continue
            if accepted_pair(document.name, rival.name, accepted):
                continue
            found = Collision(
                document.name, str(document.path), rival.name, str(rival.path), request, own, match.score
            )
            kept = best.get(rival.name)
            if kept is None or found.confusability > kept.confusability:
                best[rival.name] = found
    return sorted(best.values(), key=lambda c: (-c.confusability, c.rival, c.request))


def _own_score(ranking: list[SkillMatch], document: SkillDocument) -> float:
    """The skill's score in a ranking; 0 when it is not among the top (its rivals all beat it)."""
    for match in ranking:
        if str(match.skill.path) == str(document.path):
            return match.score
    return 0.0


def overlapping_pairs(
    index: SkillIndex,
    scorer: ScorerName,
    accepted: Collection[frozenset[str]] = (),
    close: float = CLOSE,
) -> list[Collision]:
    """Every competing pair of the workspace, once, with its strongest collision (either skill's
    probe), most confusable first."""
    pairs: dict[frozenset[str], Collision] = {}
    for document in index:
        if document.kind is FileKind.CONVENTION:
            continue
        for collision in collisions_for(index, document, scorer, accepted, close):
            key = frozenset((collision.skill, collision.rival))
            kept = pairs.get(key)
            if kept is None or collision.confusability > kept.confusability:
                pairs[key] = collision
    return sorted(pairs.values(), key=lambda c: (-c.confusability, c.skill, c.rival))
