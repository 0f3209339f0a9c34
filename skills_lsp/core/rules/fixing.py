"""Apply the rules' fixes to files, as `ruff check --fix` does: safe fixes only unless unsafe ones
are allowed, fixes that edit another file never (they are the editor's), findings that are
suppressed or in the baseline left alone.

A file is fixed in rounds: each round checks the text, applies every chosen fix whose edits do
not overlap an earlier one's, and checks again; the rounds stop when nothing is left to fix (so
a second run changes nothing). A round whose fixes together bring in an error of a code the
file did not have is retried one fix at a time, keeping only the fixes that do not. The file is
written only when its text changed, atomically (a temporary file beside it, then a rename), with
its byte-order mark, line breaks and comments as they were (fixes write the file's own line
break and keep the comments of the lines they rewrite).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import stat
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from skills_lsp.core.files.config import Config
from skills_lsp.core.model import Applicability, Finding, Fix, Position, Severity, SkillFile, TextEdit
from skills_lsp.core.parse.frontmatter import BOM, MAX_FILE_BYTES, parse_text, read_limited
from skills_lsp.core.rules.check import Manifest, check_item, named_skill, workspace_findings
from skills_lsp.core.rules.suppress import parse_directives
from skills_lsp.core.rules.validate import DEFAULT_CONFIG, finish_findings, resolve_profile
from skills_lsp.core.rules.workspace import NamedSkill

MAX_ROUNDS = 10
_BREAK = re.compile(r"\r\n|\r|\n")
FindingFilter = Callable[[list[Finding], str], list[Finding]]  # (findings, text) -> those to fix


def line_starts(text: str) -> list[int]:
    """The offset at which each line of `text` starts (any line break)."""
    return [0, *(m.end() for m in _BREAK.finditer(text))]


def _offset(text: str, starts: list[int], pos: Position) -> int:
    """`pos` as an offset into `text`; a position past a line's end or past the last line is
    clamped (an insert "before the close" of a file with no closing line lands at its end)."""
    if pos.line >= len(starts):
        return len(text)
    start = starts[pos.line]
    end = starts[pos.line + 1] if pos.line + 1 < len(starts) else len(text)
    return start + min(pos.character, len(text[start:end].rstrip("\r\n")))


def apply_edits(text: str, edits: Iterable[TextEdit]) -> str:
    """`text` with `edits` applied (LSP semantics: every position refers to `text` before any
    edit; inserts at one position keep their order). Raises ValueError on overlapping edits."""
    starts = line_starts(text)
    located = sorted(
        (_offset(text, starts, e.range.start), _offset(text, starts, e.range.end), i, e.new_text)
        for i, e in enumerate(edits)
    )
    for (_, end, _, _), (start, _, _, _) in itertools.pairwise(located):
        if start < end:
            raise ValueError("edits overlap")
    for start, end, _, new_text in reversed(located):
        text = text[:start] + new_text + text[end:]
    return text


def allowed(fix: Fix, unsafe: bool) -> bool:
    """Whether `check --fix` applies `fix` (with `--unsafe-fixes` when `unsafe`)."""
    if fix.changes or not fix.edits:
        return False
    return fix.applicability is Applicability.SAFE or (unsafe and fix.applicability is Applicability.UNSAFE)


def fix_kind(finding: Finding, unsafe: bool) -> Applicability | None:
    """How `--fix` would fix `finding`: SAFE, UNSAFE (only with `unsafe`), or None. Works on
    cached findings too (their fixes keep their kind, not their edits)."""
    kinds = {f.applicability for f in finding.fixes if not f.changes}
    if Applicability.SAFE in kinds:
        return Applicability.SAFE
    if unsafe and Applicability.UNSAFE in kinds:
        return Applicability.UNSAFE
    return None


def _chosen(finding: Finding, unsafe: bool) -> Fix | None:
    return next((f for f in finding.fixes if allowed(f, unsafe)), None)


@dataclass(frozen=True)
class Applied:
    """One fix applied: the finding's code and the fix's title."""

    code: str
    title: str


@dataclass
class FixedText:
    text: str
    applied: list[Applied] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)  # what is left, as reported


def _errors(findings: Sequence[Finding]) -> set[str]:
    return {f.code for f in findings if f.severity is Severity.ERROR}


def _round(findings: Sequence[Finding], unsafe: bool) -> list[tuple[Finding, Fix]]:
    """The fixes of one round: one per finding, in file order, none overlapping another."""
    taken: list[tuple[Finding, Fix]] = []
    spans: list[tuple[Position, Position]] = []
    seen: set[tuple[TextEdit, ...]] = set()
    for finding in sorted(findings, key=lambda f: f.range.start):
        fix = _chosen(finding, unsafe)
        if fix is None:
            continue
        if fix.edits in seen:  # two findings offer the same edit (SK204 and SK205): one fix
            taken.append((finding, fix))
            continue
        mine = [(e.range.start, e.range.end) for e in fix.edits]
        if any((a < d and c < b) or a == b == c == d for a, b in mine for c, d in spans):
            continue  # overlaps an earlier fix: the next round sees the text it left
        spans.extend(mine)
        seen.add(fix.edits)
        taken.append((finding, fix))
    return taken


def _edits(chosen: Sequence[tuple[Finding, Fix]]) -> list[TextEdit]:
    unique = dict.fromkeys(fix.edits for _, fix in chosen)
    return [edit for edits in unique for edit in edits]


def fix_text(text: str, check: Callable[[str], list[Finding]], unsafe: bool = False) -> FixedText:
    """Apply fixes to `text` until none is left; `check` gives the findings to fix for a text."""
    findings = check(text)
    result = FixedText(text, findings=findings)
    seen = {text}
    for _ in range(MAX_ROUNDS):
        chosen = _round(findings, unsafe)
        if not chosen:
            break
        before = _errors(findings)
        candidate = apply_edits(text, _edits(chosen))
        after = check(candidate)
        if not _errors(after) <= before:  # together they break something: one at a time
            kept: list[tuple[Finding, Fix]] = []
            for pair in chosen:
                trial = apply_edits(text, _edits([*kept, pair]))
                if _errors(check(trial)) <= before:
                    kept.append(pair)
            chosen = kept
            if not chosen:
                break
            candidate = apply_edits(text, _edits(chosen))
            after = check(candidate)
        if candidate in seen:  # fixes that undo each other: stop rather than cycle
            break
        seen.add(candidate)
        text, findings = candidate, after
        result.applied.extend(Applied(f.code, fix.title) for f, fix in chosen)
    result.text, result.findings = text, findings
    return result


@dataclass
class FileFix:
    """What fixing one file did."""

    path: str
    before: bytes
    after: bytes
    applied: list[Applied]

    @property
    def changed(self) -> bool:
        return self.before != self.after


def fix_file(
    item: SkillFile,
    *,
    config: Config = DEFAULT_CONFIG,
    profile: str | None = None,
    manifest: Manifest | None = None,
    others: Sequence[NamedSkill] = (),
    unsafe: bool = False,
    keep: FindingFilter | None = None,
) -> FileFix | None:
    """Fix one skill or instruction file in memory (None: it cannot be read, is too large or is
    not UTF-8, so no fix is safe). `others` are the other files' names, for the workspace rules
    (a suppression of SK701 is used, not stale); `keep` drops findings not to fix (a baseline's)."""
    try:
        data = read_limited(item.path)
    except OSError:
        return None
    if len(data) > MAX_FILE_BYTES:
        return None
    try:
        decoded = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    bom = BOM if decoded.startswith(BOM) else ""
    chosen = resolve_profile(item.path, item.kind, profile, config)
    same_name: dict[str, list[NamedSkill]] = {}
    for other in others:
        if other.name is not None and other.path != item.path:
            same_name.setdefault(other.name, []).append(other)

    def check(text: str) -> list[Finding]:
        doc = parse_text(bom + text)
        result = check_item(doc, item, chosen, config, manifest)
        found = result.findings
        me = named_skill(result.context, item)
        rivals = same_name.get(me.name or "", []) if me.name is not None else []
        if rivals:
            found = found + [
                f for f in workspace_findings([me, *rivals], config, profile) if f.path == item.path
            ]
        reported = finish_findings(found, item.path, parse_directives(doc), chosen, config)
        return keep(reported, bom + text) if keep is not None else reported

    fixed = fix_text(decoded.removeprefix(BOM), check, unsafe)
    after = data if not fixed.applied else (bom + fixed.text).encode("utf-8")
    return FileFix(item.path, data, after, fixed.applied)


def write_atomically(path: str | os.PathLike[str], data: bytes) -> None:
    """Replace the file's content: a temporary file in the same folder, then a rename over it.
    A symbolic link is followed (its target is rewritten, the link stays); the mode is kept."""
    target = Path(os.path.realpath(path))
    mode = stat.S_IMODE(target.stat().st_mode)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
