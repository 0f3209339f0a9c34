"""SK1xx: file structure and YAML syntax. Most surface the frontmatter parser's problems: a
problem's `kind` is the name of the rule that reports it."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

from skills_lsp.core.model import Applicability, Fix, Range, Severity, TextEdit
from skills_lsp.core.parse import frontmatter as fm
from skills_lsp.core.rules.edits import find_pair, pair_lines
from skills_lsp.core.rules.registry import FileProblems, Report, RuleContext, Target, except_in, rule

E, W, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO
SAFE, UNSAFE = Applicability.SAFE, Applicability.UNSAFE
SKILLS_REF = ("skills-ref",)  # rules that emulate skills-ref's strictyaml quirks run only there


@rule(
    "SK100",
    "unreadable-file",
    E,
    "The file cannot be read",
    target=Target.FILE,
    origin="reported by the checker (rules/validate.py, rules/check.py) on a file it cannot read",
)
def unreadable_file(file: FileProblems) -> Iterator[Report]:
    """The file exists but could not be read (permissions, a directory named like a skill
    file, or a file that vanished while being checked), or a path given to `check` is neither a
    file nor a directory."""
    yield from file.of("unreadable-file")


def _problems(ctx: RuleContext, kind: str) -> Iterator[Report]:
    return ctx.problems(kind)


@rule("SK101", "no-frontmatter", E, "The file does not start with `---` frontmatter", fixes=[SAFE])
def no_frontmatter(ctx: RuleContext) -> Iterator[Report]:
    """A skill file must start with a line `---`, then YAML holding at least `name` and
    `description`, then a closing `---` line. Without it, no agent can list the skill.
    Convention files (AGENTS.md, CLAUDE.md, ...) may omit frontmatter.

    Fix: when the first line is a near miss such as `--` or `----`, make it `---`."""
    if not ctx.profile.require_frontmatter:
        return
    for report in _problems(ctx, fm.P_NO_FRONTMATTER):
        fixes: tuple[Fix, ...] = ()
        if ctx.doc.lines and ctx.doc.lines[0].strip().startswith("--"):
            fixes = (Fix("Make the first line `---`", (TextEdit(ctx.doc.line_range(0), "---"),)),)
        yield report._replace(fixes=fixes)


@rule("SK102", "unclosed-frontmatter", E, "The frontmatter has no closing `---` line")
def unclosed_frontmatter(ctx: RuleContext) -> Iterator[Report]:
    """The opening `---` must be matched by a later line that holds only `---` (trailing
    whitespace allowed). A `---` inside a value, or `----`, does not close the block."""
    yield from _problems(ctx, fm.P_UNCLOSED)


@rule("SK103", "yaml-syntax", E, "The frontmatter is not valid YAML")
def yaml_syntax(ctx: RuleContext) -> Iterator[Report]:
    """The YAML between the `---` lines could not be parsed; the message gives libyaml's reason
    at the exact position. Agents that use a strict loader skip such a skill silently."""
    yield from _problems(ctx, fm.P_YAML_SYNTAX)


@rule("SK104", "unquoted-colon", E, "An unquoted value contains `: `", fixes=[SAFE])
def unquoted_colon(ctx: RuleContext) -> Iterator[Report]:
    """YAML reads `key: text: more` as a nested mapping and fails. This is the most common
    reason real skills fail to load. Quote the value: `description: "Use when: ..."`.

    Fix: wrap the value in double quotes (escaping as needed)."""
    for problem in ctx.doc.problems:
        if problem.kind != fm.P_UNQUOTED_COLON:
            continue
        quoted = json.dumps(problem.data["value"], ensure_ascii=False)
        fix = Fix("Quote the value", (TextEdit(problem.range, quoted),))
        yield Report(problem.range, problem.message, (fix,))


@rule("SK105", "duplicate-key", E, "A key appears twice in one mapping", fixes=[UNSAFE])
def duplicate_key(ctx: RuleContext) -> Iterator[Report]:
    """YAML forbids duplicate keys; parsers disagree on which value wins (PyYAML keeps the last,
    serde_yaml and strictyaml refuse the file). Keep one.

    Fix (unsafe: PyYAML readers saw the later value): delete the later entry."""
    for problem in ctx.doc.problems:
        if problem.kind != fm.P_DUPLICATE_KEY:
            continue
        fixes: tuple[Fix, ...] = ()
        pair = find_pair(ctx.doc.root, problem.range) if ctx.doc.root is not None else None
        if pair is not None:
            delete = TextEdit(pair_lines(ctx.doc, pair), "")
            fixes = (Fix("Delete this duplicate entry", (delete,), UNSAFE),)
        yield Report(problem.range, problem.message, fixes)


@rule("SK106", "frontmatter-not-mapping", E, "The frontmatter is not a mapping")
def not_mapping(ctx: RuleContext) -> Iterator[Report]:
    """The frontmatter must be a YAML mapping of `key: value` lines, not a list or a single
    value."""
    yield from _problems(ctx, fm.P_NOT_MAPPING)


@rule("SK107", "empty-frontmatter", E, "The frontmatter is empty")
def empty_frontmatter(ctx: RuleContext) -> Iterator[Report]:
    """There is nothing but blank lines or comments between the `---` lines; at least `name`
    and `description` are needed."""
    if ctx.profile.require_frontmatter:
        yield from _problems(ctx, fm.P_EMPTY)


@rule("SK108", "file-too-large", E, "The file is over 4 MiB")
def file_too_large(ctx: RuleContext) -> Iterator[Report]:
    """Files over 4 MiB are not parsed: a skill's whole body is loaded into the model's context
    on activation. Move large content into `references/` or `assets/`."""
    yield from _problems(ctx, fm.P_FILE_TOO_LARGE)


@rule("SK109", "frontmatter-too-large", E, "The frontmatter is over 64 KiB")
def frontmatter_too_large(ctx: RuleContext) -> Iterator[Report]:
    """Frontmatter over 64 KiB is not parsed. Name, description and metadata are loaded for
    every skill at start-up; keep them short."""
    yield from _problems(ctx, fm.P_FRONTMATTER_TOO_LARGE)


@rule("SK110", "frontmatter-too-complex", E, "The frontmatter nests too deeply or its aliases expand too far")
def frontmatter_too_complex(ctx: RuleContext) -> Iterator[Report]:
    """Deep nesting (over 64 levels) or aliases that expand to more than 10,000 nodes (a
    "billion laughs" document) are refused in bounded time instead of being parsed."""
    yield from _problems(ctx, fm.P_TOO_COMPLEX)


@rule("SK111", "not-utf8", E, "The file is not valid UTF-8")
def not_utf8(ctx: RuleContext) -> Iterator[Report]:
    """Skill files must be UTF-8. adk-skill skips files that fail to decode; other loaders
    crash. Re-save the file as UTF-8."""
    yield from _problems(ctx, fm.P_NOT_UTF8)


@rule("SK112", "multiple-documents", E, "The frontmatter holds more than one YAML document")
def multiple_documents(ctx: RuleContext) -> Iterator[Report]:
    """A document marker with content after it (`--- more: yaml`) inside the frontmatter starts
    a second YAML document, which no skill loader reads. Keep one mapping."""
    yield from _problems(ctx, fm.P_MULTIPLE_DOCUMENTS)


@rule(
    "SK113",
    "byte-order-mark",
    W,
    "The file starts with a UTF-8 byte-order mark",
    severity_in={"skills-ref": E},
)
def byte_order_mark(ctx: RuleContext) -> Iterator[Report]:
    """skills-ref, google-adk and adk-skill all reject a file whose first bytes are a UTF-8 BOM
    (they look for `---` at offset 0). skills-lsp reads it, but save the file as plain UTF-8
    (in VS Code: "Change File Encoding", "Save with Encoding", "UTF-8"). Editors keep the BOM
    outside the text, so no text edit can remove it: there is no quick fix."""
    if ctx.doc.has_bom:
        rng = Range.of(0, 0, 0, len(ctx.doc.lines[0]) if ctx.doc.lines else 0)
        yield Report(
            rng,
            "File starts with a UTF-8 byte-order mark; skills-ref, google-adk and adk-skill reject it. "
            "Save it as UTF-8 without BOM.",
        )


_DASHES = re.compile(r"---")


@rule(
    "SK114",
    "dashes-in-frontmatter",
    INFO,
    "`---` inside the frontmatter cuts it short in other tools",
    profiles=except_in("skills-ref"),
)
def dashes_in_frontmatter(ctx: RuleContext) -> Iterator[Report]:
    """skills-ref and google-adk split the file at the first `---` anywhere, even inside a value
    or a comment, so they see a truncated frontmatter. skills-lsp only ends the frontmatter at a
    whole `---` line, but the skill may still break in those tools."""
    doc = ctx.doc
    if doc.close_line is None:
        return
    for line in range(1, doc.close_line):
        match = _DASHES.search(doc.lines[line])
        if match:
            yield Report(
                Range.of(line, match.start(), line, match.end()),
                "skills-ref and google-adk end the frontmatter at this `---`; rephrase to avoid it.",
            )
            return


def _walk(node: fm.YamlNode) -> Iterator[fm.YamlNode]:
    todo = [node]
    while todo:
        current = todo.pop()
        yield current
        if current.kind == "sequence":
            todo.extend(reversed(current.value))
        elif current.kind == "mapping":
            for pair in reversed(current.value):
                todo.extend((pair.value, pair.key))


@rule(
    "SK115",
    "flow-collection",
    E,
    "Flow-style `[...]` or `{...}` collection (skills-ref refuses it)",
    profiles=SKILLS_REF,
)
def flow_collection(ctx: RuleContext) -> Iterator[Report]:
    """skills-ref parses with strictyaml, which refuses JSON-like flow collections such as
    `tags: [a, b]` or `metadata: {}`. Use block style (one `- item` per line) instead."""
    if ctx.doc.root is None:
        return
    for node in _walk(ctx.doc.root):
        if node.kind in ("sequence", "mapping") and node.flow:
            yield Report(
                node.range, "Flow-style collection: skills-ref (strictyaml) refuses `[...]` and `{...}`."
            )


@rule(
    "SK116",
    "yaml-anchor-or-tag",
    E,
    "YAML anchor, alias or explicit tag (skills-ref refuses it)",
    profiles=SKILLS_REF,
)
def anchor_or_tag(ctx: RuleContext) -> Iterator[Report]:
    """strictyaml, used by skills-ref, refuses anchors (`&a`), aliases (`*a`) and explicit tags
    (`!!str`). Write the value out in full."""
    if ctx.doc.root is None:
        return
    for node in _walk(ctx.doc.root):
        if node.kind == "alias":
            yield Report(node.range, f"Alias `*{node.anchor}`: skills-ref (strictyaml) refuses aliases.")
        elif node.anchor:
            yield Report(node.range, f"Anchor `&{node.anchor}`: skills-ref (strictyaml) refuses anchors.")
        elif node.tag:
            yield Report(node.range, "Explicit YAML tag: skills-ref (strictyaml) refuses tags.")


def _plain_scalar_pairs(root: fm.YamlNode) -> Iterator[tuple[fm.YamlNode | None, fm.YamlNode]]:
    for node in _walk(root):
        if node.kind == "mapping":
            for pair in node.value:
                yield pair.key, pair.value
        elif node.kind == "sequence":
            for item in node.value:
                yield None, item


@rule(
    "SK117",
    "tab-in-plain-value",
    E,
    "A tab in or after an unquoted value (skills-ref refuses it)",
    profiles=SKILLS_REF,
)
def tab_in_plain_value(ctx: RuleContext) -> Iterator[Report]:
    """strictyaml (skills-ref) refuses a tab after `key:` and a tab inside or right after an
    unquoted value, although libyaml accepts both. Use spaces, or quote the value."""
    if ctx.doc.root is None:
        return
    lines = ctx.doc.lines
    for key, value in _plain_scalar_pairs(ctx.doc.root):
        if key is not None and key.range.end.line == value.range.start.line:
            gap = lines[key.range.end.line][key.range.end.character : value.range.start.character]
            if "\t" in gap:
                yield Report(
                    Range.of(
                        key.range.end.line,
                        key.range.end.character,
                        value.range.start.line,
                        value.range.start.character,
                    ),
                    "Tab after `:`; use a space.",
                )
                continue
        if value.kind != "scalar" or value.style is not None:
            continue
        start, end = value.range.start, value.range.end
        text = "\n".join(lines[start.line : end.line + 1])
        tail = lines[end.line][end.character :].split(" #", 1)[0]
        if "\t" in text[start.character :] or "\t" in tail:
            yield Report(value.range, "Tab in an unquoted value; use spaces or quote the value.")
