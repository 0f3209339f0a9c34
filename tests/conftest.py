from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator
from importlib.machinery import ModuleSpec
from pathlib import Path

import pytest
from helpers import MODEL_PACKAGES
from hypothesis import HealthCheck, settings

SERVER_TESTS = Path(__file__).resolve().parent / "server"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The language server's tests last, whatever order the command line names folders in: their
    session-wide servers keep asyncio's child-watcher threads running, and a test that forks
    (core/forked.py forks only with one thread) failed when run after them
    (`pytest tests/server tests/core`). The sort is stable: the order is kept within each part."""
    items.sort(key=lambda item: item.path.is_relative_to(SERVER_TESTS))


# CI runs a fixed, reproducible set of examples; locally more are tried.
settings.register_profile(
    "ci", derandomize=True, max_examples=200, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", max_examples=300)
settings.load_profile("ci" if os.environ.get("CI") else "dev")


@pytest.fixture()
def no_embedding_model(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """As if neither the `semantic` nor the `semantic-lite` extra were installed: no package that
    ships an embedding model can be found."""
    from skills_lsp.core.routing import embedding

    real = importlib.util.find_spec

    def find_spec(name: str, package: str | None = None) -> ModuleSpec | None:
        return None if name in MODEL_PACKAGES else real(name, package)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    embedding.forget_models()  # a model may be loaded already: forget it
    try:
        yield
    finally:
        monkeypatch.undo()
        embedding.forget_models()  # loaded again, for real, by the next test that asks
