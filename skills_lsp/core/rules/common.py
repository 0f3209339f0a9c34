"""Helpers shared by rule groups: reading a frontmatter field the way the profile reads it."""

from __future__ import annotations

from collections.abc import Iterator

from skills_lsp.core.parse.frontmatter import YamlNode, YamlPair
from skills_lsp.core.rules.registry import Report, RuleContext


def scalar_text(ctx: RuleContext, node: YamlNode) -> str | None:
    """A scalar field's text as the profile reads it; None for a collection.

    Every profile reads a scalar as the text written (`name: 404` is "404", as in skills-ref and
    adk-skill); only the strings-only profile (strictyaml) also keeps `~`/`null` as text.
    """
    if node.kind != "scalar":
        return None
    if ctx.profile.strings_only:
        return str(node.value)
    return "" if node.is_null else str(node.value)


def field_text(ctx: RuleContext, key: str) -> tuple[YamlPair, str | None] | None:
    """The top-level pair `key` and its text (None for a list or mapping), when present; worked
    out once per file and key (the rules ask for `name` and `description` some 15 times)."""
    known: dict[str, tuple[YamlPair, str | None] | None] | None = ctx.memo.get("field_text")
    if known is None:
        known = ctx.memo["field_text"] = {}
    elif key in known:
        return known[key]
    found: tuple[YamlPair, str | None] | None = None
    if ctx.doc.root is not None and ctx.doc.root.kind == "mapping":
        pair = ctx.get(key)
        if pair is not None:
            found = pair, scalar_text(ctx, pair.value)
    known[key] = found
    return found


def empty_or_not_string(ctx: RuleContext, key: str) -> Iterator[Report]:
    """A report when a present `key` is a collection or blank text."""
    found = field_text(ctx, key)
    if found is None:
        return
    pair, text = found
    if text is None:
        yield Report(pair.value.range, f"`{key}` must be a string, not a list or mapping.")
    elif not text.strip():
        # A bare `key:` has an empty range; point at the key then.
        empty_plain = pair.value.range.start == pair.value.range.end
        written = str(pair.value.value) if pair.value.is_null and not empty_plain else ""
        if written:  # `name: null` or `~`: the author may have meant the word
            message = (
                f"`{key}` is `{written}`, which YAML reads as no value; "
                f'write `{key}: "{written}"` for the word.'
            )
        else:
            message = f"`{key}` is empty."
        yield Report(pair.key.range if empty_plain else pair.value.range, message)
