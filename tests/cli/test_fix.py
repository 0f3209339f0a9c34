"""`check --fix`, `--unsafe-fixes`, `--diff`, `--show-fixes`: what is written, what is not, exit
statuses, and the properties ruff's users rely on (valid skills untouched, a second run idle)."""

from __future__ import annotations

import os
import shutil
import stat
import uuid
from pathlib import Path

import pytest
import yaml
from helpers import run_cli as run
from helpers import write_skill as skill
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skills_lsp.core.model import Applicability
from skills_lsp.core.rules.check import check_paths
from skills_lsp.core.rules.fixing import apply_edits, fix_kind
from skills_lsp.core.rules.validate import validate_file
from skills_lsp.core.workspace.settings import resolve_config

REPO = Path(__file__).resolve().parents[2]

COLON = "---\nname: colon\ndescription: Use when: the user asks for it\n---\n\nSteps.\n"
COLON_FIXED = '---\nname: colon\ndescription: "Use when: the user asks for it"\n---\n\nSteps.\n'
# Only an unsafe fix (a rename) for SK204; a safe one for SK501.
MIXED = "---\nname: Mixed\ndescription: Use when mixing.\nallowed-tools:\n  - Read\n  - Grep\n---\n\nSteps.\n"
GOOD = "---\nname: good\ndescription: Formats notes. Use when the user asks for notes.\n---\nSteps.\n"


def test_fix_applies_safe_fixes_and_exits_zero_when_nothing_is_left(tmp_path: Path) -> None:
    path = skill(tmp_path, "colon", COLON)
    code, out, _ = run("check", ".", "--no-cache", "--fix", cwd=tmp_path)
    assert path.read_text(encoding="utf-8") == COLON_FIXED
    assert (code, out) == (0, "Fixed 1 problem.\nAll checks passed: 1 file.\n")


def test_without_fix_the_footer_counts_fixable_findings(tmp_path: Path) -> None:
    skill(tmp_path, "colon", COLON)
    skill(tmp_path, "mixed", MIXED.replace("Mixed", "mixed").replace("name: mixed", "name: Mixed"))
    code, out, _ = run("check", ".", "--no-cache", cwd=tmp_path)
    assert code == 1
    assert out.endswith("[*] 2 fixable with `--fix` (2 more with `--fix --unsafe-fixes`).\n")
    _, out, _ = run("check", ".", "--no-cache", "--unsafe-fixes", cwd=tmp_path)
    assert out.endswith("[*] 4 fixable with `--fix`.\n")


def test_fix_leaves_unsafe_fixes_and_exits_one_while_errors_remain(tmp_path: Path) -> None:
    path = skill(tmp_path, "mixed", MIXED)
    code, out, _ = run("check", ".", "--no-cache", "--fix", cwd=tmp_path)
    text = path.read_text(encoding="utf-8")
    assert "allowed-tools: Read Grep\n" in text and "name: Mixed" in text
    assert code == 1
    assert "SK204 [error]" in out and "SK208 [error]" in out and "SK501" not in out
    assert (
        "Fixed 1 problem.\nFound 2 problems (2 errors) in 1 file.\n2 fixable with `--fix --unsafe-fixes`.\n"
        in out
    )


def test_unsafe_fixes_apply_the_rest(tmp_path: Path) -> None:
    path = skill(tmp_path, "mixed", MIXED)
    code, out, _ = run("check", ".", "--no-cache", "--fix", "--unsafe-fixes", cwd=tmp_path)
    assert (code, out) == (0, "Fixed 3 problems.\nAll checks passed: 1 file.\n")
    assert path.read_text(encoding="utf-8").startswith("---\nname: mixed\n")


def test_unsafe_fixes_alone_only_change_the_counts(tmp_path: Path) -> None:
    path = skill(tmp_path, "mixed", MIXED)
    code, _, _ = run("check", ".", "--no-cache", "--unsafe-fixes", cwd=tmp_path)
    assert code == 1 and path.read_text(encoding="utf-8") == MIXED


def test_exit_status_with_fix_counts_errors_left_not_warnings(tmp_path: Path) -> None:
    # SK401 (a warning) has only an unsafe fix: it stays, and a warning does not fail the run.
    path = skill(tmp_path, "colon", COLON.replace("---\n\n", "licence: MIT\n---\n\n"))
    code, out, _ = run("check", ".", "--no-cache", "--fix", cwd=tmp_path)
    assert code == 0 and "SK401 [warning]" in out and "SK104" not in out
    assert "licence: MIT" in path.read_text(encoding="utf-8")


