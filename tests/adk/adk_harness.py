"""Test harness: a scripted `BaseLlm` and a runner helper (real google-adk agents and runners, no
network). Imported by the tests in this folder (pytest puts it on sys.path)."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from typing import Any

import pytest

pytest.importorskip("google.adk")

from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.events import Event
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.runners import InMemoryRunner
from google.genai import types
from pydantic import Field, PrivateAttr


@dataclass
class SeenRequest:
    """What the model was sent: the conversation, the system instruction and the declared tools."""

    contents: list[types.Content]
    system_instruction: str
    tool_names: list[str]
    tool_descriptions: dict[str, str]


def _instruction_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, types.Content):
        return "".join(p.text or "" for p in value.parts or [])
    return str(value)


class ScriptedModel(BaseLlm):
    """Returns its `turns` in order: each turn is a list of function calls (name, args) or a text."""

    model: str = "scripted"
    turns: list[list[tuple[str, dict[str, Any]]] | str] = Field(default_factory=list)
    _seen: list[SeenRequest] = PrivateAttr(default_factory=list)

    @property
    def seen(self) -> list[SeenRequest]:
        return self._seen

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        names: list[str] = []
        descriptions: dict[str, str] = {}
        for tool in llm_request.config.tools or []:
            for declaration in getattr(tool, "function_declarations", None) or []:
                names.append(declaration.name)
                descriptions[declaration.name] = declaration.description or ""
        self._seen.append(
            SeenRequest(
                [c.model_copy(deep=True) for c in llm_request.contents],
                _instruction_text(llm_request.config.system_instruction),
                names,
                descriptions,
            )
        )
        index = len(self._seen) - 1
        turn = self.turns[index] if index < len(self.turns) else "done"
        if isinstance(turn, str):
            parts = [types.Part(text=turn)]
        else:
            parts = [types.Part.from_function_call(name=name, args=args) for name, args in turn]
        yield LlmResponse(content=types.Content(role="model", parts=parts))


@dataclass
class Run:
    events: list[Event]  # what the runner yielded
    model: ScriptedModel
    state: dict[str, Any] = field(default_factory=dict)  # the stored session's state
    stored: list[Event] = field(default_factory=list)  # the stored session's events (with the user's)

    def responses(self) -> list[tuple[str, dict[str, Any]]]:
        """(tool name, response) for every function_response in the event stream, in order."""
        found = []
        for event in self.events:
            for response in event.get_function_responses():
                found.append((response.name or "", dict(response.response or {})))
        return found

    def calls(self) -> list[str]:
        return [call.name or "" for event in self.events for call in event.get_function_calls()]

    def final_text(self) -> str:
        texts = [
            p.text
            for e in self.events
            if e.content and e.author != "user"
            for p in e.content.parts or []
            if p.text
        ]
        return texts[-1] if texts else ""


async def run_agent(
    agent: LlmAgent,
    model: ScriptedModel,
    message: str | types.Content,
    plugins: list[BasePlugin] | None = None,
) -> Run:
    app = App(name="skills_lsp_test", root_agent=agent, plugins=plugins or [])
    runner = InMemoryRunner(app=app)
    session = await runner.session_service.create_session(app_name=app.name, user_id="u")
    events = [
        event
        async for event in runner.run_async(
            user_id="u",
            session_id=session.id,
            new_message=(
                message
                if isinstance(message, types.Content)
                else types.Content(role="user", parts=[types.Part(text=message)])
            ),
        )
    ]
    stored = await runner.session_service.get_session(app_name=app.name, user_id="u", session_id=session.id)
    await runner.close()
    assert stored is not None
    return Run(events, model, dict(stored.state), list(stored.events))
