"""Routing tests: the query file format, its errors with positions, and pass/fail semantics."""

from __future__ import annotations

from pathlib import Path

import pytest
from documents import skill_document

from skills_lsp.core.index.skill_index import SkillDocument, SkillIndex
from skills_lsp.core.model import Range
from skills_lsp.core.routing.queries import QueryCase, load_query_file, parse_query_file, run_case


def doc(name: str, description: str, body: str = "", tags: tuple[str, ...] = ()) -> SkillDocument:
    path = Path(f"/ws/skills/{name}/SKILL.md")
    return skill_document(name, description, body, tags, id=f"{name}-000000000000", path=path)


@pytest.fixture()
def index() -> SkillIndex:
    return SkillIndex(
        [
            doc("pdf-forms", "Fill PDF forms from data", "Open the PDF form and fill each field.", ("docs",)),
            doc("pdf-merge", "Merge PDF files into one", "Merge the PDF files in order.", ("docs",)),
            doc("weather", "Weather forecast for a place", "Call the weather service."),
        ]
    )


def test_file_with_defaults_and_every_expect_form(tmp_path: Path) -> None:
    path = tmp_path / "skill-queries.yaml"
    path.write_text(
        "defaults:\n  min_score: 0.5\n  exclude_tags: [old]\n"
        "cases:\n"
        "  - query: fill the pdf form\n    expect: pdf-forms\n"
        "  - query: merge or fill pdf\n    expect: [pdf-forms, pdf-merge]\n    top_k: 2\n"
        "  - query: book a flight\n    expect: none\n"
        "  - id: null-expect\n    query: anything\n    expect: ~\n    min_score: 2\n",
        encoding="utf-8",
    )
    cases, problems = load_query_file(path)
    assert problems == []
    assert [c.expect for c in cases] == [("pdf-forms",), ("pdf-forms", "pdf-merge"), (), ()]
    assert cases[0].min_score == 0.5 and cases[0].exclude_tags == ("old",)
    assert cases[1].top_k == 2 and cases[3].min_score == 2.0 and cases[3].id == "null-expect"
    assert cases[0].range == Range.of(4, 11, 4, 28)  # the query text, for code lenses


def test_errors_point_at_their_case_and_good_cases_still_load() -> None:
    text = (
        "cases:\n  - query: ok\n    expect: a\n  - query: no expect\n"
        "  - query: x\n    expect: b\n    top_k: 0\n"
    )
    cases, problems = parse_query_file(text, "q.yaml")
    assert [c.query for c in cases] == ["ok"]
    assert {p.code for p in problems} == {"SK003"}
    assert {p.range.start.line for p in problems} == {3, 6}
    assert any("'expect' is a required property" in p.message for p in problems)


@pytest.mark.parametrize(
    ("text", "line"),
    [("cases: [\n", 1), ("cases:\n  - query: a\n    expect: b\n  - query: c: d\n", 3), ("", 0)],
)
def test_broken_yaml_is_a_finding_not_an_exception(text: str, line: int) -> None:
    cases, problems = parse_query_file(text, "q.yaml")
    assert cases == [] and problems and problems[0].range.start.line == line


def test_json_query_file() -> None:
    cases, problems = parse_query_file('{"cases": [{"query": "q", "expect": null}]}', "q.json")
    assert problems == [] and cases[0].expects_none
    _, problems = parse_query_file('{"cases": [', "q.json")
    assert problems[0].message.startswith("Invalid JSON")


def test_json_query_files_have_positions_too() -> None:
    # Lenses sit on a case's query and problems point at the bad value, in JSON as in YAML.
    text = (
        '{\n  "cases": [\n    {"query": "fill the form", "expect": "pdf"},\n'
        '    {"query": 3, "expect": "x"}\n  ]\n}\n'
    )
    cases, problems = parse_query_file(text, "q.json")
    assert [c.query for c in cases] == ["fill the form"]
    assert (cases[0].range.start.line, cases[0].range.start.character) == (2, 14)
    assert [(p.range.start.line, p.range.start.character) for p in problems] == [(3, 14)]
    # Tab-indented JSON (which YAML will not read as is) keeps its positions, columns counting a
    # tab as one character as LSP does; a tab escaped inside a string stays part of the query.
    tabbed, problems = parse_query_file(
        '{\n\t"cases": [\n\t\t{"query": "a\\tb", "expect": null},\n\t\t{"query": 3, "expect": "x"}\n\t]\n}',
        "q.json",
    )
    assert [c.query for c in tabbed] == ["a\tb"] and tabbed[0].expects_none
    assert (tabbed[0].range.start.line, tabbed[0].range.start.character) == (2, 12)
    assert [(p.range.start.line, p.range.start.character) for p in problems] == [(3, 12)]


def test_pass_and_fail(index: SkillIndex) -> None:
    result = run_case(index, QueryCase("fill the pdf form", ("pdf-forms",), min_score=0.1))
    assert result.passed and result.winner and result.winner.skill.name == "pdf-forms"
    assert result.runner_up and result.runner_up.skill.name == "pdf-merge"
    assert result.lead == pytest.approx(result.winner.score - result.runner_up.score)
    result = run_case(index, QueryCase("merge pdf files", ("pdf-forms",), min_score=0.1))
    assert not result.passed and "got `pdf-merge`" in result.reason
    assert run_case(index, QueryCase("merge pdf files", ("pdf-forms",), top_k=2, min_score=0.1)).passed


