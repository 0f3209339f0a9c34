"""How `check` prints findings: text, JSON, GitHub workflow annotations, SARIF 2.1.0 and GitLab
Code Quality; the per-code statistics; what `--fix` fixed or would fix."""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from json.encoder import encode_basestring
from pathlib import Path
from typing import TextIO
from urllib.parse import quote

from skills_lsp._version import __version__
from skills_lsp.cli.common import display, printable, relative
from skills_lsp.core.model import Applicability, Finding, Severity
from skills_lsp.core.rules import RULES
from skills_lsp.core.rules.baseline import file_lines, fingerprint
from skills_lsp.core.rules.check import CheckResult
from skills_lsp.core.rules.fixing import FileFix, fix_kind

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


def _problems(n: int) -> str:
    return f"{n} problem{'s' if n != 1 else ''}"


@dataclass(frozen=True)
class Fixability:
    """How many shown findings `--fix` would fix, and how many more `--unsafe-fixes` would."""

    fixable: int = 0
    unsafe_only: int = 0

    @staticmethod
    def of(shown: Sequence[Finding], unsafe: bool) -> Fixability:
        kinds = [fix_kind(f, True) for f in shown]
        safe = sum(k is Applicability.SAFE for k in kinds)
        risky = sum(k is Applicability.UNSAFE for k in kinds)
        return Fixability(safe + risky, 0) if unsafe else Fixability(safe, risky)

    def footer(self) -> str:
        if self.fixable:
            more = f" ({self.unsafe_only} more with `--fix --unsafe-fixes`)" if self.unsafe_only else ""
            return f"[*] {self.fixable} fixable with `--fix`{more}.\n"
        if self.unsafe_only:
            return f"{self.unsafe_only} fixable with `--fix --unsafe-fixes`.\n"
        return ""


def write_text(
    result: CheckResult,
    shown: Sequence[Finding],
    out: TextIO,
    *,
    fixed: int = 0,
    fixability: Fixability | None = None,
    in_baseline: int = 0,
) -> None:
    """The findings and a summary; `in_baseline`: how many findings the baseline hid."""
    for f in shown:
        line, col = f.range.start.line + 1, f.range.start.character + 1
        out.write(f"{display(f.path)}:{line}:{col}: {f.code} [{f.severity.label}] {printable(f.message)}\n")
    files = len(result.files)
    noun = "file" if files == 1 else "files"
    fixed_note = f"Fixed {_problems(fixed)}.\n" if fixed else ""
    plural = "s" if in_baseline != 1 else ""
    hidden = f" ({in_baseline} finding{plural} in the baseline)" if in_baseline else ""
    if shown:
        out.write(
            f"\n{fixed_note}Found {_problems(len(shown))} ({_counts(shown)}) in {files} {noun}{hidden}.\n"
        )
        if fixability is not None:
            out.write(fixability.footer())
    else:
        out.write(f"{fixed_note}All checks passed: {files} {noun}{hidden}.\n")


def write_statistics(shown: Sequence[Finding], out: TextIO, unsafe: bool, as_json: bool) -> None:
    """One row per code, most frequent first: count, code, `[*]` when `--fix` fixes some of
    them (with `--unsafe-fixes` when it was given), name."""
    counts = Counter(f.code for f in shown)
    fixable = {f.code for f in shown if fix_kind(f, unsafe) is not None}
    rows = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    if as_json:
        data = [
            {"code": code, "name": _name(code), "count": n, "fixable": code in fixable} for code, n in rows
        ]
        json.dump(data, out, indent=2)
        out.write("\n")
        return
    width = max((len(str(n)) for _, n in rows), default=1)
    for code, n in rows:
        mark = "[*]" if code in fixable else "   "
        out.write(f"{n:>{width}}\t{code}\t{mark} {_name(code)}\n")


def _name(code: str) -> str:
    rule = RULES.get(code)
    return rule.name if rule is not None else ""


def write_fixes(fixes: Sequence[FileFix], out: TextIO, would: bool = False) -> None:
    """What `--fix` fixed (or, `would`, what it would fix), per file and code, as ruff lists it."""
    done = [f for f in fixes if f.applied and f.changed]
    total = sum(len(f.applied) for f in done)
    if not total:
        out.write("No fixes to apply.\n" if would else "No fixes applied.\n")
        return
    out.write(f"{'Would fix' if would else 'Fixed'} {_problems(total)}:\n")
    for fix in done:
        out.write(f"- {display(fix.path)}:\n")
        for (code, title), n in Counter((a.code, a.title) for a in fix.applied).items():
            out.write(f"    {n} × {code} ({_name(code)}): {printable(title)}\n")


