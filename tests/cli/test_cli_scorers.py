"""`skills-lsp select --scorer`, `skills-lsp eval` and what both do without the semantic extra."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from skills_lsp.cli import main
from skills_lsp.core.routing.hybrid import HYBRID_BM25F_WEIGHT
from skills_lsp.core.routing.intent import TASK_FLOOR
from skills_lsp.core.routing.scorer import DEFAULT_MIN_SCORE, SCORERS

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
ROUTING = REPO / "benchmarks" / "routing"
ROUTING_QUERIES = ROUTING / "queries.yaml"
PIP_HINT = "pip install 'skills-lsp[semantic]'"


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


# --- eval ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def routing_eval() -> dict[str, Any]:
    code, out, err = run(
        "eval", str(ROUTING_QUERIES), "--root", str(ROUTING), "--format", "json", "--calibrate", "0.15"
    )
    assert code == 0, err
    data: dict[str, Any] = json.loads(out)
    return data


def test_eval_runs_every_installed_scorer(routing_eval: dict[str, Any]) -> None:
    assert routing_eval["skills"] == 79 and routing_eval["cases"] == 302
    by_name = {r["scorer"]: r for r in routing_eval["scorers"]}
    assert list(by_name) == list(SCORERS)
    for name, r in by_name.items():
        assert r["threshold"] == DEFAULT_MIN_SCORE[name]
        assert r["answerable"] + r["none_cases"] == 302
        assert 0.0 <= r["routed_accuracy"] <= r["top1_accuracy"] <= r["top3_recall"] <= 1.0
        assert r["routed_accuracy"] + r["answerable_rejected_rate"] <= 1.0
        assert 0.5 < r["auroc"] <= 1.0


def test_meaning_helps_with_paraphrases(routing_eval: dict[str, Any]) -> None:
    by_name = {r["scorer"]: r for r in routing_eval["scorers"]}
    assert by_name["hybrid"]["paraphrased"] > 100
    assert by_name["hybrid"]["paraphrased_top1_accuracy"] >= by_name["bm25f"]["paraphrased_top1_accuracy"]
    assert by_name["semantic"]["paraphrased_top1_accuracy"] > by_name["lexical"]["paraphrased_top1_accuracy"]
    assert by_name["hybrid"]["top1_accuracy"] >= by_name["bm25f"]["top1_accuracy"]


def test_the_default_scorer_holds_false_accepts_to_10_percent(routing_eval: dict[str, Any]) -> None:
    """hybrid's threshold and quick-question penalty were fitted for this (tune_intent.py); bm25f
    alone takes the bait of the requests that share a skill's everyday words."""
    by_name = {r["scorer"]: r for r in routing_eval["scorers"]}
    assert by_name["hybrid"]["none_false_accept_rate"] <= 0.10
    assert by_name["hybrid"]["none_false_accept_rate"] < by_name["bm25f"]["none_false_accept_rate"]
    assert by_name["hybrid"]["answerable_rejected_rate"] <= 0.15


def test_eval_calibrates_every_scorer(routing_eval: dict[str, Any]) -> None:
    rows = {c["scorer"]: c for c in routing_eval["calibration"]}
    assert list(rows) == list(SCORERS)
    for c in rows.values():
        assert set(c) == {
            "scorer",
            "target_false_accept",
            "threshold",
            "none_false_accept_rate",
            "routed_accuracy",
            "answerable_rejected_rate",
            "none_false_accept_interval",
        }
        assert c["target_false_accept"] == 0.15 and c["none_false_accept_rate"] <= 0.15
        low, high = c["none_false_accept_interval"]  # 62 none cases: a wide interval around the rate
        assert low < c["none_false_accept_rate"] < high and high - low > 0.1
    # hybrid's default was fitted to hold 10%, so the lowest threshold that holds 15% is no higher.
    # bm25f's and semantic's were fitted before the set had requests near a skill's topic that no
    # skill should take; they need more (benchmarks/README.md) and are left where they were.
    assert 0.0 < rows["hybrid"]["threshold"] <= DEFAULT_MIN_SCORE["hybrid"]


