"""SK5xx: `allowed-tools`."""

from __future__ import annotations

import difflib
from collections.abc import Iterator

from skills_lsp.core.model import Applicability, FileChange, Fix, Position, Range, Severity, TextEdit
from skills_lsp.core.parse.allowed_tools import split_tools, tool_entries, tool_name
from skills_lsp.core.parse.frontmatter import YamlPair
from skills_lsp.core.rules.edits import kept_comments, pair_lines, replace, yaml_string
from skills_lsp.core.rules.registry import Report, RuleContext, except_in, rule

NOT_SKILLS_REF = except_in("skills-ref")  # skills-ref does not judge allowed-tools


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
    new = f"{kept_comments(ctx.doc, rng)}allowed-tools: {yaml_string(text)}{ctx.doc.eol}"
    return Fix("Write as a space-separated string", (TextEdit(rng, new),))


def as_list_fix(ctx: RuleContext, pair: YamlPair) -> Fix:
    tools = split_tools(str(pair.value.value))
    eol = ctx.doc.eol
    lines = "".join(f"  - {yaml_string(t)}{eol}" for t in tools)
    rng = pair_lines(ctx.doc, pair)
    new = f"{kept_comments(ctx.doc, rng)}allowed-tools:{eol}{lines}"
    return Fix("Write as a YAML list", (TextEdit(rng, new),))


@rule(
    "SK501",
    "allowed-tools-not-string",
    Severity.WARNING,
    "`allowed-tools` is a list; the spec wants a string",
    profiles=NOT_SKILLS_REF,
    fixes=[Applicability.SAFE],
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
    profiles=NOT_SKILLS_REF,
    fixes=[Applicability.SAFE],
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
    profiles=NOT_SKILLS_REF,
    fixes=[Applicability.SAFE],
)
def allowed_tools_commas(ctx: RuleContext) -> Iterator[Report]:
    """The spec separates tools with spaces. Claude Code also accepts commas
    (`Read, Grep`), but other clients then see tool names such as `Read,`.

    Fix: separate with single spaces."""
    pair = _tools(ctx)
    if pair is None or ctx.profile.tools_style != "string" or pair.value.kind != "scalar":
        return
    text = str(pair.value.value)
    if len(split_tools(text, commas_only=True)) > 1:
        fixed = " ".join(split_tools(text))
        yield Report(
            pair.value.range,
            "Separate `allowed-tools` entries with spaces, not commas.",
            (Fix("Separate with spaces", (TextEdit(pair.value.range, yaml_string(fixed)),)),),
        )


@rule(
    "SK504",
    "allowed-tools-duplicate",
    Severity.WARNING,
    "A tool is listed twice in `allowed-tools`",
    profiles=NOT_SKILLS_REF,
)
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


@rule(
    "SK505",
    "unknown-tool",
    Severity.ERROR,
    "`allowed-tools` names a tool the tool manifest does not list",
    fixes=[Applicability.UNSAFE, Applicability.DISPLAY_ONLY],
)
def unknown_tool(ctx: RuleContext) -> Iterator[Report]:
    """With a tool manifest (`skill-tools.yaml`, or `tool-manifest` in `[tool.skills-lsp]`), every
    tool a skill asks for must be one the host really binds. Otherwise the ContextCoordinator
    refuses the skill in strict mode, or the model is told of a tool it cannot call (the
    "phantom tool" failure). `Bash(git:*)` asks for `Bash`. Names are case-sensitive.

    Checked only when the workspace has a tool manifest. Fixes: change to the manifest's tool
    of a near name (unsafe: another tool); in the editor, add the tool to the manifest."""
    if ctx.tools is None:
        return
    available = ctx.tools.available_tools()
    for entry, rng in tool_entries(ctx.doc):
        name = tool_name(entry)
        if not name or ctx.tools.resolve(name) is not None:
            continue
        close = [t for t in available if t.lower() == name.lower()] or difflib.get_close_matches(
            name, available, n=1
        )
        hint = f"; did you mean `{close[0]}`?" if close else "."
        fixes: list[Fix] = []
        if close:
            change = entry.replace(name, close[0], 1)
            fixes.append(replace(f"Change to `{close[0]}`", rng, change, Applicability.UNSAFE))
        add = _add_to_manifest(ctx, name)
        if add is not None:
            fixes.append(add)
        yield Report(rng, f"Tool `{name}` is not in the tool manifest{hint}", tuple(fixes))


def _add_to_manifest(ctx: RuleContext, name: str) -> Fix | None:
    """An edit of the manifest file that lists `name` (an empty description to fill in)."""
    manifest = ctx.manifest_path
    if manifest is None:
        return None
    entry = f'  - name: {name}\n    description: ""\n'
    try:
        text = ctx.read(manifest, MANIFEST_READ_LIMIT).decode("utf-8")
    except (OSError, UnicodeDecodeError):
        create = TextEdit(Range.point(0, 0), "tools:\n" + entry)
        change = FileChange(str(manifest), create=True, edits=(create,))
    else:
        lines = text.split("\n")
        end = Position(len(lines) - 1, len(lines[-1]))
        prefix = "" if text.endswith("\n") or not text else "\n"
        change = FileChange(str(manifest), edits=(TextEdit(Range(end, end), prefix + entry),))
    return Fix(f"Add tool {name} to {manifest.name}", (), Applicability.DISPLAY_ONLY, (change,))


MANIFEST_READ_LIMIT = 4 * 1024 * 1024
