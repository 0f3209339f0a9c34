"""The `skills-lsp` command: formats, exit codes, rule docs, init."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import PARITY, needs_parity, run_cli

from skills_lsp.cli import main
from skills_lsp.core.rules import RULES

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"

GOOD = "---\nname: good\ndescription: Formats notes. Use when the user asks for notes.\n---\nSteps.\n"
BAD = "---\nname: Bad\ndescription: x\n---\nSee [a](references/none.md).\n"


run = run_cli  # `skills-lsp ARGV` in-process: (exit status, stdout, stderr)


@pytest.fixture()
def workspace(tmp_path: Path) -> Path:
    for name, text in (("good", GOOD), ("bad", BAD)):
        path = tmp_path / "skills" / name / "SKILL.md"
        path.parent.mkdir(parents=True)
        path.write_text(text, encoding="utf-8")
    return tmp_path


def test_text_output_and_exit_code(workspace: Path) -> None:
    code, out, _ = run("check", ".", "--no-cache", cwd=workspace)
    assert code == 1
    assert "skills/bad/SKILL.md:2:7: SK204 [error] `name` `Bad` must be lowercase." in out
    assert "skills/bad/SKILL.md:5:9: SK603 [error] `references/none.md` does not exist." in out
    assert "\nFound 3 problems (3 errors) in 2 files.\n" in out


def test_clean_skill_exits_zero(workspace: Path) -> None:
    code, out, _ = run("check", str(workspace / "skills" / "good"), "--no-cache")
    assert code == 0 and out == "All checks passed: 1 file.\n"


def test_exit_zero_and_select_ignore(workspace: Path) -> None:
    assert run("check", str(workspace), "--no-cache", "--exit-zero")[0] == 0
    code, out, _ = run("check", str(workspace), "--no-cache", "--select", "SK6", "--format", "json")
    assert code == 1 and {f["code"] for f in json.loads(out)} == {"SK603"}
    code, out, _ = run("check", str(workspace), "--no-cache", "--ignore", "SK2,SK6")
    assert code == 0 and out == "All checks passed: 2 files.\n"


def test_json_format(workspace: Path) -> None:
    code, out, _ = run("check", "skills/bad/SKILL.md", "--format", "json", "--no-cache", cwd=workspace)
    rows = json.loads(out)
    assert code == 1
    row = next(r for r in rows if r["code"] == "SK204")
    assert row == {
        "path": "skills/bad/SKILL.md",
        "code": "SK204",
        "severity": "error",
        "message": "`name` `Bad` must be lowercase.",
        "range": {"start": {"line": 1, "character": 6}, "end": {"line": 1, "character": 9}},
    }


def test_sarif_is_valid_sarif_2_1_0(workspace: Path) -> None:
    sarif_pydantic = pytest.importorskip("sarif_pydantic")
    _, out, _ = run("check", ".", "--format", "sarif", "--no-cache", cwd=workspace)
    data = json.loads(out)
    log = sarif_pydantic.Sarif.model_validate(data)
    assert log.version == "2.1.0"
    run0 = data["runs"][0]
    assert run0["columnKind"] == "unicodeCodePoints"
    ids = [r["id"] for r in run0["tool"]["driver"]["rules"]]
    assert ids == sorted(RULES)
    result = next(r for r in run0["results"] if r["ruleId"] == "SK204")
    assert ids[result["ruleIndex"]] == "SK204" and result["level"] == "error"
    assert result["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 2,
        "startColumn": 7,
        "endLine": 2,
        "endColumn": 10,
    }
    assert result["locations"][0]["physicalLocation"]["artifactLocation"] == {
        "uri": "skills/bad/SKILL.md",
        "uriBaseId": "%SRCROOT%",
    }
    assert run0["originalUriBaseIds"] == {"%SRCROOT%": {"uri": workspace.resolve().as_uri() + "/"}}


def _sarif_uris(out: str) -> list[dict[str, str]]:
    sarif_pydantic = pytest.importorskip("sarif_pydantic")
    data = json.loads(out)
    sarif_pydantic.Sarif.model_validate(data)
    results = data["runs"][0]["results"]
    return [r["locations"][0]["physicalLocation"]["artifactLocation"] for r in results]


def test_sarif_uris_are_percent_encoded_or_absolute_file_uris(tmp_path: Path) -> None:
    skill = tmp_path / "my skills #1" / "demo" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text(BAD, encoding="utf-8")
    (tmp_path / "elsewhere").mkdir()
    _, out, _ = run("check", "my skills #1", "--format", "sarif", "--no-cache", cwd=tmp_path)
    locations = _sarif_uris(out)
    assert locations and all(
        loc == {"uri": "my%20skills%20%231/demo/SKILL.md", "uriBaseId": "%SRCROOT%"} for loc in locations
    )
    _, out, _ = run("check", "../my skills #1", "--format", "sarif", "--no-cache", cwd=tmp_path / "elsewhere")
    outside = skill.resolve().as_uri()
    assert outside.startswith("file:///") and outside.endswith("/my%20skills%20%231/demo/SKILL.md")
    assert all(loc == {"uri": outside} for loc in _sarif_uris(out))


def test_github_format_escapes(workspace: Path) -> None:
    _, out, _ = run("check", ".", "--format", "github", "--no-cache", cwd=workspace)
    assert "::error file=skills/bad/SKILL.md,line=2,col=7,endLine=2,endColumn=10,title=SK204::" in out


def _undecodable_dir(tmp_path: Path) -> str:
    """A skill folder `bad\\xff` (not valid UTF-8) holding a valid SKILL.md named `good`."""
    raw = os.path.join(os.fsencode(tmp_path), b"bad\xff")
    try:
        os.mkdir(raw)
    except OSError:  # pragma: no cover - a file system that only stores UTF-8 names (macOS)
        pytest.skip("the file system refuses names that are not UTF-8")
    with open(os.path.join(raw, b"SKILL.md"), "w", encoding="utf-8") as handle:
        handle.write(GOOD)
    return os.fsdecode(b"bad\xff")


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github"])
def test_undecodable_file_names_print_in_every_format(tmp_path: Path, fmt: str) -> None:
    name = _undecodable_dir(tmp_path)
    buffer = io.BytesIO()
    strict = io.TextIOWrapper(buffer, encoding="utf-8", errors="strict", newline="")
    old = Path.cwd()
    os.chdir(tmp_path)
    try:
        code = main(["check", name, "--no-cache", "--format", fmt], strict, io.StringIO())
    finally:
        os.chdir(old)
    strict.flush()
    out = buffer.getvalue().decode("utf-8")
    assert code == 1  # SK208: `good` is not the folder's name
    if fmt == "text":
        assert out.startswith("bad\\xff/SKILL.md:2:7: SK208 [error]")
        assert "directory name `bad\\xff`" in out
    elif fmt == "json":
        (row,) = json.loads(out)
        assert row["path"] == "bad\\xff/SKILL.md" and row["message"].endswith("`bad\\xff`.")
    elif fmt == "sarif":
        assert _sarif_uris(out) == [{"uri": "bad%FF/SKILL.md", "uriBaseId": "%SRCROOT%"}]
    else:
        assert out.startswith("::error file=bad\\xff/SKILL.md,line=2,")


def test_undecodable_file_names_with_a_strict_utf8_stdout(tmp_path: Path) -> None:
    name = _undecodable_dir(tmp_path)
    proc = subprocess.run(
        [sys.executable, "-m", "skills_lsp", "check", name, "--no-cache"],
        capture_output=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONIOENCODING": "utf-8"},
        check=False,
    )
    assert proc.returncode == 1, proc.stderr.decode("utf-8", "replace")
    assert proc.stdout.startswith(b"bad\\xff/SKILL.md:2:7: SK208")


@pytest.mark.parametrize("option", ["--select", "--ignore", "--extend-select"])
@pytest.mark.parametrize("value", ["", " , "])
def test_empty_rule_selection_is_a_usage_error(workspace: Path, option: str, value: str) -> None:
    code, out, err = run("check", str(workspace), "--no-cache", option, value)
    assert code == 2 and out == ""
    assert f"{option} needs at least one rule code" in err


def test_bad_usage_exits_two(workspace: Path) -> None:
    assert run("check", str(workspace / "nope"))[0] == 2
    assert run("check", str(workspace), "--select", "ZZ1")[0] == 2
    assert run("check", str(workspace), "--profile", "nope")[0] == 2
    with pytest.raises(SystemExit) as info:
        run("check", "--format", "xml")
    assert info.value.code == 2


def test_cache_reuses_results_and_notices_reference_changes(workspace: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = run("check", str(workspace), "--cache-dir", str(cache), "--format", "json")[1]
    assert (cache / "check.json").is_file() and (cache / ".gitignore").is_file()
    assert run("check", str(workspace), "--cache-dir", str(cache), "--format", "json")[1] == first
    ref = workspace / "skills" / "bad" / "references" / "none.md"
    ref.parent.mkdir()
    ref.write_text("now it exists", encoding="utf-8")
    again = json.loads(run("check", str(workspace), "--cache-dir", str(cache), "--format", "json")[1])
    assert "SK603" not in {r["code"] for r in again}


def test_rules_and_rule() -> None:
    code, out, _ = run("rules")
    assert code == 0 and len(out.splitlines()) == len(RULES)
    lines = {line[:5]: line for line in out.splitlines()}
    assert lines["SK104"].startswith("SK104  error    safe    unquoted-colon")
    assert lines["SK204"].startswith("SK204  error    unsafe  name-not-lowercase")
    assert lines["SK603"].startswith("SK603  error    editor  missing-reference")
    assert lines["SK303"].startswith("SK303  error            description-too-long")
    code, out, _ = run("rule", "sk208")
    assert code == 0 and out.startswith("SK208 (name-directory-mismatch)\nSeverity: error")
    assert "must equal the directory name" in out
    assert run("rule", "SK999")[0] == 2
    data = json.loads(run("rules", "--format", "json")[1])
    assert {r["code"] for r in data} == set(RULES)


def test_init_scaffolds_a_valid_skill(tmp_path: Path) -> None:
    code, out, _ = run("init", "pdf-tools", "--dir", str(tmp_path))
    assert code == 0 and "pdf-tools/SKILL.md" in out
    assert run("check", str(tmp_path / "pdf-tools"), "--no-cache")[0] == 0
    assert run("init", "pdf-tools", "--dir", str(tmp_path))[0] == 2  # never overwrites
    code, _, err = run("init", "PDF_Tools", "--dir", str(tmp_path))
    assert code == 2 and "try 'pdf-tools'" in err


def test_init_refuses_an_empty_description(tmp_path: Path) -> None:
    for description in ("", "   "):
        code, out, err = run("init", "demo", "--dir", str(tmp_path), "--description", description)
        assert code == 2 and out == "" and "the description must not be empty" in err
    assert not (tmp_path / "demo").exists()


def test_init_reports_a_bad_dir_without_a_traceback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    afile = tmp_path / "afile"
    afile.write_text("", encoding="utf-8")
    code, _, err = run("init", "demo", "--dir", str(afile))
    assert code == 2 and err == f"skills-lsp: error: --dir {afile} is not a directory\n"
    code, _, err = run("init", "demo", "--dir", str(afile / "sub"))
    assert code == 2 and err.startswith(f"skills-lsp: error: cannot create {afile / 'sub'}")
    if Path("/proc/self").is_dir():  # a directory nothing can be created in, even as root
        code, _, err = run("init", "demo", "--dir", "/proc")
        assert code == 2 and err.startswith("skills-lsp: error: cannot create /proc/demo: ")

    def refuse(self: Path, *args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "mkdir", refuse)
    code, _, err = run("init", "demo", "--dir", str(tmp_path / "ro"))
    assert (
        code == 2
        and err == f"skills-lsp: error: cannot create {tmp_path / 'ro' / 'demo'}: Permission denied\n"
    )


def test_engine_commands_use_roots_relative_to_the_config(tmp_path: Path) -> None:
    skill = tmp_path / "skills" / "good" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text(GOOD, encoding="utf-8")
    (tmp_path / "skills-lsp.toml").write_text('roots = ["skills"]\n', encoding="utf-8")
    (tmp_path / "skill-queries.yaml").write_text(
        "cases:\n  - query: format my notes\n    expect: good\n", encoding="utf-8"
    )
    _, out, _ = run("index", "skills", "--format", "json", cwd=tmp_path)
    assert [row["name"] for row in json.loads(out)] == ["good"]
    _, out, _ = run("select", "notes", "--format", "json", cwd=tmp_path / "skills")
    assert [row["name"] for row in json.loads(out)] == ["good"]
    code, out, _ = run("test", "--root", "skills", cwd=tmp_path)
    assert code == 0 and out.endswith("\n1 passed, 0 failed (scorer hybrid)\n")


def test_examples_workspace_reports_the_labelled_mistakes() -> None:
    code, out, _ = run("check", str(EXAMPLES), "--no-cache", "--format", "json")
    rows = json.loads(out)
    assert code == 1
    by_skill: dict[str, set[str]] = {}
    for row in rows:
        by_skill.setdefault(Path(row["path"]).parent.name, set()).add(row["code"])
    assert set(by_skill) == {"broken-name-mismatch", "broken-yaml", "broken-references"}
    assert by_skill["broken-name-mismatch"] == {"SK204", "SK205", "SK208", "SK401", "SK501", "SK505"}
    assert by_skill["broken-yaml"] == {"SK104"}
    assert by_skill["broken-references"] == {"SK303", "SK403", "SK603", "SK605", "SK606"}


def test_module_and_console_script_entry_points(workspace: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "skills_lsp", "check", str(workspace / "skills" / "good"), "--no-cache"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0 and proc.stdout == "All checks passed: 1 file.\n"


def test_rule_reference_doc_is_current() -> None:
    # docs/rules.md is what SARIF's helpUri and the LSP's codeDescription link to.
    _, out, _ = run("rules", "--format", "markdown")
    assert (REPO / "docs" / "rules.md").read_text(encoding="utf-8") == out, (
        "regenerate: skills-lsp rules --format markdown > docs/rules.md"
    )


# --- engine commands -----------------------------------------------------------------------------

PARITY_WS = PARITY / "workspace"


def test_select_json_and_explain() -> None:
    code, out, _ = run(
        "select", "fill in the pdf form from json data", "--root", str(EXAMPLES), "--format", "json"
    )
    rows = json.loads(out)
    assert code == 0 and rows[0]["name"] == "pdf-form-filling"
    assert set(rows[0]) == {"name", "path", "id", "score"} and rows[0]["id"].startswith("pdf-form-filling-")
    code, out, _ = run(
        "select",
        "pdf form",
        "--root",
        str(EXAMPLES),
        "--explain",
        "--top-k",
        "1",
        "--min-score",
        "0",
        "--scorer",
        "lexical",
    )
    assert code == 0 and out.startswith("1. ") and "name        x4.0: pdf form" in out
    assert "unique body tokens" in out


def test_select_policy_options() -> None:
    _, out, _ = run("select", "weather", "--root", str(EXAMPLES), "--min-score", "99")
    assert out.startswith("No skill scores 99.0 or more")
    _, out, _ = run(
        "select", "tickets", "--root", str(EXAMPLES), "--exclude-tags", "SUPPORT", "--format", "json"
    )
    assert "ticket-triage" not in {r["name"] for r in json.loads(out)}
    assert run("select", "x", "--root", str(EXAMPLES / "nope"))[0] == 2
    assert run("select", "x", "--root", str(EXAMPLES), "--top-k", "-1")[0] == 2


@needs_parity
def test_index_crate_json_matches_the_crate_fields() -> None:
    _, out, _ = run("index", str(PARITY_WS), "--crate", "--format", "json")
    rows = json.loads(out)
    assert len(rows) == 48
    assert list(rows[0]) == [
        "id",
        "name",
        "description",
        "version",
        "license",
        "compatibility",
        "tags",
        "allowed_tools",
        "references",
        "trigger",
        "hint",
        "metadata",
        "body",
        "path",
        "hash",
        "last_modified",
        "triggers",
    ]


def test_index_text_lists_every_layout() -> None:
    code, out, _ = run("index", str(EXAMPLES))
    assert code == 0 and out.startswith("14 skills\n")  # broken-yaml cannot be read
    for name in ("pdf-form-filling-", "code-search-", "agents-", "claude-", "gemini-"):
        assert name in out


def test_prompt_catalog() -> None:
    code, out, _ = run("prompt", str(EXAMPLES))
    assert code == 0 and out.startswith("<available_skills>\n<skill>\n<name>\n")
    assert out.endswith("</available_skills>\n") and out.count("<skill>") == 14


def test_test_command_reports_a_table_and_fails_on_a_failing_case() -> None:
    # examples/ has SKILL.md files and no `scorer`: its default is hybrid, which routes all 12.
    code, out, _ = run("test", "--root", str(EXAMPLES))
    assert code == 0 and out.endswith("\n12 passed, 0 failed (scorer hybrid)\n")
    # adk-skill's formula fails one, honestly (see the comment in examples/skill-queries.yaml).
    code, out, _ = run("test", "--root", str(EXAMPLES), "--scorer", "lexical")
    assert code == 1
    assert "PASS  6     pdf-form-filling" in out
    assert "FAIL  37    none" in out and "skill-queries.yaml:37: expected no skill" in out
    assert out.endswith("\n11 passed, 1 failed (scorer lexical)\n")
    code, out, _ = run("test", "--root", str(EXAMPLES), "--format", "json", "--scorer", "lexical")
    data = json.loads(out)
    assert (data["passed"], data["failed"], data["problems"], data["scorer"]) == (11, 1, [], "lexical")
    failing = next(r for r in data["results"] if not r["passed"])
    assert failing["id"] == "stop-words-lexical" and failing["range"]["start"]["line"] == 36


def test_test_command_errors(tmp_path: Path) -> None:
    assert run("test", "--root", str(tmp_path))[0] == 2  # no query file
    bad = tmp_path / "q.yaml"
    bad.write_text("cases:\n  - query: x\n", encoding="utf-8")
    code, out, _ = run("test", str(bad), "--root", str(tmp_path))
    assert code == 1 and "q.yaml:2:5: SK003 'expect' is a required property." in out