def test_eval_text_and_a_chosen_scorer() -> None:
    code, out, _ = run("eval", str(ROUTING_QUERIES), "--root", str(ROUTING), "--scorer", "bm25f, hybrid")
    assert code == 0 and out.startswith("79 skills, 302 cases\n")
    assert "\nbm25f " in out and "\nhybrid " in out and "\nlexical " not in out and "Calibration" not in out
    code, out, _ = run(
        "eval", str(ROUTING_QUERIES), "--root", str(ROUTING), "--scorer", "semantic", "--calibrate", "0.1"
    )
    assert code == 0 and "Calibration: the lowest min_score with none false accepts <= 10%" in out
    assert "\nsemantic  min_score " in out and " (95% CI " in out


@pytest.mark.parametrize(
    ("option", "message"),
    [
        (["--scorer", "cosine"], "unknown scorer cosine; choose from lexical, bm25f, semantic, hybrid"),
        (["--scorer", "bm25f,cosine"], "unknown scorer cosine;"),
        (["--scorer", ","], "unknown scorer (none);"),
        (["--calibrate", "1.5"], "--calibrate takes a rate from 0 to 1"),
    ],
)
def test_eval_usage_errors_exit_two(option: list[str], message: str) -> None:
    code, out, err = run("eval", str(ROUTING_QUERIES), "--root", str(ROUTING), *option)
    assert code == 2 and out == ""
    assert err.startswith("skills-lsp: error: ") and message in err


def test_eval_without_a_query_file_exits_two(tmp_path: Path) -> None:
    code, _, err = run("eval", str(tmp_path / "nope.yaml"), "--root", str(tmp_path))
    assert code == 2 and "test-query file not found" in err


# --- select -------------------------------------------------------------------------------------


def test_select_hybrid_explain_json() -> None:
    code, out, _ = run(
        "select",
        "fill in the pdf form from json data",
        "--root",
        str(EXAMPLES),
        "--scorer",
        "hybrid",
        "--explain",
        "--format",
        "json",
    )
    rows = json.loads(out)
    assert code == 0 and rows and len(rows) <= 3
    first = rows[0]
    assert first["name"] == "pdf-form-filling" and set(first) == {"name", "path", "id", "score", "explain"}
    explain = first["explain"]
    assert set(explain) == {"shared_words", "bm25f", "semantic", "task_probability", "quick_answer_penalty"}
    assert set(explain["shared_words"]) == {"name", "description", "tags", "body"}
    assert explain["shared_words"]["name"] == ["fill", "pdf", "form"]
    w = HYBRID_BM25F_WEIGHT
    fused = w * explain["bm25f"] + (1 - w) * explain["semantic"] - explain["quick_answer_penalty"]
    assert first["score"] == pytest.approx(fused, abs=2e-6)
    # Every row is selected at hybrid's default min_score.
    assert all(row["score"] >= DEFAULT_MIN_SCORE["hybrid"] for row in rows)


def test_select_hybrid_explain_text_shows_the_quick_question_penalty() -> None:
    query = "Where is the retry limit config key defined in the codebase?"
    code, out, _ = run(
        "select", query, "--root", str(EXAMPLES), "--scorer", "hybrid", "--explain", "--min-score", "0"
    )
    assert code == 0 and "code-search" in out.splitlines()[0]
    [line] = [line for line in out.splitlines() if line.strip().startswith("bm25f ")][:1]
    assert ", minus 0." in line and f"task-like, under {TASK_FLOOR:.0%}" in line
    # A task takes no penalty, and the line says nothing of one.
    task = "Fill in the PDF form with the applicant's data from this JSON file"
    code, out, _ = run("select", task, "--root", str(EXAMPLES), "--explain")
    assert code == 0 and "bm25f " in out and "minus" not in out


@pytest.mark.parametrize("scorer", ["bm25f", "semantic"])
def test_select_explain_json_for_the_other_scorers(scorer: str) -> None:
    code, out, _ = run(
        "select",
        "fill in the pdf form",
        "--root",
        str(EXAMPLES),
        "--scorer",
        scorer,
        "--explain",
        "--format",
        "json",
    )
    rows = json.loads(out)
    assert code == 0 and rows[0]["name"] == "pdf-form-filling"
    # bm25f shows the words it matched; semantic has none to show, only what it embeds.
    assert set(rows[0]["explain"]) == ({"shared_words"} if scorer == "bm25f" else {"embedded"})


