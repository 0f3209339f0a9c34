"""SkillDocument built in memory, for tests of the scorers and queries that need no files."""

from __future__ import annotations

from pathlib import Path

from skills_lsp.core.index.skill_index import SkillDocument
from skills_lsp.core.model import FileKind


def skill_document(
    name: str,
    description: str,
    body: str = "",
    tags: tuple[str, ...] = (),
    *,
    id: str,
    path: Path,
    hash: str = "0" * 64,
    kind: FileKind = FileKind.AGENT_SKILL,
) -> SkillDocument:
    return SkillDocument(
        id=id,
        name=name,
        description=description,
        version=None,
        license=None,
        compatibility=None,
        tags=list(tags),
        allowed_tools=[],
        references=[],
        trigger=False,
        hint=None,
        metadata={},
        body=body,
        path=path,
        hash=hash,
        last_modified=None,
        triggers=[],
        kind=kind,
    )


# Words for the scorers' property tests: plurals and -ing forms (stemming), stop words, accents,
# CJK (one term per character), and a word no model knows.
SCORING_WORDS = [
    "invoice",
    "invoices",
    "pdf",
    "form",
    "forms",
    "the",
    "a",
    "weather",
    "forecast",
    "git",
    "release",
    "notes",
    "sql",
    "query",
    "queries",
    "clean",
    "cleaning",
    "csv",
    "café",
    "数据",
    "数据库",
    "ticket",
    "deploy",
    "cluster",
    "zzqx",
]


def numbered_document(
    i: int, name: str, description: str, body: str, tags: tuple[str, ...] = ()
) -> SkillDocument:
    """Skill number `i` at /ws/s<i>/SKILL.md (ids and paths unique per number)."""
    path = Path(f"/ws/s{i}/SKILL.md")
    return skill_document(name, description, body, tags, id=f"{name}-{i:012d}", path=path)
