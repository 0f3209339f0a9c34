"""JSON-RPC hygiene pygls 2 leaves out: every request gets exactly one answer.

pygls drops three kinds of request without answering, and a client waits for them forever:

- a request whose params do not fit the method's types (a negative line, a string where a number
  goes): pygls logs it and answers nothing; here it gets -32602 (InvalidParams) with its id;
- a request before `initialize`: pygls runs it anyway, on a workspace that does not exist yet;
  here it gets -32002 (ServerNotInitialized), as the LSP specification asks;
- a body that is not JSON: pygls logs it; here it gets -32700 (ParseError) with a null id, as
  JSON-RPC 2.0 asks (the server's `report_server_error` sends it: pygls reports it there).

Wrapped by subclassing pygls' protocol (its documented extension point, `protocol_cls`), never
by patching pygls.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from lsprotocol import types
from pygls.exceptions import (
    JsonRpcException,
    JsonRpcInvalidParams,
    JsonRpcParseError,
    JsonRpcServerNotInitialized,
)
from pygls.protocol import LanguageServerProtocol

# What a client may send before `initialize` has been answered (the specification allows no
# other request; notifications other than `exit` are dropped).
_BEFORE_INITIALIZE = frozenset({types.INITIALIZE, types.EXIT})


@dataclass(frozen=True)
class RejectedRequest:
    """A request whose params could not be read: answered with `error`, never handled."""

    id: int | str
    error: JsonRpcException


class SkillsProtocol(LanguageServerProtocol):
    """pygls' LSP protocol, answering the requests it would leave unanswered."""

    def __init__(self, server: Any, converter: Any) -> None:
        super().__init__(server, converter)
        self._initialize_seen = False

    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except JsonRpcException as error:
            request_id = data.get("id")
            method = data.get("method")
            if isinstance(request_id, (int, str)) and isinstance(method, str):
                if not isinstance(error, JsonRpcInvalidParams):
                    error = JsonRpcInvalidParams()
                return RejectedRequest(request_id, error)
            raise  # a notification or a response: nobody waits for an answer

    def handle_message(self, message: Any) -> None:
        if isinstance(message, RejectedRequest):
            self._send_response(message.id, None, message.error.to_response_error())
            return
        method = getattr(message, "method", None)
        if method == types.INITIALIZE:
            self._initialize_seen = True
        elif not self._initialize_seen and method is not None and method not in _BEFORE_INITIALIZE:
            request_id = getattr(message, "id", None)
            if request_id is not None:  # a request: answered; a notification: dropped
                error = JsonRpcServerNotInitialized()
                self._send_response(request_id, None, error.to_response_error())
            return
        super().handle_message(message)

    def send_parse_error(self, error: ValueError) -> None:
        """-32700 with `"id": null`: the body was not JSON, so no id can be read from it. Written
        as a plain dict: pygls' serialiser leaves out a None id, and JSON-RPC requires it."""
        where = f" at character {error.pos}" if isinstance(error, json.JSONDecodeError) else ""
        detail = error.msg if isinstance(error, json.JSONDecodeError) else str(error)
        self._send_data(
            {
                "jsonrpc": "2.0",
                "id": None,
                "error": {"code": JsonRpcParseError.CODE, "message": f"Parse error: {detail}{where}"},
            }
        )
