"""The tool manifest: loading, errors with positions, and the unknown-tool rule (SK505)."""

from __future__ import annotations

from pathlib import Path

from skills_lsp.core.model import Range
from skills_lsp.core.parse.tool_manifest import StaticToolRegistry, ToolRegistry
from skills_lsp.core.rules.check import check_paths
from skills_lsp.core.rules.validate import validate_text
from skills_lsp.core.workspace.settings import load_tool_manifest, parse_tool_manifest

SKILL = "---\nname: x\ndescription: Does x. Use when asked.\nallowed-tools: {tools}\n---\nBody.\n"


def test_manifest_loads_tools_with_positions(tmp_path: Path) -> None:
    path = tmp_path / "skill-tools.yaml"
    path.write_text(
        "tools:\n  - name: code_search\n    description: Search code\n    source: m\n  - name: Bash\n",
        encoding="utf-8",
    )
    registry, problems = load_tool_manifest(path)
    assert problems == [] and isinstance(registry, ToolRegistry)
    assert registry.available_tools() == ["code_search", "Bash"]
    tool = registry.resolve("code_search")
    assert tool is not None and tool.description == "Search code" and tool.source == "m"
    assert tool.range == Range.of(1, 10, 1, 21)
    assert registry.resolve("code-search") is None  # exact, case-sensitive


def test_manifest_problems_are_findings() -> None:
    registry, problems = parse_tool_manifest("tools:\n  - name: a\n  - nme: b\n  - name: a\n", "t.yaml")
    assert registry.available_tools() == ["a"]
    messages = {(p.range.start.line, p.message) for p in problems}
    assert (2, "'name' is a required property.") in messages
    assert (3, "Tool `a` is listed twice.") in messages
    _, problems = parse_tool_manifest("tools: [\n", "t.yaml")
    assert problems and problems[0].code == "SK002"
    _, problems = parse_tool_manifest("[1, 2]\n", "t.yaml")
    assert problems and "is not of type 'object'" in problems[0].message


def test_unknown_tool_string_and_list_forms() -> None:
    tools = StaticToolRegistry(["Bash", "Read", "code_search"])
    findings = validate_text(
        SKILL.format(tools="Bash(git:*) read code_serch Gone"), "s/x/SKILL.md", tools=tools
    )
    found = [(f.range, f.message) for f in findings if f.code == "SK505"]
    assert found == [
        (Range.of(3, 27, 3, 31), "Tool `read` is not in the tool manifest; did you mean `Read`?"),
        (
            Range.of(3, 32, 3, 42),
            "Tool `code_serch` is not in the tool manifest; did you mean `code_search`?",
        ),
        (Range.of(3, 43, 3, 47), "Tool `Gone` is not in the tool manifest."),
    ]
    listed = validate_text(SKILL.format(tools="\n  - code_search\n  - grep"), ".skills/x.md", tools=tools)
    assert [(f.code, f.range) for f in listed if f.code == "SK505"] == [("SK505", Range.of(5, 4, 5, 8))]
    assert not [f for f in validate_text(SKILL.format(tools="Gone"), "s/x/SKILL.md") if f.code == "SK505"]


def test_check_reads_the_workspace_manifest_and_its_changes_invalidate_the_cache(tmp_path: Path) -> None:
    skill = tmp_path / "skills" / "x" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text(SKILL.format(tools="Read Grep"), encoding="utf-8")
    manifest = tmp_path / "skill-tools.yaml"
    manifest.write_text("tools:\n  - name: Read\n", encoding="utf-8")
    cache = tmp_path / "cache"
    first = check_paths([tmp_path], cache_dir=cache).findings
    assert [(f.code, f.message) for f in first if f.code == "SK505"] == [
        ("SK505", "Tool `Grep` is not in the tool manifest.")
    ]
    manifest.write_text("tools:\n  - name: Read\n  - name: Grep\n", encoding="utf-8")
    assert not [f for f in check_paths([tmp_path], cache_dir=cache).findings if f.code == "SK505"]
    manifest.write_text("tools: nope\n", encoding="utf-8")
    broken = check_paths([tmp_path], cache_dir=cache).findings
    assert [(f.code, Path(f.path).name) for f in broken if f.code == "SK002"] == [
        ("SK002", "skill-tools.yaml")
    ]


def test_unknown_tool_fix_names_the_manifest_tool() -> None:
    from rule_cases import apply_edits  # tests/ is on sys.path through its conftest

    tools = StaticToolRegistry(["Bash", "Read"])
    text = SKILL.format(tools="Bash(git:*) read")
    (finding,) = [f for f in validate_text(text, "s/x/SKILL.md", tools=tools) if f.code == "SK505"]
    (fix,) = finding.fixes
    fixed = apply_edits(text, fix.edits)
    assert "allowed-tools: Bash(git:*) Read\n" in fixed
    assert not [f for f in validate_text(fixed, "s/x/SKILL.md", tools=tools) if f.code == "SK505"]
