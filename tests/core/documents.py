"""SkillDocument built in memory, for tests of the scorers and queries that need no files."""

from __future__ import annotations

from pathlib import Path

from skills_lsp.core.index import SkillDocument
from skills_lsp.core.model import FileKind


def skill_document(
    name: str, description: str, body: str = "", tags: tuple[str, ...] = (), *, id: str, path: Path
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
        hash="0" * 64,
        last_modified=None,
        triggers=[],
        kind=FileKind.AGENT_SKILL,
    )
