-- skills-lsp for Neovim 0.7 - 0.10, with no plugin needed (not even nvim-lspconfig).
-- (On Neovim 0.11+ prefer editors/neovim/lsp/skills_lsp.lua with vim.lsp.enable('skills_lsp').)
--
-- Install: copy this file to ~/.config/nvim/lua/skills_lsp.lua, then in init.lua:
--
--     require('skills_lsp').setup()
--
-- or, with options (every key optional):
--
--     require('skills_lsp').setup({
--       cmd = { '/path/to/venv/bin/skills-lsp', 'serve' },   -- default: vim.g.skills_lsp_cmd or
--                                                             -- { 'skills-lsp', 'serve' }
--       settings = { skillsLsp = { profile = 'claude-code', toolManifest = 'skill-tools.yaml',
--                                   scorer = 'bm25f' } },   -- keys: see docs/server.md
--       -- scorer ranks the test queries (code lenses, hovers, skillsLsp.scoreQuery): 'lexical'
--       -- (adk-skill's scorer, the default), 'bm25f', 'semantic' or 'hybrid' (the last two need
--       -- pip install 'skills-lsp[semantic]'; without it the server uses bm25f and warns).
--       codelens = true,   -- refresh code lenses on BufEnter, CursorHold and InsertLeave
--       omnifunc = true,   -- <C-x><C-o> completes from the server: sets 'omnifunc' to
--                          -- v:lua.vim.lsp.omnifunc unless you set one yourself
--       on_attach = function(client, bufnr) end,
--     })
--
-- The client attaches to SKILL.md, .skills/**/*.md, .claude/skills/**/*.md, the convention
-- files (AGENTS.md, AGENT.md, CLAUDE.md, GEMINI.md, COPILOT.md, SKILLS.md, SOUL.md), the tool
-- manifest (skill-tools.yaml) and the test-query file (skill-queries.yaml); Neovim's own
-- filetypes (markdown, yaml) are kept. One server runs per workspace root: the nearest folder
-- holding skill-tools.yaml, skill-queries.yaml, skills-lsp.toml, .skills or .git.
--
-- With nvim-lspconfig instead (its `configs` framework is deprecated but still works on 0.10):
--
--     local configs = require('lspconfig.configs')
--     if not configs.skills_lsp then
--       configs.skills_lsp = {
--         default_config = {
--           cmd = { 'skills-lsp', 'serve' },
--           filetypes = { 'markdown', 'yaml' },
--           root_dir = function(fname)
--             local skills_lsp = require('skills_lsp')  -- this file, for is_served/find_root
--             if skills_lsp.is_served(fname) then return skills_lsp.find_root(fname) end
--           end,
--           settings = { skillsLsp = {} },
--         },
--       }
--     end
--     require('lspconfig').skills_lsp.setup({})
--
-- (lspconfig calls root_dir for every markdown/yaml buffer; returning nil leaves the buffer
-- alone. Code lenses then need the refresh autocommand from `codelens_autocmd` below.)
--
-- Schemas for yamlls and jsonls (completion and hovers from the project's JSON Schemas in
-- skill-queries.*, skill-tools.*, evals/evals.json and evals/eval_queries.json, as the VS Code
-- extension contributes them).
-- Copy the checkout's schema/ folder to ~/.config/nvim/schemas/skills-lsp/, then:
--
--     local schemas = require('skills_lsp').schemas(vim.fn.stdpath('config') .. '/schemas/skills-lsp')
--     require('lspconfig').yamlls.setup({ settings = { yaml = { schemas = schemas.yaml } } })
--     require('lspconfig').jsonls.setup({ settings = { json = { schemas = schemas.json } } })
--
-- (on 0.11+: vim.lsp.config('yamlls', { settings = { yaml = { schemas = schemas.yaml } } }).)

local M = {}

local CONVENTION = {
  AGENTS = true, AGENT = true, CLAUDE = true, GEMINI = true, COPILOT = true, SKILLS = true, SOUL = true,
}
local DATA_FILES = {
  ['skill-tools.yaml'] = true, ['skill-tools.yml'] = true, ['skill-tools.json'] = true,
  ['skill-queries.yaml'] = true, ['skill-queries.yml'] = true, ['skill-queries.json'] = true,
}

M.root_markers = {
  'skill-tools.yaml', 'skill-tools.yml', 'skill-tools.json',
  'skill-queries.yaml', 'skill-queries.yml', 'skill-queries.json',
  'skills-lsp.toml', '.skills', '.git',
}

local options = { settings = { skillsLsp = {} }, codelens = true, omnifunc = true }
local clients = {} -- root directory -> client id (0.7 - 0.10)

local uv = vim.uv or vim.loop

local function basename(path)
  return vim.fn.fnamemodify(path, ':t')
end

--- True for the files the server checks (the same rules as skills_lsp.server.state.served_kind).
function M.is_served(path)
  if not path or path == '' then return false end
  path = path:gsub('\\', '/')
  local name = basename(path)
  if name == 'SKILL.md' or DATA_FILES[name] then return true end
  local skills = options.settings.skillsLsp or {}
  for _, key in ipairs({ 'toolManifest', 'queryFile' }) do
    if type(skills[key]) == 'string' and name == basename(skills[key]) then return true end
  end
  local stem = name:upper():match('^(.+)%.MD$')
  if not stem then return false end
  if CONVENTION[stem] then return true end
  local lower = path:lower()
  return lower:find('/.skills/', 1, true) ~= nil
    or (lower:find('/.claude/', 1, true) ~= nil and lower:find('/skills/', 1, true) ~= nil)
end

