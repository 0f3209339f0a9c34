"""How `check` prints findings: text, JSON, GitHub workflow annotations and SARIF 2.1.0."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO
from urllib.parse import quote

from skills_lsp._version import __version__
from skills_lsp.cli.common import display, printable, relative
from skills_lsp.core.model import Finding, Severity
from skills_lsp.core.rules import RULES
from skills_lsp.core.rules.check import CheckResult

DOCS_URL = "https://github.com/skills-lsp/skills-lsp/blob/main/docs/rules.md"
_SARIF_LEVEL = {
    Severity.ERROR: "error",
    Severity.WARNING: "warning",
    Severity.INFO: "note",
    Severity.HINT: "note",
}


def _counts(findings: Sequence[Finding]) -> str:
    parts = []
    for severity in Severity:
        n = sum(f.severity is severity for f in findings)
        if n:
            parts.append(f"{n} {severity.label}{'s' if n != 1 and severity is not Severity.INFO else ''}")
    return ", ".join(parts)


def write_text(result: CheckResult, shown: Sequence[Finding], out: TextIO) -> None:
    for f in shown:
        line, col = f.range.start.line + 1, f.range.start.character + 1
        out.write(f"{display(f.path)}:{line}:{col}: {f.code} [{f.severity.label}] {printable(f.message)}\n")
    files = len(result.files)
    noun = "file" if files == 1 else "files"
    if shown:
        plural = "s" if len(shown) != 1 else ""
        out.write(f"\nFound {len(shown)} problem{plural} ({_counts(shown)}) in {files} {noun}.\n")
    else:
        out.write(f"All checks passed: {files} {noun}.\n")


def write_json(shown: Sequence[Finding], out: TextIO) -> None:
    # One finding per line: readable, and the C encoder (json's indent= uses the slow Python one).
    rows = [
        json.dumps(
            dict(f.to_json(), path=display(f.path), message=printable(f.message)), ensure_ascii=False
        )
        for f in shown
    ]
    out.write("[\n  " + ",\n  ".join(rows) + "\n]\n" if rows else "[]\n")


def _gh_escape(text: str, prop: bool = False) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if prop else text


def write_github(shown: Sequence[Finding], out: TextIO) -> None:
    level = {
        Severity.ERROR: "error",
        Severity.WARNING: "warning",
        Severity.INFO: "notice",
        Severity.HINT: "notice",
    }
    for f in shown:
        r = f.range
        out.write(
            f"::{level[f.severity]} file={_gh_escape(display(f.path), True)},line={r.start.line + 1},"
            f"col={r.start.character + 1},endLine={r.end.line + 1},endColumn={r.end.character + 1},"
            f"title={_gh_escape(f.code, True)}::{_gh_escape(printable(f.message))}\n"
        )


def _artifact_location(path: str) -> dict[str, str]:
    """A SARIF artifactLocation: a percent-encoded URI reference relative to %SRCROOT% (the
    working directory) for a file below it, else an absolute `file:` URI. The raw bytes of
    the name are encoded, so names that are not valid UTF-8 survive too."""
    rel = relative(path)
    if rel is None:
        return {"uri": Path(os.path.abspath(path)).as_uri()}
    return {"uri": quote(os.fsencode(rel), safe="/"), "uriBaseId": "%SRCROOT%"}


def _srcroot_uri() -> str:
    uri = Path.cwd().as_uri()
    return uri if uri.endswith("/") else uri + "/"


def sarif_log(shown: Sequence[Finding]) -> dict[str, object]:
    codes = sorted(RULES)
    index = {code: i for i, code in enumerate(codes)}
    rules = [
        {
            "id": code,
            "name": RULES[code].name,
            "shortDescription": {"text": RULES[code].summary},
            "fullDescription": {"text": RULES[code].doc},
            "helpUri": f"{DOCS_URL}#{code.lower()}",
            "defaultConfiguration": {"level": _SARIF_LEVEL[RULES[code].severity]},
        }
        for code in codes
    ]
    results = []
    for f in shown:
        r = f.range
        result: dict[str, object] = {
            "ruleId": f.code,
            "level": _SARIF_LEVEL[f.severity],
            "message": {"text": printable(f.message)},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": _artifact_location(f.path),
                        "region": {
                            "startLine": r.start.line + 1,
                            "startColumn": r.start.character + 1,
                            "endLine": r.end.line + 1,
                            "endColumn": r.end.character + 1,
                        },
                    }
                }
            ],
        }
        if f.code in index:
            result["ruleIndex"] = index[f.code]
        results.append(result)
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "skills-lsp",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "informationUri": "https://github.com/skills-lsp/skills-lsp",
                        "rules": rules,
                    }
                },
                "originalUriBaseIds": {"%SRCROOT%": {"uri": _srcroot_uri()}},
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }
