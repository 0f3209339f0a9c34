"""The position-preserving parser: delimiters, ranges, encodings and guard rails."""

from __future__ import annotations

import time

import pytest

from skills_lsp.core.model import Range
from skills_lsp.core.parse import frontmatter as fm
from skills_lsp.core.parse.frontmatter import parse_bytes, parse_text


def codes(doc: fm.Document) -> list[str]:
    return [p.kind for p in doc.problems]


def test_keys_values_and_items_carry_code_point_ranges() -> None:
    doc = parse_text(
        "---\nname: 技能-🙂x\ndescription: >\n  one\n  two\ntags:\n  - a\n  - [b, c]\n---\nBody\n"
    )
    assert codes(doc) == []
    name = doc.get("name")
    assert name is not None
    assert name.key.range == Range.of(1, 0, 1, 4)
    assert name.value.range == Range.of(1, 6, 1, 11)  # 5 code points: 技 能 - 🙂 x (the emoji is one)
    assert name.value.value == "技能-🙂x"
    desc = doc.get("description")
    assert desc is not None and desc.value.style == ">" and desc.value.value == "one two\n"
    assert desc.value.range == Range.of(2, 13, 4, 5)
    tags = doc.get("tags")
    assert tags is not None and [i.kind for i in tags.value.items] == ["scalar", "sequence"]
    assert tags.value.items[0].range == Range.of(6, 4, 6, 5)
    assert tags.value.items[1].flow and tags.value.items[1].items[1].range == Range.of(7, 8, 7, 9)
    assert doc.body == "Body" and doc.body_start_line == 9


def test_dashes_inside_values_do_not_end_the_block() -> None:
    doc = parse_text("---\nname: x\ndescription: a --- b\nnote: |\n  ---\n  kept\n---\nbody\n")
    assert codes(doc) == []
    assert doc.get("description").value.value == "a --- b"  # type: ignore[union-attr]
    assert doc.get("note").value.value == "---\nkept\n"  # type: ignore[union-attr]
    assert doc.close_line == 6


@pytest.mark.parametrize("closing", ["---", "---   ", "---\t"])
def test_closing_delimiter_allows_trailing_whitespace(closing: str) -> None:
    doc = parse_text(f"---\nname: x\n{closing}\nbody")
    assert doc.close_line == 2 and codes(doc) == []


@pytest.mark.parametrize("closing", ["----", "--- end", " ---x"])
def test_near_delimiters_do_not_close(closing: str) -> None:
    doc = parse_text(f"---\nname: x\n{closing}\nbody")
    assert codes(doc) == [fm.P_UNCLOSED]
    assert doc.problems[0].range == Range.of(0, 0, 0, 3)


def test_bom_and_crlf() -> None:
    doc = parse_bytes(b"\xef\xbb\xbf---\r\nname: x\r\ndescription: d\r\n---\r\nbody\r\n")
    assert doc.has_bom and doc.cr_line_breaks and codes(doc) == []
    assert doc.get("description").value.range == Range.of(2, 13, 2, 14)  # type: ignore[union-attr]
    assert doc.body == "body"


def test_cr_only_line_endings() -> None:
    doc = parse_text("---\rname: x\rdescription: d\r---\rbody\r")
    assert codes(doc) == [] and doc.get("name") is not None and doc.body == "body"


@pytest.mark.parametrize(
    ("text", "code", "rng"),
    [
        ("no frontmatter\n", fm.P_NO_FRONTMATTER, Range.of(0, 0, 0, 14)),
        ("---\nname: x\n", fm.P_UNCLOSED, Range.of(0, 0, 0, 3)),
        ("---\nname: [x\n---\n", fm.P_YAML_SYNTAX, None),
        ("---\nname: x\ndescription: Use when: asked\n---\n", fm.P_UNQUOTED_COLON, Range.of(2, 13, 2, 28)),
        ("---\nname: x\nname: y\n---\n", fm.P_DUPLICATE_KEY, Range.of(2, 0, 2, 4)),
        ("---\nmetadata:\n  a: 1\n  a: 2\n---\n", fm.P_DUPLICATE_KEY, Range.of(3, 2, 3, 3)),
        ("---\n- a\n- b\n---\n", fm.P_NOT_MAPPING, Range.of(1, 0, 2, 3)),
        ("---\njust text\n---\n", fm.P_NOT_MAPPING, Range.of(1, 0, 1, 9)),
        ("---\n---\n", fm.P_EMPTY, Range.of(0, 0, 1, 3)),
        ("---\n# only a comment\n\n---\n", fm.P_EMPTY, Range.of(0, 0, 3, 3)),
        ("---\na: 1\n--- b: 2\n---\n", fm.P_MULTIPLE_DOCUMENTS, Range.of(2, 0, 2, 3)),
    ],
)
def test_structural_problems_are_reported_with_positions(text: str, code: str, rng: Range | None) -> None:
    doc = parse_text(text)
    assert code in codes(doc)
    problem = next(p for p in doc.problems if p.kind == code)
    if rng is not None:
        assert problem.range == rng
    # a syntax error points inside the frontmatter, never past it
    assert problem.range.start.line < max(len(doc.lines), 1)