--- The nearest folder above `path` holding one of M.root_markers, else the file's folder.
function M.find_root(path)
  local dir = vim.fn.fnamemodify(vim.fn.fnamemodify(path, ':p'), ':h')
  local current = dir
  while true do
    for _, marker in ipairs(M.root_markers) do
      if uv.fs_stat(current .. '/' .. marker) then return current end
    end
    local parent = vim.fn.fnamemodify(current, ':h')
    if parent == current then return dir end
    current = parent
  end
end

--- Buffer-local autocommands that keep the code lenses of `bufnr` current.
function M.codelens_autocmd(bufnr)
  local group = vim.api.nvim_create_augroup('skills_lsp_codelens_' .. bufnr, { clear = true })
  vim.api.nvim_create_autocmd({ 'BufEnter', 'CursorHold', 'InsertLeave' }, {
    group = group,
    buffer = bufnr,
    callback = function() vim.lsp.codelens.refresh({ bufnr = bufnr }) end,
  })
  vim.api.nvim_buf_call(bufnr, function() vim.lsp.codelens.refresh({ bufnr = bufnr }) end)
end

local LSP_OMNIFUNC = 'v:lua.vim.lsp.omnifunc'

--- Where the buffer's 'omnifunc' was last set: the script's path, 'Lua', or nil if never.
local function omnifunc_origin(bufnr)
  local text = vim.api.nvim_buf_call(bufnr, function() return vim.fn.execute('verbose setlocal omnifunc?') end)
  return text:match('Last set from (.-) line %d+') or text:match('Last set from ([^\n]+)')
end

--- Let <C-x><C-o> ask the server (Neovim 0.7 - 0.10 set no 'omnifunc' for LSP). An 'omnifunc'
--- the user set is kept; Neovim's own filetype default gives way (markdown buffers get
--- htmlcomplete#CompleteTags from ftplugin/html.vim, which knows nothing of skills).
function M.set_omnifunc(bufnr)
  local current = vim.bo[bufnr].omnifunc
  if current == LSP_OMNIFUNC then return end
  if current ~= '' then
    local origin = omnifunc_origin(bufnr)
    local runtime = vim.env.VIMRUNTIME
    if not (origin and runtime and runtime ~= '') then return end
    runtime = vim.fn.fnamemodify(runtime, ':p')
    local full = vim.fn.fnamemodify(vim.fn.expand(origin), ':p')
    if full:sub(1, #runtime) ~= runtime then return end
  end
  vim.bo[bufnr].omnifunc = LSP_OMNIFUNC
end

local function on_attach(client, bufnr)
  if options.codelens and client.server_capabilities and client.server_capabilities.codeLensProvider then
    M.codelens_autocmd(bufnr)
  end
  if options.omnifunc and client.server_capabilities and client.server_capabilities.completionProvider then
    M.set_omnifunc(bufnr)
  end
  if options.on_attach then options.on_attach(client, bufnr) end
end

local function client_config(root)
  return {
    name = 'skills_lsp',
    cmd = options.cmd or vim.g.skills_lsp_cmd or { 'skills-lsp', 'serve' },
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = root } },
    -- 0.7 does not offer workspace/configuration, so the settings go in initializationOptions too.
    settings = options.settings,
    init_options = options.settings,
    capabilities = options.capabilities,
    on_attach = on_attach,
    on_exit = function() clients[root] = nil end,
  }
end

--- Start (or reuse) the server for the buffer's root and attach it, if the buffer is served.
function M.attach(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  if not vim.api.nvim_buf_is_valid(bufnr) or vim.bo[bufnr].buftype ~= '' then return end
  local path = vim.api.nvim_buf_get_name(bufnr)
  if not M.is_served(path) then return end
  local root = M.find_root(path)
  if vim.fn.has('nvim-0.11') == 1 then
    vim.lsp.start(client_config(root), { bufnr = bufnr }) -- reuses a client with this name and root
    return
  end
  local id = clients[root]
  if not id or not vim.lsp.get_client_by_id(id) then
    id = vim.lsp.start_client(client_config(root))
    if not id then return end
    clients[root] = id
  end
  vim.lsp.buf_attach_client(bufnr, id)
end

--- yamlls's `yaml.schemas` and jsonls's `json.schemas` for the schemas in `dir` (the checkout's
--- schema/ folder, or a copy): the same files and patterns as the VS Code extension's
--- yamlValidation / jsonValidation.
function M.schemas(dir)
  local function uri(name) return vim.uri_from_fname(vim.fn.fnamemodify(dir, ':p') .. name) end
  local queries, tools = uri('skill-queries.schema.json'), uri('tool-registry.schema.json')
  return {
    yaml = {
      [queries] = { '**/skill-queries.yaml', '**/skill-queries.yml' },
      [tools] = { '**/skill-tools.yaml', '**/skill-tools.yml' },
    },
    json = {
      { fileMatch = { 'skill-queries.json' }, url = queries },
      { fileMatch = { 'skill-tools.json' }, url = tools },
      { fileMatch = { '**/evals/evals.json' }, url = uri('evals.schema.json') },
      { fileMatch = { '**/evals/eval_queries.json' }, url = uri('eval-queries.schema.json') },
    },
  }
end

function M.setup(opts)
  options = vim.tbl_deep_extend('force', options, opts or {})
  local group = vim.api.nvim_create_augroup('skills_lsp', { clear = true })
  -- FileType (not BufRead) so that didOpen carries the buffer's language id.
  vim.api.nvim_create_autocmd('FileType', {
    group = group,
    pattern = '*',
    callback = function(args) M.attach(args.buf) end,
  })
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(bufnr) and vim.bo[bufnr].filetype ~= '' then M.attach(bufnr) end
  end
end

return M
