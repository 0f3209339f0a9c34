"""Protocol hygiene, driven by a raw JSON-RPC client over stdio (no LSP client library to smooth
things over): every request gets exactly one answer, with the error code JSON-RPC and LSP name,
and the server keeps running (server/protocol.py)."""

from __future__ import annotations

from pathlib import Path
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


def _slow_workspace(root: Path, skills: int = 400, queries: int = 1900) -> Path:
    """A workspace whose test queries take seconds to score: enough for a cancel to arrive (1,900
    cases stay under the query file's 10,000-node limit)."""
    for i in range(skills):
        folder = root / "skills" / f"skill-{i}"
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(
            f"---\nname: skill-{i}\ndescription: Handle task {i} for reports, tables and files {i}.\n---\n"
            f"# Skill {i}\n\nSteps for task {i}.\n",
            encoding="utf-8",
        )
    cases = "cases:\n" + "".join(
        f"  - query: prepare the report for task {i % skills} please\n    expect: skill-{i % skills}\n"
        for i in range(queries)
    )
    path = root / "skill-queries.yaml"
    path.write_text(cases, encoding="utf-8")
    (root / "skills-lsp.toml").write_text('scorer = "bm25f"\n', encoding="utf-8")
    return path


def test_a_cancelled_long_request_ends_with_request_cancelled_and_its_work_is_kept(
    raw: RawClient, tmp_path: Path
) -> None:
    queries = _slow_workspace(tmp_path).as_uri()
    raw.send(
        {
            "id": 1,
            "method": "initialize",
            "params": {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}},
        }
    )
    raw.send({"method": "initialized", "params": {}})
    raw.answers(1)
    lens_list = {"method": "textDocument/codeLens", "params": {"textDocument": {"uri": queries}}}
    for attempt in range(2, 200):  # until the folder is indexed and the lenses are listed
        raw.send({"id": attempt, **lens_list})
        (answer,) = [m for m in raw.answers(attempt) if m.get("id") == attempt]
        if answer.get("result"):
            break
    else:
        raise AssertionError("the queries file never got lenses")
    resolve = {
        "method": "codeLens/resolve",
        "params": {"range": answer["result"][0]["range"], "data": {"uri": queries, "case": 0}},
    }
    raw.send({"id": 500, **resolve})
    raw.send({"method": "$/cancelRequest", "params": {"id": 500}})
    cancelled = [m for m in raw.answers(attempt + 1, timeout=60) if m.get("id") == 500]
    assert len(cancelled) == 1, cancelled
    assert cancelled[0]["error"]["code"] == -32800, cancelled  # RequestCancelled
    raw.send({"id": 501, **resolve})  # the same request, not cancelled: answered with the score
    (done,) = [m for m in raw.answers(attempt + 2, timeout=120) if m.get("id") == 501]
    assert done["result"]["command"]["title"].startswith("✓ skill-0 ("), done
    assert raw.process.poll() is None
