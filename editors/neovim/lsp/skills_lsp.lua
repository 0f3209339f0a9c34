-- skills-lsp for Neovim 0.11+ (vim.lsp.config). Copy to ~/.config/nvim/lsp/skills_lsp.lua and
-- call vim.lsp.enable('skills_lsp') from init.lua (see ../init-0.11.lua). Override any field
-- with vim.lsp.config('skills_lsp', { ... }), e.g. cmd = { '/path/to/venv/bin/skills-lsp', 'serve' }
-- (or set vim.g.skills_lsp_cmd before vim.lsp.enable).
--
-- The server checks SKILL.md, .skills/**/*.md, .claude/skills/**/*.md, the convention files
-- (AGENTS.md, AGENT.md, CLAUDE.md, GEMINI.md, COPILOT.md, SKILLS.md, SOUL.md), skill-tools.yaml
-- and skill-queries.yaml. Those keep Neovim's filetypes (markdown, yaml, json); root_dir below
-- starts the client only for them, not for every Markdown or YAML file.

local root_markers = {
  'skill-tools.yaml', 'skill-tools.yml', 'skill-tools.json',
  'skill-queries.yaml', 'skill-queries.yml', 'skill-queries.json',
  'skills-lsp.toml', '.skills', '.git',
}
local convention = {
  AGENTS = true, AGENT = true, CLAUDE = true, GEMINI = true, COPILOT = true, SKILLS = true, SOUL = true,
}

local function served(path)
  path = path:gsub('\\', '/')
  local name = vim.fs.basename(path)
  if name == 'SKILL.md' or name:match('^skill%-tools%.') or name:match('^skill%-queries%.') then
    return true
  end
  local stem = name:upper():match('^(.+)%.MD$')
  if not stem then return false end
  local lower = path:lower()
  return convention[stem] or lower:find('/.skills/', 1, true) ~= nil
    or (lower:find('/.claude/', 1, true) ~= nil and lower:find('/skills/', 1, true) ~= nil)
end

return {
  cmd = vim.g.skills_lsp_cmd or { 'skills-lsp', 'serve' },
  filetypes = { 'markdown', 'yaml', 'json' },
  root_markers = root_markers, -- documents the markers; root_dir below takes precedence
  root_dir = function(bufnr, on_dir)
    local path = vim.api.nvim_buf_get_name(bufnr)
    if path ~= '' and served(path) then
      on_dir(vim.fs.root(bufnr, root_markers) or vim.fs.dirname(path))
    end
  end,
  settings = {
    -- profile, scorer, toolManifest, queryFile, select, ignore: see docs/server.md
    -- scorer ranks the test queries (code lenses, hovers, skillsLsp.scoreQuery): 'lexical'
    -- (adk-skill's scorer, the default), 'bm25f', 'semantic' or 'hybrid' (the last two need
    -- pip install 'skills-lsp[semantic]'; without it the server uses bm25f and warns).
    -- e.g. skillsLsp = { profile = 'claude-code', scorer = 'bm25f' }
    skillsLsp = {},
  },
}
