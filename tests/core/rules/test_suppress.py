"""Suppression comments and per-file ignores: what each form covers, what is text and not a
directive, SK005 for stale or malformed ones and its fixes, and the same answers from the cache
and with workspace findings (SK701)."""

from __future__ import annotations

from pathlib import Path

import pytest

from skills_lsp.core.files.config import Config
from skills_lsp.core.model import Finding
from skills_lsp.core.rules.check import check_paths
from skills_lsp.core.rules.fixing import apply_edits
from skills_lsp.core.rules.validate import DEFAULT_CONFIG, validate_text
from skills_lsp.core.workspace.settings import parse_config

PATH = "/ws/skills/my-skill/SKILL.md"
HEAD = "---\nname: my-skill\ndescription: Checks things. Use when asked to check things.\n"


def found(text: str, config: Config = DEFAULT_CONFIG) -> list[tuple[str, int]]:
    return [(f.code, f.range.start.line) for f in validate_text(text, PATH, config=config)]


def findings(text: str) -> list[Finding]:
    return validate_text(text, PATH)


def doc(*fm: str, body: str = "Steps.\n") -> str:
    return HEAD + "".join(f"{line}\n" for line in fm) + "---\n\n" + body


# --- frontmatter ---------------------------------------------------------------------------------


def test_a_trailing_comment_covers_its_line() -> None:
    assert found(doc("licence: MIT", "foo: 1")) == [("SK401", 3), ("SK401", 4)]
    assert found(doc("licence: MIT  # skills-lsp: ignore[SK401]", "foo: 1")) == [("SK401", 4)]


def test_a_comment_line_covers_the_next_line() -> None:
    assert found(doc("# skills-lsp: ignore[SK401]", "licence: MIT", "foo: 1")) == [("SK401", 5)]


def test_ignore_file_covers_the_whole_file() -> None:
    text = doc(
        "licence: MIT", "# skills-lsp: ignore-file[SK401, SK603]", "foo: 1", body="See references/x.md\n"
    )
    assert found(text) == []


def test_no_codes_means_every_code_and_prefixes_work() -> None:
    assert found(doc("licence: MIT  # skills-lsp: ignore")) == []
    assert found(doc("licence: MIT  # skills-lsp: ignore[SK4]")) == []
    assert found(doc("licence: MIT  # skills-lsp: ignore[sk401]")) == []  # any case


def test_a_comment_inside_a_value_is_text() -> None:
    text = doc("metadata:", "  note: |", "    # skills-lsp: ignore[SK401]", "licence: MIT")
    assert found(text) == [("SK401", 6)]
    quoted = doc('compatibility: "a', '  # skills-lsp: ignore[SK401]"', "licence: MIT")
    assert found(quoted) == [("SK401", 5)]


def test_malformed_frontmatter_directives_are_sk005() -> None:
    (bare,) = findings(doc("licence: MIT  # skills-lsp: ignore SK401"))[1:]
    assert bare.code == "SK005" and "Put the codes in brackets: `# skills-lsp: ignore[SK401]`" in bare.message
    (typo,) = [f for f in findings(doc("licence: MIT  # skills-lsp: ignroe[SK401]")) if f.code == "SK005"]
    assert "Unknown suppression" in typo.message and not typo.fixes


# --- body ----------------------------------------------------------------------------------------


def test_disable_and_enable_make_a_block() -> None:
    body = (
        "references/a.md\n<!-- skills-lsp-disable SK603 -->\nreferences/b.md\n"
        "<!-- skills-lsp-enable SK603 -->\nreferences/c.md\n"
    )
    assert found(doc(body=body)) == [("SK603", 5), ("SK603", 9)]


def test_enable_closes_only_the_codes_it_names() -> None:
    body = (
        "<!-- skills-lsp-disable SK603, SK606 -->\nreferences/a.md\n<!-- skills-lsp-enable SK603 -->\n"
        "references/c.md and `references\\d.md`\n"
    )
    # SK606 (the backslash) stays silenced; both references are SK603 again.
    assert found(doc(body=body)) == [("SK603", 8), ("SK603", 8)]


def test_a_disable_without_enable_runs_to_the_end() -> None:
    assert (
        found(doc(body="Intro.\n<!-- skills-lsp-disable SK603 -->\nreferences/a.md\n\nreferences/b.md\n"))
        == []
    )


