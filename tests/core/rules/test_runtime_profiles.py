"""The runtime profiles (codex, gemini-cli, vscode-copilot, claude-code): which keys each accepts,
ignores or reports, which profile a runtime's own skills folder gets, and the table in
docs/profiles.md."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from skills_lsp.core import schema
from skills_lsp.core.files.discovery import discover_workspace
from skills_lsp.core.model import FileKind
from skills_lsp.core.rules.key_support import Verdict, key_support, support_markdown, support_table, verdict
from skills_lsp.core.rules.profiles import PROFILES, default_profile
from skills_lsp.core.rules.validate import validate_file

REPO = Path(__file__).resolve().parents[3]

# The keys issue 17 names as falsely reported for Claude Code skills.
CLAUDE_KEYS = ("allowed-tools", "context", "agent", "model", "hooks", "user-invocable", "paths")


def write(path: Path, *lines: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("---\n" + "\n".join(lines) + "\n---\n# Steps\n\nDo it.\n", encoding="utf-8")
    return path


def codes(path: Path, profile: str | None = None) -> list[tuple[str, str]]:
    return [(f.code, f.message) for f in validate_file(path, profile=profile)]


@pytest.mark.parametrize(
    ("folder", "expected"),
    [
        (".claude/skills", "claude-code"),
        (".codex/skills", "codex"),
        (".gemini/skills", "gemini-cli"),
        (".github/skills", "vscode-copilot"),
        (".agents/skills", "agentskills"),  # shared by several runtimes: the open standard's
        ("skills", "agentskills"),
    ],
)
def test_a_runtime_folder_picks_its_profile(folder: str, expected: str) -> None:
    assert default_profile(f"/ws/{folder}/deploy/SKILL.md", FileKind.AGENT_SKILL) == expected
    # Nested one level deeper (grouped skills) still counts; the innermost folder wins.
    assert default_profile(f"/ws/{folder}/ops/deploy/SKILL.md", FileKind.AGENT_SKILL) == expected
    inner = default_profile(f"/home/u/.claude/skills/x/{folder}/d/SKILL.md", FileKind.AGENT_SKILL)
    assert inner == (expected if expected != "agentskills" else "claude-code")


def test_only_skill_md_files_take_the_folder_profile() -> None:
    # adk-skill reads flat `.claude/skills/*.md` files: they keep adk-skill's profile.
    assert default_profile("/ws/.claude/skills/deploy.md", FileKind.FLAT_SKILL) == "adk-rust"
    assert default_profile("/ws/.github/skills/AGENTS.md", FileKind.CONVENTION) == "convention"
    # A folder merely named like one is not a runtime's.
    assert default_profile("/ws/claude/skills/deploy/SKILL.md", FileKind.AGENT_SKILL) == "agentskills"
    assert default_profile("/ws/.claude/deploy/SKILL.md", FileKind.AGENT_SKILL) == "agentskills"


def test_claude_code_keys_are_not_reported_in_a_claude_skills_folder(tmp_path: Path) -> None:
    lines = [
        "name: deploy",
        "description: Deploys the app to staging. Use when the user asks to ship a build.",
        "allowed-tools: Bash(git:*) Read",
        "context: fork",
        "agent: Explore",
        "model: sonnet",
        "hooks:",
        "  PreToolUse:",
        "    - matcher: Bash",
        "user-invocable: false",
        "paths:",
        '  - "src/**/*.ts"',
    ]
    inside = write(tmp_path / ".claude" / "skills" / "deploy" / "SKILL.md", *lines)
    assert codes(inside) == []
    # The same file elsewhere is judged by the open standard, which has none of them.
    outside = write(tmp_path / "skills" / "deploy" / "SKILL.md", *lines)
    reported = {message.split("`")[1] for code, message in codes(outside) if code == "SK401"}
    assert reported == set(CLAUDE_KEYS) - {"allowed-tools"}


def test_discovery_finds_the_codex_and_gemini_skill_folders(tmp_path: Path) -> None:
    write(tmp_path / ".gemini" / "skills" / "g" / "SKILL.md", "name: g", "description: Use when testing g.")
    write(tmp_path / ".codex" / "skills" / "c" / "SKILL.md", "name: c", "description: Use when testing c.")
    found = {Path(f.path).relative_to(tmp_path).as_posix(): f.kind for f in discover_workspace(tmp_path)}
    assert found == {
        ".codex/skills/c/SKILL.md": FileKind.AGENT_SKILL,
        ".gemini/skills/g/SKILL.md": FileKind.AGENT_SKILL,
    }


@pytest.mark.parametrize("profile", ["codex", "gemini-cli"])
def test_codex_and_gemini_document_name_and_description_only(profile: str, tmp_path: Path) -> None:
    folder = ".codex" if profile == "codex" else ".gemini"
    path = write(
        tmp_path / folder / "skills" / "deploy" / "SKILL.md",
        "name: deploy",
        "description: Deploys the app. Use when shipping.",
        "license: MIT",  # the open standard's: allowed, not read
        "context: fork",  # Claude Code's and Copilot's: reported
    )
    assert codes(path) == [
        (
            "SK401",
            f"Unknown key `context` for the {profile} profile (it is a claude-code field). "
            "Put client-specific keys under `metadata`.",
        )
    ]
    assert verdict(PROFILES[profile], "name") is Verdict.READS
    assert verdict(PROFILES[profile], "license") is Verdict.IGNORES
    assert PROFILES[profile].required == ("name", "description")


def test_vscode_copilot_accepts_its_documented_invocation_keys(tmp_path: Path) -> None:
    path = write(
        tmp_path / ".github" / "skills" / "review-pr" / "SKILL.md",
        "name: review-pr",
        "description: Reviews a pull request. Use when asked to review a PR.",
        "argument-hint: '[pr-number]'",
        "user-invocable: true",
        "disable-model-invocation: false",
        "context: fork",
        "model: sonnet",  # Claude Code's only
    )
    assert [code for code, _ in codes(path)] == ["SK401"]
    assert "`model`" in codes(path)[0][1]
    # `context` is typed by the same schema entry as for Claude Code.
    bad = write(
        tmp_path / ".github" / "skills" / "bad" / "SKILL.md",
        "name: bad",
        "description: Use when testing.",
        "context: inline",
    )
    assert codes(bad) == [("SK402", "`context`: must be one of `fork`.")]


def test_a_name_that_breaks_the_open_standard_is_reported_for_the_new_runtimes(tmp_path: Path) -> None:
    # VS Code: "Names with invalid characters cause the skill to silently fail to load."
    path = write(
        tmp_path / ".github" / "skills" / "Review_PR" / "SKILL.md",
        "name: Review_PR",
        "description: Use when reviewing.",
    )
    assert {code for code, _ in codes(path)} == {"SK204", "SK205"}  # uppercase; `_`


def test_key_support_covers_every_profile_in_order() -> None:
    support = key_support("context")
    assert [s.profile.name for s in support] == list(PROFILES)
    by_name = {s.profile.name: s.verdict for s in support}
    assert by_name["claude-code"] is by_name["vscode-copilot"] is Verdict.READS
    assert by_name["skills-ref"] is Verdict.REFUSES  # SK401 is an error there
    assert by_name["gemini-cli"] is by_name["codex"] is by_name["agentskills"] is Verdict.WARNS


def test_claude_code_docs_do_not_list_the_standards_other_fields() -> None:
    for key in ("license", "compatibility", "metadata"):
        assert verdict(PROFILES["claude-code"], key) is Verdict.IGNORES
    for key in CLAUDE_KEYS:
        assert verdict(PROFILES["claude-code"], key) is Verdict.READS


def test_support_markdown_names_each_verdict_once() -> None:
    text = support_markdown("license")
    assert text.splitlines()[0] == "**Runtimes**"
    assert "- ✓ accepts: `agentskills`, `skills-ref`, `adk-rust`, `adk`, `convention`" in text
    assert "- ○ accepts, but its runtime's docs do not list it (ignored): `claude-code`, `codex`, " in text
    assert "⚠" not in text and "✗" not in text
    unknown = support_markdown("author")
    assert "✓" not in unknown and "`skills-ref`" in unknown.split("✗")[1]


def test_every_profile_has_a_schema_entry_and_documents_only_its_own_keys() -> None:
    assert set(schema.profile_names()) == set(PROFILES)
    for profile in PROFILES.values():
        if profile.documented is not None:
            assert profile.documented <= set(profile.fields), profile.name


def test_docs_profiles_table_is_current() -> None:
    text = (REPO / "docs" / "profiles.md").read_text(encoding="utf-8")
    found = re.search(r"<!-- key-table:start -->\n(.*?)\n<!-- key-table:end -->", text, re.S)
    assert found is not None, "docs/profiles.md lost its key-table markers"
    assert found.group(1) == support_table(), "regenerate the table from skills_lsp.core.rules.key_support"


def test_docs_profiles_describes_every_profile_and_cites_the_vendors() -> None:
    text = (REPO / "docs" / "profiles.md").read_text(encoding="utf-8")
    for name in PROFILES:
        assert f"### `{name}`" in text, name
    for url in (
        "https://developers.openai.com/codex/skills",
        "https://geminicli.com/docs/cli/creating-skills",
        "https://code.visualstudio.com/docs/agent-customization/agent-skills",
        "https://code.claude.com/docs/en/skills",
    ):
        assert url in text, url
