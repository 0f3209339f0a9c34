"""`[tool.skills-lsp]` / `skills-lsp.toml`: loading, errors with positions, and their effect."""

from __future__ import annotations

from pathlib import Path

import pytest

from skills_lsp.core.files.cache import find_config
from skills_lsp.core.files.config import Config, glob_match
from skills_lsp.core.files.discovery import DEFAULT_AGENT_SKILL_ROOTS
from skills_lsp.core.model import Range, Severity
from skills_lsp.core.rules.check import check_paths
from skills_lsp.core.workspace.settings import load_config, parse_config, resolve_config

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
    assert config.ignore_filter(tmp_path).ignored(tmp_path / "skills" / "old" / "a" / "SKILL.md")


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


# --- exact positions ---------------------------------------------------------------------------


def _where(text: str, name: str = "pyproject.toml") -> dict[str, tuple[int, int, int, int]]:
    _, problems = parse_config(text, Path(name))
    spans = {}
    for p in problems:
        r = p.range
        spans[p.message.split("`")[1]] = (r.start.line, r.start.character, r.end.line, r.end.character)
    return spans


def test_errors_point_at_the_key_in_the_skills_lsp_table_not_another_table() -> None:
    text = '[tool.ruff.lint]\nselect=["E"]\n[tool.skills-lsp]\nselect=["XX"]'
    assert _where(text) == {"select": (3, 0, 3, 6)}


def test_errors_point_at_the_key_not_a_longer_key_containing_it() -> None:
    assert _where('extend-select=["SK1"]\nselect=["ZZ"]', "skills-lsp.toml") == {"select": (1, 0, 1, 6)}
    assert _where('select=["SK1"]\nextend-select=["ZZ"]', "skills-lsp.toml") == {
        "extend-select": (1, 0, 1, 13)
    }


def test_errors_point_at_the_key_not_a_comment_or_a_string_mentioning_it() -> None:
    text = '# ignore is set below\nexclude = ["ignore = x"]\ndoc = """\nignore = 1\n"""\nignore = "SK401"\n'
    spans = _where(text, "skills-lsp.toml")
    assert spans["ignore"] == (5, 0, 5, 6)
    assert spans["doc"] == (2, 0, 2, 3)  # unknown key, also at its own line


def test_keys_of_inline_tables_in_arrays_are_not_mistaken_for_config_keys() -> None:
    text = 'exclude = [{ select = 1 }, "x"]\nselect = ["ZZ"]\n'
    assert _where(text, "skills-lsp.toml") == {"exclude": (0, 0, 0, 7), "select": (1, 0, 1, 6)}


def test_quoted_and_dotted_keys_are_located() -> None:
    assert _where('[tool."skills-lsp"]\n"select" = ["QQ"]\n') == {"select": (1, 0, 1, 8)}
    assert _where("[project]\nname = 'x'\n[tool]\nskills-lsp.ignore = ['QQ']\n") == {"ignore": (3, 11, 3, 17)}
    assert _where("tool.skills-lsp.max-depth = 0\n") == {"max-depth": (0, 16, 0, 25)}


def test_errors_inside_severity_and_profiles_point_at_their_entry() -> None:
    text = (
        '[tool.skills-lsp]\nselect = ["SK2"]\n[tool.skills-lsp.severity]\nSK2 = "warning"\nSK204 = "bogus"\n'
        '[tool.skills-lsp.profiles]\n"b/**" = "adk"\n"a/**" = "nope"\n'
    )
    assert _where(text) == {"severity": (4, 0, 4, 5), "profiles": (7, 0, 7, 6)}
    inline = '[tool.skills-lsp]\nseverity = { SK2 = "info", ZZ9 = "error" }\n'
    assert _where(inline) == {"severity": (1, 27, 1, 30)}


def test_non_string_profiles_are_findings_not_crashes(tmp_path: Path) -> None:
    text = '[tool.skills-lsp]\nprofile = ["adk"]\nprofiles = { "a/**" = ["adk"] }\n'
    assert _where(text) == {"profile": (1, 0, 1, 7), "profiles": (2, 13, 2, 19)}
    config, problems = parse_config("tool = 1\n", tmp_path / "pyproject.toml")
    assert problems == [] and config.select is None


# --- roots are relative to the config's folder -------------------------------------------------


def test_roots_for_reexpresses_configured_roots_relative_to_the_target(tmp_path: Path) -> None:
    config = Config(root=tmp_path, roots=("skills", ".agents/skills", "../shared"))
    assert config.roots_for(tmp_path) == ("skills", ".agents/skills")
    assert config.roots_for(tmp_path / "skills") == ("",)  # the target is a root
    assert config.roots_for(tmp_path / "skills" / "a") == ("",)  # inside a root
    assert config.roots_for(tmp_path / ".agents") == ("skills",)
    assert config.roots_for(tmp_path / "docs") == ()  # no root there
    assert config.roots_for(tmp_path.parent) == (
        f"{tmp_path.name}/skills",
        f"{tmp_path.name}/.agents/skills",
        "shared",
    )
    with_all = Config(root=tmp_path, roots=("", "skills"))
    assert with_all.roots_for(tmp_path / "docs") == ("",)


