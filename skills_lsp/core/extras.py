"""Optional extras and how their absence is reported, without importing them (or numpy): the
CLI imports this for every command, and `skills-lsp check` must stay light."""

from __future__ import annotations

SEMANTIC_INSTALL_HINT = "pip install 'skills-lsp[semantic]'"


class ScorerUnavailable(RuntimeError):
    """The scorer needs an optional extra that is not installed (the message says which)."""
