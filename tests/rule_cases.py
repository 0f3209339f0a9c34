"""Shared fixtures for the rule tests: one case per rule (and more for edge cases), the helper that
writes a case to disk, and `apply_edits`, which applies a quick fix's text edits to a string.

A case is a file (and any files beside it) under a temporary directory, the profile to check it
with (None: the layout's default profile) and the 0-based range, in code points, where the rule
must report. `test_rules.py` checks the findings, `test_fixes.py` applies every fix offered.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from skills_lsp.core.files.discovery import kind_of
from skills_lsp.core.model import Position, Severity, TextEdit
from skills_lsp.core.parse.frontmatter import MAX_FILE_BYTES
from skills_lsp.core.rules import RULES
from skills_lsp.core.rules.profiles import DEFAULT_PROFILE, get_profile

RangeTuple = tuple[int, int, int, int]

# Reported outside the per-file rules: SK001 by the config loader, SK100 by the file reader (tested
# through validate_file / check_paths), SK701 by the workspace pass (tested through check_paths).
# Tested elsewhere: SK001/SK002/SK003 come from the config, manifest and query-file loaders
# (test_config.py, test_tool_registry.py, test_queries.py); SK505 needs a tool manifest
# (test_tool_registry.py); SK100 and SK701 need real files or a workspace (test_rules.py);
# SK702 comes from the language server (tests/server); SK004 from the ADK loader (tests/adk);
# SK703 needs a workspace over a runtime's budget (test_listing.py); SK704 needs a scorer
# (test_overlap.py, tests/server/test_collisions.py).
EXEMPT = frozenset({"SK001", "SK002", "SK003", "SK004", "SK100", "SK505", "SK701", "SK702", "SK703", "SK704"})

_BREAK = re.compile(r"\r\n|\r|\n")


# --- applying edits ------------------------------------------------------------------------------


def _line_spans(text: str) -> list[tuple[int, int]]:
    """(offset, length) of every line, splitting on CRLF, CR or LF like `frontmatter.split_lines`."""
    spans: list[tuple[int, int]] = []
    start = 0
    for match in _BREAK.finditer(text):
        spans.append((start, match.start() - start))
        start = match.end()
    spans.append((start, len(text) - start))
    return spans


def _offset(spans: list[tuple[int, int]], pos: Position) -> int:
    if not 0 <= pos.line < len(spans):
        raise ValueError(f"line {pos.line} is outside the text ({len(spans)} lines)")
    start, length = spans[pos.line]
    if not 0 <= pos.character <= length:
        raise ValueError(f"character {pos.character} is outside line {pos.line} ({length} code points)")
    return start + pos.character


def apply_edits(text: str, edits: Iterable[TextEdit]) -> str:
    """Apply non-overlapping edits given in any order (LSP semantics: positions refer to `text`
    before any edit; inserts at one position keep their order). Raises ValueError on a position
    outside the text or on overlapping edits."""
    spans = _line_spans(text)
    located: list[tuple[int, int, int, str]] = []
    for index, edit in enumerate(edits):
        start, end = _offset(spans, edit.range.start), _offset(spans, edit.range.end)
        if end < start:
            raise ValueError(f"edit {index} ends before it starts")
        located.append((start, end, index, edit.new_text))
    located.sort()
    for (_, end, _, _), (start, _, _, _) in itertools.pairwise(located):
        if start < end:
            raise ValueError("edits overlap")
    # From last to first, so that earlier offsets stay valid.
    for start, end, _, new_text in reversed(located):
        text = text[:start] + new_text + text[end:]
    return text


def document_text(data: bytes) -> str:
    """The text positions refer to: the decoded file without its byte-order mark (as the parser)."""
    text = data.decode("utf-8")
    return text.removeprefix("\ufeff")


# --- the case table ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    id: str
    code: str
    profile: str | None  # None: the default profile of the file's layout
    path: str  # relative to the temporary directory
    text: str | bytes
    range: RangeTuple
    files: Mapping[str, str] = field(default_factory=dict)  # other files to create, relative paths
    symlinks: Mapping[str, str] = field(default_factory=dict)  # link -> target, both relative

    @property
    def data(self) -> bytes:
        return self.text if isinstance(self.text, bytes) else self.text.encode("utf-8")

    @property
    def profile_name(self) -> str:
        return self.profile or DEFAULT_PROFILE[kind_of(self.path)]

    @property
    def severity(self) -> Severity:
        """The profile's severity for the code, else the rule's default."""
        return RULES[self.code].severity_for(get_profile(self.profile_name).name)

    def write(self, root: Path) -> Path:
        for rel, content in self.files.items():
            extra = root / rel
            extra.parent.mkdir(parents=True, exist_ok=True)
            extra.write_bytes(content.encode("utf-8"))
        for link, pointee in self.symlinks.items():
            (root / link).parent.mkdir(parents=True, exist_ok=True)
            (root / link).symlink_to(root / pointee)
        target = root / self.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(self.data)
        return target


HEAD = "---\nname: my-skill\ndescription: Use when testing.\n"  # lines 0-2; line 3 is free
BODY = "---\n\nDo the thing.\n"
SKILL = "my-skill/SKILL.md"
FLAT = ".skills/x.md"
FLAT_HEAD = "---\nname: x\ndescription: Use when testing.\n"
NAME = "name: my-skill"
DESC = "description: Use when testing."
# Profiles, short so that a case fits on a line or two.
AG, SR, AR, CC, ADK = "agentskills", "skills-ref", "adk-rust", "claude-code", "adk"


def fm(*lines: str, body: str = "Do the thing.\n") -> str:
    """A skill file: `---`, the given frontmatter lines, `---`, a blank line, the body."""
    return "---\n" + "".join(f"{ln}\n" for ln in lines) + "---\n\n" + body


_ALIAS_BOMB = fm(
    "name: my-skill",
    "description: Use when testing.",
    "a: &a [x, x, x, x, x, x, x, x, x, x]",
    "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]",
    "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]",
    "d: [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]",
)
_EVALS = "my-skill/evals/evals.json"
_GUIDE = {"my-skill/references/guide.md": "# Guide\n"}

CASES: list[Case] = [
    # --- SK1xx: structure -------------------------------------------------------------------------
    # SK005: suppression comments that silence nothing (the rest of the syntax: test_suppress.py).
    Case(
        "sk005-yaml-unused",
        "SK005",
        AG,
        SKILL,
        fm(NAME, DESC + "  # skills-lsp: ignore[SK401]"),
        (2, 32, 2, 59),
    ),
    Case(
        "sk005-yaml-one-code",
        "SK005",
        AG,
        SKILL,
        fm(NAME, DESC, "licence: MIT  # skills-lsp: ignore[SK401, SK303]"),
        (3, 42, 3, 47),
    ),
    Case(
        "sk005-unknown-code",
        "SK005",
        AG,
        SKILL,
        fm(NAME, DESC, body="Do the thing. <!-- skills-lsp-disable-line SK999 -->\n"),
        (5, 14, 5, 52),
    ),
    Case(
        "sk005-html-unused",
        "SK005",
        AG,
        SKILL,
        fm(NAME, DESC, body="<!-- skills-lsp-disable SK603 -->\nDo the thing. 🚀\n"),
        (5, 0, 5, 33),
    ),
    Case(
        "sk005-malformed", "SK005", AG, SKILL, fm(NAME, DESC + "  # skills-lsp: ignore SK401"), (2, 32, 2, 58)
    ),
    Case("sk101-heading", "SK101", None, SKILL, "# 标题 🚀\n\nBody.\n", (0, 0, 0, 6)),
    Case(
        "sk101-two-dashes",
        "SK101",
        AG,
        SKILL,
        "--\nname: my-skill\ndescription: Use when testing.\n---\n\nBody.\n",
        (0, 0, 0, 2),
    ),
    Case("sk101-flat", "SK101", AR, FLAT, "Just text 🚀\n", (0, 0, 0, 11)),
    Case(
        "sk102-unclosed", "SK102", AG, SKILL, "---\nname: my-skill\ndescription: Use when 🚀.\n", (0, 0, 0, 3)
    ),
    Case(
        "sk103-unterminated-quote", "SK103", AG, SKILL, fm(NAME, 'description: "Use 🚀 when'), (2, 24, 2, 24)
    ),
    Case("sk103-bad-indent", "SK103", AG, SKILL, fm(NAME, DESC, "  license: MIT"), (3, 9, 3, 10)),
    Case("sk104-use-when", "SK104", AG, SKILL, fm(NAME, "description: Use when: x"), (2, 13, 2, 24)),
    Case("sk104-cjk", "SK104", AG, SKILL, fm(NAME, "description: 用法: 处理 🚀 文件"), (2, 13, 2, 24)),
    Case(
        "sk104-escapes",
        "SK104",
        AG,
        SKILL,
        fm(NAME, 'description: Say "hi": C:\\temp 🚀 when asked'),
        (2, 13, 2, 43),
    ),
    Case(
        "sk104-crlf",
        "SK104",
        AG,
        SKILL,
        "---\r\nname: my-skill\r\ndescription: Use when: 🚀 x\r\n---\r\n\r\nBody\r\n",
        (2, 13, 2, 26),
    ),
    Case("sk104-nested", "SK104", AG, SKILL, fm(NAME, DESC, "metadata:", "  note: a: b"), (4, 8, 4, 12)),
    Case("sk104-adk-rust", "SK104", None, FLAT, fm("name: x", "description: Use when: 🚀"), (2, 13, 2, 24)),
    Case(
        "sk104-continuation",
        "SK104",
        AG,
        SKILL,
        fm(NAME, "description: Extract tables from PDFs.", "  Use when: the user has a PDF 🚀"),
        (2, 13, 3, 32),
    ),
    Case("sk105-duplicate", "SK105", AG, SKILL, fm(NAME, DESC, "description: 第二 🚀"), (3, 0, 3, 11)),
    Case(
        "sk105-duplicate-block",
        "SK105",
        AG,
        SKILL,
        fm(NAME, "metadata:", "  a: b", DESC, "metadata:", "  c: d"),
        (5, 0, 5, 8),
    ),
    Case("sk105-nested", "SK105", AG, SKILL, fm(NAME, DESC, "metadata:", "  a: b", "  a: c"), (5, 2, 5, 3)),
    Case("sk106-list", "SK106", AG, SKILL, fm("- a", "- 🚀"), (1, 0, 2, 3)),
    Case("sk106-scalar", "SK106", AG, SKILL, fm("just 一 text"), (1, 0, 1, 11)),
    Case("sk107-comment-only", "SK107", AG, SKILL, fm("# 注释 🚀", ""), (0, 0, 3, 3)),
    Case("sk108-huge", "SK108", AG, SKILL, fm(NAME, DESC, body="x" * MAX_FILE_BYTES), (0, 0, 0, 0)),
    Case(
        "sk109-huge-frontmatter",
        "SK109",
        AG,
        SKILL,
        fm(NAME, "description: Use when " + "字" * 70_000),
        (0, 0, 0, 3),
    ),
    Case("sk110-deep", "SK110", AG, SKILL, fm(NAME, DESC, "x: " + "[" * 70 + "]" * 70), (3, 0, 3, 143)),
    Case("sk110-alias-bomb", "SK110", AG, SKILL, _ALIAS_BOMB, (1, 0, 6, 43)),
    Case(
        "sk111-not-utf8",
        "SK111",
        AG,
        SKILL,
        b"---\nname: my-skill\ndescription: Use \xf0\x9f\x9a\x80 \xff x\n---\n\nBody\n",
        (2, 19, 2, 20),
    ),
    Case(
        "sk111-crlf",
        "SK111",
        AG,
        SKILL,
        b"---\r\nname: my-skill\r\ndescription: Use \xe5\xad\x97 \xc3\r\n---\r\n\r\nBody\r\n",
        (2, 19, 2, 20),
    ),
    Case("sk112-second-document", "SK112", AG, SKILL, fm(NAME, "--- b"), (2, 0, 2, 3)),
    Case(
        "sk113-bom",
        "SK113",
        AG,
        SKILL,
        b"\xef\xbb\xbf---\nname: my-skill\ndescription: Use when testing.\n---\n\nBody\n",
        (0, 0, 0, 3),
    ),
    Case(
        "sk113-bom-skills-ref",
        "SK113",
        SR,
        SKILL,
        b"\xef\xbb\xbf---\nname: my-skill\ndescription: Use when \xf0\x9f\x9a\x80.\n---\n\nBody\n",
        (0, 0, 0, 3),
    ),
    Case("sk114-dashes", "SK114", AG, SKILL, fm(NAME, "description: Use when 🚀 a --- b"), (2, 26, 2, 29)),
    Case("sk114-comment", "SK114", AG, SKILL, fm(NAME, "# 注 --- x", DESC), (2, 4, 2, 7)),
    Case("sk115-flow-map", "SK115", SR, SKILL, fm(NAME, DESC, "metadata: {a: 🚀}"), (3, 10, 3, 16)),
    Case(
        "sk115-flow-seq", "SK115", SR, SKILL, fm(NAME, DESC, "metadata:", "  tags: [一, 二]"), (4, 8, 4, 14)
    ),
    Case(
        "sk116-anchor",
        "SK116",
        SR,
        SKILL,
        fm(NAME, "description: &d Use 🚀 when x", "license: *d"),
        (2, 13, 2, 28),
    ),
    Case(
        "sk116-alias",
        "SK116",
        SR,
        SKILL,
        fm(NAME, "description: &d Use 🚀 when x", "license: *d"),
        (3, 9, 3, 11),
    ),
    Case("sk116-tag", "SK116", SR, SKILL, fm(NAME, "description: !!str Use 🚀 when x"), (2, 13, 2, 31)),
    Case("sk117-tab-in-value", "SK117", SR, SKILL, fm(NAME, "description: Use 🚀 when \t x"), (2, 13, 2, 27)),
    Case("sk117-tab-after-colon", "SK117", SR, SKILL, fm("name:\tmy-skill", DESC), (1, 4, 1, 6)),
    # --- SK2xx: name --------------------------------------------------------------------------------
    Case("sk201-agentskill", "SK201", AG, SKILL, fm("description: Use when 🚀 x"), (0, 0, 0, 3)),
    Case("sk201-flat-no-fix", "SK201", None, FLAT, fm("description: Use when 🚀 x"), (0, 0, 0, 3)),
    Case("sk202-null", "SK202", AG, SKILL, fm("name:", DESC), (1, 0, 1, 4)),
    Case("sk202-null-word", "SK202", AG, SKILL, fm("name: null", DESC), (1, 6, 1, 10)),
    Case("sk202-empty-string", "SK202", AG, SKILL, fm('name: ""', DESC), (1, 6, 1, 8)),
    Case("sk202-list", "SK202", AG, SKILL, fm("name:", "  - 🚀", DESC), (2, 2, 2, 5)),
    Case(
        "sk203-70-chars",
        "SK203",
        AG,
        SKILL,
        fm("name: " + "a" * 70, "description: Use when x."),
        (1, 6, 1, 76),
    ),
    Case(
        "sk203-long-words",
        "SK203",
        AG,
        "pdf/SKILL.md",
        fm("name: " + "-".join(["word"] * 14), "description: Use when x."),
        (1, 6, 1, 75),
    ),
    Case(
        "sk204-My_Skill", "SK204", AG, SKILL, fm("name: My_Skill", "description: Use when x."), (1, 6, 1, 14)
    ),
    Case(
        "sk204-accents",
        "SK204",
        AG,
        "unicode-skill/SKILL.md",
        fm("name: Ünïcödé-Skill", "description: Use when x."),
        (1, 6, 1, 19),
    ),
    Case(
        "sk205-underscore",
        "SK205",
        AG,
        SKILL,
        fm("name: my_skill", "description: Use when x."),
        (1, 6, 1, 14),
    ),
    Case(
        "sk205-accents",
        "SK205",
        AG,
        "unicode-skill/SKILL.md",
        fm("name: Ünïcödé-Skill", "description: Use when x."),
        (1, 6, 1, 19),
    ),
    Case("sk205-cjk", "SK205", AG, SKILL, fm("name: 别名 🚀", "description: Use when x."), (1, 6, 1, 10)),
    Case(
        "sk205-skills-ref-emoji",
        "SK205",
        SR,
        "技能/SKILL.md",
        fm("name: 技能🚀", "description: Use when x."),
        (1, 6, 1, 9),
    ),
    Case(
        "sk206-hyphens", "SK206", AG, "x/SKILL.md", fm("name: -x-", "description: Use when x."), (1, 6, 1, 9)
    ),
    Case(
        "sk207-double-hyphen",
        "SK207",
        AG,
        "a-b/SKILL.md",
        fm("name: a--b", "description: Use when x."),
        (1, 6, 1, 10),
    ),
    Case("sk208-mismatch", "SK208", AG, SKILL, fm("name: other", "description: Use when x."), (1, 6, 1, 11)),
    Case("sk208-quoted", "SK208", CC, SKILL, fm('name: "other"', "description: Use when x."), (1, 6, 1, 13)),
    Case(
        "sk208-skills-ref-cjk",
        "SK208",
        SR,
        "技能/SKILL.md",
        fm("name: 技能x", "description: Use when x."),
        (1, 6, 1, 9),
    ),
    # --- SK3xx: description ---------------------------------------------------------------------
    Case("sk301-missing", "SK301", AG, SKILL, fm(NAME), (0, 0, 0, 3)),
    Case("sk302-null", "SK302", AG, SKILL, fm(NAME, "description:"), (2, 0, 2, 11)),
    Case("sk302-list", "SK302", AG, SKILL, fm(NAME, "description:", "  - 一", "  - 二"), (3, 2, 4, 5)),
    Case(
        "sk303-too-long",
        "SK303",
        AG,
        SKILL,
        fm(NAME, "description: Use when " + "用" * 1100),
        (2, 13, 2, 1122),
    ),
    Case("sk304-xml", "SK304", AG, SKILL, fm(NAME, "description: Use when <file> is 🚀"), (2, 13, 2, 33)),
    Case(
        "sk305-no-when", "SK305", AG, SKILL, fm(NAME, "description: Converts PDF files 📄."), (2, 13, 2, 34)
    ),
    Case(
        "sk305-folded",
        "SK305",
        AG,
        SKILL,
        fm(NAME, "description: >", "  Converts 🚀", "  files."),
        (2, 13, 4, 8),
    ),
    Case(
        "sk306-first-person",
        "SK306",
        AG,
        SKILL,
        fm(NAME, "description: I can fill in 📄 forms. Use when asked."),
        (2, 13, 2, 51),
    ),
    # --- SK4xx: fields ------------------------------------------------------------------------------
    Case("sk401-move-no-metadata", "SK401", AG, SKILL, HEAD + "foo: 🚀 bar\n" + BODY, (3, 0, 3, 3)),
    Case(
        "sk401-move-block-metadata",
        "SK401",
        AG,
        SKILL,
        HEAD + "foo: 🚀 bar\nmetadata:\n  author: 我\n" + BODY,
        (3, 0, 3, 3),
    ),
    Case(
        "sk401-move-list-after-metadata",
        "SK401",
        AG,
        SKILL,
        HEAD + "metadata:\n  author: me\nfoo:\n  - a\n  - b\n" + BODY,
        (5, 0, 5, 3),
    ),
    Case(
        "sk401-move-block-scalar-metadata",
        "SK401",
        AG,
        SKILL,
        HEAD + "metadata:\n  note: |\n    a\n    b\nfoo: bar\n" + BODY,
        (7, 0, 7, 3),
    ),
    Case("sk401-move-null-metadata", "SK401", AG, SKILL, HEAD + "metadata:\nfoo: 3\n" + BODY, (4, 0, 4, 3)),
    Case(
        "sk401-move-crlf",
        "SK401",
        AG,
        SKILL,
        "---\r\nname: my-skill\r\ndescription: Use when testing.\r\nfoo: 🚀 bar\r\n---\r\n\r\nBody\r\n",
        (3, 0, 3, 3),
    ),
    Case("sk401-rename", "SK401", AG, SKILL, HEAD + "allowed_tools: Read\n" + BODY, (3, 0, 3, 13)),
    Case("sk401-rename-licence", "SK401", ADK, SKILL, HEAD + "licence: MIT\n" + BODY, (3, 0, 3, 7)),
    Case("sk401-skills-ref-error", "SK401", SR, SKILL, HEAD + "foo: bar\n" + BODY, (3, 0, 3, 3)),
    Case("sk401-cjk-key", "SK401", CC, SKILL, HEAD + "标签: 一\n" + BODY, (3, 0, 3, 2)),
    Case("sk402-trigger", "SK402", None, FLAT, FLAT_HEAD + "trigger: 也许\n" + BODY, (3, 9, 3, 11)),
    Case("sk402-enum", "SK402", CC, SKILL, HEAD + "context: 分叉\n" + BODY, (3, 9, 3, 11)),
    Case(
        "sk402-adk-metadata",
        "SK402",
        ADK,
        SKILL,
        HEAD + "metadata:\n  adk_inject_state: 1\n" + BODY,
        (4, 20, 4, 21),
    ),
    Case("sk402-null-metadata", "SK402", AG, SKILL, HEAD + "metadata:\n" + BODY, (3, 9, 3, 9)),
    Case(
        "sk403-too-long",
        "SK403",
        AG,
        SKILL,
        HEAD + "compatibility: " + "é" * 501 + "\n" + BODY,
        (3, 15, 3, 516),
    ),
    Case(
        "sk404-number",
        "SK404",
        AG,
        SKILL,
        HEAD + 'metadata:\n  version: 1.10\n  ok: "是"\n' + BODY,
        (4, 11, 4, 15),
    ),
    Case("sk404-bool", "SK404", ADK, SKILL, HEAD + "metadata:\n  🚀: true\n" + BODY, (4, 5, 4, 9)),
    Case("sk404-nested", "SK404", AG, SKILL, HEAD + "metadata:\n  deep:\n    a: b\n" + BODY, (5, 4, 5, 8)),
    Case("sk405-empty", "SK405", AG, SKILL, HEAD + 'compatibility: ""\n' + BODY, (3, 0, 3, 13)),
    # --- SK5xx: allowed-tools -------------------------------------------------------------------
    Case(
        "sk501-list",
        "SK501",
        AG,
        SKILL,
        HEAD + "allowed-tools:\n  - Read\n  - Bash(git:*)\n" + BODY,
        (4, 2, 5, 15),
    ),
    Case(
        "sk501-indentless-list",
        "SK501",
        ADK,
        SKILL,
        HEAD + "allowed-tools:\n- Read\n- Grep\n" + BODY,
        (4, 0, 5, 6),
    ),
    Case(
        "sk502-string",
        "SK502",
        None,
        FLAT,
        FLAT_HEAD + "allowed-tools: Read Bash(git:*)\n" + BODY,
        (3, 15, 3, 31),
    ),
    Case(
        "sk502-commas",
        "SK502",
        AR,
        FLAT,
        FLAT_HEAD + 'allowed-tools: "Read, Grep 🚀"\n' + BODY,
        (3, 15, 3, 29),
    ),
    Case("sk503-commas", "SK503", AG, SKILL, HEAD + "allowed-tools: Read, Grep 🚀\n" + BODY, (3, 15, 3, 27)),
    Case(
        "sk503-parens",
        "SK503",
        ADK,
        SKILL,
        HEAD + "allowed-tools: Bash(git:a,b),Read\n" + BODY,
        (3, 15, 3, 33),
    ),
    Case("sk504-string", "SK504", AG, SKILL, HEAD + "allowed-tools: Read Grep Read\n" + BODY, (3, 15, 3, 29)),
    Case(
        "sk504-list",
        "SK504",
        None,
        FLAT,
        FLAT_HEAD + "allowed-tools:\n  - Read\n  - Read\n" + BODY,
        (5, 4, 5, 8),
    ),
    # --- SK6xx: body and references ---------------------------------------------------------------
    Case("sk601-long-body", "SK601", AG, SKILL, HEAD + "---\n\n" + "line\n" * 501, (504, 0, 504, 4)),
    Case("sk602-many-tokens", "SK602", AG, SKILL, HEAD + "---\n\n" + "字" * 20_010 + "\n", (5, 0, 5, 20_010)),
    Case(
        "sk603-missing",
        "SK603",
        AG,
        SKILL,
        HEAD + "---\n\n# 指南 🚀\n\nSee [指南](references/guide.md).\n",
        (7, 9, 7, 28),
    ),
    Case("sk603-flat", "SK603", None, FLAT, FLAT_HEAD + "---\n\n🚀 Run scripts/run.py.\n", (5, 6, 5, 20)),
    Case(
        "sk604-outside", "SK604", AG, SKILL, HEAD + "---\n\n🚀 See [x](../other/file.md).\n", (5, 10, 5, 26)
    ),
    Case(
        "sk605-deep",
        "SK605",
        AG,
        SKILL,
        HEAD + "---\n\n🚀 Read references/a/b.md now.\n",
        (5, 7, 5, 24),
        {"my-skill/references/a/b.md": "x\n"},
    ),
    Case(
        "sk606-bare",
        "SK606",
        AG,
        SKILL,
        HEAD + "---\n\n🚀 Read references\\guide.md now.\n",
        (5, 7, 5, 26),
        _GUIDE,
    ),
    Case(
        "sk606-link",
        "SK606",
        CC,
        SKILL,
        HEAD + "---\n\n🚀 Read [指南](references\\guide.md) now.\n",
        (5, 12, 5, 31),
        _GUIDE,
    ),
    Case("sk607-absolute", "SK607", AG, SKILL, HEAD + "---\n\n🚀 See [x](/etc/passwd).\n", (5, 10, 5, 21)),
    Case(
        "sk607-windows", "SK607", ADK, SKILL, HEAD + "---\n\n字 See [x](C:/Users/me/x.md).\n", (5, 10, 5, 26)
    ),
    Case("sk608-empty", "SK608", AG, SKILL, HEAD + "---\n", (3, 0, 3, 3)),
    Case(
        "sk611-symlink",
        "SK611",
        AG,
        SKILL,
        HEAD + "---\n\n🚀 See [x](references/guide.md).\n",
        (5, 10, 5, 29),
        {"host/secret.md": "x\n"},
        {"my-skill/references/guide.md": "host/secret.md"},
    ),
    Case("sk608-blank-lines", "SK608", None, FLAT, FLAT_HEAD + "---\n\n\n  \n", (3, 0, 3, 3)),
    Case(
        "sk610-schema",
        "SK610",
        AG,
        SKILL,
        HEAD + "---\n\nBody\n",
        (0, 0, 0, 3),
        {_EVALS: '{"skill_name": "my-skill", "evals": [{"id": "one"}]}'},
    ),
    Case("sk610-bad-json", "SK610", AG, SKILL, HEAD + "---\n\nBody\n", (0, 0, 0, 3), {_EVALS: "{not json"}),
    Case(
        "sk610-name-mismatch",
        "SK610",
        AG,
        SKILL,
        fm(DESC, NAME),
        (2, 6, 2, 14),
        {_EVALS: '{"skill_name": "其他", "evals": []}'},
    ),
]
