"""`check --baseline` / `--write-baseline`, `--statistics`, `--output-format` (ruff's name for
`--format`) and the GitLab Code Quality format."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import run_cli as run
from helpers import write_skill as skill
from hypothesis import given, settings
from hypothesis import strategies as st

from skills_lsp.cli import build_parser
from skills_lsp.cli.check import cmd_check
from skills_lsp.cli.common import display, end_process, left_to_exit, printable
from skills_lsp.cli.output import json_row, write_json
from skills_lsp.core.model import Finding, Range, Severity

BAD = "---\nname: Bad\ndescription: Use when x.\n---\nSee [a](references/none.md).\n"
REPO = Path(__file__).resolve().parents[2]
COLON = "---\nname: colon\ndescription: Use when: the user asks for it\n---\n\nSteps.\n"


# --- baseline ------------------------------------------------------------------------------------


def test_write_baseline_records_every_finding_and_exits_zero(tmp_path: Path) -> None:
    skill(tmp_path, "bad", BAD)
    code, out, err = run("check", ".", "--no-cache", "--write-baseline", "baseline.json", cwd=tmp_path)
    assert (code, out, err) == (0, "", "Recorded 3 findings in baseline.json.\n")
    data = json.loads((tmp_path / "baseline.json").read_text(encoding="utf-8"))
    assert data["tool"] == "skills-lsp" and data["format"] == 1
    assert sorted(r["code"] for r in data["findings"]) == ["SK204", "SK208", "SK603"]
    assert {r["path"] for r in data["findings"]} == {"skills/bad/SKILL.md"}
    assert all(len(r["fingerprint"]) == 20 for r in data["findings"])


def test_baseline_reports_only_new_findings(tmp_path: Path) -> None:
    path = skill(tmp_path, "bad", BAD)
    run("check", ".", "--no-cache", "--write-baseline", "baseline.json", cwd=tmp_path)
    assert run("check", ".", "--no-cache", "--baseline", "baseline.json", cwd=tmp_path) == (
        0,
        "All checks passed: 1 file (3 findings in the baseline).\n",
        "",
    )
    # Lines added above move every finding: they are still the recorded ones.
    path.write_text(
        BAD.replace("---\n", "---\nlicense: MIT\n", 1).replace("See", "Intro.\n\nSee"), encoding="utf-8"
    )
    assert run("check", ".", "--no-cache", "--baseline", "baseline.json", cwd=tmp_path)[0] == 0
    # A new problem, and a second copy of a recorded one, are new.
    path.write_text(
        BAD + "See [b](references/none.md) and [c](references/none.md).\nlicence: x\n", encoding="utf-8"
    )
    code, out, _ = run("check", ".", "--no-cache", "--baseline", "baseline.json", cwd=tmp_path)
    assert code == 1 and out.endswith(" in 1 file (3 findings in the baseline).\n")
    assert [line.split(": ")[1] for line in out.splitlines() if line.startswith("skills/")] == [
        "SK603 [error] `references/none.md` does not exist.",
        "SK603 [error] `references/none.md` does not exist.",
    ]


def test_changing_the_text_a_finding_points_at_makes_it_new(tmp_path: Path) -> None:
    path = skill(tmp_path, "bad", BAD)
    run("check", ".", "--no-cache", "--write-baseline", "baseline.json", cwd=tmp_path)
    path.write_text(BAD.replace("name: Bad", "name: Worse"), encoding="utf-8")
    code, out, _ = run("check", ".", "--no-cache", "--baseline", "baseline.json", cwd=tmp_path)
    assert code == 1 and "`Worse` must be lowercase" in out and "SK603" not in out


def test_a_baseline_works_from_another_working_directory(tmp_path: Path) -> None:
    skill(tmp_path, "bad", BAD)
    run("check", ".", "--no-cache", "--write-baseline", "ci/baseline.json", cwd=tmp_path)
    sub = tmp_path / "skills"
    assert run("check", ".", "--no-cache", "--baseline", "../ci/baseline.json", cwd=sub)[0] == 0


def test_fix_leaves_baselined_findings_alone(tmp_path: Path) -> None:
    path = skill(tmp_path, "colon", COLON)
    run("check", ".", "--no-cache", "--write-baseline", "baseline.json", cwd=tmp_path)
    assert run("check", ".", "--no-cache", "--fix", "--baseline", "baseline.json", cwd=tmp_path)[0] == 0
    assert path.read_text(encoding="utf-8") == COLON


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "baseline file not found"),
        ("{", "baseline.json:1:2: not valid JSON"),
        ('{"findings": []}', "not a skills-lsp baseline"),
        ('{"tool": "skills-lsp", "format": 9, "findings": []}', "baseline format 9 is not 1"),
        (
            '{"tool": "skills-lsp", "format": 1, "findings": [{"path": "x"}]}',
            "baseline.json:1:50: finding 1 needs `code` and `fingerprint`",
        ),
        (
            '{"tool": "skills-lsp", "format": 1, "findings": [\n'
            '  {"path": "a", "code": "SK1", "fingerprint": "f"},\n'
            '  {"path": "a", "code": "SK1", "fingerprint": 5}\n]}',
            "baseline.json:3:3: finding 2: `fingerprint` must be a string, not 5",
        ),
        (
            '{"tool": "skills-lsp", "format": 1, "findings": [["a", "SK1", "f"]]}',
            "baseline.json:1:50: finding 1 must be an object",
        ),
        (
            '{"tool": "skills-lsp", "format": 1, "findings": '
            '[{"path": "a", "code": "SK1", "fingerprint": "f", "message": null}]}',
            "finding 1: `message` must be a string, not null",
        ),
    ],
)
def test_a_bad_baseline_is_a_usage_error(tmp_path: Path, content: str | None, message: str) -> None:
    skill(tmp_path, "bad", BAD)
    if content is not None:
        (tmp_path / "baseline.json").write_text(content, encoding="utf-8")
    code, out, err = run("check", ".", "--no-cache", "--baseline", "baseline.json", cwd=tmp_path)
    assert code == 2 and out == "" and message in err


# --- statistics ----------------------------------------------------------------------------------


def test_statistics_count_codes_and_mark_fixable_ones(tmp_path: Path) -> None:
    skill(tmp_path, "bad", BAD)
    skill(tmp_path, "colon", COLON + "See references/none.md\n")
    code, out, _ = run("check", ".", "--no-cache", "--statistics", cwd=tmp_path)
    assert code == 1
    assert out == (
        "2\tSK603\t    missing-reference\n1\tSK104\t[*] unquoted-colon\n"
        "1\tSK204\t    name-not-lowercase\n1\tSK208\t    name-directory-mismatch\n"
    )
    _, out, _ = run("check", ".", "--no-cache", "--statistics", "--unsafe-fixes", cwd=tmp_path)
    assert "1\tSK204\t[*] name-not-lowercase\n" in out


def test_statistics_as_json(tmp_path: Path) -> None:
    skill(tmp_path, "colon", COLON)
    _, out, _ = run("check", ".", "--no-cache", "--statistics", "--output-format", "json", cwd=tmp_path)
    assert json.loads(out) == [{"code": "SK104", "name": "unquoted-colon", "count": 1, "fixable": True}]


def test_statistics_with_no_findings_print_nothing(tmp_path: Path) -> None:
    skill(tmp_path, "colon", COLON.replace("Use when: the", "Use when the"))
    assert run("check", ".", "--no-cache", "--statistics", cwd=tmp_path) == (0, "", "")


# --- output formats ------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github", "gitlab"])
def test_output_format_is_format(tmp_path: Path, fmt: str) -> None:
    skill(tmp_path, "bad", BAD)
    long = run("check", ".", "--no-cache", "--output-format", fmt, cwd=tmp_path)
    short = run("check", ".", "--no-cache", "--format", fmt, cwd=tmp_path)
    if fmt in ("sarif", "gitlab"):  # nothing varies between runs but this
        assert long[0] == short[0] == 1 and json.loads(long[1]) == json.loads(short[1])
    else:
        assert long == short and long[0] == 1


def test_gitlab_code_quality_report(tmp_path: Path) -> None:
    skill(tmp_path, "colon", COLON + "See references/none.md and references/none.md\n")
    code, out, _ = run("check", ".", "--no-cache", "--output-format", "gitlab", cwd=tmp_path)
    assert code == 1
    issues = json.loads(out)
    assert [i["check_name"] for i in issues] == ["SK104", "SK603", "SK603"]
    first = issues[0]
    assert first == {
        "type": "issue",
        "check_name": "SK104",
        "description": "SK104 The value of `description` contains `: `, which YAML reads as a new key; "
        "quote the value.",
        "categories": ["Style"],
        "severity": "major",
        "fingerprint": first["fingerprint"],
        "location": {
            "path": "skills/colon/SKILL.md",
            "positions": {"begin": {"line": 3, "column": 14}, "end": {"line": 3, "column": 44}},
        },
    }
    assert len({i["fingerprint"] for i in issues}) == len(issues)  # unique, even for equal findings
    # Stable when lines move (GitLab matches issues across commits by fingerprint).
    path = tmp_path / "skills" / "colon" / "SKILL.md"
    path.write_text(
        path.read_text(encoding="utf-8").replace("---\n", "---\nlicense: MIT\n", 1), encoding="utf-8"
    )
    _, moved, _ = run("check", ".", "--no-cache", "--output-format", "gitlab", cwd=tmp_path)
    assert {i["fingerprint"] for i in json.loads(moved)} == {i["fingerprint"] for i in issues}


def test_gitlab_severities(tmp_path: Path) -> None:
    skill(tmp_path, "bad", BAD.replace("---\nSee", "licence: x\n---\nSee"))
    _, out, _ = run(
        "check", ".", "--no-cache", "--format", "gitlab", "--select", "SK401,SK204,SK306", cwd=tmp_path
    )
    assert {(i["check_name"], i["severity"]) for i in json.loads(out)} == {
        ("SK204", "major"),
        ("SK401", "minor"),
    }


def test_a_baseline_that_cannot_be_written_is_a_usage_error(tmp_path: Path) -> None:
    skill(tmp_path, "bad", BAD)
    (tmp_path / "taken").mkdir()
    code, out, err = run("check", ".", "--no-cache", "--write-baseline", "taken", cwd=tmp_path)
    assert code == 2 and out == "" and err.startswith("skills-lsp: error: cannot write the baseline taken: ")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["skills", "taken"]  # no temporary file left


def test_statistics_and_fixable_counts_are_the_same_from_the_cache(tmp_path: Path) -> None:
    shutil.copytree(REPO / "examples", tmp_path / "examples")
    root = tmp_path / "examples"
    cache = str(tmp_path / "cache")
    for flags in (["--statistics"], ["--show-fixes", "--unsafe-fixes"], []):
        fresh = run("check", ".", "--no-cache", *flags, cwd=root)
        assert run("check", ".", "--cache-dir", cache, *flags, cwd=root) == fresh  # fills the cache
        assert run("check", ".", "--cache-dir", cache, *flags, cwd=root) == fresh  # read from it


# --- combinations that have no output ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--statistics", "--output-format", "gitlab"], "--statistics prints text or json, not gitlab"),
        (["--statistics", "--format", "sarif"], "--statistics prints text or json, not sarif"),
        (["--statistics", "--format", "github"], "--statistics prints text or json, not github"),
        (["--diff", "--output-format", "json"], "--diff prints a unified diff; it cannot be json"),
        (["--diff", "--format", "gitlab"], "--diff prints a unified diff; it cannot be gitlab"),
        (["--diff", "--statistics"], "--diff prints a unified diff; it cannot be combined with --statistics"),
    ],
)
def test_combinations_without_an_output_are_usage_errors(
    tmp_path: Path, flags: list[str], message: str
) -> None:
    skill(tmp_path, "colon", COLON)
    code, out, err = run("check", ".", "--no-cache", *flags, cwd=tmp_path)
    assert (code, out) == (2, "") and message in err
    assert "Use when: the user" in (tmp_path / "skills" / "colon" / "SKILL.md").read_text()


def test_statistics_as_json_is_still_json(tmp_path: Path) -> None:
    skill(tmp_path, "bad", BAD)
    code, out, _ = run("check", ".", "--no-cache", "--statistics", "--format", "json", cwd=tmp_path)
    assert code == 1 and {row["code"] for row in json.loads(out)} >= {"SK603"}


# --- JSON rows ------------------------------------------------------------------------------------

_TEXT = st.text(st.characters(codec=None, exclude_categories=()), max_size=30)  # surrogates too


@settings(max_examples=300)
@given(
    path=_TEXT.filter(lambda p: "\0" not in p),
    message=_TEXT,
    severity=st.sampled_from(list(Severity)),
    numbers=st.tuples(*[st.integers(0, 10**6)] * 4),
)
def test_a_json_row_is_what_json_dumps_writes(
    path: str, message: str, severity: Severity, numbers: tuple[int, int, int, int]
) -> None:
    finding = Finding("/tmp/x" + path, "SK603", severity, message, Range.of(*numbers))
    expected = dict(finding.to_json(), path=display(finding.path), message=printable(finding.message))
    assert json_row(finding) == json.dumps(expected, ensure_ascii=False)


@settings(max_examples=200)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["/tmp/a/SKILL.md", "/tmp/b/SKILL.md", "/tmp/\udcff/SKILL.md"]),
            st.sampled_from(["SK603", "SK204", "SK703"]),
            st.sampled_from(list(Severity)),
            _TEXT,
            st.tuples(*[st.integers(0, 10**6)] * 4),
        ),
        max_size=12,
    )
)
def test_json_output_is_one_json_row_per_finding(
    rows: list[tuple[str, str, Severity, str, tuple[int, ...]]],
) -> None:
    """`write_json` writes each path's and each code's part of a row once: the rows are
    `json_row`'s, whatever the order of paths, codes and severities."""
    findings = [
        Finding(path, code, sev, message, Range.of(*numbers)) for path, code, sev, message, numbers in rows
    ]
    out = io.StringIO()
    write_json(findings, out)
    lines = [json_row(f) for f in findings]
    assert out.getvalue() == ("[\n  " + ",\n  ".join(lines) + "\n]\n" if lines else "[]\n")


