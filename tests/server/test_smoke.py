from __future__ import annotations

import asyncio
from pathlib import Path

from lsprotocol import types
from pytest_lsp import LanguageClient


async def diagnostics(client: LanguageClient, uri: str) -> list[types.Diagnostic]:
    if client.capabilities.text_document and client.capabilities.text_document.diagnostic:
        report = await client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri))
        )
        return list(report.items)
    for _ in range(100):
        if uri in client.diagnostics:
            return client.diagnostics[uri]
        await asyncio.sleep(0.05)
    raise AssertionError("no diagnostics published")


async def test_diagnostics_of_a_broken_example(client: LanguageClient, workspace: Path) -> None:
    path = workspace / "skills" / "broken-name-mismatch" / "SKILL.md"
    uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            types.TextDocumentItem(uri, "markdown", 1, path.read_text(encoding="utf-8"))
        )
    )
    found = await diagnostics(client, uri)
    assert {d.code for d in found} >= {"SK204", "SK205", "SK208", "SK401", "SK501", "SK505"}
    assert all(d.source == "skills-lsp" for d in found)
