"""The fast reading of frontmatter (libyaml's C composer, ranges made on demand) gives the tree,
problems and findings of the full event-by-event reading, on generated YAML and on the examples."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skills_lsp.core.errors import SkillError
from skills_lsp.core.parse import frontmatter as fm
from skills_lsp.core.parse import skill_parser
from skills_lsp.core.parse.skill_parser import parse_skill_markdown
from skills_lsp.core.rules.validate import validate_text

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


@contextmanager
def full_reading() -> Iterator[None]:
    """Every YAML document read event by event, as before the fast paths (the crate port's tree
    without ranges too)."""
    with (
        mock.patch.object(fm, "_composed_tree", lambda *_: None),
        mock.patch.object(skill_parser, "plain_tree", lambda *_: None),
        mock.patch.object(skill_parser, "simple_tree", lambda *_: None),
    ):
        yield


def shape(node: fm.YamlNode | None) -> Any:
    if node is None:
        return None
    value: Any = node.value
    if node.kind == "sequence":
        value = [shape(item) for item in node.value]
    elif node.kind == "mapping":
        value = [(shape(p.key), shape(p.value)) for p in node.value]
    elif node.kind == "alias":
        value = (node.value, shape(node.target) if node.target is not None else None)
    return (node.kind, node.range, value, node.style, node.flow, node.tag, node.anchor)


def document(doc: fm.Document) -> Any:
    return (doc.lines, doc.open_line, doc.close_line, shape(doc.root), doc.problems, doc.plain_data())


def findings(text: str) -> list[Any]:
    return [
        (f.code, f.severity, f.message, f.range, [(x.title, x.applicability, x.edits) for x in f.fixes])
        for f in validate_text(text, "skills/sample/SKILL.md")
    ]


def crate_reading(text: str) -> Any:
    try:
        return parse_skill_markdown("skills/sample/SKILL.md", text)
    except SkillError as exc:
        return (type(exc).__name__, str(exc))


def assert_same(text: str) -> None:
    fast = (document(fm.parse_text(text)), findings(text), crate_reading(text))
    with full_reading():
        full = (document(fm.parse_text(text)), findings(text), crate_reading(text))
    assert fast == full


# Pieces of frontmatter lines: plain, quoted and block scalars, flow lists, unquoted `: `,
# duplicate keys, anchors, aliases, tags, comments, numbers and nulls, Unicode line breaks and
# control characters, nested metadata.
KEYS = st.sampled_from(["name", "description", "metadata", "tags", "allowed-tools", "license", "x", "名前"])
SCALARS = st.one_of(
    st.sampled_from(
        [
            "demo",
            "Use when: a colon",
            "'quoted: yes'",
            '"dq \\u00e9 \\t"',
            "404",
            "0x1F",
            "1.5e3",
            "~",
            "null",
            "yes",
            "true",
            "",
            "[a, b, 'c d']",
            "{k: v, n: 1}",
            "[]",
            "{}",
            "[a, [b, {c: d}]]",
            "!!str 12",
            "!custom x",
            "&a anchored",
            "*a",
            "Hello! R&D *.py",
            "a # comment",
            "|\n  block\n  text\n",
            ">-\n  folded\n  text\n",
            "\n  - one\n  - two",
            "\n  k: 1\n  k: 2",
            "\n  nested:\n    deeper: [1, 2]",
            "tab\there",
            "line\u2028sep",
            "nel\x85x",
            "bell\x07",
            "\ue028stand-in",
        ]
    ),
    st.text(st.characters(blacklist_categories=("Cs",)), max_size=12),
)
LINES = st.one_of(
    st.tuples(KEYS, SCALARS).map(lambda kv: f"{kv[0]}: {kv[1]}"),
    st.sampled_from(["# a comment", "", "  ", "- item", "? complex", ": value", "---", "...", "%YAML 1.2"]),
)


@st.composite
def skill_files(draw: st.DrawFn) -> str:
    lines = draw(st.lists(LINES, min_size=0, max_size=8))
    bom = draw(st.sampled_from(["", "\ufeff"]))
    eol = draw(st.sampled_from(["\n", "\r\n"]))
    body = draw(
        st.sampled_from(["# Title\n\nSee [ref](references/a.md).", "", "body", "x\n---\ny", "\n\n b \n"])
    )
    # Delimiters as the crate trims them: Unicode spaces count, \x1c-\x1f do not.
    opening, closing = draw(
        st.lists(st.sampled_from(["---", "  ---\t", "\u3000---", "---\x1c", "--- -"]), min_size=2, max_size=2)
    )
    return bom + eol.join([opening, *lines, closing, body])


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(skill_files())
def test_fast_and_full_readings_agree(text: str) -> None:
    assert_same(text)


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=200))
def test_fast_and_full_readings_agree_on_any_bytes(data: bytes) -> None:
    """Bad UTF-8 and arbitrary bytes after a valid opening."""
    raw = b"---\nname: a\n" + data + b"\n---\nbody\n"
    fast = document(fm.parse_bytes(raw))
    with full_reading():
        full = document(fm.parse_bytes(raw))
    assert fast == full


def test_examples_read_the_same() -> None:
    texts = [p.read_text(encoding="utf-8") for p in sorted(EXAMPLES.rglob("*.md"))]
    assert len(texts) > 10
    for text in texts:
        assert_same(text)


def test_plain_frontmatter_takes_the_fast_path() -> None:
    """Else the comparisons above would compare the full reading with itself."""
    doc = fm.parse_text("---\nname: demo\ndescription: Does things.\ntags: [a, b]\n---\nbody\n")
    assert isinstance(doc.root, fm._ComposedNode)
    assert doc.get("tags") is not None


def test_duplicate_keys_are_kept_and_reported() -> None:
    """libyaml's loader keeps only the last value of a repeated key; the composed tree keeps both."""
    doc = fm.parse_text("---\nname: a\nname: b\ndescription: d\n---\n")
    assert isinstance(doc.root, fm._ComposedNode)
    assert doc.keys == ["name", "name", "description"]
    assert [p.kind for p in doc.problems] == [fm.P_DUPLICATE_KEY]


