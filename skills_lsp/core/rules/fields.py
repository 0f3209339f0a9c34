"""SK4xx: which keys a profile allows and the type of each value (from the JSON Schema)."""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterator
from functools import cache, lru_cache
from typing import Any

from skills_lsp.core import schema
from skills_lsp.core.model import Applicability, Fix, Severity
from skills_lsp.core.parse.frontmatter import YamlNode, node_at, to_python
from skills_lsp.core.rules.common import field_text
from skills_lsp.core.rules.edits import move_under_metadata, replace
from skills_lsp.core.rules.registry import Report, RuleContext, except_in, json_path, rule

COMPATIBILITY_MAX = schema.max_length("compatibility")
# Length and pattern limits have their own rules with better messages and fixes.
_RULE_OWNED_KEYWORDS = frozenset({"maxLength", "minLength", "pattern"})
# Fields whose top-level type has its own rule (SK202, SK302, SK501, SK502).
_RULE_OWNED_TYPES = frozenset({"name", "description", "allowed-tools"})


def _mapping(ctx: RuleContext) -> bool:
    return ctx.doc.root is not None and ctx.doc.root.kind == "mapping"


@lru_cache(maxsize=4096)
def _near_miss(key: str, profile: str) -> tuple[str, ...]:
    """The known key of `profile` that `key` looks like a typo of, if any (the same few unknown
    keys come back in file after file; difflib is slow)."""
    return tuple(difflib.get_close_matches(key, list(schema.profile_fields(profile)), n=1, cutoff=0.75))


@rule(
    "SK401",
    "unknown-key",
    Severity.WARNING,
    "A top-level key the profile does not define",
    severity_in={"skills-ref": Severity.ERROR},
    fixes=[Applicability.UNSAFE],
)
def unknown_key(ctx: RuleContext) -> Iterator[Report]:
    """Each profile allows a fixed set of top-level keys (agentskills.io: `name`, `description`,
    `license`, `compatibility`, `metadata`, `allowed-tools`). skills-ref and claude.ai refuse any
    other key; adk-skill silently ignores it (so a typo such as `allowed_tools` loses the tools).
    Client-specific data belongs under `metadata`. A runtime's own keys are allowed in its
    profile, which a `SKILL.md` in that runtime's skills folder gets by default (`.claude/skills/`
    claude-code, `.codex/skills/` codex, `.gemini/skills/` gemini-cli, `.github/skills/`
    vscode-copilot); docs/profiles.md lists which profile accepts which key.

    Fixes (both unsafe: what a runtime reads changes): rename a near-miss to the known key; move
    the entry under `metadata`."""
    if not _mapping(ctx):
        return
    known = ctx.profile.fields
    everywhere = schema.all_fields()
    for pair in ctx.doc.pairs:
        key = pair.name
        if key in known or pair.key.kind != "scalar":
            continue
        fixes: list[Fix] = []
        close = _near_miss(key.replace("_", "-").lower(), ctx.profile.name)
        if close and close[0] not in ctx.doc.keys:
            hint = f"; did you mean `{close[0]}`"
            fixes.append(replace(f"Rename to `{close[0]}`", pair.key.range, close[0], Applicability.UNSAFE))
        elif key in everywhere:
            owner = everywhere[key]
            hint = f" (it is {'an' if owner[0] in 'aeiou' else 'a'} {owner} field)"
        else:
            hint = ""
        if "metadata" in known and not close:
            move = move_under_metadata(ctx.doc, pair)
            if move is not None:
                fixes.append(move)
        where = " Put client-specific keys under `metadata`." if "metadata" in known and not close else ""
        end = "?" if close and close[0] not in ctx.doc.keys else "."
        yield Report(
            pair.key.range,
            f"Unknown key `{key}` for the {ctx.profile.name} profile{hint}{end}{where}",
            tuple(fixes),
        )


def _schema_value(ctx: RuleContext, node: YamlNode, field_schema: dict[str, Any]) -> Any:
    if node.kind == "scalar" and (
        ctx.profile.strings_only or (schema.accepts_string(field_schema) and not node.is_null)
    ):
        return str(node.value)
    return to_python(node)


@rule(
    "SK402", "invalid-value", Severity.ERROR, "A field's value has the wrong type or is not an allowed value"
)
def invalid_value(ctx: RuleContext) -> Iterator[Report]:
    """Checks each known field against the profile's JSON Schema
    (`schema/skill-frontmatter.schema.json`): types (`trigger` is a boolean, `tags` a list),
    allowed values (`context: fork`) and the shape of nested values (google-adk's
    `metadata.adk_inject_state` must be a bool)."""
    if not _mapping(ctx):
        return
    seen: set[str] = set()
    for pair in ctx.doc.pairs:
        key = pair.name
        if key in seen:
            continue
        seen.add(key)
        field_schema = schema.field_schema(ctx.profile.name, key)
        if field_schema is None:
            continue
        value = _schema_value(ctx, pair.value, field_schema)
        if isinstance(value, _always_valid(ctx.profile.name, key)):
            continue
        validator = _validator(ctx.profile.name, key)
        if validator is None:
            continue
        for error in validator.iter_errors(value):
            if error.validator in _RULE_OWNED_KEYWORDS:
                continue
            if key in _RULE_OWNED_TYPES and not error.absolute_path and error.validator in ("type", "anyOf"):
                continue
            node = node_at(pair.value, list(error.absolute_path))
            yield Report(node.range, f"`{key}{json_path(error.absolute_path)}`: {_describe(error)}")


