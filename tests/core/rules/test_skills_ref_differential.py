"""Differential test: our ``skills-ref`` profile against the reference validator skills-ref 0.1.1.

For every case in ``skills_ref_cases.CASES`` the skill is written to ``<tmp>/<dirname>/SKILL.md``
and both validators give a verdict (valid / invalid). They must agree, except for the case ids in
``DIVERGENCES``, where we deliberately disagree and the test asserts that the verdicts differ (so
an entry that no longer diverges fails and has to be removed). ``docs/skills-ref-divergences.md``
explains each entry.

``test_oracle_still_agrees`` re-checks the verdict (and key phrase) recorded in the table against
the installed skills-ref, so the table stays honest if skills-ref or strictyaml change.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

skills_ref = pytest.importorskip("skills_ref")

from skills_ref_cases import CASES, Case  # noqa: E402 - after the importorskip

# Case id -> why our verdict deliberately differs from skills-ref's.
DIVERGENCES: dict[str, str] = {
    "dashes-in-quoted-description": (
        "skills-ref ends the frontmatter at the first '---' substring, inside the quoted description, "
        "and strictyaml then fails on the unterminated quote; we end the frontmatter only at a '---' line"
    ),
    "dashes-in-plain-description-name-after": (
        "skills-ref ends the frontmatter at the '---' inside the description, so the 'name' line after "
        "it is cut off and reported missing; we end the frontmatter only at a '---' line"
    ),
    "dashes-in-comment": (
        "skills-ref ends the frontmatter at the '---' inside a YAML comment, so 'description' is cut off "
        "and reported missing; we end the frontmatter only at a '---' line"
    ),
    "closing-delimiter-with-text": (
        "skills-ref splits on the '---' substring, so '--- end of frontmatter' closes its frontmatter; "
        "for us that line is not a delimiter and the frontmatter is never closed"
    ),
    "four-dash-closing": (
        "skills-ref splits on the first three dashes of '----'; for us '----' is not a delimiter line "
        "and the frontmatter is never closed"
    ),
}

_CASE_IDS = [case.id for case in CASES]


def write_case(tmp_path: Path, case: Case) -> Path:
    """Write ``<tmp_path>/<dirname>/SKILL.md`` byte for byte and return the SKILL.md path."""
    skill_dir = tmp_path / case.dirname
    skill_dir.mkdir(parents=True)
    skill_md = skill_dir / "SKILL.md"
    data = case.content if isinstance(case.content, bytes) else case.content.encode("utf-8")
    skill_md.write_bytes(data)
    return skill_md


def skills_ref_messages(skill_dir: Path) -> list[str]:
    """skills-ref's error messages; an exception it lets escape (e.g. UnicodeDecodeError) counts as one."""
    try:
        return list(skills_ref.validate(skill_dir))
    except Exception as exc:  # skills-ref only catches its own ParseError
        return [f"{type(exc).__name__}: {exc}"]


def skills_ref_verdict(skill_dir: Path) -> bool:
    """True iff skills-ref reports no errors for the directory."""
    return not skills_ref_messages(skill_dir)


def our_findings(skill_md: Path) -> list[Any]:
    from skills_lsp.core.rules.validate import validate_file

    return list(validate_file(skill_md, profile="skills-ref"))


def _is_error(finding: Any) -> bool:
    from skills_lsp.core.model import Severity

    return bool(finding.severity == Severity.ERROR)


def our_verdict(skill_md: Path) -> bool:
    """True iff our ``skills-ref`` profile reports no error-severity finding."""
    return not any(_is_error(f) for f in our_findings(skill_md))


def _format_range(rng: Any) -> str:
    try:
        return f"{rng.start.line}:{rng.start.character}-{rng.end.line}:{rng.end.character}"
    except AttributeError:
        return repr(rng)


def _format_finding(finding: Any) -> str:
    severity = getattr(finding.severity, "name", finding.severity)
    return f"[{severity}] {finding.code} @{_format_range(finding.range)}: {finding.message}"


def _report(case: Case, ref_valid: bool, ref_msgs: list[str], ours_valid: bool, findings: list[Any]) -> str:
    def verdict(valid: bool) -> str:
        return "valid" if valid else "invalid"

    lines = [
        f"case {case.id!r} (dir {case.dirname!r}): {case.note}",
        f"  skills-ref: {verdict(ref_valid)}",
        *(f"    - {m}".replace("\n", "\n      ") for m in ref_msgs),
        f"  ours:       {verdict(ours_valid)}",
        *(f"    - {_format_finding(f)}" for f in findings),
    ]
    if case.id in DIVERGENCES:
        lines.append(f"  listed in DIVERGENCES: {DIVERGENCES[case.id]}")
    return "\n".join(lines)


def test_case_table_is_large_enough_and_ids_unique() -> None:
    assert len(CASES) >= 70
    duplicates = sorted({i for i in _CASE_IDS if _CASE_IDS.count(i) > 1})
    assert not duplicates, f"duplicate case ids: {duplicates}"


def test_divergences_name_existing_cases() -> None:
    unknown = sorted(set(DIVERGENCES) - set(_CASE_IDS))
    assert not unknown, f"DIVERGENCES lists ids with no case: {unknown}"


def test_divergences_are_documented() -> None:
    doc = Path(__file__).resolve().parents[3] / "docs" / "skills-ref-divergences.md"
    if not doc.is_file():
        pytest.skip(f"{doc} not present")
    text = doc.read_text(encoding="utf-8")
    undocumented = sorted(i for i in DIVERGENCES if f"`{i}`" not in text)
    assert not undocumented, f"DIVERGENCES entries missing from {doc.name}: {undocumented}"


@pytest.mark.parametrize("case", CASES, ids=_CASE_IDS)
def test_oracle_still_agrees(tmp_path: Path, case: Case) -> None:
    skill_md = write_case(tmp_path, case)
    messages = skills_ref_messages(skill_md.parent)
    live = not messages
    assert live == case.skills_ref_valid, (
        f"case {case.id!r}: table records skills-ref as "
        f"{'valid' if case.skills_ref_valid else 'invalid'}, live skills-ref says "
        f"{'valid' if live else 'invalid'}; messages: {messages}"
    )
    if case.skills_ref_phrase:
        joined = "\n".join(messages)
        assert case.skills_ref_phrase in joined, (
            f"case {case.id!r}: expected skills-ref phrase {case.skills_ref_phrase!r} in {messages}"
        )


@pytest.mark.parametrize("case", CASES, ids=_CASE_IDS)
def test_verdict_matches_skills_ref(tmp_path: Path, case: Case) -> None:
    skill_md = write_case(tmp_path, case)
    ref_msgs = skills_ref_messages(skill_md.parent)
    ref_valid = not ref_msgs
    findings = our_findings(skill_md)
    ours_valid = not any(_is_error(f) for f in findings)
    report = _report(case, ref_valid, ref_msgs, ours_valid, findings)
    if case.id in DIVERGENCES:
        assert ours_valid != ref_valid, "expected a deliberate divergence, but the verdicts agree:\n" + report
    else:
        assert ours_valid == ref_valid, "verdicts differ:\n" + report
