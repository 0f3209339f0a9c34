"""adk-skill's error kinds, one `SkillError` hierarchy (`str(error)` is the crate's Display text),
and `ScorerUnavailable` for a scorer whose optional extra is not installed."""

from __future__ import annotations

import os


class SkillError(Exception):
    """Base of every error the skill engine raises."""


class Io(SkillError):
    def __init__(self, error: OSError) -> None:
        self.error = error
        super().__init__(f"io error: {error}")


class Yaml(SkillError):
    def __init__(self, message: str) -> None:
        self.detail = message
        super().__init__(f"yaml parse error: {message}")


class InvalidFrontmatter(SkillError):
    def __init__(self, path: str | os.PathLike[str], message: str) -> None:
        self.path = str(path)
        self.message = message
        super().__init__(f"invalid skill frontmatter in {self.path}: {message}")


class MissingField(SkillError):
    def __init__(self, path: str | os.PathLike[str], field: str) -> None:
        self.path = str(path)
        self.field = field
        super().__init__(f"missing required field `{field}` in {self.path}")


class InvalidSkillsRoot(SkillError):
    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = str(path)
        super().__init__(f"invalid skills root, expected directory: {self.path}")


class Validation(SkillError):
    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(f"skill validation error: {message}")


class IndexError_(SkillError):
    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(f"index error: {message}")


SEMANTIC_INSTALL_HINT = "pip install 'skills-lsp[semantic]'"


class ScorerUnavailable(RuntimeError):
    """The scorer needs an optional extra that is not installed (the message says which)."""
