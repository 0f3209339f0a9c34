"""Quick fixes: every fix offered on a case is applied to the file, which is then checked again.

A fix must make its rule stop firing and must not bring in an ERROR of a code that was not there
before. The edge-case tests then look at what the fixed YAML actually says.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from rule_cases import CASES, EXEMPT, Case, apply_edits, document_text, fm

from skills_lsp.core.model import Finding, Fix, Range, Severity
from skills_lsp.core.parse.frontmatter import parse_text
from skills_lsp.core.rules import RULES
from skills_lsp.core.rules.validate import validate_file

BY_ID = {c.id: c for c in CASES}

# Cases of fixable rules where the rule rightly offers no fix.
NO_FIX = {
    "sk201-flat-no-fix": "no directory name to take the name from in the flat layout",
    "sk404-nested": "a nested mapping cannot be quoted",
    "sk101-heading": "the first line is not a near miss of `---`, so there is nothing to correct",
    "sk101-flat": "the first line is not a near miss of `---`, so there is nothing to correct",
    "sk005-malformed": "what the author meant by a malformed suppression is theirs to say",
}
# SK101 offers a fix although it is not registered as fixable (see test_sk101_fix_is_registered).
FIX_CASES = [c for c in CASES if RULES[c.code].fixable or c.id == "sk101-two-dashes"]


def fixes_of(findings: list[Finding], code: str) -> list[Fix]:
    return [fix for f in findings if f.code == code for fix in f.fixes]


def apply_fix(case: Case, fix: Fix, root: Path) -> tuple[str, list[Finding]]:
    """Write the case under `root`, apply `fix` to the file, re-validate: (fixed text, findings)."""
    path = case.write(root)
    fixed = apply_edits(document_text(case.data), fix.edits)
    path.write_bytes(fixed.encode("utf-8"))
    case_file = path.relative_to(root)
    for change in fix.changes:  # other files: create them, edit them (in this copy of the case)
        written = Path(change.path)
        before = next((d for d in written.parents if (d / case_file).is_file()), None)
        assert before is not None, f"{fix.title!r} changes {written}, outside the case"
        other = root / written.relative_to(before)
        other.parent.mkdir(parents=True, exist_ok=True)
        text = other.read_text(encoding="utf-8") if other.exists() else ""
        assert change.create or other.exists()
        other.write_text(apply_edits(text, change.edits), encoding="utf-8")
    return fixed, validate_file(path, profile=case.profile)


def fixed_cases(case: Case, tmp_path: Path, title: str = "") -> list[tuple[str, list[Finding]]]:
    """(fixed text, findings) for each fix of the case's code whose title starts with `title`."""
    before = validate_file(case.write(tmp_path / "before"), profile=case.profile)
    fixes = [f for f in fixes_of(before, case.code) if f.title.startswith(title)]
    assert fixes, f"no fix titled {title!r}*"
    return [apply_fix(case, fix, tmp_path / f"fix{n}") for n, fix in enumerate(fixes)]


def data_of(text: str) -> dict[str, Any]:
    doc = parse_text(text)
    assert not doc.problems, doc.problems
    data = doc.plain_data()
    assert isinstance(data, dict)
    return data


# --- every fix of every fixable rule ---------------------------------------------------------------


@pytest.mark.parametrize("case", FIX_CASES, ids=[c.id for c in FIX_CASES])
def test_fix_resolves_finding(case: Case, tmp_path: Path) -> None:
    before = validate_file(case.write(tmp_path / "before"), profile=case.profile)
    fixes = fixes_of(before, case.code)
    assert bool(fixes) == (case.id not in NO_FIX), [f.title for f in fixes]
    before_codes = {f.code for f in before}
    for n, fix in enumerate(fixes):
        fixed, after = apply_fix(case, fix, tmp_path / f"fix{n}")
        still = [(f.code, f.message) for f in after if f.code == case.code]
        assert not still, f"{fix.title!r} left {still} in:\n{fixed}"
        new_errors = [
            (f.code, f.message) for f in after if f.severity is Severity.ERROR and f.code not in before_codes
        ]
        assert not new_errors, f"{fix.title!r} introduced {new_errors} in:\n{fixed}"


