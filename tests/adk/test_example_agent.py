"""examples/adk_agent.py runs offline (no API key): the scripted model, real ADK runner, real skills."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("google.adk")

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "adk_agent.py"


def run_example(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("GOOGLE_API_KEY", "GEMINI_API_KEY")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    return subprocess.run(
        [sys.executable, str(EXAMPLE), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def test_offline_demo_profiles_the_uploaded_csv(tmp_path: Path) -> None:
    proc = run_example(cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert out.startswith("No GOOGLE_API_KEY or GEMINI_API_KEY set: running the scripted offline demo")
    assert "Loaded 6 skills: csv-data-cleaning, " in out
    assert "  skipped (errors): broken-yaml\n" in out
    assert '-> use_skill({"name": "csv-data-cleaning"})' in out
    command = "python skills/csv-data-cleaning/scripts/profile_csv.py uploads/customers.csv"
    assert f'-> shell({{"command": "{command}"}})' in out
    assert "Staged: uploads/customers.csv (186 bytes)\n" in out
    assert "Injected skill: csv-data-cleaning" in out
    # allowed-tools: Bash(python3:*) Read Write; the host has Read and Write only
    assert "Coordinator binds csv-data-cleaning to: Read, Write\n" in out
    assert "SkillToolset over the same skills offers: list_skills, load_skill," in out
    assert f"Agent: (offline demo) I loaded the csv-data-cleaning skill and ran `{command}`:" in out
    assert "duplicates: 1 exact duplicate rows" in out  # the skill's script really read the upload
    assert "Traceback" not in proc.stderr


def test_offline_demo_with_a_request_and_a_file(tmp_path: Path) -> None:
    data = tmp_path / "orders.csv"
    data.write_text("id;total\n1;3,50\n1;3,50\n", encoding="utf-8")
    proc = run_example("Clean the CSV export before import", "--file", str(data), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "User: Clean the CSV export before import [+ orders.csv]" in proc.stdout
    assert "Staged: uploads/orders.csv (" in proc.stdout
    assert "delimiter: ';'" in proc.stdout


def test_a_missing_file_is_a_usage_error(tmp_path: Path) -> None:
    proc = run_example("x", "--file", str(tmp_path / "none.csv"), cwd=tmp_path)
    assert proc.returncode == 2 and "no such file" in proc.stderr and "Traceback" not in proc.stderr
