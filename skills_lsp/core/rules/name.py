"""SK2xx: the `name` field."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator

from skills_lsp.core.model import Applicability, FileKind, Fix, Range, Severity, TextEdit
from skills_lsp.core.parse.frontmatter import YamlNode
from skills_lsp.core.rules.common import empty_or_not_string, field_text
from skills_lsp.core.rules.edits import NAME_MAX, replace, suggest_name, yaml_string
from skills_lsp.core.rules.registry import Report, RuleContext, rule

E = Severity.ERROR
SAFE, UNSAFE, EDITOR = Applicability.SAFE, Applicability.UNSAFE, Applicability.DISPLAY_ONLY


def _name(ctx: RuleContext) -> tuple[YamlNode, str] | None:
    """The name node and its normalised text, when there is a usable name."""
    found = field_text(ctx, "name")
    if found is None or ctx.profile.name_style == "free":
        return None
    pair, text = found
    if not text or not text.strip():
        return None
    text = text.strip()
    if ctx.profile.name_style == "unicode":
        text = unicodedata.normalize("NFKC", text)
    return pair.value, text


def _directory(ctx: RuleContext) -> str | None:
    """The skill's folder name when `name` must equal it (agentskills layout), else None."""
    if ctx.kind is not FileKind.AGENT_SKILL or not ctx.profile.name_matches_directory:
        return None
    # `check SKILL.md` run inside the skill has no directory in its path: ask the file system.
    directory = ctx.skill_dir.name or ctx.skill_dir.resolve().name
    if ctx.profile.name_style == "unicode":
        directory = unicodedata.normalize("NFKC", directory)
    return directory or None


def _folder_needs_renaming(ctx: RuleContext) -> bool:
    """Whether `name` must equal the folder's name and that name is not a valid one: then no
    edit of the file clears every name error (a valid name mismatches the folder, the folder's
    name is invalid), so the name fixes are offered in the editor only, not to `check --fix`."""
    directory = _directory(ctx)
    unicode = ctx.profile.name_style == "unicode"
    return directory is not None and suggest_name(directory, unicode=unicode) != directory


def _fix_name(ctx: RuleContext, node: YamlNode, name: str) -> tuple[Fix, ...]:
    suggestion = suggest_name(name, unicode=ctx.profile.name_style == "unicode")
    if suggestion == name:
        return ()
    # Unsafe: agents and other skills refer to a skill by its name.
    kind = EDITOR if _folder_needs_renaming(ctx) else UNSAFE
    return (replace(f"Rename to `{suggestion}`", node.range, yaml_string(suggestion), kind),)


@rule("SK201", "missing-name", E, "The frontmatter has no `name`", fixes=[SAFE, EDITOR])
def missing_name(ctx: RuleContext) -> Iterator[Report]:
    """Every skill needs a `name`: agents list and load skills by it.

    Fix: add `name:` set to the skill's directory name (agentskills layout)."""
    doc = ctx.doc
    if "name" not in ctx.profile.required or doc.root is None or doc.root.kind != "mapping":
        return
    if doc.get("name") is not None:
        return
    fixes: tuple[Fix, ...] = ()
    if ctx.kind is FileKind.AGENT_SKILL:
        name = suggest_name(ctx.skill_dir.name, unicode=ctx.profile.name_style == "unicode")
        edit = TextEdit(Range.point(1, 0), f"name: {yaml_string(name)}{doc.eol}")
        kind = EDITOR if _folder_needs_renaming(ctx) else SAFE
        fixes = (Fix(f"Add `name: {name}`", (edit,), kind),)
    yield Report(doc.line_range(0), "Missing required field `name`.", fixes)


@rule("SK202", "empty-name", E, "`name` is empty or not a string")
def empty_name(ctx: RuleContext) -> Iterator[Report]:
    """`name` must be a non-empty string (a null, blank or list value is not a name)."""
    yield from empty_or_not_string(ctx, "name")


@rule("SK203", "name-too-long", E, "`name` is longer than 64 characters", fixes=[UNSAFE, EDITOR])
def name_too_long(ctx: RuleContext) -> Iterator[Report]:
    """The spec limits `name` to 64 characters (counted after NFKC normalisation in the
    skills-ref profile).

    Fix: shorten to a valid 64-character name."""
    found = _name(ctx)
    if found and len(found[1]) > NAME_MAX:
        node, name = found
        yield Report(
            node.range,
            f"`name` is {len(name)} characters; the limit is {NAME_MAX}.",
            _fix_name(ctx, node, name),
        )


