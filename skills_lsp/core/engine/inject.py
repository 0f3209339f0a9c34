"""adk-skill 0.6.0's prompt injection: put the best skill's body in front of a user message.

`Content(role, parts)` mirrors google-genai's shape: a part is text (`Part(text=...)`) or
anything else (`Part(inline_data=...)`, a function call, thinking, ...), which the crate never
reads.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skills_lsp.core.index.skill_index import SkillIndex, load_skill_index, load_skill_index_with_extras
from skills_lsp.core.parse.skill_parser import rust_trim
from skills_lsp.core.routing.scorer import SelectionPolicy, SkillMatch, select_skills

DEFAULT_MAX_INJECTED_CHARS = 2000


@dataclass
class Part:
    text: str | None = None
    inline_data: Any = None

    @property
    def is_text(self) -> bool:
        return self.text is not None


@dataclass
class Content:
    role: str
    parts: list[Part] = field(default_factory=list)


def select_skill_prompt_block(
    index: SkillIndex,
    query: str,
    policy: SelectionPolicy | None = None,
    max_injected_chars: int = DEFAULT_MAX_INJECTED_CHARS,
) -> tuple[SkillMatch, str] | None:
    """The top match for `query` and its `[skill:<name>]` block, or None."""
    matches = select_skills(index, query, policy or SelectionPolicy())
    if not matches:
        return None
    top = matches[0]
    document = index.find_by_id(top.skill.id)
    if document is None:  # pragma: no cover - a match always comes from the index
        return None
    return top, document.engineer_prompt_block(max_injected_chars)


def apply_skill_injection(
    content: Content,
    index: SkillIndex,
    policy: SelectionPolicy | None = None,
    max_injected_chars: int = DEFAULT_MAX_INJECTED_CHARS,
) -> SkillMatch | None:
    """Inject the best skill into a user message, in place; the match, or None (unchanged).

    Only role `user` (exact) is touched. The query is the text parts joined with newlines; the
    block and a blank line go before the *first* text part's text; other parts stay as they are.
    """
    if content.role != "user" or index.is_empty():
        return None
    texts = [p.text for p in content.parts if p.text is not None]
    text = "\n".join(texts)
    if not rust_trim(text):  # Rust's trim: U+001C..U+001F are not whitespace to it
        return None
    selected = select_skill_prompt_block(index, text, policy, max_injected_chars)
    if selected is None:
        return None
    match, block = selected
    injected = f"{block}\n\n{text}"
    for part in content.parts:
        if part.text is not None:
            part.text = injected
            break
    else:  # pragma: no cover - unreachable: a non-blank text came from some text part
        content.parts.insert(0, Part(text=injected))
    return match


@dataclass
class SkillInjectorConfig:
    policy: SelectionPolicy = field(default_factory=SelectionPolicy)
    max_injected_chars: int = DEFAULT_MAX_INJECTED_CHARS
    global_skills_dir: str | os.PathLike[str] | None = None
    extra_paths: list[str | os.PathLike[str]] = field(default_factory=list)


class SkillInjector:
    """An index snapshot plus the policy and budget used to inject into each user message."""

    def __init__(self, index: SkillIndex, config: SkillInjectorConfig | None = None) -> None:
        self._index = index
        self._config = config or SkillInjectorConfig()

    @classmethod
    def from_root(
        cls, root: str | os.PathLike[str], config: SkillInjectorConfig | None = None
    ) -> SkillInjector:
        config = config or SkillInjectorConfig()
        extras: Sequence[str | os.PathLike[str]] = list(config.extra_paths)
        if config.global_skills_dir is not None:
            extras = [*extras, config.global_skills_dir]
        index = load_skill_index_with_extras(root, extras) if extras else load_skill_index(Path(root))
        return cls(index, config)

    @classmethod
    def from_index(cls, index: SkillIndex, config: SkillInjectorConfig | None = None) -> SkillInjector:
        return cls(index, config)

    def index(self) -> SkillIndex:
        return self._index

    def policy(self) -> SelectionPolicy:
        return self._config.policy

    def max_injected_chars(self) -> int:
        return self._config.max_injected_chars

    def inject(self, content: Content) -> SkillMatch | None:
        return apply_skill_injection(
            content, self._index, self._config.policy, self._config.max_injected_chars
        )
