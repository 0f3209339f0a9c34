"""`skills-lsp mcp`: the MCP server, driven by the `mcp` SDK's own client over stdio, the server a
real subprocess (as an agent's host starts it). Its answers are compared with what the `check`,
`select` and `rule` commands say about the same workspace."""

from __future__ import annotations

import io
import json
import os
import shutil
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from helpers import run_cli as cli

from skills_lsp.cli import main
from skills_lsp.core.rules import RULES

pytest.importorskip("mcp")  # the `mcp` extra; the test extra installs it

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import CallToolResult, TextContent

REPO = Path(__file__).resolve().parents[2]
TIMEOUT = 60.0  # seconds for one answer: the first `select` loads the scorer


@pytest.fixture()
def workspace(tmp_path: Path) -> Path:
    """A copy of examples/, routed with the lexical scorer (adk-skill's formula, no model)."""
    root = tmp_path / "examples"
    shutil.copytree(REPO / "examples", root)
    (root / "skills-lsp.toml").write_text('scorer = "lexical"\n', encoding="utf-8")
    return root


@asynccontextmanager
async def session(root: Path) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "skills_lsp", "mcp", "--root", str(root)],
        cwd=str(REPO),
    )
    with open(os.devnull, "w") as errlog:  # the server's log (stderr)
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write, read_timeout_seconds=TIMEOUT) as client,
        ):
            await client.initialize()
            yield client


