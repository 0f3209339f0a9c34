"""Body references as a CommonMark renderer sees them (markdown-it-py), with exact positions."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from skills_lsp.core.parse.frontmatter import parse_text
from skills_lsp.core.parse.markdown import find_references

HEAD = "---\nname: x\ndescription: y\n---\n"
FIRST = 4  # the first body line


def refs(body: str) -> list[tuple[str, str, int, int]]:
    """(kind, target, line, column) of each reference; each range is checked to cover the target."""
    doc = parse_text(HEAD + body)
    found = []
    for ref in find_references(doc):
        r = ref.range
        assert r.start.line == r.end.line
        assert doc.lines[r.start.line][r.start.character : r.end.character] == ref.target
        found.append((ref.kind, ref.target, r.start.line - FIRST, r.start.character))
    return found


def test_tilde_fences_hide_links_and_paths() -> None:
    body = "~~~\n[a](references/in.md) scripts/in.py\n~~~\nAfter scripts/out.py\n"
    assert refs(body) == [("path", "scripts/out.py", 3, 6)]


def test_a_shorter_fence_inside_a_longer_one_does_not_close_it() -> None:
    body = "````md\n```\nscripts/inner.py\n```\nscripts/still-code.py\n````\nscripts/out.py\n"
    assert refs(body) == [("path", "scripts/out.py", 6, 0)]


def test_a_fence_with_an_info_string_does_not_close_one() -> None:
    body = "```markdown\n```bash\nscripts/in.py\n```\n[a](references/out.md)\n"
    assert refs(body) == [("link", "references/out.md", 4, 4)]


def test_tilde_and_backtick_fences_do_not_close_each_other() -> None:
    body = "~~~\n```\nscripts/in.py\n~~~\nscripts/out.py\n"
    assert refs(body) == [("path", "scripts/out.py", 4, 0)]


def test_fences_inside_lists_and_block_quotes() -> None:
    body = (
        "- step one, see [guide](references/guide.md)\n"
        "  ```sh\n"
        "  scripts/example.sh --not-a-reference\n"
        "  ```\n"
        "- step two: `scripts/run.py`\n"
        "> ~~~\n"
        "> scripts/quoted-code.py\n"
        "> ~~~\n"
        "> quoted [q](assets/q.png)\n"
    )
    assert refs(body) == [
        ("link", "references/guide.md", 0, 24),
        ("path", "scripts/run.py", 4, 13),
        ("link", "assets/q.png", 8, 13),
    ]


def test_an_unclosed_fence_in_a_list_item_ends_with_the_item() -> None:
    body = "- item\n  ```\n  scripts/in.py\n\nscripts/after-the-list.py\n"
    assert refs(body) == [("path", "scripts/after-the-list.py", 4, 0)]


def test_indented_code_blocks_are_code() -> None:
    body = "Text.\n\n    scripts/indented.py\n    [a](references/x.md)\n\nscripts/out.py\n"
    assert refs(body) == [("path", "scripts/out.py", 5, 0)]


def test_a_fence_indented_four_spaces_is_not_a_fence() -> None:
    # Four spaces make an indented code block: the "```" lines are its text, and the paragraph
    # after the blank line is outside it.
    body = "Text.\n\n    ```\n    scripts/code.py\n\nscripts/out.py\n"
    assert refs(body) == [("path", "scripts/out.py", 5, 0)]


def test_code_spans_hide_link_syntax_but_keep_bare_paths() -> None:
    body = "Write `[name](relative-url)` like `scripts/run.py`, and ``a ` [b](c.md)`` too.\n"
    assert refs(body) == [("path", "scripts/run.py", 0, 35)]


def test_reference_style_links_point_at_their_definition() -> None:
    body = (
        "Read [the guide][guide], [Forms][] and [forms] again.\n"
        "\n"
        "[guide]: references/guide.md\n"
        "[forms]:\n"
        "   <references/my forms.md> 'Title'\n"
    )
    assert refs(body) == [
        ("link", "references/guide.md", 2, 9),
        ("link", "references/my forms.md", 4, 4),
    ]


def test_a_definition_no_link_uses_is_not_a_reference() -> None:
    body = (
        "1. [Step 1]: [Description]\n2. [Step 2]: references/unused.md\n\nUse [it][x].\n\n[x]: scripts/x.py\n"
    )
    assert refs(body) == [("link", "scripts/x.py", 5, 5)]


def test_a_definition_used_far_below_its_last_marker() -> None:
    body = "[r]: references/r.md\n\n" + "Filler.\n\n" * 50 + "See [r].\n"
    assert refs(body) == [("link", "references/r.md", 0, 5)]


def test_links_over_several_lines_and_with_titles() -> None:
    body = 'A [long\nlink text](references/a.md "Title\non two lines") and\n[b](\n  scripts/b.py\n).\n'
    assert refs(body) == [("link", "references/a.md", 1, 11), ("link", "scripts/b.py", 4, 2)]


def test_escaped_brackets_and_angle_destinations() -> None:
    body = r"\[not](references/no.md) but [yes](<references/with space.md#part>)" + "\n"
    assert refs(body) == [("path", "references/no.md", 0, 7), ("link", "references/with space.md", 0, 36)]


def test_images_inside_links_and_link_text_paths() -> None:
    body = "[![logo](assets/logo.png)](references/about.md) [scripts/a.py](scripts/a.py)\n"
    assert refs(body) == [
        ("link", "assets/logo.png", 0, 9),
        ("link", "references/about.md", 0, 27),
        ("link", "scripts/a.py", 0, 63),
    ]


def test_urls_and_anchors_are_not_files() -> None:
    body = "[site](https://example.com/scripts/x.py) [top](#usage) <https://x.dev/assets/a.png>\n"
    assert refs(body) == []


def test_html_blocks_keep_their_bare_paths() -> None:
    body = "<details>\n<summary>More</summary>\nRun scripts/more.sh first.\n</details>\n"
    assert refs(body) == [("path", "scripts/more.sh", 2, 4)]


def test_headings_and_tabs_keep_exact_columns() -> None:
    body = "## Run scripts/setup.sh ##\n\n-\tsee [x](references/x.md)\n> > deep scripts/deep.py\n"
    assert refs(body) == [
        ("path", "scripts/setup.sh", 0, 7),
        ("link", "references/x.md", 2, 10),
        ("path", "scripts/deep.py", 3, 9),
    ]


def test_crlf_and_empty_bodies() -> None:
    assert refs("") == []
    doc = parse_text(HEAD.replace("\n", "\r\n") + "See scripts/a.py\r\n")
    [ref] = find_references(doc)
    assert (ref.target, ref.range.start.line, ref.range.start.character) == ("scripts/a.py", FIRST, 4)


@pytest.mark.parametrize("workers", [4])
def test_threads_do_not_mix_their_records(workers: int) -> None:
    bodies = [
        f"[{i}](references/r{i}.md) scripts/s{i}.py\n\n[u][d{i}]\n\n[d{i}]: assets/a{i}.png\n"
        for i in range(40)
    ]
    expected = [refs(b) for b in bodies]
    with ThreadPoolExecutor(workers) as pool:
        for _ in range(5):
            assert list(pool.map(refs, bodies)) == expected