def test_select_explain_text() -> None:
    code, out, _ = run(
        "select",
        "fill in the pdf form from json data",
        "--root",
        str(EXAMPLES),
        "--scorer",
        "hybrid",
        "--explain",
    )
    lines = out.splitlines()
    assert code == 0 and lines[0].startswith("1. ") and "  pdf-form-filling  (" in lines[0]
    assert "     name        fill pdf form" in lines
    assert any(line.startswith("     bm25f ") and ", semantic " in line for line in lines)
    code, out, _ = run(
        "select", "fill in the pdf form", "--root", str(EXAMPLES), "--scorer", "semantic", "--explain"
    )
    assert code == 0 and "     cosine similarity of meaning (name, description, tags, body start)" in out


def test_select_defaults_to_the_scorers_threshold() -> None:
    code, out, _ = run("select", "zzqx", "--root", str(EXAMPLES), "--scorer", "semantic")
    threshold = DEFAULT_MIN_SCORE["semantic"]
    assert code == 0 and out == f"No skill scores {threshold} or more (semantic scorer) for: zzqx\n"
    code, out, _ = run("select", "zzqx", "--root", str(EXAMPLES), "--scorer", "hybrid", "--min-score", "0.9")
    assert out == "No skill scores 0.9 or more (hybrid scorer) for: zzqx\n"


# --- without the semantic extra -----------------------------------------------------------------


@pytest.mark.usefixtures("no_embedding_model")
@pytest.mark.parametrize("scorer", ["semantic", "hybrid"])
def test_a_missing_extra_is_an_error_with_the_install_hint(scorer: str) -> None:
    code, out, err = run("select", "fill in the pdf form", "--root", str(EXAMPLES), "--scorer", scorer)
    assert (code, out) == (2, "")
    assert err.startswith("skills-lsp: error: ") and PIP_HINT in err and "Traceback" not in err
    code, out, err = run(
        "eval", str(EXAMPLES / "skill-queries.yaml"), "--root", str(EXAMPLES), "--scorer", scorer
    )
    assert (code, out) == (2, "") and PIP_HINT in err
    code, out, err = run("test", "--root", str(EXAMPLES), "--scorer", scorer)
    assert (code, out) == (2, "") and PIP_HINT in err


@pytest.mark.usefixtures("no_embedding_model")
def test_eval_without_the_extra_runs_the_scorers_it_has() -> None:
    code, out, _ = run(
        "eval", str(EXAMPLES / "skill-queries.yaml"), "--root", str(EXAMPLES), "--format", "json"
    )
    assert code == 0
    assert [r["scorer"] for r in json.loads(out)["scorers"]] == ["lexical", "bm25f"]
    code, out, _ = run("select", "fill in the pdf form", "--root", str(EXAMPLES), "--scorer", "bm25f")
    assert code == 0 and "pdf-form-filling" in out


def test_semantic_commands_keep_skill_vectors_for_the_next_run(tmp_path: Path) -> None:
    import shutil

    from skills_lsp.core.routing import semantic

    workspace = tmp_path / "ws"
    shutil.copytree(EXAMPLES, workspace)
    (workspace / "skills-lsp.toml").write_text('scorer = "semantic"\n', encoding="utf-8")
    saved = workspace / ".skills-lsp-cache" / semantic.VECTOR_FILE
    code, out, _ = run("select", "fill in the pdf form", "--root", str(workspace), "--scorer", "semantic")
    assert code == 0 and "pdf-form-filling" in out
    assert saved.is_file()  # beside the config, where `check` keeps its cache
    code, _, _ = run("test", "--root", str(workspace))
    assert code in (0, 1)
    fresh = semantic.VectorCache()  # what the next process finds: every skill of the workspace
    fresh.attach(saved)
    assert len(fresh._vectors) >= 10


def test_the_cli_does_not_load_numpy_or_the_scorers_to_check() -> None:
    # `skills-lsp check` runs on every save in CI and pre-commit: it must stay light.
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import skills_lsp.cli"],
        capture_output=True,
        text=True,
        check=True,
    )
    loaded = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()}
    assert not {"numpy", "skills_lsp.core.routing.semantic", "skills_lsp.core.routing.bm25f"} & loaded
