"""The test-query file: its cases run against the folder's index (code lenses, hovers), with
SK003 for a malformed file and SK702 for each failing case."""

from __future__ import annotations

from pathlib import Path

from skills_lsp.core.model import Finding
from skills_lsp.core.parse.frontmatter import Document
from skills_lsp.core.routing.queries import parse_query_file
from skills_lsp.core.rules.registry import RoutingRun
from skills_lsp.core.rules.validate import routing_findings
from skills_lsp.server.folder import Folder, Outcome, Role


def update(folder: Folder, path: Path, text: str | None) -> Outcome:
    folder.cases, folder.query_problems = parse_query_file(text, str(path)) if text else ([], [])
    return Outcome.CHANGED


def findings(folder: Folder, path: Path, text: str, doc: Document | None) -> list[Finding]:
    if folder.query_parse[0] != text:  # re-checked on every skill edit: parse once per text
        folder.query_parse = (text, parse_query_file(text, str(path))[1])
    run = RoutingRun(folder.results(), folder.scorer_problem)
    return folder.query_parse[1] + routing_findings(path, run)


ROLE = Role(update, findings)
