"""Hover text for a frontmatter key (its schema documentation in the file's profile) or an
`allowed-tools` entry (the tool's manifest description)."""

from __future__ import annotations

from skills_lsp.core import schema
from skills_lsp.core.model import Position, Range
from skills_lsp.core.parse.allowed_tools import tool_entries, tool_name
from skills_lsp.core.parse.frontmatter import Document
from skills_lsp.core.parse.tool_manifest import StaticToolRegistry
from skills_lsp.core.rules.listing import RUNTIMES, ListedSkill, fit_listing, runtimes_for
from skills_lsp.core.rules.profiles import Profile


def _contains(rng: Range, position: Position) -> bool:
    return rng.start <= position <= rng.end


def hover_text(
    doc: Document, position: Position, profile: Profile, tools: StaticToolRegistry | None
) -> tuple[str, Range] | None:
    """Markdown for a frontmatter key (its schema doc) or an `allowed-tools` entry (the tool's
    manifest description), with the range it covers."""
    for pair in doc.pairs:
        if _contains(pair.key.range, position):
            documentation = schema.field_doc(profile.name, pair.name)
            if documentation is None:
                known = schema.all_fields().get(pair.name)
                documentation = f"Not a field of the {profile.name} profile" + (
                    f" (it belongs to {known})." if known else "."
                )
            return f"**{pair.name}** ({profile.name})\n\n{documentation}", pair.key.range
    if tools is not None:
        for entry, rng in tool_entries(doc):
            if _contains(rng, position):
                tool = tools.resolve(tool_name(entry))
                if tool is None:
                    return f"**{tool_name(entry)}**\n\nNot in the tool manifest.", rng
                source = f"\n\nSource: `{tool.source}`" if tool.source else ""
                return f"**{tool.name}**\n\n{tool.description or '(no description)'}{source}", rng
    return None


def listing_hover(me: ListedSkill, others: list[ListedSkill], profile: Profile) -> str:
    """Markdown for a `description`: its length and, for each runtime that lists skills of this
    profile (every runtime for the others), what that runtime's listing keeps of it."""
    lines = [f"**description**: {len(me.description):,} characters", ""]
    runtimes = runtimes_for(profile.name) or tuple(RUNTIMES.values())
    for runtime in runtimes:
        listing = fit_listing(runtime, [me, *others])
        placement = listing.placement(me.name, me.path)
        fate = placement.describe() if placement is not None else "not listed"
        lines.append(f"- {listing.summary()}: **{fate}** ([budget]({runtime.docs}))")
    return "\n".join(lines)
