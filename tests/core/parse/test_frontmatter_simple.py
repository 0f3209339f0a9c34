"""simple_tree, the reading of plain `key: value` frontmatter without libyaml, gives libyaml's
tree (as plain_tree composes it) wherever it gives a tree, and leaves every other form to
libyaml."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skills_lsp.core.parse import frontmatter as fm


def shape(node: fm.YamlNode) -> Any:
    if node.kind == "sequence":
        return ("sequence", node.flow, [shape(item) for item in node.value])
    if node.kind == "mapping":
        return ("mapping", node.flow, [(shape(p.key), shape(p.value)) for p in node.value])
    return (node.kind, node.value, node.style, node.tag)


def libyaml_tree(source: str) -> fm.YamlNode | None:
    return fm._tree(source, [], 0, ranges=False)


def simple(source: str) -> fm.YamlNode | None:
    return fm.simple_tree(source)


ACCEPTED = [
    "name: demo\ndescription: Does things.",
    "name: demo\n\ndescription:   spaced out   ",
    'description: Use it when needed, 12:30, a:b, R&D, *.py, it\'s "ok", [x] {y} 50% @you `tick`',
    "description: 'single: quoted # kept, it''s fine'\nname: \"double: # quoted\"",
    "name: ''\ndescription: \"\"\nlicense:",
    "tags: [a, b c, 'd e', \"f\"]\nallowed-tools: []\nx: [ spaced ,  out ]",
    "tags:\n  - one\n  - 'two'\n\n  - three four\nname: n",
    "tags:\n- zero indent\n- two\nname: n",
    "metadata:\n  author: me\n  version: 1.0\n  empty:\n  list: [a, b]\nname: n",
    "version: 1.0\ntrigger: yes\nhint: ~\nnumber: 0x1F\nnull-ish: null",
    "name: a\nname: b",
    "name: caf\u00e9 \u00a0nbsp\u00a0",
    "emoji: \U0001f600 ok",
    "key: value\n   \nother: value",
]

LEFT_TO_LIBYAML = [
    "description: a # comment",
    "description: >-\n  folded",
    "description: |\n  block",
    "description: first\n  continued",
    "description: 'open",
    'description: "esc \\u00e9"',
    'description: "a" trailing',
    "description: -1",
    "description: ?x",
    "description: :x",
    "description: value:",
    "description: a: b",
    "description: &anchor x",
    "description: *alias",
    "description: !tag x",
    "description: {a: b}",
    "tags: [a, [b]]",
    "tags: [a, , b]",
    "tags: [a,]",
    "tags: [a: b]",
    "tags: [a\n  , b]",
    "tags:\n  - a\n    - b",
    "tags:\n  - a\n  k: v",
    "metadata:\n  a:\n    b: c",
    "metadata:\n  a: 1\n   b: 2",
    "# comment\nname: a",
    "name: a\n...",
    "- a\n- b",
    "name:\tx",
    "name: x\r",
    "name: a\u2028b",
    "name: a\x85b",
    "name: \ufeffa",
    "name: bell\x07",
    "'quoted key': v",
    "名前: x",
    "key : v",
    "key:v",
    "plain scalar only",
]


@pytest.mark.parametrize("source", ACCEPTED)
def test_plain_forms_are_read_as_libyaml_reads_them(source: str) -> None:
    tree = simple(source)
    expected = libyaml_tree(source)
    assert tree is not None and expected is not None
    assert shape(tree) == shape(expected)


@pytest.mark.parametrize("source", LEFT_TO_LIBYAML)
def test_other_forms_are_left_to_libyaml(source: str) -> None:
    assert simple(source) is None


KEY = st.sampled_from(["name", "description", "tags", "metadata", "x-1", "_k", "9"])
VALUE_PIECES = st.sampled_from(
    ["a", "b c", " ", "  ", ":", ": ", "#", " #", "'", "''", '"', "\\", "-", "?", ",", "[", "]", "{", "}",
     "&", "*", "!", "|", ">", "%", "@", "`", "\u00e9", "\u00a0", "\t", "1", "0x1", "~", "null", "yes"]
)  # fmt: skip
VALUES = st.one_of(
    st.lists(VALUE_PIECES, max_size=6).map("".join),
    st.lists(
        st.sampled_from(["word", "12:30", "it's", "R&D", "a,b", "50%", "x-y", "'q'", '"d"']), max_size=3
    ).map(" ".join),
)
INDENTS = st.sampled_from(["", " ", "  ", "   ", "    "])
LINE = st.one_of(
    st.tuples(KEY, st.sampled_from([":", ": ", ":  "]), VALUES).map("".join),
    st.tuples(INDENTS, st.sampled_from(["- ", "-", "-  "]), VALUES).map("".join),
    st.tuples(INDENTS, KEY, st.sampled_from([":", ": "]), VALUES).map("".join),
    st.tuples(KEY, st.just(": ["), st.lists(VALUES, max_size=4).map(", ".join), st.just("]")).map("".join),
    st.sampled_from(["", "   ", "# c"]),
)


@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(LINE, min_size=1, max_size=6).map("\n".join))
def test_generated_frontmatter_is_read_as_libyaml_reads_it_or_left_to_it(source: str) -> None:
    tree = simple(source)
    if tree is not None:
        expected = libyaml_tree(source)
        assert expected is not None, "libyaml refuses what simple_tree read"
        assert shape(tree) == shape(expected)


@pytest.mark.parametrize(
    "source",
    [
        "tags: [" + ", ".join(["x"] * 9_999) + "]",
        "metadata:\n  a: [" + ",".join(["x"] * 9_996) + "]",
        "tags:\n" + "".join("- x\n" for _ in range(9_999)),
    ],
)
def test_more_nodes_than_libyaml_composes_are_left_to_it(source: str) -> None:
    """MAX_EXPANDED_NODES, however the nodes are nested; one fewer and both read it."""
    assert libyaml_tree(source) is None and simple(source) is None
    smaller = source.replace("x,", "", 2).replace("x, ", "", 2).replace("- x\n", "", 2)
    assert libyaml_tree(smaller) is not None
    assert simple(smaller) is not None
