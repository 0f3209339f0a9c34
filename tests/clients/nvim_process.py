"""A real headless Neovim for the client tests: started in its own process group (a kill takes
the language server it started with it), bounded in time, and the JSON result its Lua driver
writes read back."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest


def run_nvim(
    command: Sequence[str],
    workspace: Path,
    env: Mapping[str, str],
    timeout: float,
    context: Callable[[], str] = lambda: "",
) -> str:
    """Run `command` in `workspace`; its stdout and stderr. Fails the test (with `context()`,
    e.g. the LSP log) if Neovim does not quit within `timeout` seconds."""
    proc = subprocess.Popen(
        list(command),
        cwd=workspace,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        stdout, stderr = proc.communicate()
        pytest.fail(f"nvim did not quit within {timeout} s\n{stdout}{stderr}\n{context()}")
    return f"nvim exit code {proc.returncode}\n{stdout}{stderr}"


def driver_result(out: Path, output: str) -> dict[str, Any]:
    """The result file the Lua driver wrote; fails the test if it wrote none or an error."""
    if not out.exists():
        pytest.fail(f"the driver wrote no result\n{output}")
    result: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    if result.get("error"):
        pytest.fail(f"the driver failed after steps {result.get('steps')}: {result['error']}\n{output}")
    return result
