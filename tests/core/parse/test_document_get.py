"""`Document.get`: the first top-level entry of a name, also after the tree changes."""

from __future__ import annotations

from skills_lsp.core.parse.frontmatter import YamlPair, parse_text


def test_get_gives_the_first_of_repeated_keys_and_none_for_a_missing_one() -> None:
    doc = parse_text("---\nname: a\ndescription: d\nname: b\n---\nBody.\n")
    first = doc.get("name")
    assert first is not None and first.value.value == "a"
    assert doc.get("description") is doc.pairs[1]
    assert doc.get("license") is None


def test_get_sees_entries_added_to_the_tree_and_a_new_tree() -> None:
    doc = parse_text("---\nname: a\n---\nBody.\n")
    assert doc.get("description") is None
    other = parse_text("---\ndescription: d\nname: b\n---\n")
    added = other.pairs[0]
    doc.pairs.append(YamlPair(added.key, added.value))
    found = doc.get("description")
    assert found is not None and found.value.value == "d"
    doc.root = other.root
    name = doc.get("name")
    assert name is not None and name.value.value == "b"
    doc.root = None
    assert doc.get("name") is None
