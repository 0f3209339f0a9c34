"""Stage 1, files: which files make up a workspace (discovery, including adk-skill's exact walk)
and which settings apply to them (`[tool.skills-lsp]`). Imports only the shared vocabulary."""