def test_none_cases(index: SkillIndex) -> None:
    assert run_case(index, QueryCase("reserve seats", ())).passed
    failed = run_case(index, QueryCase("weather forecast", (), min_score=0.1))
    assert not failed.passed and "`weather` is selected" in failed.reason


def test_margin_and_tags(index: SkillIndex) -> None:
    close = QueryCase("fill the pdf form", ("pdf-forms",), min_score=0.1, margin=50)
    result = run_case(index, close)
    assert not result.passed and "less than the margin" in result.reason
    assert run_case(
        index, QueryCase("pdf", ("pdf-merge",), min_score=0.1, exclude_tags=("DOCS",))
    ).reason.startswith("expected `pdf-merge`, but no skill scores 0.1")


# --- the agentskills trigger evals (evals/eval_queries.json) ---------------------------------


def _eval_file(root: Path, text: str, skill: str = "pdf-forms") -> Path:
    folder = root / "skills" / skill
    (folder / "evals").mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {skill}\ndescription: Fill PDF forms.\n---\n", encoding="utf-8"
    )
    path = folder / "evals" / "eval_queries.json"
    path.write_text(text, encoding="utf-8")
    return path


def test_trigger_evals_read_as_cases_of_the_skill_above(tmp_path: Path, index: SkillIndex) -> None:
    path = _eval_file(
        tmp_path,
        '[\n  {"query": "fill the pdf form", "should_trigger": true},\n'
        '  {"query": "merge these pdf files", "should_trigger": false}\n]\n',
    )
    cases, problems = load_query_file(path)
    assert problems == []
    assert [(c.query, c.expect, c.reject) for c in cases] == [
        ("fill the pdf form", ("pdf-forms",), ()),
        ("merge these pdf files", (), ("pdf-forms",)),
    ]
    assert cases[0].range == Range.of(1, 12, 1, 31)  # the query string, quotes included
    assert cases[1].id == "pdf-forms#2"
    trigger, other = (run_case(index, c, scorer="bm25f") for c in cases)
    assert trigger.passed and trigger.winner is not None and trigger.winner.skill.name == "pdf-forms"
    # Another skill may take a should-not-trigger request: it passes while pdf-forms is not chosen.
    assert other.passed and other.winner is not None and other.winner.skill.name == "pdf-merge"


def test_a_should_not_trigger_query_fails_when_its_skill_is_chosen(tmp_path: Path, index: SkillIndex) -> None:
    path = _eval_file(tmp_path, '[{"query": "fill the pdf form", "should_trigger": false}]')
    (case,), _ = load_query_file(path)
    result = run_case(index, case, scorer="bm25f")
    assert not result.passed
    assert result.reason == "should not trigger `pdf-forms`, but it is selected"
    assert result.to_json()["reject"] == ["pdf-forms"]


def test_trigger_eval_problems_have_positions(tmp_path: Path) -> None:
    path = _eval_file(
        tmp_path,
        '[\n  {"query": "", "should_trigger": true},\n  {"query": "ok", "should_trigger": "yes"},\n'
        '  {"query": "fine here", "should_trigger": true, "note": 1},\n  3\n]\n',
    )
    cases, findings = load_query_file(path)
    assert [c.query for c in cases] == ["fine here"]
    by_line = {f.range.start.line: f for f in findings}
    assert by_line[1].message == "`query` must be a non-empty string."
    assert by_line[2].message == "`should_trigger` must be true or false."
    assert by_line[2].range.start.character == line_offset(path, 2, '"yes"')
    assert by_line[3].message.startswith("Unknown key `note`") and by_line[3].severity.name == "WARNING"
    assert by_line[4].message == "Each trigger eval is an object."
    assert all(f.code == "SK003" for f in findings)


def line_offset(path: Path, line: int, needle: str) -> int:
    return path.read_text(encoding="utf-8").splitlines()[line].index(needle)


def test_trigger_evals_outside_a_skill_or_not_a_list(tmp_path: Path) -> None:
    lone = tmp_path / "eval_queries.json"
    lone.write_text('[{"query": "x y z", "should_trigger": true}]', encoding="utf-8")
    cases, (finding,) = load_query_file(lone)
    assert cases == [] and "put it in a skill's `evals/` folder" in finding.message
    path = _eval_file(tmp_path, '{"cases": []}')
    cases, (finding,) = load_query_file(path)
    assert cases == [] and finding.message.startswith("Trigger evals are a JSON list")
    path.write_text("[", encoding="utf-8")
    cases, (finding,) = load_query_file(path)
    assert cases == [] and finding.message.startswith("Invalid JSON")


def test_evaluation_counts_should_not_trigger_as_negatives(tmp_path: Path, index: SkillIndex) -> None:
    from skills_lsp.core.routing.evaluation import evaluate

    path = _eval_file(
        tmp_path,
        '[{"query": "fill the pdf form", "should_trigger": true},'
        ' {"query": "fill the pdf form now", "should_trigger": false},'
        ' {"query": "merge pdf files", "should_trigger": false}]',
    )
    cases, _ = load_query_file(path)
    report = evaluate(index, cases, "bm25f")
    assert (report.answerable, report.top1, report.nones) == (1, 1, 2)
    assert report.false_accepts == 1  # pdf-forms chosen for the first; pdf-merge takes the second
