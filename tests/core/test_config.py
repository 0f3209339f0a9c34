"""`[tool.skills-lsp]` / `skills-lsp.toml`: loading, errors with positions, and their effect."""

from __future__ import annotations

from pathlib import Path

from skills_lsp.core.check import check_paths, resolve_config
from skills_lsp.core.config import find_config, glob_match, load_config, parse_config
from skills_lsp.core.model import Range, Severity

SKILL = "---\nname: {name}\ndescription: Does things. Use when asked.\n{extra}---\nBody text.\n"


def make_skill(root: Path, name: str, extra: str = "", dirname: str | None = None) -> Path:
    path = root / "skills" / (dirname or name) / "SKILL.md"
    path.parent.mkdir(parents=True)
    path.write_text(SKILL.format(name=name, extra=extra), encoding="utf-8")
    return path


def test_broken_toml_is_a_finding_with_a_position(tmp_path: Path) -> None:
    path = tmp_path / "skills-lsp.toml"
    path.write_text('select = ["SK2"]\nignore = [\n', encoding="utf-8")
    config, problems = load_config(path)
    assert config.source == path
    assert len(problems) == 1
    assert problems[0].code == "SK001" and problems[0].path == str(path)
    assert problems[0].range.start.line >= 1
    assert problems[0].message.startswith("Invalid TOML")
    assert config.select is None  # defaults still apply


def test_semantic_errors_point_at_their_key(tmp_path: Path) -> None:
    text = '[tool.skills-lsp]\nselct = ["SK2"]\nprofile = "nope"\nignore = ["XX9"]\nmax-depth = 0\n'
    _, problems = parse_config(text, tmp_path / "pyproject.toml")
    messages = {p.range.start.line: p.message for p in problems}
    assert "did you mean `select`?" in messages[1]
    assert "unknown profile `nope`" in messages[2]
    assert "no rule code starts with `XX9`" in messages[3]
    assert "1 to 64" in messages[4]
    assert problems[0].range == Range.of(1, 0, 1, 5)


def test_valid_config_values(tmp_path: Path) -> None:
    text = (
        '[tool.skills-lsp]\nroots = ["skills"]\nselect = ["SK2", "SK301"]\nextend-select = ["SK115"]\n'
        'ignore = ["SK208"]\nexclude = ["skills/old/**"]\ntool-manifest = "tools.yaml"\n'
        '[tool.skills-lsp.profiles]\n"**/.claude/**" = "claude-code"\n'
        '[tool.skills-lsp.severity]\nSK204 = "warning"\n'
    )
    config, problems = parse_config(text, tmp_path / "pyproject.toml")
    assert problems == []
    assert config.roots == ("skills",) and config.select == ("SK2", "SK301")
    assert config.extend_select == ("SK115",) and config.ignore == ("SK208",)
    assert config.severity == {"SK204": Severity.WARNING}
    assert config.tool_manifest == "tools.yaml"
    assert config.profile_for_path(tmp_path / ".claude" / "skills" / "x" / "SKILL.md") == "claude-code"
    assert config.excluded(tmp_path / "skills" / "old" / "a" / "SKILL.md")


def test_config_changes_findings(tmp_path: Path) -> None:
    make_skill(tmp_path, "Bad_Name", "version: 1\n", dirname="bad-name")
    before = {f.code for f in check_paths([tmp_path]).findings}
    assert {"SK204", "SK205", "SK208", "SK401"} <= before
    (tmp_path / "pyproject.toml").write_text(
        '[tool.skills-lsp]\nignore = ["SK208", "SK4"]\n[tool.skills-lsp.severity]\nSK204 = "info"\n',
        encoding="utf-8",
    )
    config, problems = resolve_config([tmp_path])
    assert problems == [] and config.source == tmp_path / "pyproject.toml"
    findings = check_paths([tmp_path], config=config).findings
    codes = {f.code for f in findings}
    assert "SK208" not in codes and "SK401" not in codes and "SK205" in codes
    assert next(f for f in findings if f.code == "SK204").severity is Severity.INFO


def test_find_config_walks_up_and_skips_unrelated_pyproject(tmp_path: Path) -> None:
    (tmp_path / "skills-lsp.toml").write_text("", encoding="utf-8")
    inner = tmp_path / "a" / "b"
    inner.mkdir(parents=True)
    (tmp_path / "a" / "pyproject.toml").write_text("[project]\nname='x'\n", encoding="utf-8")
    assert find_config(inner) == tmp_path / "skills-lsp.toml"


def test_glob_match() -> None:
    assert glob_match("**/.skills/**", ".skills/a.md")
    assert glob_match("**/.skills/**", "x/.skills/a/b.md")
    assert glob_match("SKILL.md", "deep/dir/SKILL.md")
    assert glob_match("skills/*/SKILL.md", "skills/a/SKILL.md")
    assert not glob_match("skills/*/SKILL.md", "skills/a/b/SKILL.md")
