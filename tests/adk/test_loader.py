"""skills_lsp.adk.load_adk_skills: real files, real google-adk objects, ADK's own SkillToolset."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("google.adk")

from google.adk.agents import LlmAgent
from google.adk.agents.invocation_context import InvocationContext
from google.adk.sessions import InMemorySessionService
from google.adk.skills import Skill
from google.adk.tools.skill_toolset import SkillToolset
from google.adk.tools.tool_context import ToolContext

from skills_lsp.adk import (
    AdkLoadReport,
    SkillLoadError,
    load_adk_skills,
    load_adk_skills_report,
    skill_index,
)
from skills_lsp.core.model import Severity

REPO = Path(__file__).resolve().parents[2]
DASHED = "Splits on --- inside a value and goes on. Use when testing the loader."


def write_skill(root: Path, folder: str, text: str | bytes) -> Path:
    skill = root / folder
    skill.mkdir(parents=True, exist_ok=True)
    path = skill / "SKILL.md"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return skill


def good_skill(root: Path, name: str = "good", description: str = DASHED) -> Path:
    skill = write_skill(root, name, f"---\nname: {name}\ndescription: {description}\n---\n# Title\n\nBody.\n")
    (skill / "references" / "deep").mkdir(parents=True)
    (skill / "references" / "guide.md").write_text("guide\n", encoding="utf-8")
    (skill / "references" / "deep" / "more.md").write_text("more\n", encoding="utf-8")
    (skill / "assets").mkdir()
    (skill / "assets" / "blob.bin").write_bytes(b"\xff\x00\xfe")
    (skill / "scripts").mkdir()
    (skill / "scripts" / "run.py").write_text("print('ran')\n", encoding="utf-8")
    return skill


def test_loads_real_adk_skills_with_dashes_in_values_and_resources(tmp_path: Path) -> None:
    good_skill(tmp_path)
    skills = load_adk_skills(tmp_path)
    assert len(skills) == 1
    skill = skills[0]
    assert isinstance(skill, Skill)
    assert skill.name == "good"
    assert skill.description == DASHED  # not cut at the `---`
    assert skill.instructions == "# Title\n\nBody."
    assert skill.resources.references == {"guide.md": "guide\n", "deep/more.md": "more\n"}
    assert skill.resources.assets == {"blob.bin": b"\xff\x00\xfe"}
    assert skill.resources.get_script("run.py") is not None
    assert skill.resources.scripts["run.py"].src == "print('ran')\n"


def test_utf8_bom_and_crlf_are_accepted(tmp_path: Path) -> None:
    text = "---\r\nname: bom\r\ndescription: Has a BOM. Use when testing BOM files.\r\n---\r\nBody.\r\n"
    write_skill(tmp_path, "bom", b"\xef\xbb\xbf" + text.encode("utf-8"))
    (skill,) = load_adk_skills([tmp_path / "bom"])
    assert skill.name == "bom"
    assert skill.description == "Has a BOM. Use when testing BOM files."
    assert skill.instructions == "Body."


def invalid_workspace(root: Path) -> None:
    good_skill(root)
    write_skill(root, "bad", "---\nname: Bad_Name\n---\nbody\n")
    write_skill(root, "unclosed", "---\nname: unclosed\ndescription: never closed\n")


def test_strict_raises_one_error_listing_every_problem(tmp_path: Path) -> None:
    invalid_workspace(tmp_path)
    with pytest.raises(SkillLoadError) as info:
        load_adk_skills(tmp_path, strict=True)
    error = info.value
    assert error.findings and all(f.severity is Severity.ERROR for f in error.findings)
    bad = str(tmp_path / "bad" / "SKILL.md")
    unclosed = str(tmp_path / "unclosed" / "SKILL.md")
    codes = {(f.path, f.code) for f in error.findings}
    assert {(bad, "SK301"), (bad, "SK204"), (bad, "SK208")} <= codes
    assert any(path == unclosed for path, _ in codes)
    message = str(error)
    assert message.startswith(f"{len(error.findings)} errors loading skills for ADK:")
    assert f"{bad}:1:1: SK301 Missing required field `description`." in message
    assert f"{bad}:2:7: SK204 " in message
    assert f"{unclosed}:1:" in message
    for finding in error.findings:  # every finding is in the message with a 1-based position
        line, col = finding.range.start.line + 1, finding.range.start.character + 1
        assert f"{finding.path}:{line}:{col}: {finding.code} {finding.message}" in message


def test_lenient_skips_invalid_skills_and_reports_them(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    invalid_workspace(tmp_path)
    with caplog.at_level(logging.WARNING, logger="skills_lsp.adk"):
        skills = load_adk_skills(tmp_path, strict=False)
    assert [s.name for s in skills] == ["good"]
    logged = caplog.text
    assert "bad/SKILL.md:1:1: SK301" in logged
    assert "unclosed/SKILL.md" in logged

    report = load_adk_skills_report(tmp_path)
    assert isinstance(report, AdkLoadReport)
    assert [s.name for s in report.skills] == ["good"]
    assert report.skipped == [str(tmp_path / "bad" / "SKILL.md"), str(tmp_path / "unclosed" / "SKILL.md")]
    assert {f.path for f in report.errors} == set(report.skipped)
    # Non-error findings of valid skills are reported too (the SK114 note on `---`).
    assert any(f.code == "SK114" and f.path.endswith("good/SKILL.md") for f in report.findings)


def test_adk_model_refusals_become_findings(tmp_path: Path) -> None:
    # Our profile takes a string here (metadata values are strings); ADK's Frontmatter wants a bool.
    text = (
        "---\nname: state\ndescription: Injects state. Use when testing.\n"
        "metadata:\n  adk_inject_state: 'yes'\n---\nB\n"
    )
    write_skill(tmp_path, "state", text)
    report = load_adk_skills_report(tmp_path)
    assert report.skills == []
    (finding,) = [f for f in report.errors if f.code == "SK004"]
    assert finding.range.start.line == 4  # the metadata block
    assert finding.message == "ADK rejects `metadata`: adk_inject_state must be a bool."
    with pytest.raises(SkillLoadError, match=r"state/SKILL.md:5:\d+: SK004 ADK rejects `metadata`"):
        load_adk_skills(tmp_path)


def test_duplicate_names_keep_the_first(tmp_path: Path) -> None:
    good_skill(tmp_path / "a")
    good_skill(tmp_path / "b")
    report = load_adk_skills_report([tmp_path / "a", tmp_path / "b"])
    assert len(report.skills) == 1
    assert report.skipped == [str(tmp_path / "b" / "good" / "SKILL.md")]
    assert any("already used by" in f.message for f in report.errors)
    with pytest.raises(SkillLoadError, match="ADK needs unique names"):
        load_adk_skills([tmp_path / "a", tmp_path / "b"])


def test_tools_serve_the_accepted_skill_not_a_rejected_namesake(tmp_path: Path) -> None:
    # Parses, but breaks a rule (SK303): skipped, and its text must not reach the agent.
    write_skill(tmp_path / "a", "good", "---\nname: good\ndescription: " + "x" * 1100 + "\n---\nREJECTED\n")
    good_skill(tmp_path / "b")
    report = load_adk_skills_report(tmp_path)
    assert report.loaded == [str(tmp_path / "b" / "good" / "SKILL.md")]
    [document] = skill_index(tmp_path)
    assert document.path == tmp_path / "b" / "good" / "SKILL.md"
    assert "REJECTED" not in document.body


def test_resource_symlink_outside_the_skill_is_left_out(tmp_path: Path) -> None:
    skill = good_skill(tmp_path / "skills")
    secret = tmp_path / "secret.txt"
    secret.write_text("do not share\n", encoding="utf-8")
    (skill / "references" / "leak.md").symlink_to(secret)
    report = load_adk_skills_report(tmp_path / "skills")
    (loaded,) = report.skills
    assert "leak.md" not in loaded.resources.references
    assert "guide.md" in loaded.resources.references
    warning = [f for f in report.findings if f.code == "SK004"]
    assert warning and warning[0].severity is Severity.WARNING
    assert "`references/leak.md` points outside the skill folder" in warning[0].message


def test_missing_root_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(SkillLoadError, match="No such file or directory"):
        load_adk_skills([tmp_path / "nowhere"])


def test_what_check_silences_does_not_skip_a_skill(tmp_path: Path) -> None:
    """A skill `skills-lsp check` passes loads: a missing reference silenced by a suppression
    comment in one skill, by `per-file-ignores` in another (SK603 is an error)."""
    missing = "See [the guide](references/missing.md).\n"
    commented = good_skill(tmp_path / "skills", "commented")
    text = (commented / "SKILL.md").read_text(encoding="utf-8")
    (commented / "SKILL.md").write_text(
        text + "<!-- skills-lsp-disable-next-line SK603 -->\n" + missing, encoding="utf-8"
    )
    ignored = good_skill(tmp_path / "skills", "ignored")
    (ignored / "SKILL.md").write_text((ignored / "SKILL.md").read_text(encoding="utf-8") + missing, "utf-8")
    (tmp_path / "skills-lsp.toml").write_text(
        'per-file-ignores = { "skills/ignored/**" = ["SK603"] }\n', encoding="utf-8"
    )
    report = load_adk_skills_report(tmp_path)
    assert sorted(skill.name for skill in report.skills) == ["commented", "ignored"]
    assert not [f for f in report.findings if f.code in ("SK603", "SK005")]
    # The same workspace, as the command line sees it.
    proc = subprocess.run(
        [sys.executable, "-m", "skills_lsp", "check", str(tmp_path), "--no-cache"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout


def test_excluded_and_gitignored_skills_are_not_loaded(tmp_path: Path) -> None:
    good_skill(tmp_path / "skills", "kept")
    good_skill(tmp_path / "skills", "drafted")
    good_skill(tmp_path / "skills", "archived")
    (tmp_path / ".gitignore").write_text("skills/drafted/\n", encoding="utf-8")
    (tmp_path / "skills-lsp.toml").write_text('exclude = ["skills/archived/**"]\n', encoding="utf-8")
    assert [skill.name for skill in load_adk_skills(tmp_path)] == ["kept"]
    # Named as a root itself, a skill folder is loaded whatever the ignore files say.
    assert [skill.name for skill in load_adk_skills(tmp_path / "skills" / "drafted")] == ["drafted"]


async def test_adk_skill_toolset_serves_our_skills(tmp_path: Path) -> None:
    good_skill(tmp_path)
    skills = load_adk_skills(tmp_path)
    toolset = SkillToolset(skills)
    tools = {tool.name: tool for tool in await toolset.get_tools(None)}
    assert {"list_skills", "load_skill", "load_skill_resource", "run_skill_script"} <= set(tools)

    service = InMemorySessionService()
    session = await service.create_session(app_name="skills-lsp-test", user_id="u")
    agent = LlmAgent(name="agent", model="gemini-2.0-flash", tools=[toolset])
    context = ToolContext(
        InvocationContext(session_service=service, invocation_id="inv-1", agent=agent, session=session)
    )
    listing = await tools["list_skills"].run_async(args={}, tool_context=context)
    assert "<name>\ngood\n</name>" in listing or "good" in listing
    assert DASHED in listing
    loaded = await tools["load_skill"].run_async(args={"skill_name": "good"}, tool_context=context)
    assert loaded["instructions"] == "# Title\n\nBody."
    resource = await tools["load_skill_resource"].run_async(
        args={"skill_name": "good", "file_path": "references/deep/more.md"}, tool_context=context
    )
    assert resource["content"] == "more\n"


def test_core_never_imports_google_adk() -> None:
    code = (
        "import sys, skills_lsp.cli, skills_lsp.core.rules.check, skills_lsp.core.index.skill_index\n"
        "assert not [m for m in sys.modules if m.startswith('google.adk')], 'core imported google.adk'\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0, proc.stderr


def test_import_without_google_adk_says_what_to_install() -> None:
    code = (
        "import sys\n"
        "sys.modules['google.adk'] = None\n"
        "sys.modules['google.adk.skills'] = None\n"
        "try:\n"
        "    import skills_lsp.adk\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONWARNINGS"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "install skills-lsp[adk]" in proc.stdout
