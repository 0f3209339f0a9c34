"""Every rule against real files: the exact range (0-based, code points) and severity of each finding.

The case table lives in `rule_cases.py`; `test_every_rule_has_a_case` makes sure a new rule cannot
be added without a case. Quick fixes are exercised in `test_fixes.py`.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import write
from rule_cases import CASES, EXEMPT, Case, RangeTuple, apply_edits, fm

from skills_lsp.core.model import Finding, Range, Severity, TextEdit
from skills_lsp.core.parse.frontmatter import split_lines
from skills_lsp.core.rules import RULES
from skills_lsp.core.rules.check import check_paths
from skills_lsp.core.rules.profiles import PROFILES
from skills_lsp.core.rules.validate import validate_file


def as_tuple(rng: Range) -> RangeTuple:
    return (rng.start.line, rng.start.character, rng.end.line, rng.end.character)


def edit(line: int, col: int, end_line: int, end_col: int, text: str) -> TextEdit:
    return TextEdit(Range.of(line, col, end_line, end_col), text)


# --- apply_edits ---------------------------------------------------------------------------------


def test_apply_edits_crlf_keeps_line_breaks() -> None:
    text = "---\r\nname: a\r\n---\r\n"
    assert apply_edits(text, [edit(1, 6, 1, 7, "b")]) == "---\r\nname: b\r\n---\r\n"
    # Deleting whole lines up to the start of the next line removes the CRLF with them.
    assert apply_edits(text, [edit(1, 0, 2, 0, "")]) == "---\r\n---\r\n"


def test_apply_edits_lone_cr_and_mixed_breaks() -> None:
    text = "a\rb\r\nc\nd"
    assert apply_edits(text, [edit(1, 0, 1, 1, "B"), edit(3, 0, 3, 1, "D"), edit(2, 1, 2, 1, "!")]) == (
        "a\rB\r\nc!\nD"
    )


def test_apply_edits_counts_code_points() -> None:
    text = "字🚀x\n😀é!"  # the emoji are one code point each (two UTF-16 units)
    assert apply_edits(text, [edit(0, 1, 0, 2, "R")]) == "字Rx\n😀é!"
    assert apply_edits(text, [edit(1, 2, 1, 3, "?")]) == "字🚀x\n😀é?"
    assert apply_edits(text, [edit(0, 3, 0, 3, "+")]) == "字🚀x+\n😀é!"


def test_apply_edits_any_order_and_same_position() -> None:
    text = "one\ntwo\nthree\n"
    edits = [edit(2, 0, 2, 5, "3"), edit(0, 0, 0, 3, "1"), edit(1, 0, 1, 0, "A"), edit(1, 0, 1, 0, "B")]
    assert apply_edits(text, edits) == "1\nABtwo\n3\n"
    assert apply_edits(text, list(reversed(edits))) == "1\nBAtwo\n3\n"  # inserts keep array order
    # An insert at the start of a deleted range, as `move under metadata` produces.
    assert apply_edits(text, [edit(1, 0, 2, 0, ""), edit(1, 0, 1, 0, "new\n")]) == "one\nnew\nthree\n"
    assert apply_edits(text, [edit(1, 0, 1, 0, "new\n"), edit(1, 0, 2, 0, "")]) == "one\nnew\nthree\n"


def test_apply_edits_rejects_bad_positions_and_overlaps() -> None:
    with pytest.raises(ValueError, match="outside line"):
        apply_edits("ab\ncd", [edit(0, 3, 0, 3, "x")])
    with pytest.raises(ValueError, match="outside the text"):
        apply_edits("ab\ncd", [edit(2, 0, 2, 0, "x")])
    with pytest.raises(ValueError, match="overlap"):
        apply_edits("abcdef", [edit(0, 0, 0, 3, "x"), edit(0, 2, 0, 4, "y")])


@pytest.mark.parametrize("text", ["", "a", "a\n", "a\r\nb", "\r\r\n\n", "字\r🚀\r\n\n"])
def test_apply_edits_line_model_matches_parser(text: str) -> None:
    lines = split_lines(text)
    last = len(lines) - 1
    assert apply_edits(text, [edit(last, len(lines[last]), last, len(lines[last]), "!")]) == text + "!"
    for number, line in enumerate(lines):  # replacing each line's text keeps every line break
        replaced = apply_edits(text, [edit(number, 0, number, len(line), "X")])
        assert split_lines(replaced)[number] == "X"
        assert len(split_lines(replaced)) == len(lines)


# --- one case per rule ---------------------------------------------------------------------------


def findings_for(case: Case, root: Path) -> list[Finding]:
    return validate_file(case.write(root), profile=case.profile)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_rule_case(case: Case, tmp_path: Path) -> None:
    findings = findings_for(case, tmp_path)
    mine = [f for f in findings if f.code == case.code]
    summary = [(f.code, as_tuple(f.range), f.message) for f in findings]
    assert mine, f"{case.code} not reported; got {summary}"
    assert case.range in [as_tuple(f.range) for f in mine], summary
    for finding in mine:
        assert finding.severity is case.severity, (finding.severity, case.severity)
        assert finding.path == str(tmp_path / case.path)
        assert finding.message


def test_case_ids_are_unique() -> None:
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids))


def test_every_rule_has_a_case() -> None:
    covered = {c.code for c in CASES}
    missing = sorted(set(RULES) - EXEMPT - covered)
    assert not missing, f"rules without a case in rule_cases.CASES: {missing}"
    assert covered <= set(RULES), sorted(covered - set(RULES))


def test_profile_severity_overrides() -> None:
    by_id = {c.id: c for c in CASES}
    assert by_id["sk401-skills-ref-error"].severity is Severity.ERROR
    assert by_id["sk401-move-no-metadata"].severity is Severity.WARNING
    assert by_id["sk113-bom-skills-ref"].severity is Severity.ERROR
    assert by_id["sk113-bom"].severity is Severity.WARNING
    assert by_id["sk305-no-when"].severity is Severity.HINT
    assert by_id["sk114-dashes"].severity is Severity.INFO


# --- clean files ---------------------------------------------------------------------------------

CLEAN: dict[str, tuple[str, str]] = {
    "agentskills": (
        "my-skill/SKILL.md",
        fm(
            "name: my-skill",
            "description: Use when 🚀 launching 火箭.",
            "license: MIT",
            "metadata:",
            '  version: "1.0"',
            "allowed-tools: Read Bash(git:*)",
            body="# Launch\n\nSee [guide](references/guide.md).\n",
        ),
    ),
    "skills-ref": (
        "技能/SKILL.md",
        fm("name: 技能", "description: Use when 🚀 launching.", "license: MIT", body="Do it.\n"),
    ),
    "adk-rust": (
        ".skills/x.md",
        fm(
            "name: Any Name 🚀",
            "description: Use when testing.",
            "tags:",
            "  - a",
            "trigger: true",
            "allowed-tools:",
            "  - Read",
            body="Do it.\n",
        ),
    ),
    # Every key issue 17 names as falsely reported, in a Claude Code skills folder.
    "claude-code": (
        ".claude/skills/my-skill/SKILL.md",
        fm(
            "name: my-skill",
            "description: Use when testing.",
            "context: fork",
            "agent: Explore",
            "model: sonnet",
            "user-invocable: false",
            "paths:",
            '  - "src/**/*.ts"',
            "hooks:",
            "  PreToolUse:",
            "    - matcher: Bash",
            "allowed-tools:",
            "  - Read",
            body="Do it.\n",
        ),
    ),
    "codex": (
        ".codex/skills/my-skill/SKILL.md",
        fm("name: my-skill", "description: Use when testing.", "license: MIT", body="Do it.\n"),
    ),
    "gemini-cli": (
        ".gemini/skills/my-skill/SKILL.md",
        fm(
            "name: my-skill", "description: Use when testing.", "compatibility: Requires git", body="Do it.\n"
        ),
    ),
    "vscode-copilot": (
        ".github/skills/my-skill/SKILL.md",
        fm(
            "name: my-skill",
            "description: Use when testing.",
            "argument-hint: '[file]'",
            "user-invocable: true",
            "disable-model-invocation: false",
            "context: fork",
            body="Do it.\n",
        ),
    ),
    "adk": (
        "my-skill/SKILL.md",
        fm(
            "name: my-skill",
            "description: Use when testing.",
            "metadata:",
            "  adk_inject_state: true",
            body="Do it with {var}.\n",
        ),
    ),
    "convention": ("AGENTS.md", "# Agents 🚀\n\nRun `make test` before committing.\n"),
}


# Each profile given explicitly, and the defaults (profile=None) of each file's layout or runtime folder.
_DEFAULTED = [p for p in sorted(CLEAN) if p not in ("skills-ref", "adk")]  # chosen only explicitly
_CLEAN_RUNS = [(p, True) for p in sorted(CLEAN)] + [(p, False) for p in _DEFAULTED]


@pytest.mark.parametrize(
    ("profile", "explicit"),
    _CLEAN_RUNS,
    ids=[f"{p}-{'explicit' if e else 'default'}" for p, e in _CLEAN_RUNS],
)
def test_clean_file_has_no_findings(profile: str, explicit: bool, tmp_path: Path) -> None:
    rel, text = CLEAN[profile]
    path = tmp_path / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))
    (tmp_path / "my-skill" / "references").mkdir(parents=True, exist_ok=True)
    (tmp_path / "my-skill" / "references" / "guide.md").write_text("# Guide\n", encoding="utf-8")
    assert [(f.code, f.message) for f in validate_file(path, profile=profile if explicit else None)] == []


def test_clean_cases_cover_every_profile() -> None:
    assert set(CLEAN) == set(PROFILES)


# --- rules reported outside validate_file's rule loop ---------------------------------------------

SK100_AT_START = ("SK100", Severity.ERROR, (0, 0, 0, 0))


def test_sk100_directory_named_like_a_skill_file(tmp_path: Path) -> None:
    path = tmp_path / "my-skill" / "SKILL.md"
    path.mkdir(parents=True)
    findings = validate_file(path)
    assert [(f.code, f.severity, as_tuple(f.range)) for f in findings] == [SK100_AT_START]


def test_sk100_dangling_symlink(tmp_path: Path) -> None:
    path = tmp_path / "my-skill" / "SKILL.md"
    path.parent.mkdir()
    path.symlink_to(tmp_path / "gone.md")
    findings = validate_file(path)
    assert [(f.code, f.severity, as_tuple(f.range)) for f in findings] == [SK100_AT_START]


def test_sk100_missing_target_in_check_paths(tmp_path: Path) -> None:
    result = check_paths([tmp_path / "nope"], cache_dir=None)
    assert [(f.code, f.severity, as_tuple(f.range)) for f in result.findings] == [
        ("SK100", Severity.ERROR, (0, 0, 0, 0))
    ]


def test_sk701_duplicate_name(tmp_path: Path) -> None:
    one, two = tmp_path / "one" / "shared" / "SKILL.md", tmp_path / "two" / "shared" / "SKILL.md"
    write(one, fm("name: shared", "description: Use when 🚀 one."))
    write(two, fm("description: Use when 火箭 two.", "name: shared"))
    write(tmp_path / "three" / "other" / "SKILL.md", fm("name: other", "description: Use when three."))
    result = check_paths([tmp_path], cache_dir=None)
    found = sorted((f.path, f.code, f.severity, as_tuple(f.range)) for f in result.findings)
    assert found == [
        (str(one), "SK701", Severity.WARNING, (1, 6, 1, 12)),
        (str(two), "SK701", Severity.WARNING, (2, 6, 2, 12)),
    ]
    messages = {f.path: f.message for f in result.findings}
    assert str(two) in messages[str(one)] and str(one) in messages[str(two)]


def test_sk701_convention_files_are_exempt(tmp_path: Path) -> None:
    for sub in ("a", "b"):
        write(tmp_path / sub / "AGENTS.md", fm("name: same", "description: Use when testing."))
    result = check_paths([tmp_path], cache_dir=None)
    assert [f.code for f in result.findings if f.code == "SK701"] == []


def test_sk701_off_in_skills_ref_profile(tmp_path: Path) -> None:
    for sub in ("one", "two"):
        write(tmp_path / sub / "shared" / "SKILL.md", fm("name: shared", "description: Use when testing."))
    assert [f.code for f in check_paths([tmp_path], cache_dir=None, profile="skills-ref").findings] == []
    assert [f.code for f in check_paths([tmp_path], cache_dir=None).findings] == ["SK701", "SK701"]


# --- once bugs: wrong positions --------------------------------------------------------------------


def test_sk111_position_with_cr_line_breaks(tmp_path: Path) -> None:
    path = tmp_path / "my-skill" / "SKILL.md"
    path.parent.mkdir()
    path.write_bytes(b"---\rname: my-skill\rdescription: Use when \xff x\r---\r\rBody\r")
    (finding,) = [f for f in validate_file(path) if f.code == "SK111"]
    assert as_tuple(finding.range) == (2, 22, 2, 23)  # reported as (0, 41, 0, 42)


def test_sk111_position_after_bom(tmp_path: Path) -> None:
    path = tmp_path / "my-skill" / "SKILL.md"
    path.parent.mkdir()
    path.write_bytes(b"\xef\xbb\xbf--- \xff\nname: my-skill\ndescription: Use when x\n---\n\nBody\n")
    (finding,) = [f for f in validate_file(path) if f.code == "SK111"]
    # Line 0 without the BOM is "--- \ufffd": the bad byte is column 4 (reported as (0, 5, 0, 6)).
    assert as_tuple(finding.range) == (0, 4, 0, 5)


def test_a_name_yaml_reads_as_null_says_how_to_write_the_word(tmp_path: Path) -> None:
    skill = tmp_path / "null" / "SKILL.md"
    skill.parent.mkdir()
    skill.write_text("---\nname: null\ndescription: Nothing. Use when asked.\n---\n# x\n", encoding="utf-8")
    (finding,) = [f for f in validate_file(skill) if f.code == "SK202"]
    assert (
        finding.message
        == '`name` is `null`, which YAML reads as no value; write `name: "null"` for the word.'
    )


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_sk402_skips_the_validator_only_where_it_could_report_nothing(profile: str) -> None:
    """SK402 does not run a field's validator on a value of a type its schema cannot fault: the
    validator, run anyway on such values, reports only what other rules own (length, pattern)."""
    from skills_lsp.core import schema
    from skills_lsp.core.rules.fields import _RULE_OWNED_KEYWORDS, _always_valid

    samples: list[object] = ["", "x" * 2000, "Not A Name!", {}, {"a": [1, {"b": None}]}, 3, None, [1]]
    skipped = 0
    for key in schema.profile_fields(profile):
        validator = schema.field_validator(profile, key)
        assert validator is not None
        for value in samples:
            if isinstance(value, _always_valid(profile, key)):
                skipped += 1
                errors = [e.validator for e in validator.iter_errors(value)]
                assert set(errors) <= _RULE_OWNED_KEYWORDS, (key, value, errors)
    assert skipped


def test_the_reference_probe_says_what_path_exists_says(tmp_path: Path) -> None:
    from skills_lsp.core.rules.check import _exists

    (tmp_path / "file.md").write_text("x", encoding="utf-8")
    (tmp_path / "dir").mkdir()
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    (tmp_path / "dangling").symlink_to(tmp_path / "none")
    names = ["file.md", "dir", "none.md", "file.md/below", "loop", "loop/x", "dangling", "a\0b", ""]
    for name in names:
        path = tmp_path / name
        assert _exists(path) == path.exists(), name