@rule("SK204", "name-not-lowercase", E, "`name` has uppercase letters", fixes=[UNSAFE, EDITOR])
def name_not_lowercase(ctx: RuleContext) -> Iterator[Report]:
    """Names are lowercase. `PDF-Tools` is refused by skills-ref, google-adk and claude.ai.

    Fix: lowercase (and kebab-case) the name."""
    found = _name(ctx)
    if found and found[1] != found[1].lower():
        node, name = found
        yield Report(node.range, f"`name` `{name}` must be lowercase.", _fix_name(ctx, node, name))


def _invalid_chars(ctx: RuleContext, name: str) -> list[str]:
    if ctx.profile.name_style == "unicode":
        return [c for c in name if not (c.isalnum() or c == "-")]
    return [c for c in name if not (c.isascii() and (c.isalnum() or c == "-"))]


@rule(
    "SK205",
    "name-invalid-characters",
    E,
    "`name` has characters other than letters, digits and `-`",
    fixes=[UNSAFE, EDITOR],
)
def name_invalid_characters(ctx: RuleContext) -> Iterator[Report]:
    """Names use only lowercase letters `a-z`, digits and hyphens (`pdf-tools`, not `pdf_tools`
    or `pdf tools`). The skills-ref profile also accepts Unicode letters, as skills-ref does.

    Fix: rewrite as kebab-case."""
    found = _name(ctx)
    if not found:
        return
    node, name = found
    bad = _invalid_chars(ctx, name)
    if bad:
        shown = ", ".join(f"`{c}`" if c.strip() else repr(c) for c in dict.fromkeys(bad))
        allowed = "letters, digits" if ctx.profile.name_style == "unicode" else "`a-z`, `0-9`"
        yield Report(
            node.range,
            f"`name` contains {shown}; use only {allowed} and `-`.",
            _fix_name(ctx, node, name),
        )


@rule("SK206", "name-hyphen-edge", E, "`name` starts or ends with `-`", fixes=[UNSAFE, EDITOR])
def name_hyphen_edge(ctx: RuleContext) -> Iterator[Report]:
    """A name must not start or end with a hyphen.

    Fix: strip the hyphens."""
    found = _name(ctx)
    if found and (found[1].startswith("-") or found[1].endswith("-")):
        node, name = found
        yield Report(node.range, "`name` must not start or end with `-`.", _fix_name(ctx, node, name))


@rule("SK207", "name-consecutive-hyphens", E, "`name` contains `--`", fixes=[UNSAFE, EDITOR])
def name_consecutive_hyphens(ctx: RuleContext) -> Iterator[Report]:
    """A name must not contain consecutive hyphens.

    Fix: collapse them to one."""
    found = _name(ctx)
    if found and "--" in found[1]:
        node, name = found
        yield Report(node.range, "`name` must not contain `--`.", _fix_name(ctx, node, name))


@rule(
    "SK208",
    "name-directory-mismatch",
    E,
    "`name` differs from the skill's directory name",
    fixes=[UNSAFE, EDITOR],
)
def name_directory_mismatch(ctx: RuleContext) -> Iterator[Report]:
    """In the agentskills.io layout `<name>/SKILL.md`, `name` must equal the directory name
    (skills-ref and google-adk refuse a mismatch; some clients load it under the directory name).

    Fix: set `name` to the directory name. When the directory's name is not a valid name itself,
    no edit of the file can be right (the folder must be renamed): this fix and the renames of
    SK201-SK207 are then offered in the editor only (display-only), not applied by `--fix`."""
    directory = _directory(ctx)
    found = _name(ctx)
    if directory is None or not found:
        return
    node, name = found
    if name != directory:
        kind = EDITOR if _folder_needs_renaming(ctx) else UNSAFE
        yield Report(
            node.range,
            f"`name` `{name}` must match the directory name `{directory}`.",
            (replace(f"Set name to `{directory}`", node.range, yaml_string(directory), kind),),
        )