def test_diff_writes_nothing_and_exits_one(tmp_path: Path) -> None:
    path = skill(tmp_path, "colon", COLON)
    code, out, err = run("check", ".", "--no-cache", "--diff", cwd=tmp_path)
    assert path.read_text(encoding="utf-8") == COLON
    assert code == 1
    assert out == (
        "--- a/skills/colon/SKILL.md\n+++ b/skills/colon/SKILL.md\n@@ -1,6 +1,6 @@\n ---\n name: colon\n"
        "-description: Use when: the user asks for it\n"
        '+description: "Use when: the user asks for it"\n ---\n \n Steps.\n'
    )
    assert err == "Would fix 1 problem.\n"


def test_diff_with_nothing_to_fix_exits_zero(tmp_path: Path) -> None:
    skill(tmp_path, "good", GOOD)
    assert run("check", ".", "--no-cache", "--diff", cwd=tmp_path) == (0, "", "No fixes to apply.\n")


def test_diff_marks_a_missing_final_line_break(tmp_path: Path) -> None:
    skill(tmp_path, "colon", COLON.rstrip("\n").replace("\n\nSteps.", ""))
    _, out, _ = run("check", ".", "--no-cache", "--diff", cwd=tmp_path)
    assert out.endswith(
        "-description: Use when: the user asks for it\n"
        '+description: "Use when: the user asks for it"\n ---\n\\ No newline at end of file\n'
    )


def test_diff_with_unsafe_fixes_and_show_fixes(tmp_path: Path) -> None:
    skill(tmp_path, "mixed", MIXED)
    code, out, err = run("check", ".", "--no-cache", "--diff", "--unsafe-fixes", "--show-fixes", cwd=tmp_path)
    assert code == 1 and "-name: Mixed\n+name: mixed\n" in out
    assert err == (
        "Would fix 3 problems:\n- skills/mixed/SKILL.md:\n"
        "    1 × SK204 (name-not-lowercase): Rename to `mixed`\n"
        "    1 × SK208 (name-directory-mismatch): Set name to `mixed`\n"
        "    1 × SK501 (allowed-tools-not-string): Write as a space-separated string\n"
    )


def test_show_fixes_lists_what_was_fixed(tmp_path: Path) -> None:
    skill(tmp_path, "colon", COLON)
    _, out, _ = run("check", ".", "--no-cache", "--fix", "--show-fixes", cwd=tmp_path)
    assert out == (  # the list says what was fixed, once, before the summary
        "Fixed 1 problem:\n- skills/colon/SKILL.md:\n    1 × SK104 (unquoted-colon): Quote the value\n"
        "All checks passed: 1 file.\n"
    )


def test_show_fixes_without_fix_lists_what_fix_would_do(tmp_path: Path) -> None:
    skill(tmp_path, "mixed", MIXED)
    _, out, _ = run("check", ".", "--no-cache", "--show-fixes", cwd=tmp_path)
    assert out.endswith(
        "\nFixable with `--fix`:\nskills/mixed/SKILL.md:5:3: SK501 Write as a space-separated string\n"
    )
    _, out, _ = run("check", ".", "--no-cache", "--show-fixes", "--unsafe-fixes", cwd=tmp_path)
    assert "skills/mixed/SKILL.md:2:7: SK204 Rename to `mixed` (unsafe)\n" in out


def test_show_fixes_goes_to_stderr_with_a_machine_format(tmp_path: Path) -> None:
    skill(tmp_path, "colon", COLON)
    code, out, err = run(
        "check", ".", "--no-cache", "--fix", "--show-fixes", "--format", "json", cwd=tmp_path
    )
    assert (code, out) == (0, "[]\n")
    assert err.startswith("Fixed 1 problem:\n")


def test_a_file_without_findings_is_never_touched(tmp_path: Path) -> None:
    good = skill(tmp_path, "good", GOOD)
    skill(tmp_path, "colon", COLON)
    os.utime(good, ns=(1_000_000_000, 1_000_000_000))
    before = good.stat()
    run("check", ".", "--no-cache", "--fix", "--unsafe-fixes", cwd=tmp_path)
    after = good.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


