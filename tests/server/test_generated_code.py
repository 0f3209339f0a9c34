"""The kept code of attrs' and cattrs' generated methods (server/generated_code.py): served code is
the code `compile` would have made, a damaged or foreign file is never trusted, and a real
server's second start compiles nothing."""

from __future__ import annotations
import __future__

import atexit
import marshal
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import attr._make
import attrs
import cattrs
import cattrs.gen
import pytest
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from skills_lsp.core.files.cache import UNUSED_FOR
from skills_lsp.core.files.frames import read_frame, write_frame
from skills_lsp.server import generated_code
from skills_lsp.server.generated_code import GeneratedCode, keep_generated_code


@pytest.fixture
def kept(tmp_path: Path) -> Iterator[GeneratedCode]:
    """A table in tmp_path hooked into the generating modules, unhooked afterwards."""
    table = GeneratedCode(tmp_path / "code.frame", b"test key")
    table.load()
    for name in generated_code.GENERATORS:
        table.hook(sys.modules[name] if name in sys.modules else __import__(name, fromlist=["x"]))
    yield table
    table.unhook()


def make_class() -> type:
    @attrs.define
    class Position:
        line: int
        character: int = 0
        label: str | None = attrs.field(default=None, kw_only=True)

    return Position


def class_through(table: GeneratedCode) -> type:
    """make_class with attrs' `compile` served by `table` alone."""
    table.hook(attr._make)
    try:
        return make_class()
    finally:
        table.unhook()


def methods(cls: type) -> list[object]:
    converter = cattrs.Converter()
    hooks = [converter.get_structure_hook(cls), converter.get_unstructure_hook(cls)]
    return [cls.__init__, cls.__eq__, cls.__repr__, *hooks]  # type: ignore[misc]


def codes(functions: list[object]) -> list[object]:
    return [function.__code__ for function in functions]


def test_served_code_is_what_compile_makes(kept: GeneratedCode) -> None:
    hooked = codes(methods(make_class()))
    assert kept.compiled >= 3 and kept.hits == 0  # attrs: one script; cattrs: a hook each way
    kept.unhook()
    plain = codes(methods(make_class()))
    assert hooked == plain  # code objects compare bytecode, constants, names and flags
    assert [c.co_flags for c in hooked] == [c.co_flags for c in plain]  # type: ignore[attr-defined]
    # `from __future__ import annotations` in attrs' and cattrs' modules is inherited, as by their compile.
    assert all(c.co_flags & __future__.annotations.compiler_flag for c in hooked)  # type: ignore[attr-defined]


def test_a_saved_table_serves_the_next_process(kept: GeneratedCode, tmp_path: Path) -> None:
    first = codes(methods(make_class()))
    assert kept.save() and not kept.save()  # nothing new the second time: nothing written
    kept.unhook()
    again = GeneratedCode(kept.file, kept.key)
    again.load()
    assert len(again.table) == len(kept.table)
    for name in generated_code.GENERATORS:
        again.hook(sys.modules[name])
    try:
        second = codes(methods(make_class()))
    finally:
        again.unhook()
    assert second == first
    assert again.compiled == 0 and again.hits >= 3