def test_every_fixable_rule_has_a_fix_case() -> None:
    fixable = {code for code, r in RULES.items() if r.fixable} - EXEMPT
    with_fix = {c.code for c in FIX_CASES if c.id not in NO_FIX}
    missing = sorted(fixable - with_fix)
    assert not missing, f"fixable rules without a case offering a fix: {missing}"


def test_only_fixable_rules_offer_fixes(tmp_path: Path) -> None:
    offering: set[str] = set()
    for n, case in enumerate(CASES):
        findings = validate_file(case.write(tmp_path / str(n)), profile=case.profile)
        offering |= {f.code for f in findings if f.fixes}
    assert {code for code in offering if not RULES[code].fixable} == set()


def test_sk101_fix_is_registered(tmp_path: Path) -> None:
    case = BY_ID["sk101-two-dashes"]
    assert fixes_of(validate_file(case.write(tmp_path), profile=case.profile), "SK101")
    assert RULES["SK101"].fixable


# --- what the fixed files say -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("case_id", "key", "value"),
    [
        ("sk104-use-when", "description", "Use when: x"),
        ("sk104-cjk", "description", "用法: 处理 🚀 文件"),
        ("sk104-escapes", "description", 'Say "hi": C:\\temp 🚀 when asked'),
        ("sk104-crlf", "description", "Use when: 🚀 x"),
        ("sk104-adk-rust", "description", "Use when: 🚀"),
        ("sk104-nested", "metadata", {"note": "a: b"}),
    ],
)
def test_sk104_quote_keeps_the_text(case_id: str, key: str, value: Any, tmp_path: Path) -> None:
    ((fixed, _),) = fixed_cases(BY_ID[case_id], tmp_path, "Quote")
    assert data_of(fixed)[key] == value


@pytest.mark.parametrize(
    ("case_id", "metadata"),
    [
        ("sk401-move-no-metadata", {"foo": "🚀 bar"}),
        ("sk401-move-block-metadata", {"author": "我", "foo": "🚀 bar"}),
        ("sk401-move-list-after-metadata", {"author": "me", "foo": "a, b"}),
        ("sk401-move-block-scalar-metadata", {"note": "a\nb\n", "foo": "bar"}),
        ("sk401-move-null-metadata", {"foo": "3"}),
        ("sk401-move-crlf", {"foo": "🚀 bar"}),
        ("sk401-skills-ref-error", {"foo": "bar"}),
        ("sk401-cjk-key", {"标签": "一"}),
    ],
)
def test_sk401_move_under_metadata(case_id: str, metadata: dict[str, str], tmp_path: Path) -> None:
    ((fixed, _),) = fixed_cases(BY_ID[case_id], tmp_path, "Move")
    data = data_of(fixed)
    assert data["metadata"] == metadata
    assert set(data) == {"name", "description", "metadata"}


@pytest.mark.parametrize(
    ("case_id", "key", "value"),
    [("sk401-rename", "allowed-tools", "Read"), ("sk401-rename-licence", "license", "MIT")],
)
def test_sk401_rename(case_id: str, key: str, value: str, tmp_path: Path) -> None:
    ((fixed, _),) = fixed_cases(BY_ID[case_id], tmp_path, "Rename")
    assert data_of(fixed)[key] == value