_validator = lru_cache(maxsize=None)(schema.field_validator)
# Keywords that report nothing here: notes, and the limits rules of their own report.
_SILENT_KEYWORDS = (
    frozenset({"description", "markdownDescription", "examples", "title"}) | _RULE_OWNED_KEYWORDS
)
_PYTHON_TYPES: dict[str, tuple[type, ...]] = {"string": (str,), "object": (dict,)}


@cache
def _always_valid(profile: str, key: str) -> tuple[type, ...]:
    """The Python types of value that `key`'s schema can report nothing about (so the validator,
    which resolves its `$ref` on every call, is not run for them): any value for an empty
    schema; `str` for a bare `type: string`, whose length and pattern limits other rules check;
    `dict` for a bare `type: object`. Empty when the schema says more."""
    field_schema = schema.field_schema(profile, key) or {"not": {}}
    if not set(field_schema) - _SILENT_KEYWORDS - {"type"}:
        kind = field_schema.get("type")
        if kind is None:
            return (object,)
        if isinstance(kind, str):
            return _PYTHON_TYPES.get(kind, ())
    return ()


def _describe(error: Any) -> str:
    if error.validator == "type":
        expected = error.validator_value
        expected = " or ".join(expected) if isinstance(expected, list) else expected
        article = "an" if str(expected)[0] in "aeiou" else "a"
        return f"expected {article} {expected}, found {_kind(error.instance)}."
    if error.validator == "enum":
        return f"must be one of {', '.join(f'`{v}`' for v in error.validator_value)}."
    if error.validator == "anyOf":
        return "expected a string or a list of strings, found " + _kind(error.instance) + "."
    return str(error.message) + "."


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean `{str(value).lower()}`"
    if isinstance(value, (int, float)):
        return f"number `{value}`"
    if isinstance(value, str):
        return f"string `{value}`" if len(value) < 40 else "a string"
    if isinstance(value, list):
        return "a list"
    return "a mapping"


@rule("SK403", "compatibility-too-long", Severity.ERROR, "`compatibility` is longer than 500 characters")
def compatibility_too_long(ctx: RuleContext) -> Iterator[Report]:
    """The spec limits `compatibility` to 500 characters; name only real requirements (product,
    system packages, network access)."""
    found = field_text(ctx, "compatibility")
    if found is None:
        return
    pair, text = found
    if text is not None and len(text) > COMPATIBILITY_MAX:
        yield Report(
            pair.value.range, f"`compatibility` is {len(text)} characters; the limit is {COMPATIBILITY_MAX}."
        )


@rule(
    "SK404",
    "metadata-not-strings",
    Severity.WARNING,
    "`metadata` values are not all strings",
    profiles=except_in("skills-ref"),
    fixes=[Applicability.SAFE],
)
def metadata_not_strings(ctx: RuleContext) -> Iterator[Report]:
    """The spec defines `metadata` as a map from string keys to string values. Numbers and
    booleans are read differently by different YAML parsers (`1.10` becomes `1.1`), and Go or
    Rust clients with a string map refuse nested values.

    Fix: quote a number or boolean value, as written."""
    if not _mapping(ctx) or "metadata" not in ctx.profile.fields or ctx.profile.name == "adk-rust":
        return
    pair = ctx.get("metadata")
    if pair is None or pair.value.kind != "mapping":
        return
    for entry in pair.value.pairs:
        if ctx.profile.name == "adk" and entry.name.startswith("adk_"):
            continue  # typed by google-adk; checked by the schema
        value = entry.value
        if value.kind == "scalar":
            if value.style is not None or isinstance(to_python(value), str) or value.is_null:
                continue
            fix = replace("Quote the value", value.range, json.dumps(str(value.value), ensure_ascii=False))
            yield Report(value.range, f"`metadata.{entry.name}` should be a string; quote it.", (fix,))
        else:
            yield Report(value.range, f"`metadata.{entry.name}` should be a string, not a {value.kind}.")


@rule("SK405", "compatibility-empty", Severity.WARNING, "`compatibility` is present but empty")
def compatibility_empty(ctx: RuleContext) -> Iterator[Report]:
    """The spec says `compatibility` must be 1-500 characters if provided; drop the key rather
    than leaving it empty."""
    found = field_text(ctx, "compatibility")
    if found is None:
        return
    pair, text = found
    if text is not None and not text.strip():
        yield Report(pair.key.range, "`compatibility` is empty; remove it or say what the skill needs.")