def test_a_leading_disable_covers_the_frontmatter_too() -> None:
    leading = doc("licence: MIT", body="\n<!-- skills-lsp-disable SK401 -->\n# Title\n")
    assert found(leading) == []
    later = doc("licence: MIT", body="# Title\n<!-- skills-lsp-disable SK401 -->\n")
    assert [c for c, _ in found(later)] == ["SK401", "SK005"]


def test_next_line_and_same_line() -> None:
    body = (
        "<!-- skills-lsp-disable-next-line SK603 -->\nreferences/a.md\nreferences/b.md\n"
        "references/c.md <!-- skills-lsp-disable-line SK603 -->\n"
    )
    assert found(doc(body=body)) == [("SK603", 7)]


@pytest.mark.parametrize(
    "wrapped",
    [
        "```\n<!-- skills-lsp-disable -->\n```\n",
        "~~~~md\n<!-- skills-lsp-disable -->\n```\n~~~~\n",
        "Write `<!-- skills-lsp-disable -->` to silence everything.\n",
        "Write ``<!-- skills-lsp-disable --> `x` `` to silence everything.\n",
    ],
)
def test_directives_in_code_are_text(wrapped: str) -> None:
    assert found(doc(body=wrapped + "references/a.md\n")) == [("SK603", found_line(wrapped))]


def found_line(wrapped: str) -> int:
    return 5 + wrapped.count("\n")


def test_unknown_verbs_and_codes_are_sk005() -> None:
    (typo,) = findings(doc(body="<!-- skills-lsp-disabel SK603 -->\n"))
    assert typo.code == "SK005" and "Unknown suppression `skills-lsp-disabel`" in typo.message
    (unknown,) = findings(doc(body="<!-- skills-lsp-disable SK999 -->\n"))
    assert unknown.message == "Unused suppression: unknown rule code `SK999`."


# --- SK005 and its fixes ---------------------------------------------------------------------------


def fixed(text: str) -> str:
    (stale,) = [f for f in findings(text) if f.code == "SK005"]
    (fix,) = stale.fixes
    return apply_edits(text, fix.edits)


def test_the_fix_removes_a_whole_stale_comment() -> None:
    assert fixed(doc("license: MIT  # skills-lsp: ignore[SK401]")) == doc("license: MIT")
    assert fixed(doc("# skills-lsp: ignore[SK401]", "license: MIT")) == doc("license: MIT")
    assert fixed(doc(body="<!-- skills-lsp-disable-next-line SK603 -->\nSteps.\n")) == doc()
    assert fixed(doc(body="Steps. <!-- skills-lsp-disable-line SK603 -->\n")) == doc()


def test_the_fix_removes_only_the_stale_codes() -> None:
    text = doc("licence: MIT  # skills-lsp: ignore[SK401, SK303]")
    (stale,) = [f for f in findings(text) if f.code == "SK005"]
    assert stale.message == "Unused suppression of `SK303`: no finding of it to silence."
    assert fixed(text) == doc("licence: MIT  # skills-lsp: ignore[SK401]")
    html = doc(body="references/a.md <!-- skills-lsp-disable-line SK603 SK6 SK1 -->\n")
    assert [f.code for f in findings(html)] == ["SK005"]  # SK603 and SK6 both silence it; SK1 is stale
    assert fixed(html) == doc(body="references/a.md <!-- skills-lsp-disable-line SK603 SK6 -->\n")


def test_sk005_is_not_silenced_by_comments_but_by_config() -> None:
    text = doc("license: MIT  # skills-lsp: ignore[SK401]", "# skills-lsp: ignore-file")
    assert [c for c, _ in found(text)] == ["SK005", "SK005"]
    assert found(text, Config(ignore=("SK005",))) == []


# --- per-file ignores ------------------------------------------------------------------------------


def test_per_file_ignores_are_read_and_applied(tmp_path: Path) -> None:
    text = '[per-file-ignores]\n"skills/legacy/**" = ["SK4", "SK603", "SK208"]\n"*.md" = ["SK608"]\n'
    config, problems = parse_config(text, tmp_path / "skills-lsp.toml")
    assert problems == []
    assert config.per_file_ignores == (("skills/legacy/**", ("SK4", "SK603", "SK208")), ("*.md", ("SK608",)))
    assert config.ignored_for(tmp_path / "skills" / "legacy" / "SKILL.md") == (
        "SK4",
        "SK603",
        "SK208",
        "SK608",
    )
    assert config.ignored_for(tmp_path / "skills" / "new" / "SKILL.md") == ("SK608",)
    legacy = tmp_path / "skills" / "legacy" / "SKILL.md"
    legacy.parent.mkdir(parents=True)
    legacy.write_text(doc("licence: MIT", "name2: x", body="See references/a.md\n"), encoding="utf-8")
    assert check_paths([tmp_path], config=config).findings == []


