"""skills-lsp: validator, language server and CLI for agent skills."""

__version__ = "0.1.0"
