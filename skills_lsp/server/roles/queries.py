"""Test-query files (the configured `skill-queries.yaml` and each skill's
`evals/eval_queries.json`): their cases run against the folder's index (code lenses, hovers),
with SK003 for a malformed file and SK702 for each failing case."""

from __future__ import annotations

import os
from pathlib import Path

from skills_lsp.core.model import Finding
from skills_lsp.core.parse.frontmatter import Document
from skills_lsp.core.rules.registry import RoutingRun
from skills_lsp.core.rules.validate import routing_findings
from skills_lsp.server.folder import Folder, Outcome, Role, same_file


def update(folder: Folder, path: Path, text: str | None) -> Outcome:
    cases, problems = folder.parse_queries(path, text) if text else ([], [])
    if same_file(path, folder.query_path):
        folder.cases, folder.query_problems = cases, problems
    elif text is None:
        folder.eval_cases.pop(os.path.normpath(path), None)
    else:
        folder.eval_cases[os.path.normpath(path)] = cases
    return Outcome.CHANGED


def findings(folder: Folder, path: Path, text: str, doc: Document | None) -> list[Finding]:
    problems = folder.parse_queries(path, text)[1]  # re-checked on every skill edit: parsed once per text
    run = RoutingRun(folder.results_for(path), folder.scorer_problem)
    return problems + routing_findings(path, run)


ROLE = Role(update, findings)
