-- Drives a headless Neovim through the editor features skills-lsp offers and writes what the
-- editor saw as JSON to $SKILLS_LSP_TEST_OUT (see test_neovim.py). Every wait is bounded.
local root = os.getenv('SKILLS_LSP_TEST_ROOT')
local out_path = os.getenv('SKILLS_LSP_TEST_OUT')
local expected_codes = vim.fn.json_decode(os.getenv('SKILLS_LSP_TEST_CODES'))
local WAIT = 20000
local uv = vim.uv or vim.loop
local out = { steps = {} }

local function write_and_quit()
  vim.fn.writefile({ vim.fn.json_encode(out) }, out_path)
  vim.cmd('qa!')
end

-- Whatever happens, leave within 50 s (the test kills nvim at 60 s).
vim.defer_fn(function()
  out.error = 'watchdog: the driver did not finish within 50 s'
  write_and_quit()
end, 50000)

local function step(name) table.insert(out.steps, name) end

local function buf_clients(bufnr)
  if vim.lsp.get_clients then return vim.lsp.get_clients({ bufnr = bufnr }) end
  local found = {}
  for _, client in pairs(vim.lsp.buf_get_clients(bufnr)) do table.insert(found, client) end
  return found
end

local function all_clients()
  if vim.lsp.get_clients then return vim.lsp.get_clients() end
  return vim.lsp.get_active_clients()
end

local function open(relative)
  vim.cmd('edit ' .. vim.fn.fnameescape(root .. '/' .. relative))
  local bufnr = vim.api.nvim_get_current_buf()
  if not vim.wait(WAIT, function() return #buf_clients(bufnr) > 0 end, 20) then
    error('no LSP client attached to ' .. relative .. ' within ' .. WAIT .. ' ms')
  end
  return bufnr
end

local function request(bufnr, method, params)
  local responses, err = vim.lsp.buf_request_sync(bufnr, method, params, WAIT)
  if not responses then error(method .. ': ' .. tostring(err)) end
  for _, response in pairs(responses) do
    if response.error then error(method .. ': ' .. vim.inspect(response.error)) end
    return response.result
  end
end

local function completion_labels(bufnr, line, character)
  local result = request(bufnr, 'textDocument/completion', {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) },
    position = { line = line, character = character },
  })
  local items = result and (result.items or result) or {}
  local labels = {}
  for _, item in ipairs(items) do table.insert(labels, item.label) end
  return labels
end

local function find_line(bufnr, pattern)
  for index, text in ipairs(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)) do
    if text:match(pattern) then return index - 1, text end
  end
  error('no line matches ' .. pattern)
end

local function pending(bufnr, method)
  for _, client in ipairs(all_clients()) do
    for _, req in pairs(client.requests or {}) do
      if req.type == 'pending' and req.bufnr == bufnr and (method == nil or req.method == method) then
        return true
      end
    end
  end
  return false
end

-- Until no request is in flight, so lenses are resolved and shutdown comes last.
local function settle()
  vim.wait(WAIT, function()
    for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
      if pending(bufnr) then return false end
    end
    return true
  end, 20)
end

local function codes(bufnr)
  local found = {}
  for _, diagnostic in ipairs(vim.diagnostic.get(bufnr)) do found[tostring(diagnostic.code)] = true end
  return found
end

local function resolved_lenses(bufnr)
  local lenses = vim.lsp.codelens.get(bufnr)
  if #lenses == 0 then return nil end
  local titles = {}
  for _, lens in ipairs(lenses) do
    if not lens.command then return nil end
    table.insert(titles, lens.command.title)
  end
  return titles
end