def test_roots_for_relative_targets_and_symlinks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "ws" / "skills").mkdir(parents=True)
    (tmp_path / "link").symlink_to(tmp_path / "ws")
    config = Config(root=(tmp_path / "ws").resolve(), roots=("skills",))
    monkeypatch.chdir(tmp_path / "ws")
    assert config.roots_for(Path(".")) == ("skills",) and config.roots_for(Path("skills")) == ("",)
    assert config.roots_for(tmp_path / "link" / "skills") == ("",)  # reached through a symlink


def test_roots_for_keeps_default_roots_and_roots_without_a_config() -> None:
    assert Config().roots_for(Path("/x")) == DEFAULT_AGENT_SKILL_ROOTS
    assert Config(roots=("skills",)).roots_for(Path("/x")) == ("skills",)
    assert Config(root=Path("/ws")).roots_for(Path("/elsewhere")) == DEFAULT_AGENT_SKILL_ROOTS


def test_check_of_a_subfolder_uses_roots_relative_to_the_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_skill(tmp_path, "demo")
    (tmp_path / "skills-lsp.toml").write_text('roots = ["skills"]\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    config, _ = resolve_config(["skills"])
    assert [Path(f.path).parent.name for f in check_paths(["skills"], config=config).files] == ["demo"]
    monkeypatch.chdir(tmp_path / "skills")
    config, _ = resolve_config(["."])
    assert len(check_paths(["."], config=config).files) == 1


# --- every TOML spelling of the table is found ---------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        '[tool."skills-lsp"]\nignore = ["SK208"]\n',
        "[tool.'skills-lsp']\nignore = ['SK208']\n",
        '[ tool . skills-lsp ]\nignore = ["SK208"]\n',
        'tool.skills-lsp.ignore = ["SK208"]\n[project]\nname = "x"\n',
        '[tool]\nskills-lsp = { ignore = ["SK208"] }\n',
    ],
)
def test_find_config_detects_every_spelling_of_the_table(tmp_path: Path, text: str) -> None:
    (tmp_path / "pyproject.toml").write_text(text, encoding="utf-8")
    assert find_config(tmp_path) == tmp_path / "pyproject.toml"
    config, problems = load_config(tmp_path / "pyproject.toml")
    assert problems == [] and config.ignore == ("SK208",)


def test_find_config_skips_a_pyproject_that_only_mentions_skills_lsp(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\ndependencies = ["skills-lsp"]\n# see [tool.skills-lsp] docs\n',
        encoding="utf-8",
    )
    assert find_config(tmp_path) is None


def test_find_config_still_finds_a_broken_pyproject_with_our_table(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool."skills-lsp"]\nignore = [\n', encoding="utf-8")
    assert find_config(tmp_path) == tmp_path / "pyproject.toml"
    _, problems = load_config(tmp_path / "pyproject.toml")
    assert problems[0].message.startswith("Invalid TOML")


@pytest.mark.parametrize(
    ("glob", "matched", "not_matched"),
    [
        ("/skills/x/**", ["skills/x/SKILL.md"], ["deep/skills/x/SKILL.md"]),
        ("skills/x-[n]ame/**", ["skills/x-name/SKILL.md"], ["skills/x-[n]ame/SKILL.md"]),
        ("skills/x/", ["skills/x/SKILL.md", "skills/x/a/b.md"], ["skills/xy/SKILL.md"]),
        ("x/", ["deep/x/SKILL.md"], ["deep/x"]),  # a folder at any depth; a file named x is not one
        ("skills/*/SKILL.md", ["skills/a/SKILL.md"], ["skills/a/b/SKILL.md"]),
        ("SKILL.md", ["SKILL.md", "a/b/SKILL.md"], ["a/SKILL.md.bak"]),
        ("a/**/b.md", ["a/b.md", "a/x/y/b.md"], ["x/a/b.md"]),
    ],
)
def test_per_file_ignores_and_profiles_use_gitignore_patterns(
    tmp_path: Path, glob: str, matched: list[str], not_matched: list[str]
) -> None:
    text = f'[per-file-ignores]\n"{glob}" = ["SK4"]\n[profiles]\n"{glob}" = "claude-code"\n'
    config, problems = parse_config(text, tmp_path / "skills-lsp.toml")
    assert problems == []
    for rel in matched:
        assert config.ignored_for(tmp_path / rel) == ("SK4",), rel
        assert config.profile_for_path(tmp_path / rel) == "claude-code", rel
    for rel in not_matched:
        assert config.ignored_for(tmp_path / rel) == (), rel
        assert config.profile_for_path(tmp_path / rel) is None, rel


@pytest.mark.parametrize("key", ["per-file-ignores", "profiles"])
def test_a_negated_or_malformed_glob_is_sk001_at_its_line(tmp_path: Path, key: str) -> None:
    value = '["SK4"]' if key == "per-file-ignores" else '"claude-code"'
    for glob, message in (
        ("!skills/**", "cannot start with `!`"),
        ("skills\\\\", "not a valid gitignore pattern"),
    ):
        text = f'[{key}]\n"a/**" = {value}\n"{glob}" = {value}\n'
        _, problems = parse_config(text, tmp_path / "skills-lsp.toml")
        (problem,) = problems
        assert message in problem.message and problem.range.start.line == 2, (glob, problem)
