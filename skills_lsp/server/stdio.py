"""Reading the client's messages from stdin with one worker-thread hand-off per chunk the pipe
holds, instead of pygls' one per header line and per body.

pygls' `StdinAsyncReader` runs `stdin.readline` (and `stdin.read(n)` for a body) in its thread
pool: three hand-offs between the event loop and a worker per message. An editor's burst of a
code lens and 100 resolves cost 85-100 ms of server CPU that way (20,000 skills, 2 cores), most
of a round when nothing changed. This reader takes whatever the pipe holds (up to 64 KiB, one
blocking `read1` in the same thread pool) and serves header lines and bodies from that buffer;
the message loop and framing stay pygls' own (`pygls.io_.run_async`), so every message is read
and handled exactly as before, in order, and each read yields to the event loop once, as a read
that waits did.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import Executor
from typing import BinaryIO

CHUNK_BYTES = 1 << 16


class ChunkedStdinReader:
    """pygls' AsyncReader (`readline`, `readexactly`) over a buffer filled a chunk at a time."""

    def __init__(self, stdin: BinaryIO, executor: Executor | None = None) -> None:
        self.executor = executor
        self.buffer = bytearray()
        self.eof = False
        read1 = getattr(stdin, "read1", None)
        # Without read1 (an unbuffered stream) a line at a time: still correct, as pygls reads it.
        self._read: Callable[[], bytes] = (
            (lambda: read1(CHUNK_BYTES)) if callable(read1) else (lambda: stdin.readline())
        )

    async def _fill(self) -> bool:
        """Append what the pipe holds (waiting for at least a byte); False at end of input."""
        if self.eof:
            return False
        chunk = await asyncio.get_running_loop().run_in_executor(self.executor, self._read)
        if not chunk:
            self.eof = True
            return False
        self.buffer += chunk
        return True

    async def readline(self) -> bytes:
        """One line with its b"\\n", or what is left at end of input (b"" when nothing is)."""
        # Yield to the loop first, as a read that waits would: a handler the last message started
        # as a task (a watched-file change, say) runs to its first await before the next message
        # is handled, so a request sent after a notification sees what the notification changed.
        await asyncio.sleep(0)
        searched = 0
        while (end := self.buffer.find(b"\n", searched)) < 0:
            searched = len(self.buffer)
            if not await self._fill():
                return self._take(len(self.buffer))
        return self._take(end + 1)

    async def readexactly(self, n: int) -> bytes:
        """`n` bytes, or fewer at end of input (as `stdin.read(n)`, which pygls' reader calls)."""
        while len(self.buffer) < n and await self._fill():
            pass
        return self._take(min(n, len(self.buffer)))

    def _take(self, n: int) -> bytes:
        data = bytes(self.buffer[:n])
        del self.buffer[:n]  # a bytearray drops its front without copying the rest
        return data
