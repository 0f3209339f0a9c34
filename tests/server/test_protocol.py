"""Protocol hygiene, driven by a raw JSON-RPC client over stdio (no LSP client library to smooth
things over): every request gets exactly one answer, with the error code JSON-RPC and LSP name,
and the server keeps running (server/protocol.py)."""

from __future__ import annotations

from typing import Any

import pytest
from raw_client import EXAMPLES, RawClient


@pytest.fixture()
def raw() -> Any:
    client = RawClient()
    try:
        yield client
    finally:
        client.close()


def hover(request_id: int, line: Any, character: Any) -> dict[str, Any]:
    uri = (EXAMPLES / "skills" / "pdf-form-filling" / "SKILL.md").as_uri()
    return {
        "id": request_id,
        "method": "textDocument/hover",
        "params": {"textDocument": {"uri": uri}, "position": {"line": line, "character": character}},
    }


def test_every_request_gets_exactly_one_answer_with_the_right_code(raw: RawClient) -> None:
    raw.send(hover(1, 0, 0))  # before initialize
    raw.send_body(b'{"jsonrpc": "2.0", "id": 99, "method": ')  # not JSON
    raw.send(
        {
            "id": 2,
            "method": "initialize",
            "params": {"processId": None, "rootUri": EXAMPLES.as_uri(), "capabilities": {}},
        }
    )
    raw.send({"method": "initialized", "params": {}})
    raw.send(hover(3, -1, 0))  # a negative line
    raw.send(hover(4, 0, "seven"))  # a string where a number goes
    raw.send({"id": 5, "method": "skills/noSuchMethod", "params": {}})
    raw.send({"id": 6, "method": "shutdown"})
    answers = raw.answers(7)
    by_id: dict[Any, list[dict[str, Any]]] = {}
    for answer in answers:
        by_id.setdefault(answer["id"], []).append(answer)
    assert sorted(by_id, key=str) == sorted([1, None, 2, 3, 4, 5, 6], key=str)
    assert all(len(group) == 1 for group in by_id.values()), by_id  # exactly one answer each
    code = {key: group[0].get("error", {}).get("code") for key, group in by_id.items()}
    assert code[1] == -32002  # ServerNotInitialized
    assert code[None] == -32700  # ParseError, with a null id: none could be read
    assert "result" in by_id[2][0] and by_id[2][0]["result"]["serverInfo"]["name"] == "skills-lsp"
    assert code[3] == code[4] == -32602  # InvalidParams
    assert code[5] == -32601  # MethodNotFound
    assert by_id[6][0] == {"jsonrpc": "2.0", "id": 6, "result": None}  # still running, and answering
    raw.send({"method": "exit"})
    assert raw.process.wait(timeout=10) == 0


def test_a_notification_before_initialize_is_dropped_and_the_server_goes_on(raw: RawClient) -> None:
    raw.send({"method": "textDocument/didOpen", "params": {"textDocument": {"uri": "file:///x.md"}}})
    raw.send_body(b"\xff\xfe not even text")
    raw.send(
        {
            "id": 1,
            "method": "initialize",
            "params": {"processId": None, "rootUri": None, "capabilities": {}},
        }
    )
    answers = raw.answers(2)
    assert [a["id"] for a in answers] == [None, 1]
    assert answers[0]["error"]["code"] == -32700 and "result" in answers[1]
