"""The tool manifest: what `allowed-tools` is checked and completed against; SK002 on the file."""

from __future__ import annotations

import hashlib
from pathlib import Path

from skills_lsp.core.model import Finding
from skills_lsp.core.parse.frontmatter import Document
from skills_lsp.core.rules.check import Manifest
from skills_lsp.core.workspace.settings import parse_tool_manifest
from skills_lsp.server.folder import Folder, Outcome, Role


def update(folder: Folder, path: Path, text: str | None) -> Outcome:
    if text is None:
        folder.manifest, folder.manifest_problems = Manifest(), []
    else:
        registry, problems = parse_tool_manifest(text, str(path))
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        folder.manifest, folder.manifest_problems = Manifest(registry, digest, path), problems
    return Outcome.CHANGED


def findings(folder: Folder, path: Path, text: str, doc: Document | None) -> list[Finding]:
    return parse_tool_manifest(text, str(path))[1]


ROLE = Role(update, findings)
