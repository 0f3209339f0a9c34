"""A real server over stdio, once per client preset (push and pull diagnostics).

Starting the server costs about a second, so one server per preset serves the whole session;
pytest runs every test of one preset, then the next. Tests therefore share the server and the
workspace (a copy of `examples/`): each test opens and closes its own documents
(`lsp_helpers.opened`), gives anything it creates a unique name, and puts back (and tells the
server about) whatever it changes on disk. Test modules run in the session's event loop:
`pytestmark = pytest.mark.asyncio(loop_scope="session")`.
"""

from __future__ import annotations

import asyncio
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
PRESETS = ["visual_studio_code", "neovim@0.7", "neovim"]
STARTUP_TIMEOUT = 15.0


@pytest.fixture(scope="session")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A private copy of examples/, so tests may edit files. Its routing tests run with the
    `lexical` scorer, named in a config file: what these tests check (lenses, hovers, routing
    diagnostics as files change) was written against adk-skill's formula, whose scores do not
    depend on an embedding model. tests/server/test_scorers.py covers the other scorers and
    the default per profile."""
    root = tmp_path_factory.mktemp("ws") / "examples"
    shutil.copytree(EXAMPLES, root)
    (root / "skills-lsp.toml").write_text('scorer = "lexical"\n', encoding="utf-8")
    return root


async def _until(condition: Callable[[], bool], what: str) -> None:
    async def wait() -> None:
        while not condition():
            await asyncio.sleep(0.02)

    try:
        await asyncio.wait_for(wait(), STARTUP_TIMEOUT)
    except asyncio.TimeoutError:
        raise AssertionError(f"the server did not finish starting: no {what}") from None


def _indexed(client: LanguageClient) -> bool:
    return any(
        isinstance(report, types.WorkDoneProgressEnd)
        for reports in client.progress_reports.values()
        for report in reports
    )


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[sys.executable, "-m", "skills_lsp", "serve", "--stdio"]),
    params=PRESETS,
    scope="session",
)
async def client(lsp_client: LanguageClient, request: pytest.FixtureRequest, workspace: Path):  # type: ignore[no-untyped-def]
    # Requests a real editor answers but pytest-lsp's client does not; counted for the tests.
    lsp_client.refreshes = {"codeLens": 0}  # type: ignore[attr-defined]
    lsp_client.registrations = []  # type: ignore[attr-defined]
    # Every publication, with its document version (pytest-lsp keeps only the last diagnostics).
    lsp_client.published = {}  # type: ignore[attr-defined]
    keep = lsp_client.protocol.fm.features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS]

    def record(params: types.PublishDiagnosticsParams) -> None:
        lsp_client.published.setdefault(params.uri, []).append(params)  # type: ignore[attr-defined]
        keep(params)

    lsp_client.protocol.fm.features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = record

    @lsp_client.feature(types.WORKSPACE_CODE_LENS_REFRESH)
    def code_lens_refresh(params: None) -> None:
        lsp_client.refreshes["codeLens"] += 1  # type: ignore[attr-defined]

    @lsp_client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register_capability(params: types.RegistrationParams) -> None:
        lsp_client.registrations.extend(params.registrations)  # type: ignore[attr-defined]

    capabilities = client_capabilities(request.param)
    params = types.InitializeParams(
        capabilities=capabilities,
        root_uri=workspace.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="examples")],
    )
    lsp_client.init_result = await lsp_client.initialize_session(params)  # type: ignore[attr-defined]
    # `initialized` indexes the folder (with work-done progress: every preset supports it), then
    # registers file watching and asks for a code-lens refresh; wait for the end of all that, so
    # tests see a fully indexed workspace.
    await _until(lambda: _indexed(lsp_client), "end of the indexing progress")
    workspace_caps = capabilities.workspace
    if workspace_caps is not None and workspace_caps.code_lens and workspace_caps.code_lens.refresh_support:
        await _until(lambda: lsp_client.refreshes["codeLens"] >= 1, "code-lens refresh")  # type: ignore[attr-defined]
    yield
    await lsp_client.shutdown_session()


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    """The protocol fuzz's seed and message count, whatever the outcome (replay: set
    SKILLS_LSP_FUZZ_SEED)."""
    from raw_client import FUZZ_SUMMARY

    summary = config.stash.get(FUZZ_SUMMARY, None)
    if summary is not None:
        terminalreporter.write_line(summary)