@pytest.mark.parametrize("count", [1023, 1024, 1025, 2 * 1024 + 1])
def test_json_output_written_in_runs_is_one_json_array(count: int) -> None:
    """`write_json` writes its rows a run at a time: around a run's end the text is the rows
    joined whole, and a message beyond Latin-1 (a wide character) changes nothing."""
    findings = [
        Finding(
            f"/tmp/s{n // 7}/SKILL.md",
            "SK603",
            Severity.ERROR,
            f"`x{n}` does not exist ✓.",
            Range.of(n, 0, n, 3),
        )
        for n in range(count)
    ]
    out = io.StringIO()
    write_json(findings, out)
    assert out.getvalue() == "[\n  " + ",\n  ".join(json_row(f) for f in findings) + "\n]\n"
    assert len(json.loads(out.getvalue())) == count


# --- the process's end ---------------------------------------------------------------------------


def _program(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`skills-lsp ARGV` as a program (a process of its own, `main()` without arguments)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run(
        [sys.executable, "-m", "skills_lsp", *argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.parametrize("output", ["json", "text", "sarif", "github", "gitlab"])
@pytest.mark.parametrize("extra", [["--no-cache"], [], ["--exit-zero", "--no-cache"]])
def test_a_check_run_as_the_program_ends_with_all_of_its_output_and_status(
    tmp_path: Path, output: str, extra: list[str]
) -> None:
    """`check` as the program ends the process as soon as its output is flushed (nothing freed):
    every byte and the exit status are as from `main` called in-process."""
    for index in range(60):  # more output than a pipe holds
        skill(tmp_path, f"bad-{index:02d}", BAD)
    argv = ["check", ".", "--format", output, *extra]
    ended = _program(*argv, cwd=tmp_path)
    code, out, err = run(*argv, "--no-cache", cwd=tmp_path)
    assert len(ended.stdout) > 65_536 or output == "github"
    assert (ended.returncode, ended.stdout, ended.stderr) == (code, out, err)
    assert ended.returncode == (0 if "--exit-zero" in extra else 1)


def test_a_check_called_from_python_returns_and_leaves_what_it_built_to_the_caller(tmp_path: Path) -> None:
    skill(tmp_path, "bad", BAD)
    args = build_parser("check").parse_args(["check", ".", "--no-cache", "--format", "json"])
    out, err = io.StringIO(), io.StringIO()
    old = Path.cwd()
    os.chdir(tmp_path)
    try:
        assert cmd_check(args, out, err) == 1
    finally:
        os.chdir(old)
    assert left_to_exit(args) and len(json.loads(out.getvalue())) == 3


class _ClosedPipe(io.StringIO):
    def flush(self) -> None:
        raise BrokenPipeError(32, "Broken pipe")


def test_ending_the_process_returns_when_the_output_cannot_be_flushed() -> None:
    """The interpreter's own exit then reports the closed pipe, as without the early end (were the
    error not caught, os._exit would end this test's process)."""
    assert end_process(1, _ClosedPipe()) is None  # type: ignore[func-returns-value]
