"""Positions in the client's encoding. The core counts columns in code points; LSP clients count
UTF-16 code units unless they negotiated UTF-8 or UTF-32."""

from __future__ import annotations

from collections.abc import Sequence

from lsprotocol import types

from skills_lsp.core.model import Position, Range


class Codec:
    def __init__(self, encoding: str | None) -> None:
        self.encoding = encoding or types.PositionEncodingKind.Utf16

    def _units(self, text: str) -> int:
        if self.encoding == types.PositionEncodingKind.Utf8:
            return len(text.encode("utf-8", "surrogatepass"))
        if self.encoding == types.PositionEncodingKind.Utf32:
            return len(text)
        return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)

    def to_client(self, lines: Sequence[str], position: Position) -> types.Position:
        line = lines[position.line] if position.line < len(lines) else ""
        return types.Position(position.line, self._units(line[: position.character]))

    def range_to_client(self, lines: Sequence[str], rng: Range) -> types.Range:
        return types.Range(self.to_client(lines, rng.start), self.to_client(lines, rng.end))

    def from_client(self, lines: Sequence[str], position: types.Position) -> Position:
        line = lines[position.line] if position.line < len(lines) else ""
        if self.encoding == types.PositionEncodingKind.Utf32:
            return Position(position.line, min(position.character, len(line)))
        units = 0
        for index, ch in enumerate(line):
            if units >= position.character:
                return Position(position.line, index)
            units += self._units(ch)
        return Position(position.line, len(line))

    def range_from_client(self, lines: Sequence[str], rng: types.Range) -> Range:
        return Range(self.from_client(lines, rng.start), self.from_client(lines, rng.end))