@pytest.mark.parametrize(
    ("case_id", "tools"),
    [
        ("sk501-list", "Read Bash(git:*)"),
        ("sk501-indentless-list", "Read Grep"),
        ("sk502-string", ["Read", "Bash(git:*)"]),
        ("sk502-commas", ["Read", "Grep", "🚀"]),
        ("sk503-commas", "Read Grep 🚀"),
        ("sk503-parens", "Bash(git:a,b) Read"),
    ],
)
def test_allowed_tools_conversions(case_id: str, tools: str | list[str], tmp_path: Path) -> None:
    results = fixed_cases(BY_ID[case_id], tmp_path)
    assert [data_of(fixed)["allowed-tools"] for fixed, _ in results] == [tools]


@pytest.mark.parametrize(
    ("case_id", "name"),
    [
        ("sk201-agentskill", "my-skill"),
        ("sk203-70-chars", "a" * 64),
        ("sk203-long-words", "-".join(["word"] * 14)[:64]),
        ("sk204-My_Skill", "my-skill"),
        ("sk204-accents", "unicode-skill"),
        ("sk205-underscore", "my-skill"),
        ("sk205-accents", "unicode-skill"),
        ("sk205-cjk", "skill"),
        ("sk206-hyphens", "x"),
        ("sk207-double-hyphen", "a-b"),
        ("sk208-mismatch", "my-skill"),
        ("sk208-quoted", "my-skill"),
        ("sk208-skills-ref-cjk", "技能"),
    ],
)
def test_name_fixes(case_id: str, name: str, tmp_path: Path) -> None:
    results = fixed_cases(BY_ID[case_id], tmp_path)
    assert [data_of(fixed)["name"] for fixed, _ in results] == [name]


def test_name_fixes_agree_across_rules(tmp_path: Path) -> None:
    """`My_Skill` in `my-skill/`: SK204, SK205 and SK208 all offer the same, final name."""
    case = BY_ID["sk204-My_Skill"]
    findings = validate_file(case.write(tmp_path), profile=case.profile)
    offered = {
        code: [e.new_text for fix in fixes_of(findings, code) for e in fix.edits]
        for code in ("SK204", "SK205", "SK208")
    }
    assert offered == {"SK204": ["my-skill"], "SK205": ["my-skill"], "SK208": ["my-skill"]}


def test_sk105_keeps_the_first_entry(tmp_path: Path) -> None:
    ((fixed, _),) = fixed_cases(BY_ID["sk105-duplicate"], tmp_path)
    assert data_of(fixed)["description"] == "Use when testing."
    ((fixed, _),) = fixed_cases(BY_ID["sk105-duplicate-block"], tmp_path / "block")
    assert data_of(fixed) == {"name": "my-skill", "metadata": {"a": "b"}, "description": "Use when testing."}


def test_sk404_quotes_the_number(tmp_path: Path) -> None:
    ((fixed, _),) = fixed_cases(BY_ID["sk404-number"], tmp_path)
    assert data_of(fixed)["metadata"] == {"version": "1.10", "ok": "是"}


@pytest.mark.parametrize("case_id", ["sk606-bare", "sk606-link"])
def test_sk606_forward_slashes(case_id: str, tmp_path: Path) -> None:
    ((fixed, after),) = fixed_cases(BY_ID[case_id], tmp_path)
    assert "references/guide.md" in fixed and "\\" not in fixed
    assert [f.code for f in after] == []  # and the fixed reference resolves (no SK603)


@pytest.mark.parametrize("case_id", ["sk113-bom", "sk113-bom-skills-ref"])
def test_sk113_offers_no_text_edit(case_id: str, tmp_path: Path) -> None:
    # Editors keep a BOM outside the document text, so no text edit can remove it.
    case = BY_ID[case_id]
    assert isinstance(case.text, bytes) and case.text.startswith(b"\xef\xbb\xbf")
    findings = [f for f in validate_file(case.write(tmp_path), profile=case.profile) if f.code == "SK113"]
    assert findings and findings[0].fixes == ()
    assert "Save it as UTF-8 without BOM" in findings[0].message