def test_syntax_error_points_at_the_offending_line() -> None:
    doc = parse_text("---\nname: ok\ndescription: [unclosed\nlicense: MIT\n---\n")
    problem = doc.problems[0]
    assert problem.kind == fm.P_YAML_SYNTAX
    assert 2 <= problem.range.start.line <= 3
    assert problem.message.startswith("Invalid YAML: ")


def test_invalid_utf8_is_reported_at_the_bad_byte() -> None:
    doc = parse_bytes(b"---\nname: x\ndescription: caf" + b"\xe9\n---\n")
    problem = doc.problems[0]
    assert problem.kind == fm.P_NOT_UTF8
    assert problem.range == Range.of(2, 16, 2, 17)
    assert "0xe9" in problem.message


def test_file_size_guard() -> None:
    doc = parse_bytes(b"---\nname: x\n---\n" + b"a" * (fm.MAX_FILE_BYTES + 1))
    assert codes(doc) == [fm.P_FILE_TOO_LARGE] and doc.root is None


def test_frontmatter_size_guard() -> None:
    big = "x" * (fm.MAX_FRONTMATTER_CHARS + 10)
    doc = parse_text(f"---\nname: {big}\n---\nbody")
    assert codes(doc) == [fm.P_FRONTMATTER_TOO_LARGE]


def _timed(text: str) -> tuple[fm.Document, float]:
    start = time.perf_counter()
    doc = parse_text(text)
    return doc, time.perf_counter() - start


@pytest.mark.parametrize(
    "yaml_text",
    [
        "a: " + "[" * 30000 + "]" * 30000,  # would overflow libyaml-based composers
        "a:\n" + "".join(" " * i + "- \n" for i in range(1, 400)),
        "a: " + "- " * 20000 + "x",
        "".join(f"{'  ' * i}k{i}:\n" for i in range(300)),
    ],
)
def test_deep_nesting_is_refused_not_crashed(yaml_text: str) -> None:
    doc, _ = _timed(f"---\n{yaml_text}\n---\n")
    assert doc.problems, "deep input must produce a problem"
    assert doc.problems[0].kind in (fm.P_TOO_COMPLEX, fm.P_YAML_SYNTAX, fm.P_FRONTMATTER_TOO_LARGE)


def test_billion_laughs_is_refused() -> None:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i, name in enumerate("bcdefghi"):
        prev = "abcdefghi"[i]
        lines.append(f"{name}: &{name} [{','.join(['*' + prev] * 9)}]")
    doc, _ = _timed("---\n" + "\n".join(lines) + "\n---\n")
    assert codes(doc) == [fm.P_TOO_COMPLEX]
    assert "aliases expand" in doc.problems[0].message


def test_aliases_within_budget_resolve() -> None:
    doc = parse_text("---\nbase: &b {k: v}\ncopy: *b\n---\n")
    assert codes(doc) == []
    assert doc.plain_data() == {"base": {"k": "v"}, "copy": {"k": "v"}}


@pytest.mark.parametrize(
    ("scalar", "value"),
    [
        ("1.10", 1.1),
        ("'1.10'", "1.10"),
        ("true", True),
        ("yes", "yes"),
        ("~", None),
        ("", None),
        ("0x1F", 31),
        ("0o17", 15),
        ("!!str 12", "12"),
        (".inf", float("inf")),
        ("null", None),
    ],
)
def test_plain_data_uses_yaml_core_schema(scalar: str, value: object) -> None:
    doc = parse_text(f"---\nv: {scalar}\n---\n")
    assert doc.plain_data() == {"v": value}


def test_raw_scalar_text_is_kept() -> None:
    doc = parse_text("---\nversion: 1.10\nname: 404\n---\n")
    assert doc.get("version").value.value == "1.10"  # type: ignore[union-attr]
    assert doc.get("name").value.value == "404"  # type: ignore[union-attr]
