"""A document's path as text without making its Path: a module of its own, importing nothing of
the index's, because routing's saved-state keys use it (routing/ranking.py) and a warm `select`
must not import the parser, YAML and discovery that skill_index.py brings."""

from __future__ import annotations

import os
from typing import Protocol


class Document(Protocol):
    """What path_text reads of a SkillDocument (a protocol: skill_index.py imports this module)."""

    @property
    def path(self) -> str | os.PathLike[str]: ...


def path_text(doc: Document) -> str:
    """`os.fspath(doc.path)`, without making the Path of a document from the persistent store
    until its path is asked for: the store keeps its text (`_path_text`, the fspath of the Path it
    was saved from, so the same text), and 16,000 Paths made at a warm start took 0.1 s that the
    keys and tables made of every document's path (`_paths`, a saved search's key, the listing)
    do not need."""
    state = doc.__dict__
    path = state.get("path")
    if path is None and "_path_text" in state:
        text: str = state["_path_text"]
        return text
    return os.fspath(doc.path)
