-- Neovim 0.11+: with editors/neovim/lsp/skills_lsp.lua copied to ~/.config/nvim/lsp/, this is
-- all init.lua needs.

-- Optional: where the server is, if `skills-lsp` is not on PATH, and its settings.
-- vim.lsp.config('skills_lsp', {
--   cmd = { vim.fn.expand('~/.venvs/skills/bin/skills-lsp'), 'serve' },
--   settings = { skillsLsp = { profile = 'claude-code', scorer = 'bm25f' } },
--   -- scorer: 'lexical', 'bm25f', 'semantic' or 'hybrid' (default: lexical for .skills/ only,
--   -- else hybrid, or bm25f without the extra; the last two need
--   -- pip install 'skills-lsp[semantic]'); keys: see docs/server.md
-- })

vim.lsp.enable('skills_lsp')

-- Code lenses (test-query results) and the catalog-cost inlay hint.
vim.api.nvim_create_autocmd('LspAttach', {
  group = vim.api.nvim_create_augroup('skills_lsp_attach', { clear = true }),
  callback = function(args)
    local client = vim.lsp.get_client_by_id(args.data.client_id)
    if not client or client.name ~= 'skills_lsp' then return end
    local bufnr = args.buf
    if vim.lsp.codelens.enable then -- Neovim 0.12+
      vim.lsp.codelens.enable(true, { bufnr = bufnr })
    else
      vim.api.nvim_create_autocmd({ 'BufEnter', 'CursorHold', 'InsertLeave' }, {
        group = vim.api.nvim_create_augroup('skills_lsp_codelens_' .. bufnr, { clear = true }),
        buffer = bufnr,
        callback = function() vim.lsp.codelens.refresh({ bufnr = bufnr }) end,
      })
      vim.lsp.codelens.refresh({ bufnr = bufnr })
    end
    vim.lsp.inlay_hint.enable(true, { bufnr = bufnr })
    -- <C-x><C-o>: Neovim points 'omnifunc' at the server only where none is set, and markdown
    -- buffers get htmlcomplete#CompleteTags from the runtime's ftplugin/html.vim.
    local info = vim.api.nvim_get_option_info2('omnifunc', { buf = bufnr })
    local script = info.last_set_sid > 0 and vim.fn.getscriptinfo({ sid = info.last_set_sid })[1]
    local runtime = vim.fn.fnamemodify(vim.env.VIMRUNTIME or '', ':p')
    if vim.bo[bufnr].omnifunc == '' or (script and runtime ~= '' and vim.startswith(script.name, runtime)) then
      vim.bo[bufnr].omnifunc = 'v:lua.vim.lsp.omnifunc'
    end
  end,
})
