"""ASCII case mapping as Rust does it, in a module of its own: the scorers need it at query
time without the classes of `core.model` (a warm `select` imports no more than it uses)."""

from __future__ import annotations

_TO_ASCII_LOWER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}
_TO_ASCII_UPPER = {c: c - 32 for c in range(ord("a"), ord("z") + 1)}


def ascii_lower(text: str) -> str:
    """Rust's `to_ascii_lowercase`: only A-Z change (`str.lower()` also folds `K` to `k`)."""
    return text.translate(_TO_ASCII_LOWER)


def ascii_upper(text: str) -> str:
    """Rust's `to_ascii_uppercase`: only a-z change (`str.upper()` also turns `ſ` into `S`)."""
    return text.translate(_TO_ASCII_UPPER)
