"""SK5xx: `allowed-tools`."""

from __future__ import annotations

from collections.abc import Iterator

from skills_lsp.core.frontmatter import YamlPair
from skills_lsp.core.model import Fix, Severity, TextEdit
from skills_lsp.core.rules.edits import pair_lines, split_tools, yaml_string
from skills_lsp.core.rules.registry import Report, RuleContext, rule


def _tools(ctx: RuleContext) -> YamlPair | None:
    if ctx.doc.root is None or ctx.doc.root.kind != "mapping":
        return None
    pair = ctx.get("allowed-tools")
    if pair is None or pair.value.is_null:
        return None
    return pair


def as_string_fix(ctx: RuleContext, pair: YamlPair) -> Fix | None:
    items = pair.value.items
    if not all(i.kind == "scalar" for i in items):
        return None
    text = " ".join(str(i.value).strip() for i in items if str(i.value).strip())
    rng = pair_lines(ctx.doc, pair)
    new = f"allowed-tools: {yaml_string(text)}{ctx.doc.eol}"
    return Fix("Write as a space-separated string", (TextEdit(rng, new),))


def as_list_fix(ctx: RuleContext, pair: YamlPair) -> Fix:
    tools = split_tools(str(pair.value.value))
    eol = ctx.doc.eol
    lines = "".join(f"  - {yaml_string(t)}{eol}" for t in tools)
    rng = pair_lines(ctx.doc, pair)
    return Fix("Write as a YAML list", (TextEdit(rng, f"allowed-tools:{eol}{lines}"),))


@rule(
    "SK501",
    "allowed-tools-not-string",
    Severity.WARNING,
    "`allowed-tools` is a list; the spec wants a string",
    fixable=True,
)
def allowed_tools_not_string(ctx: RuleContext) -> Iterator[Report]:
    """The agentskills.io spec defines `allowed-tools` as one space-separated string
    (`allowed-tools: Bash(git:*) Read`). Claude Code also reads a YAML list, but other clients
    do not.

    Fix: join the list into a space-separated string."""
    pair = _tools(ctx)
    if pair is None or ctx.profile.tools_style != "string" or pair.value.kind != "sequence":
        return
    fix = as_string_fix(ctx, pair)
    yield Report(
        pair.value.range,
        "`allowed-tools` should be a space-separated string, not a list.",
        (fix,) if fix else (),
    )


@rule(
    "SK502",
    "allowed-tools-not-list",
    Severity.ERROR,
    "`allowed-tools` is a string; adk-skill needs a list",
    fixable=True,
)
def allowed_tools_not_list(ctx: RuleContext) -> Iterator[Report]:
    """adk-skill (`.skills/*.md`) reads `allowed-tools` as a YAML list; a string makes the
    whole file fail to parse and the crate silently skips the skill.

    Fix: split the string into a YAML list."""
    pair = _tools(ctx)
    if pair is None or ctx.profile.tools_style != "list" or pair.value.kind != "scalar":
        return
    yield Report(
        pair.value.range,
        "`allowed-tools` must be a YAML list here (adk-skill skips the file otherwise).",
        (as_list_fix(ctx, pair),),
    )


@rule(
    "SK503",
    "allowed-tools-commas",
    Severity.WARNING,
    "`allowed-tools` string separated by commas",
    fixable=True,
)
def allowed_tools_commas(ctx: RuleContext) -> Iterator[Report]:
    """The spec separates tools with spaces. Claude Code also accepts commas
    (`Read, Grep`), but other clients then see tool names such as `Read,`.

    Fix: separate with single spaces."""
    pair = _tools(ctx)
    if pair is None or ctx.profile.tools_style != "string" or pair.value.kind != "scalar":
        return
    text = str(pair.value.value)
    depth = 0
    for ch in text:
        depth += ch == "("
        depth -= ch == ")" and depth > 0
        if ch == "," and depth == 0:
            fixed = " ".join(split_tools(text))
            yield Report(
                pair.value.range,
                "Separate `allowed-tools` entries with spaces, not commas.",
                (Fix("Separate with spaces", (TextEdit(pair.value.range, yaml_string(fixed)),)),),
            )
            return


@rule("SK504", "allowed-tools-duplicate", Severity.WARNING, "A tool is listed twice in `allowed-tools`")
def allowed_tools_duplicate(ctx: RuleContext) -> Iterator[Report]:
    """Each tool should appear once."""
    pair = _tools(ctx)
    if pair is None:
        return
    if pair.value.kind == "sequence":
        seen: set[str] = set()
        for item in pair.value.items:
            if item.kind == "scalar" and str(item.value).strip():
                name = str(item.value).strip()
                if name in seen:
                    yield Report(item.range, f"`{name}` is already listed in `allowed-tools`.")
                seen.add(name)
    elif pair.value.kind == "scalar":
        tools = split_tools(str(pair.value.value))
        dupes = sorted({t for t in tools if tools.count(t) > 1})
        if dupes:
            yield Report(pair.value.range, f"Listed twice in `allowed-tools`: {', '.join(dupes)}.")
