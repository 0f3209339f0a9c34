"""The crate's tokens (`tokenize`) and its float32 arithmetic (`f32`): the `lexical` scorer's,
apart from lexical.py's numpy so that a warm `select` (routing/warm.py) scores a request from a
saved state without importing numpy."""

from __future__ import annotations

import math
import re
import struct
import unicodedata
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from skills_lsp.core.routing.scorer import Tokenizer

_ASCII_TOKEN = re.compile(r"[A-Za-z0-9]+")
TOKENS_VERSION = 1  # bumped whenever `tokenize` or the weights change (saved postings are rebuilt)
_F32 = struct.Struct("<f")


def f32(value: float) -> float:
    """`value` rounded to the nearest IEEE single (kept in a Python float, exactly); like Rust's
    `as f32`, a finite value beyond the single range becomes infinity."""
    try:
        return float(_F32.unpack(_F32.pack(value))[0])
    except OverflowError:
        return math.copysign(math.inf, value)


def f32_bits(value: float) -> str:
    return f"0x{struct.unpack('<I', _F32.pack(value))[0]:08x}"


# Scripts written without spaces: each character is a token of its own (so 数据 finds 数据库).
_CJK = r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\U00020000-\U0002fa1f]"


@cache
def _cjk() -> re.Pattern[str]:
    """Compiled when the unicode tokenizer first runs (the class takes about 8 ms to compile)."""
    return re.compile(_CJK)


_UNICODE_WORD = re.compile(
    r"[^\W_](?:[^\W_]|[\u0300-\u036f\u0483-\u0489\u0591-\u05c7\u0610-\u061a"
    r"\u064b-\u065f\u0670\u06d6-\u06ed\u0900-\u0903\u093a-\u094f\u0951-\u0957"
    r"\u0962\u0963\u0981-\u0983\u09bc-\u09d7\u0e31-\u0e3a\u0e47-\u0e4e])*"
)


def tokenize(text: str, tokenizer: Tokenizer = "ascii") -> list[str]:
    """The crate's tokens: runs of ASCII letters and digits, lowercased; every other character
    separates (`café` -> `caf`). `unicode`: NFC-normalised words of Unicode letters and digits
    (combining marks stay in the word: `हिन्दी`), case-folded, and each CJK character alone."""
    if tokenizer == "unicode":
        tokens: list[str] = []
        for word in _UNICODE_WORD.findall(unicodedata.normalize("NFC", text)):
            cjk = _cjk()
            if cjk.search(word):
                tokens.extend(piece.casefold() for piece in cjk.split(word) if piece)
                tokens.extend(cjk.findall(word))
            else:
                tokens.append(word.casefold())
        return tokens
    return [t.lower() for t in _ASCII_TOKEN.findall(text)]
