"""A raw JSON-RPC client over stdio for protocol tests: it writes framed bodies, valid JSON or
not, and keeps every framed message the server sends back."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
# The protocol fuzz's seed and counts, printed in the terminal summary (tests/server/conftest.py).
FUZZ_SUMMARY = pytest.StashKey[str]()
EXAMPLES = REPO / "examples"


class RawClient:
    """Writes framed bodies (valid JSON or not) and reads every framed message back."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "skills_lsp", "serve", "--stdio"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=REPO,
        )
        self.messages: list[dict[str, Any]] = []
        self.sent = 0  # bodies written
        self._lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        while True:
            length = 0
            while True:
                line = stream.readline()
                if not line:
                    return
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
                elif line in (b"\r\n", b"\n"):
                    break
            body = json.loads(stream.read(length))
            with self._lock:
                self.messages.append(body)

    def send_body(self, body: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.sent += 1
        self.process.stdin.flush()

    def send(self, message: dict[str, Any]) -> None:
        self.send_body(json.dumps({"jsonrpc": "2.0", **message}).encode())

    def answers(self, wanted: int, timeout: float = 20.0) -> list[dict[str, Any]]:
        """The responses (messages with an id and no method) once `wanted` have come."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                found = [m for m in self.messages if "id" in m and "method" not in m]
            if len(found) >= wanted:
                time.sleep(0.3)  # a second answer to any request would arrive now
                with self._lock:
                    return [m for m in self.messages if "id" in m and "method" not in m]
            time.sleep(0.02)
        raise AssertionError(f"only {len(found)} of {wanted} answers; messages: {self.messages}")

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=10)

    def answered_ids(self) -> list[Any]:
        """The ids of every response so far (a request answered twice shows up twice)."""
        with self._lock:
            return [m.get("id") for m in self.messages if "id" in m and "method" not in m]