def test_sk101_fix(tmp_path: Path) -> None:
    ((fixed, after),) = fixed_cases(BY_ID["sk101-two-dashes"], tmp_path)
    assert fixed.startswith("---\nname: my-skill\n")
    assert after == []


# --- fixes that once were bugs ------------------------------------------------------------------------


def test_sk104_fix_multiline_value(tmp_path: Path) -> None:
    case = Case(
        "sk104-multiline",
        "SK104",
        "agentskills",
        "my-skill/SKILL.md",
        fm("name: my-skill", "description: Use when: x", "  and more 🚀"),
        (2, 13, 2, 24),
    )
    for fixed, after in fixed_cases(case, tmp_path):
        assert [f.code for f in after] == [], fixed
        assert data_of(fixed)["description"] == "Use when: x and more 🚀"


def test_sk104_fix_colon_on_a_continuation_line(tmp_path: Path) -> None:
    # The `: ` is on the second line of the value: YAML's error points there, the fix quotes the
    # whole folded value.
    for fixed, after in fixed_cases(BY_ID["sk104-continuation"], tmp_path):
        assert [f.code for f in after] == [], fixed
        assert data_of(fixed)["description"] == "Extract tables from PDFs. Use when: the user has a PDF 🚀"


@pytest.mark.parametrize("directory", ["null", "2024"])
def test_sk201_fix_quotes_reserved_names(directory: str, tmp_path: Path) -> None:
    case = Case(
        "sk201-reserved",
        "SK201",
        "agentskills",
        f"{directory}/SKILL.md",
        fm("description: Use when testing."),
        (0, 0, 0, 3),
    )
    ((fixed, after),) = fixed_cases(case, tmp_path)
    assert data_of(fixed)["name"] == directory
    assert [f.code for f in after] == []


@pytest.mark.parametrize("directory", ["null", "2024"])
def test_sk208_fix_quotes_reserved_names(directory: str, tmp_path: Path) -> None:
    case = Case(
        "sk208-reserved",
        "SK208",
        "agentskills",
        f"{directory}/SKILL.md",
        fm("name: other", "description: Use when testing."),
        (1, 6, 1, 11),
    )
    ((fixed, after),) = fixed_cases(case, tmp_path)
    assert data_of(fixed)["name"] == directory
    assert [f.code for f in after] == []


# --- fixes that rewrite lines keep the comments on them -----------------------------------------


def test_rewriting_allowed_tools_keeps_its_comments(tmp_path: Path) -> None:
    case = Case(
        "sk501-comments",
        "SK501",
        "agentskills",
        "my-skill/SKILL.md",
        fm(
            "name: my-skill",
            "description: Use when testing.",
            "allowed-tools:  # what the host binds",
            "  - Read  # files",
            "  # shell, read-only",
            "  - 'Bash(git log:*)'",
        ),
        (4, 2, 6, 24),
    )
    ((fixed, after),) = fixed_cases(case, tmp_path, "Write as a space-separated string")
    assert "SK501" not in [f.code for f in after]
    assert data_of(fixed)["allowed-tools"] == "Read Bash(git log:*)"
    assert "# what the host binds\n# files\n# shell, read-only\nallowed-tools: " in fixed


def test_moving_a_key_under_metadata_keeps_its_comments(tmp_path: Path) -> None:
    case = Case(
        "sk401-comments",
        "SK401",
        "agentskills",
        "my-skill/SKILL.md",
        fm("name: my-skill", "description: Use when testing.", "owner: me  # until March", "  # ask first"),
        (3, 0, 3, 5),
    )
    for fixed, _ in fixed_cases(case, tmp_path, "Move"):
        assert data_of(fixed)["metadata"] == {"owner": "me"}
        assert "# until March\n# ask first\n" in fixed