def write_fixable(shown: Sequence[Finding], out: TextIO, unsafe: bool) -> None:
    """`--show-fixes` without `--fix`: the fix `--fix` would apply to each finding."""
    rows = []
    for f in shown:
        kind = fix_kind(f, unsafe)
        if kind is None:
            continue
        title = next(x.title for x in f.fixes if x.applicability is kind and not x.changes)
        line, col = f.range.start.line + 1, f.range.start.character + 1
        note = " (unsafe)" if kind is Applicability.UNSAFE else ""
        rows.append(f"{display(f.path)}:{line}:{col}: {f.code} {printable(title)}{note}\n")
    out.write(f"\nFixable with `--fix{' --unsafe-fixes' if unsafe else ''}`:\n" if rows else "")
    out.writelines(rows)


# A JSON string as json.dumps(..., ensure_ascii=False) writes it (the same C function).
_json_string = encode_basestring

_GITLAB_SEVERITY = {
    Severity.ERROR: "major",
    Severity.WARNING: "minor",
    Severity.INFO: "info",
    Severity.HINT: "info",
}


def gitlab_report(shown: Sequence[Finding]) -> list[dict[str, object]]:
    """GitLab Code Quality: one issue per finding. The fingerprint is the baseline's content
    fingerprint (stable when lines move) with the path and an occurrence number, so it is unique."""
    seen: Counter[tuple[str, str]] = Counter()
    issues: list[dict[str, object]] = []
    for f in shown:
        path = display(f.path)
        content = fingerprint(f, file_lines(f.path))
        seen[(path, content)] += 1
        unique = f"{path}\0{content}\0{seen[(path, content)]}".encode("utf-8", "surrogateescape")
        r = f.range
        issues.append(
            {
                "type": "issue",
                "check_name": f.code,
                "description": f"{f.code} {printable(f.message)}",
                "categories": ["Style"],
                "severity": _GITLAB_SEVERITY[f.severity],
                "fingerprint": hashlib.sha256(unique).hexdigest(),
                "location": {
                    "path": path,
                    "positions": {
                        "begin": {"line": r.start.line + 1, "column": r.start.character + 1},
                        "end": {"line": r.end.line + 1, "column": r.end.character + 1},
                    },
                },
            }
        )
    return issues


_SEVERITY_JSON = {severity: _json_string(severity.label) for severity in Severity}


def json_row(f: Finding) -> str:
    """`json.dumps(f.to_json(), ensure_ascii=False)` with the path shown and the message printable,
    written out directly: the same text (strings through json's own C escaping, the keys in
    `to_json`'s order) in a third of the time, as a corpus has some 100,000 findings."""
    start, end = f.range.start, f.range.end
    return (
        f'{{"path": {_json_string(display(f.path))}, "code": {_json_string(f.code)}, '
        f'"severity": {_SEVERITY_JSON[f.severity]}, "message": {_json_string(printable(f.message))}, '
        f'"range": {{"start": {{"line": {start.line:d}, "character": {start.character:d}}}, '
        f'"end": {{"line": {end.line:d}, "character": {end.character:d}}}}}}}'
    )


def write_json(shown: Sequence[Finding], out: TextIO) -> None:
    """`json_row` of every finding, one per line (readable; json's indent= would also take the slow
    Python encoder). A row's head is written once per path and its code and severity once per
    pair: findings come grouped by file, and a corpus has some 100,000."""
    rows: list[str] = []
    append = rows.append
    path: str | None = None
    head = ""
    middles: dict[tuple[str, Severity], str] = {}
    for f in shown:
        if f.path != path:
            path = f.path
            head = f'{{"path": {_json_string(display(path))}, "code": '
        middle = middles.get((f.code, f.severity))
        if middle is None:
            middle = f'{_json_string(f.code)}, "severity": {_SEVERITY_JSON[f.severity]}, "message": '
            middles[(f.code, f.severity)] = middle
        start, end = f.range.start, f.range.end
        append(
            f'{head}{middle}{_json_string(printable(f.message))}, "range": {{"start": {{"line": '
            f'{start.line}, "character": {start.character}}}, "end": {{"line": {end.line}, '
            f'"character": {end.character}}}}}}}'
        )
    if not rows:
        out.write("[]\n")
        return
    # A run of rows at a time, not joined whole: the whole text (37 MB for a corpus) was made,
    # copied twice to add the brackets and encoded, in fresh memory, and one character beyond
    # Latin-1 in any message (a corpus has 114) makes all of it two bytes a character: 0.2 s
    # more than the rows themselves (0.34 s against 0.14, in process; 0.23 s if all ASCII).
    out.write("[\n  ")
    for first in range(0, len(rows), _ROWS_PER_WRITE):
        out.write((",\n  " if first else "") + ",\n  ".join(rows[first : first + _ROWS_PER_WRITE]))
    out.write("\n]\n")


_ROWS_PER_WRITE = 1024


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
