"""SK3xx: the `description` field."""

from __future__ import annotations

import re
from collections.abc import Iterator

from skills_lsp.core import schema
from skills_lsp.core.model import Severity
from skills_lsp.core.rules.common import empty_or_not_string, field_text
from skills_lsp.core.rules.registry import Report, RuleContext, except_in, rule

DESCRIPTION_MAX = schema.max_length("description")


def _description(ctx: RuleContext) -> tuple[Report, str] | None:
    found = field_text(ctx, "description")
    if found is None:
        return None
    pair, text = found
    if text is None or not text.strip():
        return None
    return Report(pair.value.range, ""), text


@rule("SK301", "missing-description", Severity.ERROR, "The frontmatter has no `description`")
def missing_description(ctx: RuleContext) -> Iterator[Report]:
    """Agents decide whether to load a skill from its `description` alone; without one the
    skill is never chosen (adk-skill skips the file)."""
    doc = ctx.doc
    if "description" not in ctx.profile.required or doc.root is None or doc.root.kind != "mapping":
        return
    if doc.get("description") is None:
        yield Report(doc.line_range(0), "Missing required field `description`.")


@rule("SK302", "empty-description", Severity.ERROR, "`description` is empty or not a string")
def empty_description(ctx: RuleContext) -> Iterator[Report]:
    """`description` must be non-empty text: say what the skill does and when to use it."""
    yield from empty_or_not_string(ctx, "description")


@rule("SK303", "description-too-long", Severity.ERROR, "`description` is longer than 1024 characters")
def description_too_long(ctx: RuleContext) -> Iterator[Report]:
    """The spec limits `description` to 1024 characters (code points, as written after YAML
    folding). Clients truncate or refuse longer ones; move detail into the body."""
    found = _description(ctx)
    if found and len(found[1]) > DESCRIPTION_MAX:
        report, text = found
        yield report._replace(
            message=f"`description` is {len(text)} characters; the limit is {DESCRIPTION_MAX}."
        )


_TAG = re.compile(r"<\s*/?\s*[A-Za-z!][^<>]*>")


@rule(
    "SK304",
    "description-xml-tag",
    Severity.WARNING,
    "`description` contains an XML-like tag",
    profiles=except_in("skills-ref"),
)
def description_xml_tag(ctx: RuleContext) -> Iterator[Report]:
    """claude.ai and the Claude API refuse descriptions containing XML tags such as `<file>`;
    the description is also pasted into an XML catalog. Write the words without angle brackets."""
    found = _description(ctx)
    if found and _TAG.search(found[1]):
        yield found[0]._replace(
            message="`description` contains an XML-like tag; Claude's platform refuses it."
        )


_WHEN = re.compile(r"\b(use|using|when|whenever|if|for|asks?|needs?|triggers?)\b", re.IGNORECASE)


@rule(
    "SK305",
    "description-no-when",
    Severity.HINT,
    "`description` does not say when to use the skill",
    profiles=except_in("skills-ref", "convention"),
)
def description_no_when(ctx: RuleContext) -> Iterator[Report]:
    """The spec asks descriptions to say what the skill does *and when to use it* ("Use when the
    user asks about PDFs"). Agents match requests against these words."""
    found = _description(ctx)
    if found and not _WHEN.search(found[1]):
        yield found[0]._replace(message="Say when to use this skill, e.g. `Use when the user asks ...`.")


# First person anywhere ("I" written as a word, not I/O), or an opening that talks to the reader:
# `(?<![\w/])I(?:'m|'ll|'ve|'d)?(?![\w/])|\b(?i:me|my|myself)\b|^\s*(?i:you\s+(?:can|should|could))\b`,
# with each word's first letter before the test of what precedes it (a lookbehind once it is
# found, not at every character): the search then skips ahead to an `I` or an `m`, in less
# than half the time over a corpus's 15,000 descriptions.
_FIRST_PERSON = re.compile(
    r"I(?<![\w/]I)(?:'m|'ll|'ve|'d)?(?![\w/])|(?i:m)(?<!\w(?i:m))(?i:e|y|yself)\b"
    r"|^\s*(?i:you\s+(?:can|should|could))\b"
)


@rule(
    "SK306",
    "description-not-third-person",
    Severity.INFO,
    "`description` speaks in the first or second person",
    profiles=except_in("skills-ref", "convention"),
)
def description_not_third_person(ctx: RuleContext) -> Iterator[Report]:
    """The description is pasted into the agent's system prompt beside every other skill's, where
    a voice that shifts ("I can help you ...", "You can use this to ...") makes the listing read
    oddly and, in Anthropic's skill authoring guidance, causes discovery problems. Write it in the
    third person: "Fills in PDF forms from JSON data. Use when ..."."""
    found = _description(ctx)
    if found is None:
        return
    report, text = found
    match = _FIRST_PERSON.search(text)
    if match is not None:
        yield report._replace(
            message=f"`description` says `{match.group().strip()}`: write it in the third person "
            '("Fills in PDF forms ...", not "I can fill in ...").'
        )
