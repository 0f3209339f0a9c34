"""The language server: pygls on top of skills_lsp.core, one module per LSP feature."""
