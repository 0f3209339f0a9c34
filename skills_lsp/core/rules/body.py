"""SK6xx: the Markdown body and the files it references."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

from skills_lsp.core import schema
from skills_lsp.core.model import Applicability, FileChange, FileKind, Fix, Severity, TextEdit
from skills_lsp.core.parse.markdown import find_references
from skills_lsp.core.rules.registry import Report, RuleContext, except_in, json_path, rule

# skills-ref judges frontmatter only; convention files have no skill body or bundle.
BODY_PROFILES = except_in("skills-ref", "convention")
# adk-skill's flat files have no skill directory to stay inside or keep shallow.
BUNDLE_PROFILES = except_in("skills-ref", "convention", "adk-rust")

BODY_MAX_LINES = 500
EVALS_MAX_BYTES = 1024 * 1024
BODY_MAX_TOKENS = 5000
CHARS_PER_TOKEN = 4  # the usual estimate for English text with a BPE tokenizer


def _body_line_count(ctx: RuleContext) -> int:
    lines = ctx.doc.body_lines
    count = len(lines)
    while count and not lines[count - 1].strip():
        count -= 1
    return count


def _body_length(ctx: RuleContext) -> int:
    """`len(ctx.doc.body)` (the body's lines joined by `\n`, stripped), counted once for the rules
    that ask, without joining them: the lines but blank ones at either end, the first and last
    of the others stripped at their outer end."""
    length: int | None = ctx.memo.get("body_length")
    if length is None:
        lines = ctx.doc.body_lines
        first, last = 0, len(lines) - 1
        while first <= last and not lines[first].strip():
            first += 1
        while last > first and not lines[last].strip():
            last -= 1
        if first > last:
            length = 0
        elif first == last:
            length = len(lines[first].strip())
        else:
            inner = sum(map(len, lines[first + 1 : last]))
            length = len(lines[first].lstrip()) + inner + len(lines[last].rstrip()) + last - first
        ctx.memo["body_length"] = length
    return length


def _skill_file(ctx: RuleContext) -> bool:
    return ctx.doc.close_line is not None and ctx.kind is not FileKind.CONVENTION


@rule("SK601", "body-too-long", Severity.WARNING, "The body is over 500 lines", profiles=BODY_PROFILES)
def body_too_long(ctx: RuleContext) -> Iterator[Report]:
    """The spec recommends keeping SKILL.md under 500 lines: the whole body enters the model's
    context when the skill activates. Move detail into `references/` files that the agent reads
    only when needed."""
    if not _skill_file(ctx):
        return
    count = _body_line_count(ctx)
    if count > BODY_MAX_LINES:
        line = ctx.doc.body_start_line + BODY_MAX_LINES
        yield Report(
            ctx.doc.line_range(line),
            f"Body is {count} lines (recommended at most {BODY_MAX_LINES}); move detail into references/.",
        )


@rule(
    "SK602",
    "body-too-many-tokens",
    Severity.WARNING,
    "The body is over about 5000 tokens",
    profiles=BODY_PROFILES,
)
def body_too_many_tokens(ctx: RuleContext) -> Iterator[Report]:
    """The spec recommends under 5000 tokens for the instructions. Estimated as characters / 4
    (no tokenizer is specified, so treat it as a guide)."""
    if not _skill_file(ctx):
        return
    tokens = _body_length(ctx) // CHARS_PER_TOKEN
    if tokens > BODY_MAX_TOKENS:
        first = next(
            (n for n, line in enumerate(ctx.doc.lines) if n >= ctx.doc.body_start_line and line.strip()),
            ctx.doc.body_start_line,
        )
        yield Report(
            ctx.doc.line_range(first),
            f"Body is about {tokens} tokens (recommended under {BODY_MAX_TOKENS}); "
            "move detail into references/.",
        )


@rule("SK608", "empty-body", Severity.WARNING, "The body is empty", profiles=BODY_PROFILES)
def empty_body(ctx: RuleContext) -> Iterator[Report]:
    """A skill without instructions gives the agent nothing to do once it is selected."""
    if _skill_file(ctx) and not _body_length(ctx):
        yield Report(
            ctx.doc.line_range(ctx.doc.close_line or 0), "The body is empty: add the skill's instructions."
        )


_WINDOWS_ABS = re.compile(r"^[A-Za-z]:[\\/]")


def _reference_problems(ctx: RuleContext) -> Iterator[tuple[str, Report]]:
    """(code, report) for every reference problem; each public rule picks its code."""
    if not _skill_file(ctx):
        return
    # The folder as a string, references joined to it as strings: pathlib's parsing and joining
    # cost more than the stat that follows (a corpus probes 36,000 paths).
    base = _folder(ctx)
    for ref in find_references(ctx.doc):
        target = ref.target
        if "\\" in target:
            fixed = target.replace("\\", "/")
            yield (
                "SK606",
                Report(
                    ref.range,
                    f"Use `/` in paths: `{fixed}`.",
                    (Fix("Use forward slashes", (TextEdit(ref.range, fixed),)),),
                ),
            )
            target = fixed
        if target.startswith("/") or _WINDOWS_ABS.match(target):
            yield (
                "SK607",
                Report(ref.range, f"`{target}` is absolute; use a path relative to the skill directory."),
            )
            continue
        meant = ref.path.replace("\\", "/")  # URL-decoded for links
        parts = _parts(os.path.normpath(meant).replace("\\", "/"))
        if parts and parts[0] == "..":
            if ctx.kind is FileKind.AGENT_SKILL:
                yield "SK604", Report(ref.range, f"`{target}` points outside the skill directory.")
            continue
        if ctx.kind is FileKind.AGENT_SKILL and len(parts) > 2:
            yield (
                "SK605",
                Report(
                    ref.range,
                    f"`{target}` is {len(parts) - 1} directories deep; keep references one level deep.",
                ),
            )
        path = os.path.join(base, *parts)
        if parts and not ctx.exists(path):
            create = Fix(
                f"Create missing file {os.path.basename(path)}",
                (),
                Applicability.DISPLAY_ONLY,
                (FileChange(os.path.abspath(path), create=True),),
            )
            yield "SK603", Report(ref.range, f"`{target}` does not exist.", (create,))
        elif parts and _through_symlink(base, parts):
            real = os.path.realpath(path)
            home = os.path.realpath(base or os.curdir)
            if os.path.commonpath([real, home]) != home:
                yield (
                    "SK611",
                    Report(
                        ref.range,
                        f"`{target}` is a symbolic link to `{real}`, outside the skill directory: "
                        "the skill does not ship that file, and an agent following it reads the host's.",
                    ),
                )


def _parts(path: str) -> tuple[str, ...]:
    """`PurePosixPath(path).parts`, split directly where that is the same (a relative path
    without empty or `.` parts: nearly every reference, once normalized)."""
    if (
        path in ("", ".")
        or path.startswith(("/", "./"))
        or path.endswith(("/", "/."))
        or "//" in path
        or "/./" in path
    ):
        return PurePosixPath(path).parts
    return tuple(path.split("/"))


def _through_symlink(base: str, parts: tuple[str, ...]) -> bool:
    """Whether a path below `base` passes a symbolic link: one lstat per part (a reference is one
    or two deep), so only the rare path that does pays for resolving it and `base` in full."""
    return any(os.path.islink(os.path.join(base, *parts[: i + 1])) for i in range(len(parts)))


def _folder(ctx: RuleContext) -> str:
    """The skill's folder as `os.path.join` starts from it: `str(ctx.skill_dir)`, but "" for
    "." (pathlib writes `Path(".") / "a"` as `a`, `os.path.join` as `./a`)."""
    folder = os.fspath(ctx.skill_dir)
    return "" if folder == os.curdir else folder


def _select(ctx: RuleContext, code: str) -> Iterator[Report]:
    # Six rules share one scan of the body.
    found_all = ctx.memo.get("references")
    if found_all is None:
        found_all = ctx.memo["references"] = list(_reference_problems(ctx))
    for found, report in found_all:
        if found == code:
            yield report


@rule(
    "SK603",
    "missing-reference",
    Severity.ERROR,
    "A referenced file does not exist",
    profiles=BODY_PROFILES,
    fixes=[Applicability.DISPLAY_ONLY],
)
def missing_reference(ctx: RuleContext) -> Iterator[Report]:
    """A relative path in the body (a Markdown link, or a bare `scripts/...`, `references/...` or
    `assets/...` path outside fenced code) names a file that is not in the skill directory. The
    agent will fail when it follows it. In the editor, a quick fix creates the file."""
    yield from _select(ctx, "SK603")


@rule(
    "SK604",
    "reference-outside-skill",
    Severity.ERROR,
    "A reference points outside the skill directory",
    profiles=BUNDLE_PROFILES,
)
def reference_outside_skill(ctx: RuleContext) -> Iterator[Report]:
    """Skills are copied and installed as one directory; a `../` path breaks once the skill is
    moved. Copy the file into the skill."""
    yield from _select(ctx, "SK604")


@rule(
    "SK611",
    "reference-symlink-outside",
    Severity.ERROR,
    "A reference is a symbolic link to a file outside the skill directory",
    profiles=BODY_PROFILES,
)
def reference_symlink_outside(ctx: RuleContext) -> Iterator[Report]:
    """The path looks like it is inside the skill (`references/guide.md`) but a symbolic link on
    the way resolves outside it: the installed skill will not carry the file, and whoever runs
    the skill reads a file of the host's instead (a way to smuggle `~/.ssh` into a context).
    Copy the file into the skill. Editors do not follow such links either."""
    yield from _select(ctx, "SK611")


@rule(
    "SK605",
    "reference-too-deep",
    Severity.WARNING,
    "A reference is more than one directory deep",
    profiles=BUNDLE_PROFILES,
)
def reference_too_deep(ctx: RuleContext) -> Iterator[Report]:
    """The spec asks to keep file references one level deep from SKILL.md
    (`references/guide.md`, not `references/a/b/guide.md`)."""
    yield from _select(ctx, "SK605")


@rule(
    "SK606",
    "reference-backslash",
    Severity.WARNING,
    "A reference uses `\\` as a separator",
    profiles=BODY_PROFILES,
    fixes=[Applicability.SAFE],
)
def reference_backslash(ctx: RuleContext) -> Iterator[Report]:
    """Paths use `/`; a `\\` separator only works on Windows.

    Fix: replace `\\` with `/`."""
    yield from _select(ctx, "SK606")


@rule(
    "SK607", "reference-absolute", Severity.WARNING, "A reference is an absolute path", profiles=BODY_PROFILES
)
def reference_absolute(ctx: RuleContext) -> Iterator[Report]:
    """References are relative to the skill directory so the skill works wherever it is
    installed."""
    yield from _select(ctx, "SK607")


@rule(
    "SK610",
    "invalid-evals",
    Severity.ERROR,
    "`evals/evals.json` does not match the evals format",
    profiles=BODY_PROFILES,
)
def invalid_evals(ctx: RuleContext) -> Iterator[Report]:
    """`evals/evals.json` (the agentskills.io evaluation convention) must be
    `{"skill_name": str, "evals": [{"id": int, "prompt": str, "expected_output": str,
    "files": [str], "assertions": [str]}]}`. Findings point at the SKILL.md name line; the
    message names the JSON location."""
    if ctx.kind is not FileKind.AGENT_SKILL or ctx.doc.close_line is None:
        return
    evals = os.path.join(_folder(ctx), "evals", "evals.json")
    if not ctx.exists(evals):
        return
    anchor = ctx.doc.line_range(0)
    try:
        raw = ctx.read(Path(evals), EVALS_MAX_BYTES)
        if len(raw) > EVALS_MAX_BYTES:
            yield Report(anchor, f"evals/evals.json is over {EVALS_MAX_BYTES // 1024} KiB; it is not read.")
            return
        data = json.loads(raw.decode("utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        yield Report(anchor, f"evals/evals.json cannot be read: {reason}.")
        return
    except json.JSONDecodeError as exc:
        yield Report(
            anchor, f"evals/evals.json is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})."
        )
        return
    validator = schema.validator("evals.schema.json")
    for error in sorted(validator.iter_errors(data), key=lambda e: [str(p) for p in e.absolute_path]):
        yield Report(
            anchor, f"evals/evals.json {json_path(error.absolute_path) or '(root)'}: {error.message}."
        )
    name = ctx.get("name")
    claimed = data.get("skill_name") if isinstance(data, dict) else None
    if (
        name is not None
        and isinstance(claimed, str)
        and name.value.kind == "scalar"
        and claimed != name.value.value
    ):
        yield Report(
            name.value.range,
            f"evals/evals.json names skill `{claimed}`, but this skill is `{name.value.value}`.",
        )
