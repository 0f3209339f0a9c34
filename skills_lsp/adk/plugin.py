"""`SkillInjectorPlugin`: the core's prompt injection applied to each user message in ADK.

On `on_user_message_callback` the message's text parts go through
`skills_lsp.core.engine.inject.apply_skill_injection` (top match under the selection policy, the
`[skill:<name>]` block cut to `max_injected_chars`, a blank line, then the user's text). The
rewritten message is what the runner stores as the user event and what the model receives.

The injection is recorded where it can be seen: the user event's text begins with the block, the
plugin keeps a list of `Injection`s, and on the invocation's first model call the record is
written to session state under `state_key` (so it travels as a `state_delta` in the event stream).
"""

from __future__ import annotations

from collections import deque
from dataclasses import asdict, dataclass
from typing import Any

from google.adk.agents.callback_context import CallbackContext
from google.adk.agents.invocation_context import InvocationContext
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.plugins.base_plugin import BasePlugin
from google.genai import types

from skills_lsp.adk.tools import SkillSource, skill_index
from skills_lsp.core.engine.inject import DEFAULT_MAX_INJECTED_CHARS, Content, Part, apply_skill_injection
from skills_lsp.core.routing.scorer import SelectionPolicy

DEFAULT_STATE_KEY = "skills_lsp_injection"


@dataclass(frozen=True)
class Injection:
    """One injected skill: which, with what score, in which invocation, and the block itself."""

    invocation_id: str
    skill: str
    skill_id: str
    score: float
    block: str

    def to_state(self) -> dict[str, Any]:
        return asdict(self)


RECENT = 100  # injections kept on the plugin for inspection


class SkillInjectorPlugin(BasePlugin):
    """Put the best-matching skill in front of each user message (the core's injection)."""

    def __init__(
        self,
        source: SkillSource,
        *,
        policy: SelectionPolicy | None = None,
        max_injected_chars: int = DEFAULT_MAX_INJECTED_CHARS,
        state_key: str | None = DEFAULT_STATE_KEY,
        profile: str | None = None,
        name: str = "skills_lsp_injector",
    ) -> None:
        super().__init__(name=name)
        self.index = skill_index(source, profile)
        self.policy = policy or SelectionPolicy()
        self.max_injected_chars = max_injected_chars
        self.state_key = state_key
        # The most recent injections, for inspection; the session state is the durable record, and a
        # long-running server must not keep one entry per message for ever.
        self.injections: deque[Injection] = deque(maxlen=RECENT)
        self._pending: dict[str, Injection] = {}

    async def on_user_message_callback(
        self, *, invocation_context: InvocationContext, user_message: types.Content
    ) -> types.Content | None:
        parts = user_message.parts or []
        core = Content(
            role=user_message.role or "",
            parts=[Part(text=p.text) if p.text is not None else Part(inline_data=p) for p in parts],
        )
        match = apply_skill_injection(core, self.index, self.policy, self.max_injected_chars)
        if match is None:
            return None
        new_parts: list[types.Part] = []
        for original, rewritten in zip(parts, core.parts, strict=True):
            if original.text is not None and rewritten.text != original.text:
                new_parts.append(original.model_copy(update={"text": rewritten.text}))
            else:
                new_parts.append(original)
        document = self.index.find_by_id(match.skill.id)
        block = document.engineer_prompt_block(self.max_injected_chars) if document is not None else ""
        record = Injection(
            invocation_context.invocation_id, match.skill.name, match.skill.id, match.score, block
        )
        self.injections.append(record)
        self._pending[invocation_context.invocation_id] = record
        return user_message.model_copy(update={"parts": new_parts})

    async def before_model_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest
    ) -> LlmResponse | None:
        record = self._pending.pop(callback_context.invocation_id, None)
        if record is not None and self.state_key is not None:
            callback_context.state[self.state_key] = record.to_state()
        return None

    async def after_run_callback(self, *, invocation_context: InvocationContext) -> None:
        self._pending.pop(invocation_context.invocation_id, None)  # the model was never called