@pytest.mark.parametrize(
    ("line", "comment"),
    [
        ("  - Read  # files", "# files"),
        ("# whole line", "# whole line"),
        ("  - 'Bash(echo #1)'  # quoted hash", "# quoted hash"),
        ('key: "a # b"', None),
        ("key: a#b", None),
        ("key: it's # mine", "# mine"),
        ("key: 'it''s # not a comment'", None),
        ('key: "say \\"hi\\" # not a comment"', None),
        ("key: a-'b # a comment", "# a comment"),
    ],
)
def test_comment_of(line: str, comment: str | None) -> None:
    from skills_lsp.core.rules.edits import comment_of

    assert comment_of(line) == comment


@pytest.mark.parametrize(
    "lines",
    [
        ["zzfoo: |", "  step 1 # not a comment", "  step 2"],
        ["zzfoo: >-", "  folded # not a comment"],
        ['zzfoo: "first', '  second # not a comment"'],
        ["zzfoo: 'it''s # not a comment'"],
    ],
)
def test_moving_a_key_does_not_turn_text_into_comments(lines: list[str], tmp_path: Path) -> None:
    case = Case(
        "sk401-text",
        "SK401",
        "agentskills",
        "my-skill/SKILL.md",
        fm("name: my-skill", "description: Use when testing.", *lines),
        (3, 0, 3, 5),
    )
    for fixed, _ in fixed_cases(case, tmp_path, "Move"):
        assert "\n# not a comment" not in fixed and "not a comment" in str(data_of(fixed)["metadata"])


def test_sk401_move_is_built_only_when_read(tmp_path: Path) -> None:
    """`check` never prints a fix's edits, so the move's are built when first read; another
    process gets the fix's title and kind without them, as a cached finding does."""
    import pickle

    from skills_lsp.core.model import Applicability
    from skills_lsp.core.rules.check import _finding_to_cache, check_paths
    from skills_lsp.core.rules.edits import DeferredFix, has_edits

    path = BY_ID["sk401-move-null-metadata"].write(tmp_path)
    (fix,) = [f for f in fixes_of(validate_file(path), "SK401") if f.title.startswith("Move")]
    assert isinstance(fix, DeferredFix)
    assert fix._built is None
    row = _finding_to_cache(Finding(str(path), "SK401", Severity.WARNING, "m", Range.point(0, 0), (fix,)))
    assert row[-1] == [[fix.title, "unsafe"]] and has_edits(fix)
    assert fix._built is None  # recording its kind did not build it
    edits = fix.edits
    assert edits and fix.edits is edits  # built once
    sent = pickle.loads(pickle.dumps(fix))
    assert type(sent) is Fix
    assert (sent.title, sent.edits, sent.applicability) == (fix.title, (), Applicability.UNSAFE)
    # `check` keeps every file's findings for the whole run: they hold no parse (peak memory).
    (kept,) = [x for f in check_paths([path]).findings if f.code == "SK401" for x in f.fixes]
    assert type(kept) is Fix and (kept.title, kept.edits) == (fix.title, ())


def test_findings_come_back_from_another_process_equal() -> None:
    """`check --jobs` pickles each file's findings: every part is made again by its constructor."""
    import pickle

    from skills_lsp.core.model import Applicability, FileChange, Position, TextEdit

    edit = TextEdit(Range.of(1, 2, 3, 4), "new\ntext")
    change = FileChange("/x/references/a.md", create=True, edits=(edit,))
    fixes = (
        Fix("Edit", (edit,), Applicability.UNSAFE),
        Fix("Create", (), Applicability.DISPLAY_ONLY, (change,)),
    )
    finding = Finding("/x/SKILL.md", "SK603", Severity.ERROR, "`a` does not exist.", Range.point(5, 6), fixes)
    for value in (finding, edit, change, Position(7, 8)):
        sent = pickle.loads(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
        assert sent == value and type(sent) is type(value)
    sent = pickle.loads(pickle.dumps(finding))
    assert [type(fix) for fix in sent.fixes] == [Fix, Fix] and sent.fixes[1].changes[0].edits[
        0
    ].range.end == Position(3, 4)
