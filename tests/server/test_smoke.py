from __future__ import annotations

from pathlib import Path

import pytest
from lsp_helpers import codes, opened
from pytest_lsp import LanguageClient

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def test_diagnostics_of_a_broken_example(client: LanguageClient, workspace: Path) -> None:
    async with opened(client, workspace / "skills" / "broken-name-mismatch" / "SKILL.md") as doc:
        found = await doc.diagnostics()
    assert set(codes(found)) >= {"SK204", "SK205", "SK208", "SK401", "SK501", "SK505"}
    assert all(d.source == "skills-lsp" for d in found)