async def call(client: ClientSession, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, error_text(result)
    assert result.structured_content is not None
    # The same answer as JSON text, for clients that read only `content`.
    assert isinstance(result.content[0], TextContent)
    assert json.loads(result.content[0].text) == result.structured_content
    return result.structured_content


def error_text(result: CallToolResult) -> str:
    return " ".join(c.text for c in result.content if isinstance(c, TextContent))


async def test_the_server_lists_its_read_only_tools(workspace: Path) -> None:
    async with session(workspace) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(listed) == {"check", "select", "overlap", "rule"}
    for tool in listed.values():
        assert tool.annotations is not None and tool.annotations.read_only_hint is True
        assert tool.description
    assert listed["select"].input_schema["required"] == ["request"]
    assert listed["rule"].input_schema["required"] == ["code"]
    assert set(listed["check"].input_schema["properties"]) == {"path", "text", "file_path", "profile"}


async def test_check_a_path_reports_what_the_check_command_reports(workspace: Path) -> None:
    async with session(workspace) as client:
        skill = await call(client, "check", path="skills/broken-name-mismatch")
        everything = await call(client, "check", path=".")
    code, out, _ = cli(
        "check",
        "skills/broken-name-mismatch",
        "--format",
        "json",
        "--no-cache",
        "--min-severity",
        "hint",
        cwd=workspace,
    )
    expected = json.loads(out)
    assert code == 1 and expected  # the example is broken on purpose
    assert [
        {k: f[k] for k in ("path", "code", "severity", "message", "range")} for f in skill["findings"]
    ] == expected
    assert skill["files"] == 1
    assert skill["errors"] == sum(f["severity"] == "error" for f in expected) > 0
    first = skill["findings"][0]
    assert set(first["range"]) == {"start", "end"} and set(first["range"]["start"]) == {"line", "character"}
    assert everything["files"] > 1 and everything["errors"] >= skill["errors"]


async def test_check_text_an_agent_is_writing(workspace: Path) -> None:
    text = (
        "---\nname: release-notes\ndescription: Writes release notes. Use when the user asks for them.\n"
        "version: 1.0\n---\n# Steps\n\nRead [the guide](references/guide.md).\n"
    )
    async with session(workspace) as client:
        report = await call(client, "check", text=text)
        as_claude = await call(
            client,
            "check",
            text=text.replace("version: 1.0", "context: fork\nagent: Explore"),
            file_path=".claude/skills/release-notes/SKILL.md",
        )
        judged_by = await call(client, "check", text=text, profile="adk-rust")
    found = {(f["code"], f["range"]["start"]["line"]) for f in report["findings"]}
    # An unknown key on line 3 and a reference to a file that does not exist; the name matches
    # the folder the text is judged in, so SK208 is not reported.
    assert ("SK401", 3) in found
    assert ("SK603", 7) in found
    assert "SK208" not in {code for code, _ in found}
    unknown = next(f for f in report["findings"] if f["code"] == "SK401")
    assert unknown["path"] == "release-notes/SKILL.md"
    assert unknown["range"] == {"start": {"line": 3, "character": 0}, "end": {"line": 3, "character": 7}}
    assert {"title": "Move `version` under `metadata`", "applicability": "unsafe"} in unknown["fixes"]
    # In Claude Code's folder `context` and `agent` are documented keys: nothing to report there.
    assert "SK401" not in {f["code"] for f in as_claude["findings"]}
    assert "SK401" not in {f["code"] for f in judged_by["findings"]}  # adk-skill has `version`


async def test_select_scores_a_request_like_the_select_command(workspace: Path) -> None:
    request = "Fill in the PDF form with the applicant's data from this JSON file"
    async with session(workspace) as client:
        answer = await call(client, "select", request=request, top_k=3)
        nothing = await call(client, "select", request="Book a table for two", min_score=100.0)
    _, out, _ = cli("select", request, "--top-k", "3", "--format", "json", cwd=workspace)
    expected = json.loads(out)
    assert answer["scorer"] == "lexical"  # the workspace's config
    assert answer["min_score"] == 1.0
    assert [(m["name"], m["path"], m["score"]) for m in answer["matches"]] == [
        (e["name"], e["path"], e["score"]) for e in expected
    ]
    assert answer["matches"][0]["name"] == "pdf-form-filling" and answer["matches"][0]["rank"] == 1
    assert answer["skills"] > 5
    assert nothing["matches"] == []


async def test_select_and_overlap_leave_out_what_the_config_excludes(workspace: Path) -> None:
    """The MCP tools see the workspace the commands see: `exclude` and .gitignore apply."""
    for folder in ("drafts", "ignored"):
        twin = workspace / folder / "pdf-form-twin"
        twin.mkdir(parents=True)
        original = (workspace / "skills" / "pdf-form-filling" / "SKILL.md").read_text(encoding="utf-8")
        (twin / "SKILL.md").write_text(original.replace("name: pdf-form-filling", "name: pdf-form-twin"))
    with (workspace / "skills-lsp.toml").open("a", encoding="utf-8") as config:
        config.write('exclude = ["drafts/"]\n')
    (workspace / ".gitignore").write_text("ignored/\n", encoding="utf-8")
    request = "Fill in the PDF form with the applicant's data from this JSON file"
    async with session(workspace) as client:
        answer = await call(client, "select", request=request, top_k=5)
        pairs = await call(client, "overlap")
    _, out, _ = cli("select", request, "--top-k", "5", "--format", "json", cwd=workspace)
    assert [m["name"] for m in answer["matches"]] == [e["name"] for e in json.loads(out)]
    assert "pdf-form-twin" not in {m["name"] for m in answer["matches"]}
    assert not any("pdf-form-twin" in p["skills"] for p in pairs["pairs"])


async def test_overlap_finds_a_rival_like_the_overlap_command(workspace: Path) -> None:
    twin = workspace / "skills" / "pdf-form-twin"
    twin.mkdir()
    original = (workspace / "skills" / "pdf-form-filling" / "SKILL.md").read_text(encoding="utf-8")
    (twin / "SKILL.md").write_text(original.replace("name: pdf-form-filling", "name: pdf-form-twin"))
    async with session(workspace) as client:
        every = await call(client, "overlap")
        mine = await call(client, "overlap", skill="pdf-form-twin")
        bad = [
            await client.call_tool("overlap", {"skill": "no-such-skill"}),
            await client.call_tool("overlap", {"close": 1.5}),
        ]
    _, out, _ = cli("overlap", "--format", "json", cwd=workspace)
    expected = json.loads(out)
    assert every["scorer"] == expected["scorer"] == "lexical"
    assert [(p["skills"], p["paths"], p["request"]) for p in every["pairs"]] == [
        (p["skills"], p["paths"], p["request"]) for p in expected["pairs"]
    ]
    assert {"pdf-form-filling", "pdf-form-twin"} in [set(p["skills"]) for p in every["pairs"]]
    assert mine["pairs"] and all(p["skills"][0] == "pdf-form-twin" for p in mine["pairs"])
    assert "pdf-form-filling" in {p["skills"][1] for p in mine["pairs"]}
    assert all(b.is_error for b in bad)
    assert "no skill named 'no-such-skill'" in error_text(bad[0])
    assert "`close` must be a ratio" in error_text(bad[1])


async def test_rule_explains_a_code_from_the_registry(workspace: Path) -> None:
    async with session(workspace) as client:
        rule = await call(client, "rule", code="sk401")
    entry = RULES["SK401"]
    assert rule["code"] == "SK401" and rule["name"] == entry.name
    assert rule["doc"] == entry.doc
    assert rule["fixes"] == ["unsafe"] and "vscode-copilot" in rule["profiles"]


async def test_bad_calls_get_an_error_answer_and_the_server_keeps_serving(workspace: Path) -> None:
    async with session(workspace) as client:
        answers = [
            await client.call_tool("rule", {"code": "SK999"}),
            await client.call_tool("check", {"path": "no/such/skill"}),
            await client.call_tool("check", {}),
            await client.call_tool("check", {"path": ".", "text": "---\n---\n"}),
            await client.call_tool("check", {"path": ".", "profile": "cursor"}),
            await client.call_tool("select", {"request": "  "}),
            await client.call_tool("select", {"request": "pdf", "top_k": 0}),
            await client.call_tool("select", {"request": "pdf", "scorer": "magic"}),
            await client.call_tool("check", {"text": "---\nname: [unclosed\n---\n"}),
        ]
        still = await call(client, "rule", code="SK201")
    messages = [error_text(a) for a in answers[:-1]]
    assert all(a.is_error for a in answers[:-1]), messages
    assert "unknown rule 'SK999'" in messages[0]
    assert "no such file or directory" in messages[1] and "no/such/skill" in messages[1]
    assert "give either `path`" in messages[2] and "give either `path`" in messages[3]
    assert "unknown profile 'cursor'" in messages[4] and "gemini-cli" in messages[4]
    assert "`request` is empty" in messages[5]
    assert "top_k" in messages[6]
    assert "unknown scorer 'magic'" in messages[7]
    # Broken YAML is a finding, not a failed call.
    broken = answers[-1]
    assert not broken.is_error and broken.structured_content is not None
    assert broken.structured_content["errors"] >= 1
    assert still["code"] == "SK201"


def test_the_command_refuses_a_root_that_is_not_a_folder(tmp_path: Path) -> None:
    err = io.StringIO()
    assert main(["mcp", "--root", str(tmp_path / "missing")], io.StringIO(), err) == 2
    assert err.getvalue() == f"skills-lsp: error: not a directory: {tmp_path / 'missing'}\n"