def test_a_file_with_only_unfixable_findings_is_never_touched(tmp_path: Path) -> None:
    path = skill(
        tmp_path, "long", GOOD.replace("name: good", "name: long").replace("Formats notes.", "x" * 1100)
    )
    before = path.stat()
    code, out, _ = run("check", ".", "--no-cache", "--fix", "--unsafe-fixes", cwd=tmp_path)
    assert code == 1 and "SK303" in out and "Fixed" not in out
    assert path.stat().st_ino == before.st_ino


def test_fix_keeps_bom_crlf_comments_and_mode(tmp_path: Path) -> None:
    text = (
        "\ufeff---\r\nname: colon  # the folder's name\r\n"
        "description: Use when: the user asks for it\r\n"
        "allowed-tools:  # bound by the host\r\n  - Read  # files\r\n  - Grep\r\n---\r\n\r\nSteps.\r\n"
    )
    path = skill(tmp_path, "colon", text)
    path.chmod(0o640)
    code, _, _ = run("check", ".", "--no-cache", "--fix", cwd=tmp_path)
    data = path.read_bytes()
    assert data.startswith("\ufeff---\r\nname: colon  # the folder's name\r\n".encode())
    assert b"\n" not in data.replace(b"\r\n", b"")
    for comment in (b"# bound by the host", b"# files"):
        assert comment in data
    assert b'description: "Use when: the user asks for it"\r\n' in data
    assert b"allowed-tools: Read Grep\r\n" in data
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert code == 0  # the byte-order mark is a warning
    assert [p.name for p in path.parent.iterdir()] == ["SKILL.md"]  # no temporary file left


def test_fix_writes_through_a_symbolic_link(tmp_path: Path) -> None:
    real = tmp_path / "elsewhere.md"
    real.write_text(COLON, encoding="utf-8")
    link = tmp_path / "skills" / "colon" / "SKILL.md"
    link.parent.mkdir(parents=True)
    link.symlink_to(real)
    run("check", ".", "--no-cache", "--fix", cwd=tmp_path)
    assert link.is_symlink() and real.read_text(encoding="utf-8") == COLON_FIXED


def test_a_file_that_cannot_be_written_is_reported_and_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = skill(tmp_path, "colon", COLON)

    def refuse(src: str, dst: object) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "replace", refuse)  # the rename over the file fails (read-only folder)
    code, out, err = run("check", ".", "--no-cache", "--fix", cwd=tmp_path)
    assert code == 1 and err == "skills/colon/SKILL.md: cannot write the fixes: Permission denied\n"
    assert "SK104" in out and "Fixed" not in out
    assert path.read_text(encoding="utf-8") == COLON
    assert [p.name for p in path.parent.iterdir()] == ["SKILL.md"]  # the temporary file is gone


def test_not_utf8_files_are_not_fixed(tmp_path: Path) -> None:
    data = COLON.encode("utf-8").replace(b"Steps.", b"Steps \xff.")
    path = skill(tmp_path, "colon", data)
    code, out, _ = run("check", ".", "--no-cache", "--fix", cwd=tmp_path)
    assert path.read_bytes() == data and code == 1 and "SK111" in out


def test_suppressed_findings_are_not_fixed(tmp_path: Path) -> None:
    text = COLON.replace("for it\n", "for it  # skills-lsp: ignore[SK104]\n")
    path = skill(tmp_path, "colon", text)
    assert run("check", ".", "--no-cache", "--fix", cwd=tmp_path)[0] == 0
    assert path.read_text(encoding="utf-8") == text


def test_fix_removes_stale_suppressions(tmp_path: Path) -> None:
    text = GOOD.replace("name: good", "name: good  # skills-lsp: ignore[SK204]").replace(
        "Steps.", "<!-- skills-lsp-disable-next-line SK603 -->\nSteps."
    )
    path = skill(tmp_path, "good", text)
    code, out, _ = run("check", ".", "--no-cache", "--fix", cwd=tmp_path)
    assert path.read_text(encoding="utf-8") == GOOD
    assert (code, out) == (0, "Fixed 2 problems.\nAll checks passed: 1 file.\n")


def test_fix_with_the_cache_still_finds_the_fixes(tmp_path: Path) -> None:
    path = skill(tmp_path, "colon", COLON)
    cache = str(tmp_path / "cache")
    assert run("check", ".", "--cache-dir", cache, cwd=tmp_path)[0] == 1  # fills the cache
    code, out, _ = run("check", ".", "--cache-dir", cache, "--fix", cwd=tmp_path)
    assert (code, out, path.read_text(encoding="utf-8")) == (
        0,
        "Fixed 1 problem.\nAll checks passed: 1 file.\n",
        COLON_FIXED,
    )
    assert run("check", ".", "--cache-dir", cache, cwd=tmp_path) == (0, "All checks passed: 1 file.\n", "")


