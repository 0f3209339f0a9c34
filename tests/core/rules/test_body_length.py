"""SK601/SK602/SK608 count the body without joining it: `_body_length` is `len(doc.body)`."""

from __future__ import annotations

from pathlib import Path

from hypothesis import example, given
from hypothesis import strategies as st

from skills_lsp.core.model import FileKind
from skills_lsp.core.parse.frontmatter import parse_text
from skills_lsp.core.rules.body import _body_length
from skills_lsp.core.rules.profiles import get_profile
from skills_lsp.core.rules.registry import RuleContext

_LINE = st.text(alphabet=" \t\u00a0\u2028\x0b\x1cab", max_size=6)


@given(st.lists(_LINE, max_size=12), st.sampled_from(["\n", "\r\n", "\r"]))
@example([], "\n")
@example(["", " a ", "", "b  ", " "], "\n")
@example(["\u2028x\u2028"], "\r\n")
def test_the_body_length_is_that_of_the_joined_stripped_body(lines: list[str], eol: str) -> None:
    doc = parse_text(eol.join(["---", "name: x", "description: y", "---", *lines]))
    ctx = RuleContext(Path("x/SKILL.md"), doc, FileKind.AGENT_SKILL, get_profile("agentskills"))
    assert _body_length(ctx) == len(doc.body)
    assert _body_length(ctx) == len(doc.body)  # the second time from the memo