local function main()
  out.nvim = vim.version()

  step('diagnostics')
  local skill = open('skills/broken-name-mismatch/SKILL.md')
  vim.wait(WAIT, function()
    local have = codes(skill)
    for _, code in ipairs(expected_codes) do
      if not have[code] then return false end
    end
    return true
  end, 20)
  out.diagnostics = {}
  for _, d in ipairs(vim.diagnostic.get(skill)) do
    table.insert(out.diagnostics, { code = d.code, lnum = d.lnum, col = d.col, severity = d.severity,
      source = d.source, message = d.message })
  end

  step('hover')
  local line = find_line(skill, '^description:')
  local hover = request(skill, 'textDocument/hover', {
    textDocument = { uri = vim.uri_from_bufnr(skill) },
    position = { line = line, character = 3 },
  })
  out.hover = hover and hover.contents and (hover.contents.value or hover.contents) or vim.NIL

  step('completion: list form')
  local listed = open('.skills/code-search.md')
  local last = find_line(listed, '^  %- list_directory')
  vim.api.nvim_buf_set_lines(listed, last + 1, last + 1, false, { '  - ' })
  out.completion_list = completion_labels(listed, last + 1, 4)

  step('completion: string form')
  local inline = open('skills/csv-data-cleaning/SKILL.md')
  local tools_line, text = find_line(inline, '^allowed%-tools:')
  vim.api.nvim_buf_set_lines(inline, tools_line, tools_line + 1, false, { text .. ' ' })
  out.completion_string = completion_labels(inline, tools_line, #text + 1)

  step('completion: <C-x><C-o>')
  -- As an author does it: at the end of `allowed-tools`, Insert mode, a space, then <C-x><C-o>.
  -- feedkeys with 'x!' stays in Insert mode until the timer below has seen the popup and left.
  vim.api.nvim_buf_set_lines(inline, tools_line, tools_line + 1, false, { text })
  vim.api.nvim_win_set_cursor(0, { tools_line + 1, 0 })
  out.omnifunc = vim.bo[inline].omnifunc
  local started = uv.now()
  local function poll()
    local info = vim.fn.complete_info({ 'mode', 'pum_visible', 'items' })
    if (info.pum_visible == 1 and #info.items > 0) or uv.now() - started > WAIT then
      local words = {}
      for _, item in ipairs(info.items) do table.insert(words, item.word) end
      out.omni = { mode = info.mode, pum_visible = info.pum_visible, words = words,
        line = vim.api.nvim_get_current_line() }
      vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes('<C-e><Esc>', true, false, true), 'n', false)
    else
      vim.defer_fn(poll, 20)
    end
  end
  vim.defer_fn(poll, 20)
  vim.fn.feedkeys(vim.api.nvim_replace_termcodes('A <C-x><C-o>', true, false, true), 'tx!')
  out.mode_after = vim.api.nvim_get_mode().mode
  out.line_after = vim.api.nvim_buf_get_lines(inline, tools_line, tools_line + 1, false)[1]
  if os.getenv('SKILLS_LSP_TEST_SETUP') == '0.7' then
    -- The user's own 'omnifunc' is kept; one from Neovim's runtime files gives way.
    local skills_lsp = require('skills_lsp')
    local mine = vim.api.nvim_create_buf(false, true)
    vim.bo[mine].omnifunc = 'syntaxcomplete#Complete'
    skills_lsp.set_omnifunc(mine)
    local empty = vim.api.nvim_create_buf(false, true)
    skills_lsp.set_omnifunc(empty)
    out.omnifunc_kept = vim.bo[mine].omnifunc
    out.omnifunc_empty = vim.bo[empty].omnifunc
  end

  step('code lens')
  local queries = open('skill-queries.yaml')
  vim.lsp.codelens.refresh({ bufnr = queries }) -- 0.7 - 0.9 ignore the argument: current buffer
  vim.wait(WAIT, function() return resolved_lenses(queries) ~= nil end, 20)
  out.codelens_queries = resolved_lenses(queries) or vim.lsp.codelens.get(queries)
  -- BufEnter: the setup's autocommand asks for this buffer's lenses again. (Settle first:
  -- Neovim skips a refresh while one for the buffer is in flight.)
  settle()
  vim.cmd('buffer ' .. skill)
  out.codelens_on_bufenter = pending(skill, 'textDocument/codeLens')
  settle()
  out.codelens_skill = resolved_lenses(skill) or vim.lsp.codelens.get(skill)

  step('clients')
  out.clients = {}
  for _, client in ipairs(all_clients()) do
    table.insert(out.clients, { name = client.name, root_dir = client.config.root_dir })
  end

  step('shutdown')
  settle()
  vim.lsp.stop_client(all_clients())
  out.stopped = vim.wait(5000, function() return #all_clients() == 0 end, 20)
end

local ok, err = xpcall(main, debug.traceback)
if not ok then out.error = err end
write_and_quit()
