"""`skills-lsp budget`, `skills-lsp overlap` and the agentskills trigger evals in `test` and
`eval`, end to end through the command line on real files."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from helpers import write

from skills_lsp.cli import main

REPORT = "Build PDF reports from spreadsheet tables. Use when the user asks for a PDF report of their data."
EXPORT = "Build PDF reports from spreadsheet tables and export them. Use when the user asks for a PDF report."
WEATHER = "Look up the weather forecast for a city. Use when the user asks about rain or temperature."


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def skill(root: Path, name: str, description: str) -> Path:
    return write(
        root / "skills" / name / "SKILL.md", f"---\nname: {name}\ndescription: {description}\n---\n# {name}\n"
    )


def crowded(root: Path, count: int = 40) -> Path:
    for i in range(count):
        skill(root, f"skill-{i:02d}", f"Handles task number {i:02d} with care. " * 8)
    return root


def test_budget_lists_every_cut_skill_and_fails(tmp_path: Path) -> None:
    crowded(tmp_path)
    code, out, _ = run("budget", str(tmp_path), "--runtime", "claude-code")
    assert code == 1
    first = out.splitlines()[0]
    assert first.startswith("Claude Code: ") and "of 8,000 characters" in first and "cut" in first
    assert "https://code.claude.com/docs/en/skills" in out
    assert "skill-39: listed by name only: its description is dropped" in out
    assert "skill-00:" not in out  # the first skills keep their descriptions
    code, out, _ = run("budget", str(tmp_path), "--runtime", "codex", "--format", "json")
    data = json.loads(out)
    assert code == 1 and data["runtime"] == "codex" and data["budget"] == 8000
    assert data["used"] <= 8000 < data["needed"]
    assert {row["fate"] for row in data["skills"]} == {"shortened"}
    assert all(row["kept"] < row["length"] for row in data["skills"])


def test_budget_with_a_larger_context_window_and_the_catalog(tmp_path: Path) -> None:
    crowded(tmp_path)
    code, out, _ = run(
        "budget", str(tmp_path), "--runtime", "claude-code", "--context-window", "1000000", "--catalog"
    )
    assert code == 0
    assert "of 40,000 characters" in out and "Every skill is listed with its whole description." in out
    assert out.count("\n- skill-") == 40 and "- skill-00: Handles task number 00" in out
    code, out, _ = run("budget", str(tmp_path), "--runtime", "adk", "--catalog")
    assert code == 0 and "(no documented limit)" in out and "<available_skills>" in out
    code, _, err = run("budget", str(tmp_path), "--runtime", "codex", "--context-window", "0")
    assert code == 2 and "--context-window" in err


def test_overlap_lists_each_pair_once_and_config_accepts_it(tmp_path: Path) -> None:
    skill(tmp_path, "pdf-report", REPORT)
    skill(tmp_path, "pdf-export", EXPORT)
    skill(tmp_path, "weather", WEATHER)
    code, out, _ = run("overlap", str(tmp_path), "--scorer", "bm25f")
    assert code == 1
    lines = out.splitlines()
    assert lines[0].split("  ")[1] in ("pdf-report / pdf-export", "pdf-export / pdf-report")
    assert 'Requests like "' in lines[1] and " against " in lines[1]
    assert lines[-1] == "1 competing pair among 3 skills (bm25f scorer)"
    code, out, _ = run("overlap", str(tmp_path), "--scorer", "bm25f", "--format", "json")
    (pair,) = json.loads(out)["pairs"]
    assert sorted(pair["skills"]) == ["pdf-export", "pdf-report"] and 0.9 <= pair["confusability"] <= 1
    assert pair["request"] and set(pair["scores"]) == {"pdf-export", "pdf-report"}
    write(tmp_path / "skills-lsp.toml", 'overlap = [["pdf-export", "pdf-report"]]\n')
    code, out, _ = run("overlap", str(tmp_path), "--scorer", "bm25f")
    assert code == 0
    assert out.splitlines()[-1] == "0 competing pairs among 3 skills (bm25f scorer, 1 accepted in the config)"
    code, _, err = run("overlap", str(tmp_path), "--close", "1.5")
    assert code == 2 and "--close" in err


def test_a_malformed_overlap_config_is_sk001(tmp_path: Path) -> None:
    skill(tmp_path, "weather", WEATHER)
    write(tmp_path / "skills-lsp.toml", 'overlap = ["pdf-report"]\n')
    code, out, _ = run("check", str(tmp_path), "--no-cache")
    assert code == 1
    assert "skills-lsp.toml:1:1: SK001 [error] `overlap`: expected a list of skill-name pairs" in out


def _evals(root: Path) -> Path:
    skill(root, "pdf-report", REPORT)
    skill(root, "weather", WEATHER)
    return write(
        root / "skills" / "pdf-report" / "evals" / "eval_queries.json",
        "[\n"
        '  {"query": "make a PDF report from my spreadsheet data", "should_trigger": true},\n'
        '  {"query": "will it rain in Paris tomorrow", "should_trigger": false},\n'
        '  {"query": "build PDF reports from spreadsheet tables", "should_trigger": false}\n'
        "]\n",
    )


def test_test_runs_trigger_evals_with_lines(tmp_path: Path) -> None:
    evals = _evals(tmp_path)
    code, out, _ = run("test", str(evals), "--root", str(tmp_path), "--scorer", "bm25f")
    assert code == 1
    rows = [row.split() for row in out.splitlines()]
    assert rows[1][:4] == ["PASS", "2", "pdf-report", "pdf-report"]
    assert rows[2][:5] == ["PASS", "3", "not", "pdf-report", "-"]  # no skill takes it: that passes
    assert rows[3][:5] == ["FAIL", "4", "not", "pdf-report", "pdf-report"]
    assert f"{evals}:4: should not trigger `pdf-report`, but it is selected" in out
    assert out.endswith("2 passed, 1 failed (scorer bm25f)\n")
    code, out, _ = run("test", str(evals), "--root", str(tmp_path), "--scorer", "bm25f", "--format", "json")
    data = json.loads(out)
    assert (data["passed"], data["failed"]) == (2, 1)
    assert (
        data["results"][2]["reject"] == ["pdf-report"] and data["results"][2]["range"]["start"]["line"] == 3
    )


def test_eval_counts_should_not_trigger_as_false_accepts(tmp_path: Path) -> None:
    evals = _evals(tmp_path)
    code, out, _ = run("eval", str(evals), "--root", str(tmp_path), "--scorer", "bm25f", "--format", "json")
    assert code == 0
    (report,) = json.loads(out)["scorers"]
    assert report["answerable"] == 1 and report["top1_accuracy"] == 1.0
    assert report["none_cases"] == 2 and report["none_false_accept_rate"] == 0.5


def test_the_budget_variable_reaches_budget_and_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    crowded(tmp_path)
    code, out, _ = run("check", str(tmp_path), "--no-cache", "--profile", "claude-code", "--select", "SK703")
    assert code == 0 and "SK703" in out  # a warning
    monkeypatch.setenv("SLASH_COMMAND_TOOL_CHAR_BUDGET", "100000")
    code, out, _ = run("budget", str(tmp_path), "--runtime", "claude-code")
    assert code == 0 and "of 100,000 characters" in out
    code, out, _ = run("check", str(tmp_path), "--no-cache", "--profile", "claude-code", "--select", "SK703")
    assert code == 0 and "SK703" not in out


def test_budget_and_overlap_take_root_as_select_test_and_eval_do(tmp_path: Path) -> None:
    crowded(tmp_path)
    positional = run("budget", str(tmp_path), "--runtime", "claude-code")
    assert run("budget", "--root", str(tmp_path), "--runtime", "claude-code") == positional
    assert positional[0] == 1
    code, out, _ = run("overlap", "--root", str(tmp_path), "--scorer", "bm25f")
    assert (code, out) == run("overlap", str(tmp_path), "--scorer", "bm25f")[:2]
    assert out.splitlines()[-1].endswith("among 40 skills (bm25f scorer)")
    code, _, err = run("overlap", str(tmp_path), "--root", str(tmp_path / "skills"))
    assert code == 2 and "two workspace folders" in err


def test_select_help_names_the_scorer_not_adk_skill() -> None:
    import contextlib

    from skills_lsp.cli import build_parser

    help_text = io.StringIO()
    with contextlib.redirect_stdout(help_text), contextlib.suppress(SystemExit):
        build_parser().parse_args(["select", "--help"])
    assert "as adk-skill scores them" not in help_text.getvalue()
    assert "with the workspace's scorer (or --scorer)" in " ".join(help_text.getvalue().split())
    assert "as adk-skill scores them" not in build_parser().format_help()


def test_check_warns_that_sk704_runs_in_the_editor_and_overlap(tmp_path: Path) -> None:
    skill(tmp_path, "weather", WEATHER)
    code, _, err = run("check", str(tmp_path), "--no-cache", "--extend-select", "SK704")
    assert code == 0
    assert "warning: --extend-select SK704: SK704 runs in the editor" in err
    assert "`skills-lsp overlap`" in err
    assert run("check", str(tmp_path), "--no-cache")[2] == ""


def test_eval_stops_with_status_2_and_positions_on_malformed_trigger_evals(tmp_path: Path) -> None:
    evals = _evals(tmp_path)
    evals.write_text("{", encoding="utf-8")
    code, out, err = run("eval", str(evals), "--root", str(tmp_path), "--scorer", "bm25f")
    assert code == 2 and out == ""
    assert f"{evals}:1:2: SK003 Invalid JSON" in err
    evals.write_text('[\n  {"query": "make a PDF report", "should_trigger": "yes"}\n]\n', encoding="utf-8")
    code, out, err = run("eval", str(evals), "--root", str(tmp_path), "--scorer", "bm25f")
    assert code == 2 and out == ""
    assert f"{evals}:2:52: SK003 `should_trigger` must be true or false." in err


def test_test_reads_trigger_evals_under_any_file_name(tmp_path: Path) -> None:
    evals = _evals(tmp_path)
    other = write(tmp_path / "skills" / "pdf-report" / "evals" / "more-evals.json", evals.read_text("utf-8"))
    code, out, _ = run("test", str(other), "--root", str(tmp_path), "--scorer", "bm25f")
    assert code == 1 and out.endswith("2 passed, 1 failed (scorer bm25f)\n")
    assert "{'query'" not in out and "[{" not in out
    # Outside a skill's folder no skill is under test: said plainly, without the file's contents.
    stray = write(tmp_path / "some" / "other-name.json", evals.read_text("utf-8"))
    code, out, _ = run("test", str(stray), "--root", str(tmp_path), "--scorer", "bm25f")
    assert code != 0 and "evals/` folder" in out
    assert "{'query'" not in out and "make a PDF report" not in out


def test_a_query_file_of_the_wrong_shape_is_described_not_printed(tmp_path: Path) -> None:
    skill(tmp_path, "weather", WEATHER)
    queries = write(tmp_path / "queries.json", '["will it rain in Paris tomorrow", "and in Rome"]\n')
    code, out, _ = run("test", str(queries), "--root", str(tmp_path), "--scorer", "bm25f")
    assert code != 0 and "SK003" in out
    assert "Paris" not in out and "cases" in out


def test_check_reports_broken_query_and_trigger_eval_files_with_positions(tmp_path: Path) -> None:
    """pre-commit and the Action run `check`: a query file the editor marks SK003 must fail there too."""
    evals = _evals(tmp_path)
    code, out, _ = run("check", str(tmp_path), "--no-cache")
    assert "SK003" not in out  # valid files: checked, not scored (no SK702 from check)
    evals.write_text('[\n  {"query": "make a PDF report", "should_trigger": "yes"}\n]\n', encoding="utf-8")
    broken = "cases:\n  - query: will it rain\n    expect: [weather\n"
    queries = write(tmp_path / "skill-queries.yaml", broken)
    code, out, _ = run("check", str(tmp_path), "--no-cache")
    assert code == 1
    assert f"{evals}:2:52: SK003 [error] `should_trigger` must be true or false." in out
    assert f"{queries}:4:1: SK003 [error] Invalid YAML" in out and out.count("SK003") == 2
    code, out, _ = run("check", str(tmp_path), "--no-cache", "--ignore", "SK003")
    assert "SK003" not in out


def test_overlap_reports_unknown_names_in_the_config_as_sk001(tmp_path: Path) -> None:
    skill(tmp_path, "pdf-report", REPORT)
    skill(tmp_path, "weather", WEATHER)
    config = write(tmp_path / "skills-lsp.toml", 'scorer = "bm25f"\noverlap = [["weather", "pdf-reprot"]]\n')
    code, out, err = run("overlap", str(tmp_path))
    assert code == 0 and out.endswith("(bm25f scorer, 1 accepted in the config)\n")
    assert err == (
        f"{config}:2:24: SK001 [error] `overlap`: no skill named `pdf-reprot`; did you mean `pdf-report`?\n"
    )
    write(config, 'scorer = "bm25f"\noverlap = [["weather", "pdf-report"]]\n')
    assert run("overlap", str(tmp_path))[2] == ""
