"""Hover text for a frontmatter key (its schema documentation in the file's profile and which
runtimes read, ignore or warn about it) or an `allowed-tools` entry (the tool's manifest
description)."""

from __future__ import annotations

from collections.abc import Sequence

from skills_lsp.core import schema
from skills_lsp.core.model import Position, Range
from skills_lsp.core.parse.allowed_tools import tool_entries, tool_name
from skills_lsp.core.parse.frontmatter import Document
from skills_lsp.core.parse.tool_manifest import StaticToolRegistry
from skills_lsp.core.rules.key_support import support_markdown
from skills_lsp.core.rules.listing import ListedSkill, Placement, Runtime
from skills_lsp.core.rules.profiles import Profile


def _contains(rng: Range, position: Position) -> bool:
    return rng.start <= position <= rng.end


def hover_text(
    doc: Document, position: Position, profile: Profile, tools: StaticToolRegistry | None
) -> tuple[str, Range] | None:
    """Markdown for a frontmatter key (its schema doc, then each profile's verdict on it) or an
    `allowed-tools` entry (the tool's manifest description), with the range it covers."""
    for pair in doc.pairs:
        if _contains(pair.key.range, position):
            documentation = schema.field_doc(profile.name, pair.name)
            if documentation is None:
                known = schema.all_fields().get(pair.name)
                documentation = f"Not a field of the {profile.name} profile" + (
                    f" (it belongs to {known})." if known else "."
                )
            text = f"**{pair.name}** ({profile.name})\n\n{documentation}\n\n{support_markdown(pair.name)}"
            return text, pair.key.range
    if tools is not None:
        for entry, rng in tool_entries(doc):
            if _contains(rng, position):
                tool = tools.resolve(tool_name(entry))
                if tool is None:
                    return f"**{tool_name(entry)}**\n\nNot in the tool manifest.", rng
                source = f"\n\nSource: `{tool.source}`" if tool.source else ""
                return f"**{tool.name}**\n\n{tool.description or '(no description)'}{source}", rng
    return None


def listing_hover(
    me: ListedSkill, places: Sequence[tuple[Runtime, Placement, int, int | None]], profile: str = ""
) -> str:
    """Markdown for a `description`: its length and, for each runtime given as (runtime, where
    this description lands, characters the whole listing needs, its budget), what it keeps."""
    lines = [f"**description**: {len(me.description):,} characters", ""]
    if not places:
        lines.append(f"No runtime's skill listing is checked for the `{profile}` profile (SK703).")
    for runtime, placement, needed, budget in places:
        if budget is None:
            size = f"{needed:,} characters (no documented limit)"
        else:
            size = f"{needed:,} of {budget:,} characters ({needed / budget:.0%})"
        lines.append(f"- {runtime.title}: {size}: **{placement.describe()}** ([budget]({runtime.docs}))")
    return "\n".join(lines)
