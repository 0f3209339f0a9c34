"""The pieces `find_references` parses alone give what one parse of the whole body gives.

`find_references` cuts a body at lines where every block before has ended and parses only the
pieces that may hold a reference; `_find_references(doc, split=False)` parses the whole body
in one go, as before the cutting. Generated bodies mix the constructs that decide where a cut
is safe (fences of every indentation, lists, block quotes, HTML, indented code, headings,
thematic breaks, tabs) with lines that hold references."""

from __future__ import annotations

from datetime import timedelta
from itertools import pairwise

from hypothesis import example, given, settings
from hypothesis import strategies as st

from skills_lsp.core.parse.frontmatter import parse_text
from skills_lsp.core.parse.markdown import (
    _find_references,
    _may_refer,
    _pieces,
    _text_to_parse,
    _top_level_starts,
    find_references,
)

HEAD = "---\nname: x\ndescription: y\n---\n"

_REFERRING = [
    "See [guide](references/guide.md) first.",
    "Run scripts/run.py now",
    "`scripts/tool.sh` does it",
    "![img](assets/a.png)",
    "[x][ref]",
    "[ref]: references/defined.md",
    "text [a](references/b.md) and scripts/c.py",
]
_STRUCTURE = [
    "",
    "   ",
    "\t",
    "Plain text",
    "# Heading",
    "## Heading with scripts/h.py",
    "#nohash",
    "```",
    "```bash",
    "````",
    "~~~",
    "~~~md",
    "``` a`b",
    " ```",
    "  ```",
    "   ```",
    "    ```",
    "\t```",
    "  ~~~",
    "- item",
    "- ",
    "-",
    "* item",
    "+ item",
    "- - -",
    "***",
    "---",
    "===",
    "1. step",
    "2) step",
    "2. step scripts/two.py",
    "3. [three](references/three.md)",
    "   - nested",
    "  continued",
    "    indented code",
    "      deep",
    "> quote",
    "> ```",
    ">",
    "<div>",
    "</div>",
    "<!-- comment",
    "-->",
    "  <pre>",
    "- ```",
    "1. ```sh",
    "   ```",
    "- > ```",
    "| a | b |",
    # closing fences as a search of the text must find them (or not): longer, trailing blanks,
    # indented 1-3 by spaces, a tab that makes the indentation 4, a NUL that stops the cutting
    "``` ",
    "```\t",
    "`````",
    "~~~~ ",
    "   ````",
    " \t```",
    "``` x",
    "\0",
    "a \0 b",
]
_REFERRING_LINES = st.sampled_from(_REFERRING)
_PREFIXES = st.sampled_from(["", " ", "  ", "   ", "    ", "- ", "1. ", "> ", "\t", "  - ", ">  "])
_LINE = st.one_of(
    st.sampled_from(_STRUCTURE),
    st.builds(
        lambda prefix, text: prefix + text,
        _PREFIXES,
        st.one_of(_REFERRING_LINES, st.sampled_from(_STRUCTURE)),
    ),
)


def _both(body: str) -> tuple[list[object], list[object]]:
    doc = parse_text(HEAD + body)
    return find_references(doc), _find_references(doc, split=False)


@settings(deadline=timedelta(seconds=5), max_examples=1500)
@given(st.lists(_LINE, max_size=30))
@example(["- a", "  ```", "", "```", "scripts/in-code.py", "```", "scripts/out.py"])
@example(["```", "", "# not a heading", "scripts/in-code.py", "```", "scripts/out.py"])
@example(["<!--", "", "scripts/in-comment.py", "-->", "", "scripts/out.py"])
@example(["1. a", "   ```", "   ```", "plain", "2. b scripts/x.py"])
@example(["1. a", "   ```", "   ```", "  plain", "2. b scripts/x.py"])
@example(["1. a", "> quote", "2. b scripts/x.py"])
@example(["1. step", "   ```", "   scripts/in.py", "", "```", "scripts/still-in.py"])
@example(["text", "- [a](references/a.md)", "# h", "[b](references/b.md)", "```", "scripts/x.py"])
@example(["```", "scripts/in.py", "\0", "```", "scripts/out.py"])
@example(["````", "```", "scripts/in.py", "````  ", "scripts/out.py", "~~~", "   ~~~~", "references/x.md"])
def test_pieces_give_the_references_of_one_parse(lines: list[str]) -> None:
    body = "\n".join(lines) + "\n"
    split, whole = _both(body)
    assert split == whole


@settings(deadline=timedelta(seconds=5), max_examples=1000)
@given(st.lists(_LINE, max_size=40))
@example(["a", "", "b scripts/x.py", "", "```", "scripts/y.py", "```", "c", "", "[d](references/d.md)"])
def test_pieces_are_those_of_the_cuts_that_may_refer(lines: list[str]) -> None:
    """`_pieces` halves runs of parts rather than testing each part: it keeps the same ones."""
    text = _text_to_parse(lines)
    if not text:
        return
    count = text.count("\n") + 1
    cuts = _top_level_starts(lines[:count])
    bounds = [0, *cuts.starts, count]
    # Each part with the line break after it (all but the text's last part).
    one_by_one = [
        (first, "\n".join(lines[first:end]) + ("\n" if end < count else ""))
        for first, end in pairwise(bounds)
        if first not in cuts.code
    ]
    definitions = "]:" in text
    assert _pieces(lines, text) == [
        (first, piece) for first, piece in one_by_one if _may_refer(piece) or (definitions and "[" in piece)
    ]


def test_realistic_skill_body_is_cut_and_gives_the_same_references() -> None:
    body = (
        "# PDF tools\n\n"
        "Use this skill to fill forms. Read [the guide](references/guide.md) first.\n\n"
        "## Steps\n"
        "1. Extract the fields:\n"
        "   ```bash\n"
        "   python scripts/extract.py in.pdf\n"
        "   ```\n"
        "2. Fill them with `scripts/fill.py`.\n"
        "- a tight list\n"
        "- with assets/logo.png\n\n"
        "```python\n"
        "open('references/not-a-reference.md')\n"
        "```\n"
        "After the fence: scripts/after.py\n"
        "> quoted [q](references/q.md)\n"
    )
    doc = parse_text(HEAD + body)
    cuts = _top_level_starts(doc.lines[doc.body_start_line :])
    assert (
        cuts.starts and cuts.code
    )  # it is cut: headings, the bullet items, the top-level fence and the line after it
    split, whole = _both(body)
    assert split == whole
    assert [r.target for r in split] == [
        "references/guide.md",
        "scripts/fill.py",
        "assets/logo.png",
        "scripts/after.py",
        "references/q.md",
    ]


def test_cutting_stops_at_html_and_at_an_indented_fence_left_by_a_less_indented_line() -> None:
    assert _top_level_starts(["a", "", "<div>", "", "b", "", "c"]).starts == [2]
    assert _top_level_starts(["  ```", "x", "", "d"]).starts == []
    assert _top_level_starts(["# a", "# b", "```", "# c", "```", "d"]) == ([1, 2, 5], {2})
    assert _top_level_starts(["1. a", "2. b", "", "```", "\r"]) == ([1, 3], set())  # not followed to its end