def test_diff_and_write_baseline_cannot_be_combined(tmp_path: Path) -> None:
    skill(tmp_path, "colon", COLON)
    code, _, err = run("check", ".", "--diff", "--write-baseline", "b.json", cwd=tmp_path)
    assert code == 2 and "--diff" in err


# --- on the bundled examples -------------------------------------------------------------------


@pytest.mark.parametrize("unsafe", [False, True])
def test_no_fixable_finding_is_left_in_the_examples_after_fix(tmp_path: Path, unsafe: bool) -> None:
    shutil.copytree(REPO / "examples", tmp_path / "examples")
    root = tmp_path / "examples"
    flags = ["--unsafe-fixes"] if unsafe else []
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    config, _ = resolve_config([root])
    fixable = [f for f in check_paths([root], config=config).findings if fix_kind(f, unsafe) is not None]
    assert fixable  # the examples are broken on purpose
    run("check", ".", "--no-cache", "--fix", *flags, cwd=root)
    left = [(f.path, f.code) for f in check_paths([root], config=config).findings if fix_kind(f, unsafe)]
    assert left == []
    changed = {p for p, data in before.items() if p.read_bytes() != data}
    assert changed == {Path(f.path) if Path(f.path).is_absolute() else root / f.path for f in fixable}
    again = {p: p.read_bytes() for p in before}
    run("check", ".", "--no-cache", "--fix", *flags, cwd=root)
    assert {p: p.read_bytes() for p in before} == again  # a second run changes nothing


# --- properties ---------------------------------------------------------------------------------

_WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=8)
# A plain word YAML reads as something else (`null`, `true`, `yes`) is no valid name (SK202) or
# metadata value (a string is required, and its fix quotes it): valid skills use text words.
_TEXT_WORD = _WORD.filter(lambda w: isinstance(yaml.safe_load(w), str))
_NAMES = (
    st.lists(_WORD, min_size=1, max_size=3).map("-".join).filter(lambda n: isinstance(yaml.safe_load(n), str))
)
_SAFE_TEXT = (
    st.text(
        alphabet=st.characters(
            codec="utf-8", categories=["L", "N", "Zs"], exclude_characters="\u2028\u2029\x85"
        ),
        min_size=1,
        max_size=40,
    )
    .map(str.strip)
    .filter(bool)
)
_BREAKS = st.sampled_from(["\n", "\r\n"])


@st.composite
def valid_skills(draw: st.DrawFn) -> tuple[str, bytes]:
    name = draw(_NAMES)
    eol = draw(_BREAKS)
    lines = ["---", f"name: {name}" + draw(st.sampled_from(["", "  # a comment"]))]
    what = draw(_SAFE_TEXT)
    lines.append("description: " + (f'"{what}. Use when the user asks: {draw(_WORD)}."'))
    if draw(st.booleans()):
        lines.append("license: MIT")
    if draw(st.booleans()):
        lines += ["metadata:", f"  author: {draw(_TEXT_WORD)}", f'  version: "{draw(st.integers(0, 9))}.0"']
    if draw(st.booleans()):
        lines.append("# a comment line")
    lines += ["---", "", f"# {draw(_SAFE_TEXT)}", "", draw(_SAFE_TEXT)]
    text = eol.join(lines) + draw(st.sampled_from(["", eol]))
    bom = draw(st.sampled_from(["", "\ufeff"]))
    return name, (bom + text).encode("utf-8")


@st.composite
def any_skills(draw: st.DrawFn) -> tuple[str, bytes]:
    """Skills with the mistakes that have fixes (and some that have none)."""
    name, data = draw(valid_skills())
    text = data.decode("utf-8")
    eol = "\r\n" if "\r\n" in text else "\n"
    mistakes = draw(st.sets(st.sampled_from(["upper", "colon", "list", "commas", "slash", "licence", "dup"])))
    if "upper" in mistakes:
        text = text.replace(f"name: {name}", f"name: {name.title().replace('-', '_')}", 1)
    if "colon" in mistakes:
        text = text.replace('description: "', "description: ", 1).replace('."' + eol, "." + eol, 1)
    extra = []
    if "list" in mistakes:
        extra += ["allowed-tools:", "  - Read", "  - Grep"]
    elif "commas" in mistakes:
        extra.append("allowed-tools: Read, Grep")
    if "licence" in mistakes:
        extra.append("licence: MIT")
    if "dup" in mistakes:
        extra.append("license: Apache-2.0")
    if extra:
        head, sep, rest = text.partition(eol + "---" + eol)
        text = head + eol + eol.join(extra) + sep + rest
    if "slash" in mistakes:
        text += f"{eol}Run `scripts\\run.py`.{eol}"
    return name, text.encode("utf-8")


