-- Opens a skill with a safe fix in a headless Neovim that has the README's fix-on-save
-- autocommand, waits for its diagnostics, writes it (`:write`) and quits; test_neovim_fix_on_save.py
-- reads the file on disk. Every wait is bounded.
local root = os.getenv('SKILLS_LSP_TEST_ROOT')
local out_path = os.getenv('SKILLS_LSP_TEST_OUT')
local WAIT = 20000
local out = {}

local function finish()
  vim.fn.writefile({ vim.fn.json_encode(out) }, out_path)
  vim.cmd('qa!')
end

vim.defer_fn(function()
  out.error = 'watchdog: the driver did not finish within 40 s'
  finish()
end, 40000)

local function clients(bufnr)
  if vim.lsp.get_clients then return vim.lsp.get_clients({ bufnr = bufnr }) end
  local found = {}
  for _, client in pairs(vim.lsp.buf_get_clients(bufnr)) do table.insert(found, client) end
  return found
end

local ok, err = pcall(function()
  vim.cmd('edit ' .. vim.fn.fnameescape(root .. '/' .. os.getenv('SKILLS_LSP_TEST_FILE')))
  local bufnr = vim.api.nvim_get_current_buf()
  if not vim.wait(WAIT, function() return #clients(bufnr) > 0 end, 20) then
    error('no LSP client attached within ' .. WAIT .. ' ms')
  end
  local function codes()
    local found = {}
    for _, d in ipairs(vim.diagnostic.get(bufnr)) do table.insert(found, tostring(d.code)) end
    table.sort(found)
    return found
  end
  if not vim.wait(WAIT, function() return #codes() > 0 end, 20) then error('no diagnostics') end
  out.before = codes()
  vim.cmd('write')
  out.written = true
  vim.wait(WAIT, function() return #codes() ~= #out.before end, 20)
  out.after = codes()
end)
if not ok then out.error = tostring(err) end
finish()
