"""parse_text(text, ranges=False), the reading of a skill's values alone (the workspace index):
the same tree, body and `when_to_use` as the full reading, on every form of frontmatter and
line break, most often without ranges and with the body not split into lines."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skills_lsp.core.index.skill_index import parsed_from_document
from skills_lsp.core.parse import frontmatter as fm


def shape(node: fm.YamlNode | None) -> Any:
    if node is None:
        return None
    if node.kind == "sequence":
        return ("sequence", node.flow, [shape(item) for item in node.value])
    if node.kind == "mapping":
        return ("mapping", node.flow, [(shape(p.key), shape(p.value)) for p in node.value])
    if node.kind == "alias":
        return ("alias", node.value, shape(node.target))
    return (node.kind, node.value, node.style, node.tag)


def values(doc: fm.Document) -> Any:
    """What a reader of the values takes from a document."""
    return (
        shape(doc.root),
        doc.close_line,
        doc.body,
        repr(parsed_from_document(doc)),
        fm.when_to_use(doc),
        doc.plain_data(),
    )


def same_values(text: str) -> fm.Document:
    lean = fm.parse_text(text, ranges=False)
    assert values(lean) == values(fm.parse_text(text))
    return lean


TEXTS = [
    "---\nname: demo\ndescription: Does things.\n---\n# Body\n\ntext\n",
    "---\nname: demo\ndescription: Does things.\n---",  # the delimiter on the last line
    "---\nname: demo\ndescription: Does things.\n---\n",
    "---\nname: demo\ndescription: Does things.\n---   \n  body  \n\n",
    "\ufeff---\nname: demo\ndescription: bom\n---\nbody\n",
    "---\r\nname: demo\r\ndescription: crlf\r\n---\r\nbody\r\nmore\r\n",
    "---\rname: demo\rdescription: cr\r---\rbody\r",
    "---\nname: demo\ndescription: unclosed\n",
    "---",
    "---\n---\nbody",
    "---\n# only a comment\n---\nbody",
    "no frontmatter\n---\nname: x\n---\n",
    "---\nname: a\nname: b\ndescription: duplicate\n---\nbody",
    "---\nname: demo\ndescription: |\n  block\n  scalar\nwhen_to_use: >\n  folded\n---\nb",
    "---\nname: &n demo\ndescription: *n\nmetadata: {a: 1, b: [x, y]}\n---\nb",
    "---\nname: !!str 12\ndescription: tagged\ntags: [a, b]\n---\nb",
    "---\nname: demo\ndescription: a\u2028line break\n---\nb",
    "---\nname: demo\ndescription: [unclosed\n---\nb",
    "---\n- a\n- b\n---\nb",
    "---\nname: demo\ndescription: d\n---\n---\nlater delimiter\n",
    "---\nname: demo\ndescription: d\n---\u2028\nbody\n",
    "---\nname: demo\ndescription: d\nwhen_to_use: '  padded  '\n---\n\n\n",
    "---\n" + "a: [" * 70 + "\n---\nb",
]


@pytest.mark.parametrize("text", TEXTS)
def test_values_match_the_full_reading(text: str) -> None:
    same_values(text)


def test_plain_frontmatter_is_read_without_ranges_or_body_lines() -> None:
    lean = same_values("---\nname: demo\ndescription: Does things.\n---\n# Body\n\ntext\n")
    assert lean.root is not None
    with pytest.raises(ValueError):
        lean.root.range  # noqa: B018 - no ranges were made
    assert lean.rest == "# Body\n\ntext\n"
    assert lean.lines == ["---", "name: demo", "description: Does things.", "---"]


def test_forms_only_libyaml_reads_keep_their_ranges() -> None:
    lean = same_values("---\nname: &n demo\ndescription: *n\n---\nb")
    assert lean.root is not None and lean.root.range.start.line == 1


def test_the_full_reading_keeps_ranges_and_lines() -> None:
    doc = fm.parse_text("---\nname: demo\ndescription: Does things.\n---\nbody\n")
    assert doc.rest is None and doc.lines[-2:] == ["body", ""]
    assert doc.root is not None and doc.root.range.start.line == 1


LINE = st.sampled_from(
    [
        "name: demo",
        "description: Does things, when asked.",
        "when_to_use: always",
        "tags: [a, b]",
        "tags:",
        "  - one",
        "metadata:",
        "  k: v",
        "key: 'quoted: x'",
        "# comment",
        "",
        "---",
        "  ",
        "description: x # note",
        "a: &x 1",
        "b: *x",
        "bad: [",
        "body text",
        "---  ",
    ]
)


@given(st.lists(LINE, max_size=12), st.sampled_from(["\n", "\r\n"]), st.booleans())
@settings(max_examples=300, deadline=None)
def test_generated_documents_read_alike(lines: list[str], eol: str, trailing: bool) -> None:
    text = eol.join(["---", *lines]) + (eol if trailing else "")
    same_values(text)
