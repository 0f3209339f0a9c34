"""`skills-lsp check` and ignore files: `.gitignore` (with negation), `.ignore`, `extend-exclude`,
`--no-respect-gitignore` and the config's `respect-gitignore`."""

from __future__ import annotations

import io
import json
from pathlib import Path

from skills_lsp.cli import main

BAD = "---\nname: {name}\ndescription: x\n---\nSee [a](references/none.md).\n"  # a missing file


def _check(*argv: str) -> tuple[int, list[str]]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["check", "--no-cache", "--format", "json", *argv], out, err)
    return code, sorted({Path(f["path"]).parent.name for f in json.loads(out.getvalue())})


def _workspace(tmp_path: Path) -> Path:
    for name in ("generated-a", "generated-b", "keep-me", "own"):
        skill = tmp_path / "skills" / name / "SKILL.md"
        skill.parent.mkdir(parents=True)
        skill.write_text(BAD.format(name=name), encoding="utf-8")
    # Every generated skill is ignored except one, which is re-included by negation.
    (tmp_path / ".gitignore").write_text("skills/generated-*/\n!skills/generated-b/\n")
    return tmp_path


def test_gitignore_with_negation(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    assert _check(str(root)) == (1, ["generated-b", "keep-me", "own"])


def test_no_respect_gitignore_checks_everything(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    assert _check("--no-respect-gitignore", str(root)) == (
        1,
        ["generated-a", "generated-b", "keep-me", "own"],
    )


def test_config_can_turn_it_off_and_the_flag_back_on(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    (root / "skills-lsp.toml").write_text("respect-gitignore = false\n")
    assert _check(str(root))[1] == ["generated-a", "generated-b", "keep-me", "own"]
    assert _check("--respect-gitignore", str(root))[1] == ["generated-b", "keep-me", "own"]


def test_extend_exclude_and_dot_ignore(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    (root / "skills-lsp.toml").write_text('extend-exclude = ["/skills/[ko]*/", "!skills/own/"]\n')
    (root / ".ignore").write_text("skills/generated-b/\n")  # .ignore overrides .gitignore's negation
    assert _check(str(root))[1] == ["own"]
    # `extend-exclude` is the config's own: it applies with ignore files switched off too.
    assert _check("--no-respect-gitignore", str(root))[1] == ["generated-a", "generated-b", "own"]


def test_a_file_named_on_the_command_line_is_checked_even_if_ignored(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    assert _check(str(root / "skills" / "generated-a" / "SKILL.md"))[1] == ["generated-a"]


def test_a_bad_pattern_in_the_config_is_reported(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    (root / "skills-lsp.toml").write_text('extend-exclude = ["ok/", 3]\n')
    out, err = io.StringIO(), io.StringIO()
    main(["check", "--no-cache", str(root)], out, err)
    assert "skills-lsp.toml:1:1: SK001" in out.getvalue()
    assert "`extend-exclude`: expected a list of gitignore patterns" in out.getvalue()
