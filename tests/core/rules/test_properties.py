"""Hypothesis: parsing and validating never raise and stay bounded on arbitrary input."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from skills_lsp.core.model import FileKind
from skills_lsp.core.parse.frontmatter import parse_bytes, parse_text, split_lines
from skills_lsp.core.rules.description import _FIRST_PERSON
from skills_lsp.core.rules.profiles import PROFILES
from skills_lsp.core.rules.validate import check_document

BOUNDED = settings(deadline=timedelta(seconds=5))

# Characters that make YAML and Markdown interesting.
_YAMLISH = st.text(
    alphabet=st.sampled_from(list("-:#[]{}&*!|>'\"%@`,?\t\r\n \\~.01aZé技🙂\ufeff\u2028\x85")), max_size=300
)
_LINES = st.lists(
    st.one_of(
        st.sampled_from(
            [
                "---",
                "--- ",
                "...",
                "name: x",
                "description: d",
                "name: [a",
                "tags:",
                "  - a",
                "metadata:",
                "  k: v",
                "a: &x [1]",
                "b: *x",
                "allowed-tools: Read",
                "- x",
                "k: a: b",
                "[references/x.md](references/x.md)",
                "```",
                "scripts\\x.py",
                "![i](../up.png)",
            ]
        ),
        _YAMLISH,
    ),
    max_size=30,
).map("\n".join)


def _check_all_profiles(text: str) -> None:
    doc = parse_text(text)
    assert len(doc.lines) == len(split_lines(doc.text))
    for problem in doc.problems:
        assert 0 <= problem.range.start.line <= max(len(doc.lines) - 1, 0)
        assert problem.range.start <= problem.range.end
    for profile in PROFILES.values():
        for kind in FileKind:
            findings = check_document(
                doc, Path("/nonexistent/skill/SKILL.md"), kind=kind, profile=profile, exists=lambda p: False
            ).findings
            for f in findings:
                assert f.range.start <= f.range.end
                assert f.message


@BOUNDED
@given(st.text(max_size=2000))
def test_arbitrary_text_never_raises(text: str) -> None:
    _check_all_profiles(text)


@BOUNDED
@given(_LINES)
def test_frontmatter_like_text_never_raises(body: str) -> None:
    _check_all_profiles("---\n" + body)
    _check_all_profiles("---\n" + body + "\n---\n" + body)


@BOUNDED
@given(st.binary(max_size=2000))
def test_arbitrary_bytes_never_raise(data: bytes) -> None:
    doc = parse_bytes(data)
    assert isinstance(doc.problems, list)
    doc = parse_bytes(b"---\n" + data + b"\n---\n")
    assert isinstance(doc.problems, list)


@BOUNDED
@given(st.integers(min_value=1, max_value=40_000), st.sampled_from(["[", "{", "- ", "? "]))
def test_nesting_of_any_depth_is_bounded(depth: int, opener: str) -> None:
    closer = {"[": "]", "{": "}"}.get(opener, "")
    doc = parse_text("---\na: " + opener * depth + "x" + closer * depth + "\n---\n")
    assert doc.root is not None or doc.problems


# SK306's search as first written: the rule's faster spelling must find the same text at the same place.
_FIRST_PERSON_AS_WRITTEN = re.compile(
    r"(?<![\w/])I(?:'m|'ll|'ve|'d)?(?![\w/])|\b(?i:me|my|myself)\b|^\s*(?i:you\s+(?:can|should|could))\b"
)
_VOICE_PIECES = [
    "I",
    "m",
    "M",
    "e",
    "E",
    "y",
    "Y",
    "self",
    "SELF",
    "ſelf",
    "'m",
    "'ll",
    "'d",
    "/",
    "_",
    "é",
    " ",
    "\n",
]
_VOICE_PIECES += ["you can", "You Should", " could", "x", "1", "K", "ME", "My"]


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(_VOICE_PIECES), max_size=12))
def test_first_person_search_finds_what_the_written_pattern_finds(pieces: list[str]) -> None:
    text = "".join(pieces)
    found, expected = _FIRST_PERSON.search(text), _FIRST_PERSON_AS_WRITTEN.search(text)
    assert (found and (found.span(), found.group())) == (expected and (expected.span(), expected.group()))
