"""The shortcuts of `find_references` give exactly what markdown-it gives.

A piece that is one plain paragraph, or one single-line list item, has its block text worked out
without markdown-it's block parser (`_simple_blocks`); a body with a `]:` is cut into pieces too,
its definitions read from every piece before any link is resolved; the cutter skips plain lines
and a fence's code lines. Each is checked against markdown-it itself on generated Markdown, and
on every body of the examples."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from skills_lsp.core.parse.frontmatter import parse_text
from skills_lsp.core.parse.markdown import (
    _blocks,
    _body_text,
    _find_references,
    _simple_blocks,
    find_references,
)

HEAD = "---\nname: x\ndescription: y\n---\n"
EXAMPLES = Path(__file__).resolve().parents[3] / "examples"

_WORDS = [
    "plain",
    "see",
    "[guide](references/guide.md)",
    '[t](<references/my file.md> "title")',
    "[t](references/a.md 'title')",
    "[t](references/a\\).md)",
    "\\[not](references/no.md)",
    "![img](assets/a.png)",
    "[x][ref]",
    "[ref]",
    "[ref][]",
    "[Other][REF]",
    "[x][missing]",
    "`scripts/span.py`",
    "``a ` [c](references/c.md)``",
    "`[d](references/d.md)`",
    "scripts/run.py",
    "./assets/x.png",
    "references/",
    "my/scripts/x.py",
    "<span>",
    "<https://example.com/scripts/x>",
    "*em [e](references/e.md)*",
    "x[i]:",
    "&amp;",
    "#",
    "##",
    "a#",
    "[",
    "]",
    "](",
    "\\",
    "  ",
    "\t",
]
_LEADS = [
    "**",
    "*",
    "** *",
    "*\t",
    "| ",
    "\u00e9t\u00e9 ",
    "\u00a0",
    "\u3000",
    "\u2028",
    "\u00a0-",
    "",
    "- ",
    "* ",
    "+ ",
    "1. ",
    "2) ",
    "-  ",
    "- - ",
    "1.",
    "-\t",
    "> ",
    "# ",
    "## ",
    "###### ",
    "####### ",
    "#\t",
    "#",
    "# # ",
    "    ",
    "  ",
    "[",
    "!",
    "`",
    "```",
]
_BLOCK_LINES = [
    "",
    "```",
    "```python",
    "~~~",
    "    ```",
    "[ref]: references/defined.md",
    '[REF]: <references/other.md> "t"',
    "[ref]:",
    "  references/next-line.md",
    "[unused]: references/unused.md",
    "<div>",
    "</div>",
    "<!-- c -->",
    "<!--",
    "<!-- scripts/in-comment.py",
    "-->",
    "a --> [b](references/b.md)",
    " <!--",
    "<!-->",
    "---",
    "===",
    "***",
    "1. ```",
    "   ```",
]
_TEXT = st.lists(st.sampled_from(_WORDS), min_size=1, max_size=5).map(" ".join)
_LINE = st.one_of(
    st.sampled_from(_BLOCK_LINES),
    st.builds(lambda lead, text: lead + text, st.sampled_from(_LEADS), _TEXT),
)


def _doc_body(lines: list[str]) -> str:
    return "\n".join(lines) + "\n"


@settings(deadline=timedelta(seconds=5), max_examples=2000)
@given(st.lists(_LINE, max_size=25))
@example(["[x][ref]", "", "```", "a[0]: b", "```", "", "[ref]: references/r.md"])
@example(["see [ref]", "", "- [ref]", "", "[ref]: scripts/r.py"])
@example(["plain scripts/a.py", "next [g](references/g.md)  ", "", "- item scripts/b.py   "])
@example(["- a", "```", "x[i]: y", "scripts/in-code.py", "```", "[ref]"])
@example(["- a", "  ```", "foo", "  ```", "", "scripts/in-code.py", "```"])  # two readings of the fence
@example(["```", "code", "    ```", "\tscripts/in-code.py", "```", "", "scripts/out.py"])
@example(["<!-- a", "", "scripts/in-comment.py", "x -->", "scripts/out.py", "", "[b](references/b.md)"])
@example(["text", "<!--", "", "scripts/after-a-paragraph.py", "-->", "", "scripts/out.py"])
@example(["<!-- a -->", "- [ref]", "", "[ref]: scripts/r.py"])
@example(["- a", "  <!--", "", "```", "scripts/in-code.py", "-->", "scripts/also-in-code.py", "```"])
@example(["[ref]:", "**\\", "1. ```", "**[x][ref]"])  # a backslash escapes the piece's last line break
def test_the_shortcuts_give_the_references_of_one_parse(lines: list[str]) -> None:
    doc = parse_text(HEAD + _doc_body(lines))
    assert find_references(doc) == _find_references(doc, split=False)


@settings(deadline=timedelta(seconds=5), max_examples=2000)
@given(st.lists(_LINE, min_size=1, max_size=6))
@example(["word  ", "`x` [a](b)  "])
@example(["1. text   "])
@example(["- [x](references/y.md) \t"])
@example(["## See [a](references/a.md) ## ", "then scripts/b.py"])
@example(["# scripts/c.py #", "plain"])
@example(["#", "[d](references/d.md)"])
def test_a_simple_piece_has_the_blocks_markdown_it_finds(lines: list[str]) -> None:
    piece = "\n".join(lines)
    simple = _simple_blocks(piece, 3)
    if simple is not None:
        assert simple == _blocks(piece, 3, {})


def test_simple_pieces_are_taken_and_others_are_not() -> None:
    assert _simple_blocks("Run scripts/a.py\nthen [b](references/b.md)\n\n", 0) is not None
    assert _simple_blocks("- see scripts/a.py", 0) is not None
    assert _simple_blocks("## Steps [a](references/a.md) ##\nthen scripts/b.py", 0) is not None
    for piece in (
        "- a\n  b",
        "a\n\nb",
        "[a]: b",
        "- # h",
        "  a",
        "a\n===",
        "```\nscripts/x",
        "<p>",
        "# h\n- i",
    ):
        assert _simple_blocks(piece, 0) is None, piece


def _example_bodies() -> list[Path]:
    return sorted(path for path in EXAMPLES.rglob("*.md"))


@pytest.mark.parametrize("path", _example_bodies(), ids=lambda path: str(path.relative_to(EXAMPLES)))
def test_every_example_body_gives_the_references_of_one_parse(path: Path) -> None:
    doc = parse_text(path.read_text(encoding="utf-8"))
    assert find_references(doc) == _find_references(doc, split=False)


@settings(deadline=timedelta(seconds=5), max_examples=1000)
@given(st.text(alphabet="-\n\r \ufeffab\u2028\x85", max_size=60), st.integers(min_value=0, max_value=12))
@example("---\na\n---\nbody\n", 3)
@example("\ufeff---\n---\n\nb", 2)
def test_the_body_text_is_its_lines_joined(text: str, start: int) -> None:
    """`_body_text` slices the document's text instead of joining the body's lines: the same
    text, or None where it cannot tell (a CR in the text, no body)."""
    doc = parse_text(text)
    found = _body_text(doc, start)
    if found is not None:
        assert found == "\n".join(doc.lines[start:])
    else:
        assert "\r" in doc.text or start >= len(doc.lines)
