"""The server object and `skills-lsp serve`. Feature handlers live in one module each and are
registered here; they share the `State` and the position codec."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from skills_lsp._version import __version__
from skills_lsp.server.positions import Codec
from skills_lsp.server.state import State

log = logging.getLogger("skills_lsp.server")


class SkillsLanguageServer(LanguageServer):
    """pygls' server plus our state; handlers are registered by the feature modules."""

    def __init__(self) -> None:
        super().__init__("skills-lsp", __version__)
        self.state = State()
        self._timers: dict[str, asyncio.TimerHandle] = {}

    def cancel(self, key: str) -> None:
        handle = self._timers.pop(key, None)
        if handle is not None:
            handle.cancel()

    def later(self, key: str, delay: float, action: Callable[[], object]) -> None:
        """Run `action` once, `delay` seconds after the last call with this key (a burst of edits
        costs one run). Outside the event loop (unit use) it runs at once."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            action()
            return
        handle = self._timers.pop(key, None)
        if handle is not None:
            handle.cancel()

        def run() -> None:
            self._timers.pop(key, None)
            try:
                action()
            except Exception:  # one failing action must not stop the others
                log.exception("deferred %s failed", key)

        self._timers[key] = loop.call_later(delay, run)

    @property
    def codec(self) -> Codec:
        return Codec(self.workspace.position_encoding)

    def path_of(self, uri: str) -> Path | None:
        path = to_fs_path(uri)
        return Path(path) if path else None

    def lines_of(self, uri: str) -> list[str]:
        """The document's lines in the core's line model (for position conversion)."""
        from skills_lsp.core.parse.frontmatter import split_lines

        return split_lines(self.workspace.get_text_document(uri).source)

    def capability(self, dotted: str, default: Any = None) -> Any:
        value: Any = self.client_capabilities
        for part in dotted.split("."):
            value = getattr(value, part, None)
            if value is None:
                return default
        return value

    def report_server_error(self, error: Exception, source: Any) -> None:
        # A failing handler answers its request with an error (pygls does that); log, don't pop up.
        log.exception("handler failed: %s", error)


def create_server() -> SkillsLanguageServer:
    from skills_lsp.server import (
        code_actions,
        codelens,
        commands,
        completion,
        diagnostics,
        hover,
        inlay_hints,
        links,
        symbols,
        sync,
    )

    server = SkillsLanguageServer()
    for module in (
        sync,
        diagnostics,
        completion,
        hover,
        codelens,
        code_actions,
        links,
        symbols,
        inlay_hints,
        commands,
    ):
        module.register(server)
    return server


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="skills-lsp serve", description="Run the language server.")
    parser.add_argument("--stdio", action="store_true", help="use stdio (the default; accepted for editors)")
    parser.add_argument("--tcp", action="store_true", help="listen on TCP instead of stdio")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=2087)
    parser.add_argument("--log-file", help="write the server's log here")
    parser.add_argument("--log-level", default="WARNING", choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    args = parser.parse_args(argv)
    handlers: list[logging.Handler] = (
        [logging.FileHandler(args.log_file, encoding="utf-8")]
        if args.log_file
        else [logging.StreamHandler(sys.stderr)]
    )
    logging.basicConfig(
        level=args.log_level, handlers=handlers, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    # pygls warns about ordinary races (a cancel for a request already answered); editors such as
    # Neovim log all stderr as errors, so keep the protocol layer quiet unless asked.
    if args.log_level != "DEBUG":
        logging.getLogger("pygls.protocol").setLevel(logging.ERROR)
    server = create_server()
    if args.tcp:
        server.start_tcp(args.host, args.port)
    else:
        server.start_io()
    return 0


_ = types
