"""UploadStagingPlugin: user file parts saved per session and replaced by path notes (real ADK runner)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("google.adk")

from adk_harness import ScriptedModel, run_agent
from google.adk.agents import LlmAgent
from google.genai import types

from skills_lsp.adk import (
    SkillInjectorPlugin,
    SkillsShellTool,
    StagingShellTool,
    UploadStagingPlugin,
    safe_name,
    staging_root,
)

APP = "skills_lsp_test"  # adk_harness.run_agent's app name


def file_part(data: bytes, mime_type: str, display_name: str | None = None) -> types.Part:
    return types.Part(inline_data=types.Blob(data=data, mime_type=mime_type, display_name=display_name))


def message(*parts: types.Part) -> types.Content:
    return types.Content(role="user", parts=list(parts))


def user_text(model: ScriptedModel) -> str:
    first = model.seen[0].contents[0]
    assert first.role == "user"
    assert all(p.inline_data is None for p in first.parts or [])
    return "\n".join(p.text or "" for p in first.parts or [])


def session_dirs(base: Path) -> list[Path]:
    return sorted(p for p in (base / APP).iterdir() if p.is_dir())


async def test_an_uploaded_file_lands_on_disk_and_the_model_gets_its_path(tmp_path: Path) -> None:
    plugin = UploadStagingPlugin(tmp_path / "staging")
    model = ScriptedModel(turns=["ok"])
    data = b"id,name\n1,Ada\n2,Grace\n"
    content = message(types.Part(text="Clean this CSV"), file_part(data, "text/csv", "people.csv"))
    run = await run_agent(LlmAgent(name="a", model=model), model, content, [plugin])
    assert run.final_text() == "ok"
    (session,) = session_dirs(tmp_path / "staging")
    saved = session / "uploads" / "people.csv"
    assert saved.read_bytes() == data
    text = user_text(model)
    assert text.startswith("Clean this CSV\n")  # the other parts are kept, in order
    assert "saved as 'uploads/people.csv'" in text and "text/csv" in text and f"{len(data)} bytes" in text
    assert str(tmp_path) not in text  # the model sees a relative path only
    (staged,) = plugin.staged
    assert staged.path == "uploads/people.csv" and staged.refused is None and staged.size == len(data)
    stored_user = run.stored[0]
    assert stored_user.author == "user" and stored_user.content is not None
    assert all(p.inline_data is None for p in stored_user.content.parts or [])


async def test_traversal_in_display_name_is_neutralised(tmp_path: Path) -> None:
    base = tmp_path / "staging"
    plugin = UploadStagingPlugin(base)
    model = ScriptedModel(turns=["ok"])
    content = message(
        file_part(b"one", "text/plain", "../../x"),
        file_part(b"two", "text/plain", "/etc/passwd"),
        file_part(b"three", "text/plain", "..\\..\\x"),
        file_part(b"four", "image/png"),
    )
    await run_agent(LlmAgent(name="a", model=model), model, content, [plugin])
    (session,) = session_dirs(base)
    uploads = session / "uploads"
    assert sorted(p.name for p in uploads.iterdir()) == ["passwd", "upload-1.png", "x", "x-1"]
    assert (uploads / "x").read_bytes() == b"one" and (uploads / "x-1").read_bytes() == b"three"
    assert (uploads / "upload-1.png").read_bytes() == b"four"
    assert not (tmp_path / "x").exists() and not (base / "x").exists()
    every = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert all(uploads in p.parents for p in every)
    text = user_text(model)
    assert "'uploads/x'" in text and "'uploads/x-1'" in text and "'uploads/upload-1.png'" in text


async def test_over_size_files_are_refused_with_a_note(tmp_path: Path) -> None:
    plugin = UploadStagingPlugin(tmp_path / "staging", max_file_bytes=10, max_message_bytes=15)
    model = ScriptedModel(turns=["ok"])
    content = message(
        types.Part(text="here"),
        file_part(b"a" * 11, "text/plain", "big.txt"),
        file_part(b"b" * 8, "text/plain", "first.txt"),
        file_part(b"c" * 8, "text/plain", "second.txt"),
    )
    await run_agent(LlmAgent(name="a", model=model), model, content, [plugin])
    (session,) = session_dirs(tmp_path / "staging")
    assert sorted(p.name for p in (session / "uploads").iterdir()) == ["first.txt"]
    text = user_text(model)
    assert (
        "[upload refused: 'big.txt' (text/plain) was not saved: it is 11 bytes, over the 10-byte limit"
        in text
    )
    assert "'second.txt' (text/plain) was not saved: the message's files would exceed the 15-byte" in text
    assert "saved as 'uploads/first.txt'" in text
    assert [s.refused is None for s in plugin.staged] == [False, True, False]


async def test_a_message_without_files_is_left_alone(tmp_path: Path) -> None:
    plugin = UploadStagingPlugin(tmp_path / "staging")
    model = ScriptedModel(turns=["ok"])
    await run_agent(LlmAgent(name="a", model=model), model, "just text", [plugin])
    assert user_text(model) == "just text"
    assert not (tmp_path / "staging" / APP).exists()


def test_names_and_session_ids_cannot_escape(tmp_path: Path) -> None:
    assert safe_name("../../x") == "x"
    assert safe_name("..") == "" and safe_name(".bashrc") == "bashrc" and safe_name("a b?.txt") == "a_b_.txt"
    assert staging_root(tmp_path, "my_app", "0b7c-uuid") == tmp_path / "my_app" / "0b7c-uuid"
    escaping = staging_root(tmp_path, "../app", "../../etc")
    assert escaping.parent.parent == tmp_path and escaping.name.startswith("etc-")
    assert escaping.parent.name.startswith("app-") and ".." not in escaping.parts
    empty = staging_root(tmp_path, "..", "/")
    assert empty.parent.name.startswith("app-") and empty.name.startswith("session-")
    assert staging_root(tmp_path, "a", "x/y") != staging_root(tmp_path, "a", "x_y")  # no collision
    assert len(safe_name("x" * 300 + ".csv")) == 100 and safe_name("x" * 300 + ".csv").endswith(".csv")


async def test_the_staging_shell_reads_uploads_and_runs_skill_scripts(
    tmp_path: Path, skills_root: Path
) -> None:
    plugin = UploadStagingPlugin(tmp_path / "staging")
    shell = plugin.shell_tool(skills_root)
    assert isinstance(shell, StagingShellTool) and isinstance(shell, SkillsShellTool)
    model = ScriptedModel(
        turns=[
            [("shell", {"command": "ls"})],
            [("shell", {"command": "cat uploads/notes.txt"})],
            [("shell", {"command": "python skills/pdf-report/scripts/summarize.py uploads/notes.txt"})],
            [("shell", {"command": "cat skills/pdf-report/references/leak.md"})],
            [("shell", {"command": "cat ../../secret.txt"})],
            "done",
        ]
    )
    content = message(types.Part(text="summarize"), file_part(b"hello upload\n", "text/plain", "notes.txt"))
    run = await run_agent(LlmAgent(name="a", model=model, tools=[shell]), model, content, [plugin])
    listed, shown, ran, leak, up = [response for _, response in run.responses()]
    assert listed["stdout"].split() == ["skills", "uploads"]
    assert shown["stdout"] == "hello upload\n"
    assert ran["stdout"] == "rows: 1\n"
    assert "outside the skills root" in leak["error"]  # the symlink out of the skills is still refused
    assert "'..' segment" in up["error"]
    assert "uploads/" in model.seen[0].tool_descriptions["shell"]
    assert str(tmp_path) not in repr(run.responses())


async def test_the_staging_shell_hides_the_real_skills_root(tmp_path: Path, skills_root: Path) -> None:
    (skills_root / "pdf-report" / "scripts" / "where.py").write_text(
        "import os\nprint(os.path.realpath(__file__))\n", encoding="utf-8"
    )
    plugin = UploadStagingPlugin(tmp_path / "staging")
    model = ScriptedModel(turns=[[("shell", {"command": "python skills/pdf-report/scripts/where.py"})], "ok"])
    run = await run_agent(
        LlmAgent(name="a", model=model, tools=[plugin.shell_tool(skills_root)]), model, "go", [plugin]
    )
    ((_, response),) = run.responses()
    assert response["stdout"] == "skills/pdf-report/scripts/where.py\n"  # not the real path
    assert str(tmp_path) not in repr(response)


@pytest.mark.parametrize("in_place", [True, False])
async def test_uploads_compose_with_the_skill_injector(
    tmp_path: Path, skills_root: Path, in_place: bool
) -> None:
    staging = UploadStagingPlugin(tmp_path / "staging", in_place=in_place)
    injector = SkillInjectorPlugin(skills_root)
    model = ScriptedModel(turns=["ok"])
    content = message(
        types.Part(text="Build a PDF report from this table"), file_part(b"a,b\n", "text/csv", "t.csv")
    )
    await run_agent(LlmAgent(name="a", model=model), model, content, [staging, injector])
    text = user_text(model)
    assert "saved as 'uploads/t.csv'" in text  # the staging plugin always runs first
    # in place, the injector runs next on the rewritten message; a returned copy stops ADK's plugin chain
    assert ("[skill:pdf-report]" in text) is in_place
    assert [i.skill for i in injector.injections] == (["pdf-report"] if in_place else [])


async def test_the_staging_shell_runs_no_uploaded_code(tmp_path: Path, skills_root: Path) -> None:
    plugin = UploadStagingPlugin(tmp_path / "staging")
    model = ScriptedModel(
        turns=[
            [("shell", {"command": "python uploads/evil.py"})],
            [("shell", {"command": "python -B uploads/evil.py"})],
            [("shell", {"command": "python"})],
            [("shell", {"command": "cat uploads/evil.py"})],
            "done",
        ]
    )
    content = message(file_part(b"print('pwned')\n", "text/x-python", "evil.py"))
    run = await run_agent(
        LlmAgent(name="a", model=model, tools=[plugin.shell_tool(skills_root)]), model, content, [plugin]
    )
    plain, with_option, bare, shown = [response for _, response in run.responses()]
    assert "python runs only the skills' own scripts (skills/<skill>/scripts/...)" in plain["error"]
    assert "not 'uploads/evil.py'" in with_option["error"]
    assert bare["error"] == "python needs a script: one of the skills' scripts."
    assert shown["stdout"] == "print('pwned')\n"  # reading it is fine
    assert "pwned" not in repr([plain, with_option, bare])


async def test_a_broken_staging_folder_is_an_error_result(tmp_path: Path, skills_root: Path) -> None:
    plugin = UploadStagingPlugin(tmp_path / "staging")
    model = ScriptedModel(turns=[[("shell", {"command": "ls"})], "done"])
    agent = LlmAgent(name="a", model=model, tools=[plugin.shell_tool(skills_root)])
    (tmp_path / "staging" / APP).write_text("not a folder", encoding="utf-8")  # the app folder is a file
    run = await run_agent(agent, model, "go", [plugin])
    ((_, response),) = run.responses()
    assert response == {"error": "Cannot prepare the working directory (NotADirectoryError)."}