def test_tags_anchors_and_errors_take_the_full_reading() -> None:
    for source in ("name: !!str 1\n", "a: &x 1\nb: *x\n", "a: [1\n", "a: 1\n---\nb: 2\n"):
        assert fm._NODE_PROPERTY.search(source) or fm._composed_tree(source, source.split("\n"), 0) is None


def test_rust_lines_without_a_carriage_return_is_a_plain_split() -> None:
    """Text without a CR is split as it is; with one, the per-line trim (a CR before a LF, and a
    final lone CR, as the port has always read it) still applies."""
    rust_lines = skill_parser.rust_lines

    assert rust_lines("a\nb\n") == ["a", "b"]
    assert rust_lines("a\n\nb") == ["a", "", "b"]
    assert rust_lines("a\r\nb\rc\r\n\r") == ["a", "b\rc", ""]
    assert rust_lines("\n") == [""]
    assert rust_lines("") == []


def split_by_lines(text: str) -> tuple[list[str], int | None, str]:
    """The crate port's split as it was: every line of the file, then the body joined again."""
    lines = skill_parser.rust_lines(text)
    if not lines or skill_parser.rust_trim(lines[0]) != "---":
        return lines[:1], None, ""
    close = next((i for i in range(1, len(lines)) if skill_parser.rust_trim(lines[i]) == "---"), None)
    if close is None:
        return lines[:1], None, ""
    return lines[: close + 1], close, skill_parser.rust_trim("\n".join(lines[close + 1 :]))


PIECES = st.sampled_from(
    ["---", " --- ", "\u2028---", "---\x1f", "----", "a", "", " ", "\t", "\u3000", "\x0b", "\x85"]
)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.tuples(PIECES, st.sampled_from(["\n", "\n\n", ""])), max_size=10))
def test_frontmatter_lines_split_as_every_line_would(pieces: list[tuple[str, str]]) -> None:
    """The port reads lines only up to the closing delimiter and keeps the body whole: the lines,
    the delimiter and the trimmed body are those of splitting the whole file (text without CR)."""
    text = "".join(piece + end for piece, end in pieces)
    lines, close, body_start = skill_parser._frontmatter_lines(text)
    expected_lines, expected_close, expected_body = split_by_lines(text)
    assert (lines[:1] if close is None else lines, close) == (expected_lines, expected_close)
    if close is not None:
        assert skill_parser.rust_trim(text[body_start:]) == expected_body


@settings(max_examples=500, deadline=None)
@given(
    st.text(st.sampled_from([*skill_parser.RUST_WHITESPACE, "a", "\x1c", "\u200b"]), max_size=700),
    st.integers(min_value=0, max_value=800),
)
def test_the_body_is_trimmed_as_rust_trims_it_with_one_copy(text: str, start: int) -> None:
    """Long whitespace runs at either end included (the trailing run is read in blocks)."""
    assert skill_parser.rust_trimmed_from(text, start) == skill_parser.rust_trim(text[start:])
