-- The init.lua of a skill author, as the README documents it, with the test's server command.
-- test_neovim.py lays out $SKILLS_LSP_TEST_CONFIG like ~/.config/nvim after the README's install
-- step; `nvim --clean` leaves the real config folder out of 'runtimepath', so it is added here.
local config = os.getenv('SKILLS_LSP_TEST_CONFIG')
vim.opt.runtimepath:prepend(config)
vim.g.skills_lsp_cmd = vim.fn.json_decode(os.getenv('SKILLS_LSP_TEST_CMD'))

if os.getenv('SKILLS_LSP_TEST_SETUP') == '0.11' then
  -- Neovim 0.11+: <config>/lsp/skills_lsp.lua, and init.lua is editors/neovim/init-0.11.lua.
  dofile(config .. '/init.lua')
else
  -- Neovim 0.7 - 0.10: <config>/lua/skills_lsp.lua, and init.lua says:
  require('skills_lsp').setup()
end
