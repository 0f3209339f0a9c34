"""`read_limited` reads what a buffered read of `limit + 1` bytes gives, sized by the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from skills_lsp.core.parse.frontmatter import read_limited


@pytest.mark.parametrize("size", [0, 1, 9, 10, 11, 5000])
def test_a_file_is_read_whole_or_to_one_byte_over_the_limit(tmp_path: Path, size: int) -> None:
    path = tmp_path / "SKILL.md"
    data = bytes(range(256)) * (size // 256 + 1)
    path.write_bytes(data[:size])
    assert read_limited(path) == data[:size]
    assert read_limited(path, limit=10) == data[: min(size, 11)]


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux's /proc")
def test_a_file_larger_than_its_recorded_size_is_read_to_its_end() -> None:
    # /proc files are regular files whose size reads 0: what a file that grew after the stat is like.
    assert Path("/proc/self/status").stat().st_size == 0
    text = read_limited("/proc/self/status")
    assert text.startswith(b"Name:") and b"\nPid:" in text
    assert read_limited("/proc/self/status", limit=3) == text[:4]