@pytest.mark.parametrize(
    ("text", "message", "line"),
    [
        ('per-file-ignores = ["SK4"]\n', '`per-file-ignores`: expected a table of "glob" = ["CODE", ...]', 0),
        ('[per-file-ignores]\n"a/**" = ["SK999"]\n', "no rule code starts with `SK999`", 1),
        ('[per-file-ignores]\n"a/**" = "SK4"\n', "expected a list of rule codes", 1),
    ],
)
def test_bad_per_file_ignores_are_sk001_at_their_line(
    tmp_path: Path, text: str, message: str, line: int
) -> None:
    _, problems = parse_config(text, tmp_path / "skills-lsp.toml")
    (problem,) = problems
    assert message in problem.message and problem.range.start.line == line


# --- the whole workspace -------------------------------------------------------------------------


def test_a_suppressed_sk701_is_used_and_the_cache_gives_the_same_answer(tmp_path: Path) -> None:
    for folder in ("one", "two"):
        path = tmp_path / "skills" / folder / "SKILL.md"
        path.parent.mkdir(parents=True)
        comment = "  # skills-lsp: ignore[SK701, SK208]" if folder == "two" else ""
        path.write_text(
            f"---\nname: one{comment}\ndescription: Does one thing. Use when asked.\n---\n\nSteps.\n",
            encoding="utf-8",
        )
    cache = tmp_path / "cache"
    first = check_paths([tmp_path], cache_dir=cache)
    assert [(Path(f.path).parent.name, f.code) for f in first.findings] == [("one", "SK701")]
    second = check_paths([tmp_path], cache_dir=cache)
    assert second.cached == 2
    assert [(f.path, f.code, f.range) for f in second.findings] == [
        (f.path, f.code, f.range) for f in first.findings
    ]


def test_a_reason_after_the_codes_is_kept_when_codes_are_removed() -> None:
    yaml = doc("licence: MIT  # skills-lsp: ignore[SK401, SK303] -- a vendor key")
    assert fixed(yaml) == doc("licence: MIT  # skills-lsp: ignore[SK401] -- a vendor key")
    html = doc(body="references/a.md <!-- skills-lsp-disable-line SK603, SK1 -- written later -->\n")
    assert [f.code for f in findings(html)] == ["SK005"]
    assert fixed(html) == doc(
        body="references/a.md <!-- skills-lsp-disable-line SK603 -- written later -->\n"
    )


def test_empty_brackets_are_sk005_not_every_code() -> None:
    result = findings(doc("licence: MIT  # skills-lsp: ignore[]"))
    assert [f.code for f in result] == ["SK401", "SK005"]
    assert "`ignore[]` names no code" in result[1].message


def test_an_unclosed_bracket_is_sk005_and_silences_nothing() -> None:
    result = findings(doc("licence: MIT  # skills-lsp: ignore[SK4"))
    assert [f.code for f in result] == ["SK401", "SK005"]
    assert "unclosed `[`" in result[1].message and not result[1].fixes
    alone = findings(doc("# skills-lsp: ignore-file[SK401, SK603", "licence: MIT"))
    assert [f.code for f in alone] == ["SK005", "SK401"]


@pytest.mark.parametrize(
    "body",
    [
        "<!-- skills-lsp-disable-next-line SK603\nreferences/a.md\n",
        "<!-- skills-lsp-disable SK603 --\nreferences/a.md\n",
        "references/a.md <!--skills-lsp-disable-line\n",
    ],
)
def test_an_unterminated_html_directive_is_sk005_and_silences_nothing(body: str) -> None:
    result = findings(doc(body=body))
    assert sorted(f.code for f in result) == ["SK005", "SK603"]
    (problem,) = [f for f in result if f.code == "SK005"]
    assert "`-->`" in problem.message and problem.range.start.line == 5


def test_a_terminated_directive_after_an_unterminated_one_still_works() -> None:
    body = "references/a.md <!-- skills-lsp-disable-line SK603 --> <!-- skills-lsp-x\n"
    assert [f.code for f in findings(doc(body=body))] == ["SK005"]