_SETTINGS = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@_SETTINGS
@given(valid_skills(), st.booleans())
def test_fix_never_changes_a_valid_skill(tmp_path: Path, example: tuple[str, bytes], unsafe: bool) -> None:
    name, data = example
    root = tmp_path / uuid.uuid4().hex
    path = skill(root, name, data)
    flags = ["--unsafe-fixes"] if unsafe else []
    code, out, _ = run("check", ".", "--no-cache", "--fix", *flags, cwd=root)
    assert path.read_bytes() == data
    assert "Fixed" not in out
    assert code == 0, out


@_SETTINGS
@given(any_skills(), st.booleans())
def test_a_second_fix_run_changes_nothing(tmp_path: Path, example: tuple[str, bytes], unsafe: bool) -> None:
    name, data = example
    root = tmp_path / uuid.uuid4().hex
    path = skill(root, name, data)
    flags = ["--unsafe-fixes"] if unsafe else []
    run("check", ".", "--no-cache", "--fix", *flags, cwd=root)
    once = path.read_bytes()
    assert once.startswith(b"\xef\xbb\xbf") == data.startswith(b"\xef\xbb\xbf")
    assert (b"\r\n" in once) == (b"\r\n" in data)
    code, out, _ = run("check", ".", "--no-cache", "--diff", *flags, cwd=root)
    assert (code, out) == (0, "")
    run("check", ".", "--no-cache", "--fix", *flags, cwd=root)
    assert path.read_bytes() == once


# --- applying edits -----------------------------------------------------------------------------


def test_apply_edits_clamps_positions_past_the_end() -> None:
    from skills_lsp.core.model import Range, TextEdit

    assert apply_edits("a\r\nb", [TextEdit(Range.point(5, 0), "\r\nc")]) == "a\r\nb\r\nc"
    assert apply_edits("ab\r\n", [TextEdit(Range.of(0, 1, 0, 9), "X")]) == "aX\r\n"
    with pytest.raises(ValueError):
        apply_edits("abc", [TextEdit(Range.of(0, 0, 0, 2), ""), TextEdit(Range.of(0, 1, 0, 3), "")])


# --- what --fix cannot do honestly is not counted as fixable -------------------------------------


def test_name_fixes_in_a_folder_with_an_invalid_name_are_for_the_editor(tmp_path: Path) -> None:
    # `name` must equal the folder's name, which is not a valid name: only renaming the folder
    # clears every name error, so --fix leaves the file and does not count it as fixable.
    text = "---\nname: pdf_tools\ndescription: Fills PDF forms. Use when asked.\n---\n\nSteps.\n"
    path = skill(tmp_path, "pdf_tools", text)
    code, out, _ = run("check", ".", "--no-cache", "--fix", "--unsafe-fixes", cwd=tmp_path)
    assert path.read_text(encoding="utf-8") == text
    assert code == 1 and "SK205 [error]" in out and "fixable" not in out
    (finding,) = validate_file(path)
    assert [(f.title, f.applicability) for f in finding.fixes] == [
        ("Rename to `pdf-tools`", Applicability.DISPLAY_ONLY)  # still a quick fix in the editor
    ]


def test_an_unknown_key_is_not_moved_into_metadata_that_has_it(tmp_path: Path) -> None:
    text = (
        "---\nname: notes\ndescription: Takes notes. Use when asked.\nmetadata:\n  homepage: a\n"
        "homepage: b\n---\n\nSteps.\n"
    )
    path = skill(tmp_path, "notes", text)
    code, out, _ = run("check", ".", "--no-cache", "--fix", "--unsafe-fixes", cwd=tmp_path)
    assert path.read_text(encoding="utf-8") == text  # a move would make a duplicate key (SK105)
    assert (code, "SK401 [warning]" in out, "fixable" in out) == (0, True, False)
