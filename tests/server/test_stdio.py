"""The chunked stdin reader (server/stdio.py): pygls' own message loop over it reads every
message, in order, however the pipe cuts the bytes; a burst written at once to a real server
gets exactly one answer per request."""

from __future__ import annotations

import asyncio
import io
import json
import random
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from pygls.io_ import run_async
from raw_client import EXAMPLES, RawClient

from skills_lsp.server.stdio import ChunkedStdinReader


class Pieces(io.RawIOBase):
    """A pipe that hands out its bytes in the given pieces, one per read1."""

    def __init__(self, pieces: list[bytes]) -> None:
        self.pieces = list(pieces)

    def read1(self, size: int = -1) -> bytes:
        return self.pieces.pop(0) if self.pieces else b""


class Collector:
    """The two methods of pygls' protocol that its message loop calls."""

    def __init__(self) -> None:
        self.messages: list[Any] = []

    def structure_message(self, data: dict[str, Any]) -> dict[str, Any]:
        return data

    def handle_message(self, message: Any) -> None:
        self.messages.append(message)


def framed(messages: list[dict[str, Any]]) -> bytes:
    out = b""
    for message in messages:
        body = json.dumps(message, ensure_ascii=False).encode()
        out += b"Content-Length: %d\r\n\r\n" % len(body) + body
    return out


def read_all(pieces: list[bytes]) -> list[Any]:
    collector = Collector()
    with ThreadPoolExecutor(1) as pool:
        reader = ChunkedStdinReader(Pieces(pieces), pool)  # type: ignore[arg-type]
        asyncio.run(run_async(threading.Event(), reader, collector))  # type: ignore[arg-type]
    return collector.messages


def test_every_message_is_read_in_order_however_the_pipe_cuts_it() -> None:
    messages = [
        {"jsonrpc": "2.0", "id": i, "params": {"text": "é\n" * (i % 7) + "x" * i}} for i in range(300)
    ]
    data = framed(messages)
    rng = random.Random(7)
    for _ in range(40):
        cuts = sorted(rng.sample(range(1, len(data)), rng.randint(0, 200)))
        pieces = [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True)]
        assert read_all(pieces) == messages
    assert read_all([data]) == messages  # the whole burst in one chunk
    assert read_all([bytes([b]) for b in data[:2000]]) == messages[: len(read_all([data[:2000]]))]


def test_input_that_ends_mid_message_ends_the_loop_with_the_whole_messages_read() -> None:
    messages = [{"jsonrpc": "2.0", "id": i} for i in range(3)]
    data = framed(messages)
    assert read_all([data[:-5]]) == messages[:2]
    assert read_all([]) == []


def test_a_burst_written_at_once_gets_one_answer_per_request() -> None:
    raw = RawClient()
    try:
        uri = (EXAMPLES / "skills" / "pdf-form-filling" / "SKILL.md").as_uri()
        burst = [
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {"processId": None, "rootUri": EXAMPLES.as_uri(), "capabilities": {}},
            },
            {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        ]
        burst += [
            {
                "jsonrpc": "2.0",
                "id": 10 + i,
                "method": "textDocument/hover",
                "params": {"textDocument": {"uri": uri}, "position": {"line": i % 5, "character": 0}},
            }
            for i in range(120)
        ]
        assert raw.process.stdin is not None
        raw.process.stdin.write(framed(burst))  # one write: the server reads it in a few chunks
        raw.process.stdin.flush()
        answers = raw.answers(121)
        ids = sorted(a["id"] for a in answers)
        assert ids == [1, *range(10, 130)]  # each exactly once
        assert all("error" not in a for a in answers), [a for a in answers if "error" in a]
        raw.send({"id": 500, "method": "shutdown"})
        assert raw.answers(122)[-1] == {"jsonrpc": "2.0", "id": 500, "result": None}
        raw.send({"method": "exit"})
        assert raw.process.wait(timeout=10) == 0
    finally:
        raw.close()
