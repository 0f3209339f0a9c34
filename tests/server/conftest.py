"""A real server over stdio for every test, once per client preset (push and pull diagnostics)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"


@pytest.fixture(scope="session")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A private copy of examples/, so tests may edit files."""
    root = tmp_path_factory.mktemp("ws") / "examples"
    shutil.copytree(EXAMPLES, root)
    return root


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[sys.executable, "-m", "skills_lsp", "serve", "--stdio"]),
    params=["visual_studio_code", "neovim@0.7", "neovim"],
)
async def client(lsp_client: LanguageClient, request: pytest.FixtureRequest, workspace: Path):  # type: ignore[no-untyped-def]
    # Requests a real editor answers but pytest-lsp's client does not; counted for the tests.
    lsp_client.refreshes = {"codeLens": 0}  # type: ignore[attr-defined]
    lsp_client.registrations = []  # type: ignore[attr-defined]

    @lsp_client.feature(types.WORKSPACE_CODE_LENS_REFRESH)
    def code_lens_refresh(params: None) -> None:
        lsp_client.refreshes["codeLens"] += 1  # type: ignore[attr-defined]

    @lsp_client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register_capability(params: types.RegistrationParams) -> None:
        lsp_client.registrations.extend(params.registrations)  # type: ignore[attr-defined]

    params = types.InitializeParams(
        capabilities=client_capabilities(request.param),
        root_uri=workspace.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="examples")],
    )
    await lsp_client.initialize_session(params)
    yield
    await lsp_client.shutdown_session()
