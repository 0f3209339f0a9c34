"""The yamlls part of the Neovim setup: `require('skills_lsp').schemas(dir)` handed to a real
yaml-language-server in a real headless Neovim gives schema hovers and key completion in
skill-queries.yaml and skill-tools.yaml (the files the VS Code extension maps the same schemas to).

Skipped without `nvim` or `yaml-language-server` (SKILLS_LSP_YAMLLS names another binary);
`.ci/run` installs both.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from nvim_process import driver_result, run_nvim

REPO = Path(__file__).resolve().parents[2]
NVIM = os.environ.get("SKILLS_LSP_NVIM") or shutil.which("nvim")
YAMLLS = os.environ.get("SKILLS_LSP_YAMLLS") or shutil.which("yaml-language-server")

pytestmark = pytest.mark.skipif(
    NVIM is None or YAMLLS is None,
    reason="nvim or yaml-language-server is not installed (npm install -g yaml-language-server)",
)

DRIVER = r"""
local out_path = os.getenv('TEST_OUT')
local root = os.getenv('TEST_ROOT')
local out = {}
local WAIT = 20000
vim.defer_fn(function()
  out.error = 'watchdog'
  vim.fn.writefile({ vim.fn.json_encode(out) }, out_path)
  vim.cmd('qa!')
end, 50000)

local function main()
  -- The documented set-up, with Neovim 0.7's own client instead of nvim-lspconfig.
  local schemas = require('skills_lsp').schemas(os.getenv('TEST_SCHEMAS'))
  out.schemas = schemas
  local id = vim.lsp.start_client({
    name = 'yamlls',
    cmd = { os.getenv('TEST_YAMLLS'), '--stdio' },
    root_dir = root,
    settings = { yaml = { schemas = schemas.yaml } },
  })
  local function open(name)
    vim.cmd('edit ' .. vim.fn.fnameescape(root .. '/' .. name))
    local bufnr = vim.api.nvim_get_current_buf()
    vim.lsp.buf_attach_client(bufnr, id)
    assert(vim.wait(WAIT, function() return vim.lsp.get_client_by_id(id).initialized end, 20), 'no init')
    return bufnr
  end
  local function request(bufnr, method, position)
    local params = { textDocument = { uri = vim.uri_from_bufnr(bufnr) }, position = position }
    -- yamlls reads the schemas after initialization: ask until an answer has something in it.
    local result
    vim.wait(WAIT, function()
      local responses = vim.lsp.buf_request_sync(bufnr, method, params, WAIT) or {}
      for _, response in pairs(responses) do result = response.result end
      if method == 'textDocument/completion' then
        return result ~= nil and #(result.items or result) > 0
      end
      return result ~= nil
    end, 200)
    return result
  end
  local function labels(result)
    local found = {}
    for _, item in ipairs(result and (result.items or result) or {}) do table.insert(found, item.label) end
    return found
  end

  local queries = open('skill-queries.yaml')
  local cases = vim.fn.search('^cases:') - 1
  local hover = request(queries, 'textDocument/hover', { line = cases, character = 1 })
  out.hover = hover and hover.contents and (hover.contents.value or hover.contents) or vim.NIL
  vim.api.nvim_buf_set_lines(queries, cases, cases, false, { '' })
  out.queries_keys = labels(request(queries, 'textDocument/completion', { line = cases, character = 0 }))

  local tools = open('skill-tools.yaml')
  local first = vim.fn.search('^tools:') - 1
  vim.api.nvim_buf_set_lines(tools, first, first, false, { '' })
  out.tools_keys = labels(request(tools, 'textDocument/completion', { line = first, character = 0 }))
  vim.lsp.stop_client(id)
end

local ok, err = xpcall(main, debug.traceback)
if not ok then out.error = err end
vim.fn.writefile({ vim.fn.json_encode(out) }, out_path)
vim.cmd('qa!')
"""


@pytest.fixture(scope="module")
def yamlls(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    assert NVIM is not None and YAMLLS is not None
    tmp = tmp_path_factory.mktemp("yamlls")
    workspace = tmp / "examples"
    shutil.copytree(REPO / "examples", workspace)
    config = tmp / "config"
    (config / "lua").mkdir(parents=True)
    shutil.copy(REPO / "editors" / "neovim" / "skills_lsp.lua", config / "lua" / "skills_lsp.lua")
    shutil.copytree(REPO / "schema", config / "schemas" / "skills-lsp")  # the documented copy
    driver = tmp / "driver.lua"
    driver.write_text(f"vim.opt.runtimepath:prepend({json.dumps(str(config))})\n" + DRIVER)
    out = tmp / "out.json"
    env = {
        **os.environ,
        "TEST_OUT": str(out),
        "TEST_ROOT": str(workspace),
        "TEST_SCHEMAS": str(config / "schemas" / "skills-lsp"),
        "TEST_YAMLLS": YAMLLS,
        "XDG_CACHE_HOME": str(tmp / "xdg" / "cache"),
        "XDG_STATE_HOME": str(tmp / "xdg" / "state"),
        "XDG_DATA_HOME": str(tmp / "xdg" / "data"),
    }
    output = run_nvim([NVIM, "--headless", "--clean", "-c", f"luafile {driver}"], workspace, env, 60)
    result = driver_result(out, output)
    return result


def test_hover_shows_the_query_file_schema(yamlls: dict[str, Any]) -> None:
    schema = json.loads((REPO / "schema" / "skill-queries.schema.json").read_text())
    assert schema["properties"]["cases"]["description"] in yamlls["hover"]


def test_key_completion_from_the_schemas(yamlls: dict[str, Any]) -> None:
    assert "defaults" in yamlls["queries_keys"], yamlls["queries_keys"]
    assert "version" in yamlls["tools_keys"], yamlls["tools_keys"]


def test_the_mapping_is_the_vscode_extensions(yamlls: dict[str, Any]) -> None:
    manifest = json.loads((REPO / "vscode-extension" / "package.json").read_text())
    expected: dict[str, set[str]] = {}
    for entry in manifest["contributes"]["yamlValidation"]:
        expected.setdefault(Path(entry["url"]).name, set()).update("**/" + m for m in entry["fileMatch"])
    found = {Path(url).name: set(globs) for url, globs in yamlls["schemas"]["yaml"].items()}
    assert found == expected
    json_found = {Path(e["url"]).name: set(e["fileMatch"]) for e in yamlls["schemas"]["json"]}
    json_expected: dict[str, set[str]] = {}
    for entry in manifest["contributes"]["jsonValidation"]:
        json_expected.setdefault(Path(entry["url"]).name, set()).add(entry["fileMatch"])
    assert json_found == json_expected