@pytest.mark.parametrize("damage", ["flip", "truncate", "other key"])
def test_a_damaged_or_foreign_file_is_ignored_and_replaced(
    kept: GeneratedCode, tmp_path: Path, damage: str
) -> None:
    methods(make_class())
    assert kept.save()
    data = bytearray(kept.file.read_bytes())
    if damage == "flip":
        data[-100] ^= 0xFF
        kept.file.write_bytes(bytes(data))
    elif damage == "truncate":
        kept.file.write_bytes(bytes(data[: len(data) // 2]))
    key = b"another key" if damage == "other key" else kept.key
    reader = GeneratedCode(kept.file, key)
    reader.load()
    assert reader.table == {}
    class_through(reader)
    assert reader.save()  # a whole file again
    assert isinstance(read_frame(kept.file, key, whole=True), bytes)


def test_a_whole_frame_that_holds_no_table_of_code_is_ignored(tmp_path: Path) -> None:
    file = tmp_path / "code.frame"
    for payload in (marshal.dumps([1, 2]), marshal.dumps({("a", "b", 0): "not code"}), b"\x00garbage"):
        assert write_frame(file, b"k", payload)
        table = GeneratedCode(file, b"k")
        table.load()
        assert table.table == {}


def test_an_unwritable_folder_costs_only_the_saving(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder", encoding="utf-8")
    table = GeneratedCode(blocker / "sub" / "code.frame", b"k")
    table.load()
    cls = class_through(table)
    assert cls(1) == cls(1, 0)
    assert not table.save()
    assert table.compiled > 0  # kept for another try


def test_unhook_gives_the_builtin_back(kept: GeneratedCode) -> None:
    assert "compile" in vars(attr._make) and "compile" in vars(cattrs.gen)
    kept.unhook()
    assert "compile" not in vars(attr._make) and "compile" not in vars(cattrs.gen)


def test_tables_unused_for_a_month_and_abandoned_temporary_files_are_removed(tmp_path: Path) -> None:
    old, recent, abandoned = tmp_path / "old.frame", tmp_path / "recent.frame", tmp_path / ".x.frame-1.tmp"
    for path in (old, recent, abandoned):
        path.write_bytes(b"x")
    month_ago = os.stat(old).st_mtime - UNUSED_FOR - 60
    os.utime(old, (month_ago, month_ago))
    os.utime(abandoned, (month_ago, month_ago))
    table = GeneratedCode(tmp_path / "code.frame", b"k")
    class_through(table)
    assert table.save()
    assert sorted(p.name for p in tmp_path.iterdir()) == [".gitignore", "code.frame", "recent.frame"]


def test_keep_generated_code_uses_the_user_cache_and_save_kept_saves_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(generated_code, "_kept", None)
    assert not generated_code.save_kept()  # nothing kept in this process yet
    table = keep_generated_code()
    assert table is not None
    atexit.unregister(table.save)
    try:
        assert table.file.parent == tmp_path / "skills-lsp" / "generated-code"
        assert table.key.startswith(generated_code.FORMAT)
        make_class()
        assert generated_code.save_kept() and table.file.is_file()
    finally:
        table.unhook()


async def serve_once(workspace: Path, cache: Path, log: Path) -> None:
    config = ClientServerConfig(
        server_command=[
            *(sys.executable, "-m", "skills_lsp", "serve", "--stdio"),
            *("--log-level", "DEBUG", "--log-file", str(log)),
        ],
        server_env={**os.environ, "XDG_CACHE_HOME": str(cache)},
    )
    client = await config.start()
    assert isinstance(client, LanguageClient)
    await client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual_studio_code"), root_uri=workspace.as_uri()
        )
    )
    await client.shutdown_session()


@pytest.mark.asyncio(loop_scope="session")
async def test_a_servers_second_start_compiles_no_generated_code(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    cache = tmp_path / "cache"
    await serve_once(workspace, cache, tmp_path / "first.log")
    kept = list((cache / "skills-lsp" / "generated-code").glob("*.frame"))
    assert len(kept) == 1
    first = [line for line in (tmp_path / "first.log").read_text().splitlines() if "generated code" in line]
    assert first and not first[-1].endswith(" 0 compiled"), first
    await serve_once(workspace, cache, tmp_path / "second.log")
    second = [line for line in (tmp_path / "second.log").read_text().splitlines() if "generated code" in line]
    assert second and second[-1].endswith(" 0 compiled"), second
    assert " 0 served" not in second[-1]


def test_code_compiled_under_python_O_is_kept_apart(tmp_path: Path) -> None:
    # -O drops asserts and `if __debug__:` blocks from what compile makes: never served to a plain run.
    script = "from skills_lsp.server import generated_code as g; print(g.keep_generated_code().file)"
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    files = set()
    for flags in ([], ["-O"], ["-OO"]):
        run = subprocess.run([sys.executable, *flags, "-c", script], env=env, capture_output=True, check=True)
        files.add(run.stdout.strip())
    assert len(files) == 3


def test_a_save_keeps_only_what_this_process_used(tmp_path: Path) -> None:
    # attrs writes hash(filename), different in every process, into some classes' source: entries
    # no later process asks for must not pile up.
    file, key = tmp_path / "code.frame", b"k"
    first = GeneratedCode(file, key)
    first.hook(attr._make)
    try:
        make_class()
        for number in range(3):
            attrs.define(type(f"Once{number}", (), {"__annotations__": {"x": "int"}}))
    finally:
        first.unhook()
    assert first.save()
    later = GeneratedCode(file, key)
    later.load()
    assert len(later.table) == len(first.table)
    class_through(later)  # uses make_class's entries only, and compiles nothing
    assert later.compiled == 0 and not later.save()
    later.hook(attr._make)
    try:
        attrs.define(type("Another", (), {"__annotations__": {"y": "int"}}))
    finally:
        later.unhook()
    assert later.save()
    reread = GeneratedCode(file, key)
    reread.load()
    assert set(reread.table) == later.used
    assert not any("Once" in filename for filename, _, _ in reread.table)
    assert any("Another" in filename for filename, _, _ in reread.table)


@pytest.mark.parametrize("loose", ["file", "folder"])
def test_a_table_another_user_could_write_is_neither_read_nor_written(tmp_path: Path, loose: str) -> None:
    folder = tmp_path / "generated-code"
    table = GeneratedCode(folder / "code.frame", b"k")
    class_through(table)
    assert table.save()
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700 and stat.S_IMODE(table.file.stat().st_mode) == 0o600
    (table.file if loose == "file" else folder).chmod(0o666 if loose == "file" else 0o777)
    reader = GeneratedCode(table.file, b"k")
    reader.load()
    assert reader.table == {}  # it holds code: from a folder or file others can write, never run
    if loose == "folder":
        class_through(reader)
        assert not reader.save()


def test_no_home_folder_costs_only_the_kept_code(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_home() -> Path:
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.setattr(generated_code, "user_cache_dir", no_home)
    monkeypatch.setattr(generated_code, "_kept", None)
    assert keep_generated_code() is None
    assert "compile" not in vars(attr._make)
