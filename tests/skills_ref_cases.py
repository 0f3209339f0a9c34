"""Differential test table: SKILL.md inputs checked against the reference validator ``skills-ref``.

Every case was written for this project (none are copied from upstream's test suite). A case is a
skill directory name plus the exact bytes of its ``SKILL.md``; ``skills_ref_valid`` records what
``skills_ref.validate()`` 0.1.1 (with strictyaml 1.7.3) returned when the table was written, and
``skills_ref_phrase`` (when set) is a substring of its joined messages, so a case cannot silently
stop exercising the rule its note names. ``test_skills_ref_differential.py`` re-checks both
against the live oracle and compares our ``skills-ref`` profile with it.

``str`` contents are written UTF-8 encoded with no newline translation; ``bytes`` contents are
written as they are (BOM and encoding cases).
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass


@dataclass(frozen=True)
class Case:
    id: str
    dirname: str
    content: str | bytes
    note: str = ""
    _: KW_ONLY
    skills_ref_valid: bool
    skills_ref_phrase: str = ""


BODY = "# Instructions\n\nDo the thing step by step.\n"
DESC = "Formats release notes. Use when the user asks for a changelog."


def skill(frontmatter: str, body: str = BODY) -> str:
    """``---`` + frontmatter (each line already ending in ``\\n``) + ``---`` + body."""
    return f"---\n{frontmatter}---\n{body}"


def basic(name: str = "my-skill", description: str = DESC, extra: str = "") -> str:
    return skill(f"name: {name}\ndescription: {description}\n{extra}")


# Phrases of skills-ref's messages (see docs/skills-ref-divergences.md and the reference notes).
NOT_START = "must start with YAML frontmatter"
NOT_CLOSED = "not properly closed"
BAD_YAML = "Invalid YAML in frontmatter"
NOT_MAPPING = "must be a YAML mapping"
FLOW = "JSONesque flow mapping"
UNEXPECTED = "Unexpected fields in frontmatter"
MISSING_NAME = "Missing required field in frontmatter: name"
MISSING_DESC = "Missing required field in frontmatter: description"
NAME_EMPTY = "Field 'name' must be a non-empty string"
DESC_EMPTY = "Field 'description' must be a non-empty string"
NAME_TOO_LONG = "exceeds 64 character limit"
LOWERCASE = "must be lowercase"
EDGE_HYPHEN = "cannot start or end with a hyphen"
DOUBLE_HYPHEN = "cannot contain consecutive hyphens"
BAD_CHARS = "contains invalid characters"
DIR_MISMATCH = "must match skill name"
DESC_TOO_LONG = "Description exceeds 1024 character limit"
COMPAT_TOO_LONG = "Compatibility exceeds 500 character limit"
COMPAT_TYPE = "Field 'compatibility' must be a string"
DUPLICATE = "Duplicate key"

BOM = b"\xef\xbb\xbf"

CASES: list[Case] = [
    # ---- valid baselines
    Case("minimal", "my-skill", basic(), "name + description only", skills_ref_valid=True),
    Case(
        "all-six-fields",
        "pdf-tools",
        skill(
            "name: pdf-tools\n"
            "description: Extracts text and tables from PDF files. Use when handling PDFs.\n"
            "license: Apache-2.0\n"
            "compatibility: Requires poppler-utils and network access\n"
            "allowed-tools: Bash(pdftotext:*) Read\n"
            "metadata:\n"
            "  author: docs-team\n"
            '  version: "1.0"\n'
        ),
        "every field the spec defines, in their documented forms",
        skills_ref_valid=True,
    ),
    Case(
        "no-body",
        "my-skill",
        f"---\nname: my-skill\ndescription: {DESC}\n---\n",
        "nothing after the closing delimiter",
        skills_ref_valid=True,
    ),
    Case(
        "no-body-no-final-newline",
        "my-skill",
        f"---\nname: my-skill\ndescription: {DESC}\n---",
        "file ends right after the closing ---",
        skills_ref_valid=True,
    ),
    Case(
        "long-body",
        "my-skill",
        skill(
            f"name: my-skill\ndescription: {DESC}\n",
            "# Steps\n" + "".join(f"{i}. Step number {i}.\n" for i in range(1, 6001)),
        ),
        "6000-line body: skills-ref never looks at the body",
        skills_ref_valid=True,
    ),
    Case(
        "body-with-dash-lines",
        "my-skill",
        skill(
            f"name: my-skill\ndescription: {DESC}\n",
            "# Title\n\n---\n\nA rule above, a --- inline, and another:\n---\n",
        ),
        "--- lines in the body (only the first two --- matter)",
        skills_ref_valid=True,
    ),
    Case(
        "comments-in-frontmatter",
        "my-skill",
        skill(f"# leading comment\nname: my-skill  # trailing comment\n# between\ndescription: {DESC}\n"),
        "YAML comments are ignored",
        skills_ref_valid=True,
    ),
    Case(
        "quoted-keys",
        "my-skill",
        skill(f"\"name\": my-skill\n'description': {DESC}\n"),
        "quoted keys are ordinary keys",
        skills_ref_valid=True,
    ),
    Case(
        "key-spaces-before-colon",
        "my-skill",
        skill(f"name   : my-skill\ndescription : {DESC}\n"),
        "spaces between a plain key and its colon are not part of the key",
        skills_ref_valid=True,
    ),
    Case(
        "quoted-key-trailing-space",
        "my-skill",
        skill(f'"name ": my-skill\ndescription: {DESC}\n'),
        "a quoted key keeps its trailing space: unknown key 'name ' and no name",
        skills_ref_valid=False,
        skills_ref_phrase="Unexpected fields in frontmatter: name .",
    ),
    Case(
        "key-wrong-case",
        "my-skill",
        skill(f"Name: my-skill\ndescription: {DESC}\n"),
        "keys are case-sensitive: 'Name' is unknown and 'name' missing",
        skills_ref_valid=False,
        skills_ref_phrase=MISSING_NAME,
    ),
    # ---- name: length and charset
    Case("name-64-chars", "a" * 64, basic("a" * 64), "exactly at the limit", skills_ref_valid=True),
    Case(
        "name-65-chars",
        "a" * 65,
        basic("a" * 65),
        "one over the limit",
        skills_ref_valid=False,
        skills_ref_phrase="exceeds 64 character limit (65 chars)",
    ),
    Case(
        "name-uppercase",
        "MySkill",
        basic("MySkill"),
        "directory matches, so only the lowercase rule fires",
        skills_ref_valid=False,
        skills_ref_phrase=LOWERCASE,
    ),
    Case(
        "name-underscore",
        "my_skill",
        basic("my_skill"),
        "underscore is not a letter, digit or hyphen",
        skills_ref_valid=False,
        skills_ref_phrase=BAD_CHARS,
    ),
    Case(
        "name-leading-hyphen",
        "-my-skill",
        basic('"-my-skill"'),
        "leading hyphen (quoted so YAML does not read a sequence)",
        skills_ref_valid=False,
        skills_ref_phrase=EDGE_HYPHEN,
    ),
    Case(
        "name-trailing-hyphen",
        "my-skill-",
        basic("my-skill-"),
        "trailing hyphen",
        skills_ref_valid=False,
        skills_ref_phrase=EDGE_HYPHEN,
    ),
    Case(
        "name-consecutive-hyphens",
        "my--skill",
        basic("my--skill"),
        "double hyphen in the middle",
        skills_ref_valid=False,
        skills_ref_phrase=DOUBLE_HYPHEN,
    ),
    Case(
        "name-dir-mismatch",
        "other-skill",
        basic("my-skill"),
        "well-formed name that differs from its directory",
        skills_ref_valid=False,
        skills_ref_phrase="Directory name 'other-skill' must match skill name 'my-skill'",
    ),
    Case(
        "name-mixed-errors",
        "my-skill",
        basic("My_Skill"),
        "lowercase + invalid characters + directory mismatch together",
        skills_ref_valid=False,
        skills_ref_phrase=DIR_MISMATCH,
    ),
    Case(
        "name-with-space",
        "my skill",
        basic("my skill"),
        "space inside the name",
        skills_ref_valid=False,
        skills_ref_phrase=BAD_CHARS,
    ),
    Case(
        "name-with-dot",
        "my.skill",
        basic("my.skill"),
        "dot inside the name",
        skills_ref_valid=False,
        skills_ref_phrase=BAD_CHARS,
    ),
    Case(
        "name-surrounding-whitespace",
        "my-skill",
        basic('"  my-skill  "'),
        "skills-ref strips the name before every check",
        skills_ref_valid=True,
    ),
    # ---- name: empty / missing / type
    Case(
        "name-empty-quoted",
        "my-skill",
        basic('""'),
        'name: ""',
        skills_ref_valid=False,
        skills_ref_phrase=NAME_EMPTY,
    ),
    Case(
        "name-empty-value",
        "my-skill",
        skill(f"name:\ndescription: {DESC}\n"),
        "name: with nothing after it (strictyaml: empty string)",
        skills_ref_valid=False,
        skills_ref_phrase=NAME_EMPTY,
    ),
    Case(
        "name-whitespace-only",
        "my-skill",
        basic('"   "'),
        "only spaces",
        skills_ref_valid=False,
        skills_ref_phrase=NAME_EMPTY,
    ),
    Case(
        "name-missing",
        "my-skill",
        skill(f"description: {DESC}\n"),
        "no name key",
        skills_ref_valid=False,
        skills_ref_phrase=MISSING_NAME,
    ),
    Case(
        "name-block-list",
        "my-skill",
        skill(f"name:\n  - my-skill\ndescription: {DESC}\n"),
        "a sequence is not a string",
        skills_ref_valid=False,
        skills_ref_phrase=NAME_EMPTY,
    ),
    # ---- name: YAML-1.1 look-alikes (strictyaml keeps strings)
    Case(
        "name-number",
        "404",
        basic("404"),
        "name: 404 is the string '404' for strictyaml; digits are allowed",
        skills_ref_valid=True,
    ),
    Case(
        "name-leading-zeros",
        "007",
        basic("007"),
        "stays '007' (an int-resolving parser would give 7 and mismatch the directory)",
        skills_ref_valid=True,
    ),
    Case(
        "name-true",
        "true",
        basic("true"),
        "name: true is the string 'true'",
        skills_ref_valid=True,
    ),
    Case(
        "name-yes",
        "yes",
        basic("yes"),
        "YAML 1.1 boolean word, a string for strictyaml",
        skills_ref_valid=True,
    ),
    Case(
        "name-null-word",
        "null",
        basic("null"),
        "name: null is the string 'null', not a missing value",
        skills_ref_valid=True,
    ),
    # ---- name: Unicode and NFKC
    Case(
        "name-chinese",
        "技能",
        basic("技能"),
        "uncased letters pass isalnum and lowercase",
        skills_ref_valid=True,
    ),
    Case(
        "name-cyrillic-lowercase",
        "навык-тест",
        basic("навык-тест"),
        "lowercase Cyrillic with a hyphen",
        skills_ref_valid=True,
    ),
    Case(
        "name-cyrillic-uppercase",
        "НАВЫК",
        basic("НАВЫК"),
        "uppercase Cyrillic fails the lowercase rule",
        skills_ref_valid=False,
        skills_ref_phrase=LOWERCASE,
    ),
    Case(
        "name-decomposed-dir-composed",
        "caf\u00e9",
        basic("cafe\u0301"),
        "name e + U+0301, directory precomposed é: equal after NFKC",
        skills_ref_valid=True,
    ),
    Case(
        "name-composed-dir-decomposed",
        "cafe\u0301",
        basic("caf\u00e9"),
        "name precomposed é, directory e + U+0301: the directory is NFKC-normalised too",
        skills_ref_valid=True,
    ),
    Case(
        "name-fullwidth-lowercase",
        "my-skill",
        basic("\uff4d\uff59-\uff53\uff4b\uff49\uff4c\uff4c"),
        "fullwidth ｍｙ-ｓｋｉｌｌ normalises to my-skill, matching the ASCII directory",
        skills_ref_valid=True,
    ),
    Case(
        "name-fullwidth-uppercase",
        "MY-SKILL",
        basic("\uff2d\uff39-\uff33\uff2b\uff29\uff2c\uff2c"),
        "fullwidth ＭＹ-ＳＫＩＬＬ normalises to MY-SKILL: lowercase rule",
        skills_ref_valid=False,
        skills_ref_phrase="Skill name 'MY-SKILL' must be lowercase",
    ),
    Case(
        "name-ligatures-exceed-64-after-nfkc",
        "ff" * 33,
        basic("\ufb00" * 33),
        "33 ﬀ ligatures (33 code points) become 66 chars after NFKC: length is checked after NFKC",
        skills_ref_valid=False,
        skills_ref_phrase="(66 chars)",
    ),
    Case(
        "name-combining-mark-not-composable",
        "x\u0301",
        basic("x\u0301"),
        "x + U+0301 has no precomposed form; the combining mark is not alphanumeric",
        skills_ref_valid=False,
        skills_ref_phrase=BAD_CHARS,
    ),
    # ---- description
    Case(
        "description-missing",
        "my-skill",
        skill("name: my-skill\n"),
        "no description key",
        skills_ref_valid=False,
        skills_ref_phrase=MISSING_DESC,
    ),
    Case(
        "description-empty-quoted",
        "my-skill",
        basic(description='""'),
        'description: ""',
        skills_ref_valid=False,
        skills_ref_phrase=DESC_EMPTY,
    ),
    Case(
        "description-empty-value",
        "my-skill",
        skill("name: my-skill\ndescription:\n"),
        "description: with nothing after it",
        skills_ref_valid=False,
        skills_ref_phrase=DESC_EMPTY,
    ),
    Case(
        "description-whitespace-only",
        "my-skill",
        basic(description="'   '"),
        "only spaces",
        skills_ref_valid=False,
        skills_ref_phrase=DESC_EMPTY,
    ),
    Case(
        "description-comment-only",
        "my-skill",
        basic(description="#todo"),
        "description: #todo is a comment, so the value is empty",
        skills_ref_valid=False,
        skills_ref_phrase=DESC_EMPTY,
    ),
    Case(
        "description-1024-chars",
        "my-skill",
        basic(description="d" * 1024),
        "exactly at the limit",
        skills_ref_valid=True,
    ),
    Case(
        "description-1025-chars",
        "my-skill",
        basic(description="d" * 1025),
        "one over the limit",
        skills_ref_valid=False,
        skills_ref_phrase="Description exceeds 1024 character limit (1025 chars)",
    ),
    Case(
        "description-literal-1024-plus-newline",
        "my-skill",
        skill("name: my-skill\ndescription: |\n  " + "d" * 1024 + "\n"),
        "| keeps the final newline and the length is taken unstripped: 1025",
        skills_ref_valid=False,
        skills_ref_phrase="(1025 chars)",
    ),
    Case(
        "description-literal-strip-1024",
        "my-skill",
        skill("name: my-skill\ndescription: |-\n  " + "d" * 1024 + "\n"),
        "|- drops the final newline: exactly 1024",
        skills_ref_valid=True,
    ),
    Case(
        "description-1024-emoji",
        "my-skill",
        basic(description="\U0001f680" * 1024),
        "length counts code points (2048 UTF-16 units, 4096 bytes)",
        skills_ref_valid=True,
    ),
    Case(
        "description-literal-block",
        "my-skill",
        skill("name: my-skill\ndescription: |\n  Formats release notes.\n  Use for changelogs.\n"),
        "literal block scalar",
        skills_ref_valid=True,
    ),
    Case(
        "description-folded-block",
        "my-skill",
        skill("name: my-skill\ndescription: >\n  Formats release notes.\n  Use for changelogs.\n"),
        "folded block scalar",
        skills_ref_valid=True,
    ),
    Case(
        "description-double-quoted-escapes",
        "my-skill",
        basic(description='"Tabs\\there, a \\"quote\\", caf\\u00e9 and a\\nnewline"'),
        'double-quoted scalar with \\t, \\", \\u and \\n escapes',
        skills_ref_valid=True,
    ),
    Case(
        "description-single-quoted-escape",
        "my-skill",
        basic(description="'It''s a skill: use it when asked'"),
        "'' inside single quotes; the ': ' is safe inside quotes",
        skills_ref_valid=True,
    ),
    Case(
        "description-multiline-plain",
        "my-skill",
        skill("name: my-skill\ndescription: Formats release notes\n  and writes changelogs\n  on request.\n"),
        "plain scalar continued on indented lines",
        skills_ref_valid=True,
    ),
    Case(
        "description-multiline-double-quoted",
        "my-skill",
        skill('name: my-skill\ndescription: "Formats release notes\n  and changelogs."\n'),
        "double-quoted scalar spanning two lines",
        skills_ref_valid=True,
    ),
    Case(
        "description-non-ascii",
        "my-skill",
        basic(description="Форматирует заметки о выпуске. Für Änderungsprotokolle. 用于变更日志。"),
        "Cyrillic, German umlauts and Chinese in a plain scalar",
        skills_ref_valid=True,
    ),
    Case(
        "description-emoji",
        "my-skill",
        basic(description="\U0001f680 Ships releases \u2728 and writes notes \U0001f4dd"),
        "emoji (astral code points) in a plain scalar",
        skills_ref_valid=True,
    ),
    Case(
        "description-line-separator",
        "my-skill",
        basic(description="First part\u2028second part"),
        "U+2028 inside a plain scalar is just a character (not a line break) for skills-ref",
        skills_ref_valid=True,
    ),
    Case(
        "description-next-line-char",
        "my-skill",
        basic(description="First part\x85second part"),
        "U+0085 (NEL) inside a plain scalar: ruamel folds it like a line break ('First part second part')",
        skills_ref_valid=True,
    ),
    Case(
        "description-unquoted-colon-space",
        "my-skill",
        basic(description="Use this skill when: the user asks for release notes"),
        "the classic breakage: ': ' inside a plain value",
        skills_ref_valid=False,
        skills_ref_phrase="mapping values are not allowed here",
    ),
    Case(
        "description-colon-without-space",
        "my-skill",
        basic(description="Ratio 3:1, see https://example.com/notes"),
        "':' not followed by a space is fine in a plain scalar",
        skills_ref_valid=True,
    ),
    Case(
        "description-tilde",
        "my-skill",
        basic(description="~"),
        "'~' is the string '~' for strictyaml (YAML null elsewhere), so it is non-empty",
        skills_ref_valid=True,
    ),
    Case(
        "description-null-word",
        "my-skill",
        basic(description="null"),
        "'null' is a string for strictyaml",
        skills_ref_valid=True,
    ),
    Case(
        "description-date",
        "my-skill",
        basic(description="2024-01-01"),
        "a date-looking plain scalar stays a string (YAML 1.1 parsers give a date)",
        skills_ref_valid=True,
    ),
    Case(
        "description-number",
        "my-skill",
        basic(description="3.14"),
        "a float-looking plain scalar stays a string",
        skills_ref_valid=True,
    ),
    Case(
        "description-mapping",
        "my-skill",
        skill("name: my-skill\ndescription:\n  summary: Formats notes\n"),
        "a nested mapping is not a string",
        skills_ref_valid=False,
        skills_ref_phrase=DESC_EMPTY,
    ),
    Case(
        "description-starts-with-at",
        "my-skill",
        basic(description="@release-bot formats notes"),
        "'@' is a reserved indicator and cannot start a plain scalar",
        skills_ref_valid=False,
        skills_ref_phrase="cannot start any token",
    ),
    Case(
        "description-starts-with-star",
        "my-skill",
        basic(description="*Bold* release notes"),
        "a leading '*' is read as an alias",
        skills_ref_valid=False,
        skills_ref_phrase=BAD_YAML,
    ),
    Case(
        "description-brackets-inside-plain",
        "my-skill",
        basic(description="Use [brackets] and {braces} in the middle"),
        "flow indicators not at the start of a plain scalar are literal",
        skills_ref_valid=True,
    ),
    Case(
        "description-leading-bracket-quoted",
        "my-skill",
        basic(description='"[beta] Formats release notes"'),
        "quoted, so the bracket is text",
        skills_ref_valid=True,
    ),
    Case(
        "description-leading-bracket-plain",
        "my-skill",
        basic(description="[beta] Formats release notes"),
        "unquoted leading '[' starts a flow sequence",
        skills_ref_valid=False,
        skills_ref_phrase=BAD_YAML,
    ),
    Case(
        "description-tab-inside-plain",
        "my-skill",
        basic(description="Formats\trelease notes"),
        "a tab inside a plain scalar: ruamel (like PyYAML) ends the scalar at the tab, then fails on it",
        skills_ref_valid=False,
        skills_ref_phrase="found character '\\t' that cannot start any token",
    ),
    Case(
        "description-trailing-tab",
        "my-skill",
        basic(description="Formats release notes.\t"),
        "a tab after the end of a plain value is rejected the same way",
        skills_ref_valid=False,
        skills_ref_phrase="found character '\\t' that cannot start any token",
    ),
    Case(
        "description-tab-inside-quotes",
        "my-skill",
        basic(description='"Formats\trelease notes"'),
        "a literal tab inside double quotes is fine",
        skills_ref_valid=True,
    ),
    # ---- compatibility
    Case(
        "compatibility-500-chars",
        "my-skill",
        basic(extra="compatibility: " + "c" * 500 + "\n"),
        "exactly at the limit",
        skills_ref_valid=True,
    ),
    Case(
        "compatibility-501-chars",
        "my-skill",
        basic(extra="compatibility: " + "c" * 501 + "\n"),
        "one over the limit",
        skills_ref_valid=False,
        skills_ref_phrase="Compatibility exceeds 500 character limit (501 chars)",
    ),
    Case(
        "compatibility-empty-quoted",
        "my-skill",
        basic(extra='compatibility: ""\n'),
        "skills-ref does not enforce the spec's 1-char minimum",
        skills_ref_valid=True,
    ),
    Case(
        "compatibility-empty-value",
        "my-skill",
        basic(extra="compatibility:\n"),
        "compatibility: with nothing after it is '' and passes",
        skills_ref_valid=True,
    ),
    Case(
        "compatibility-block-list",
        "my-skill",
        basic(extra="compatibility:\n  - git\n  - docker\n"),
        "a sequence is not a string",
        skills_ref_valid=False,
        skills_ref_phrase=COMPAT_TYPE,
    ),
    Case(
        "compatibility-number",
        "my-skill",
        basic(extra="compatibility: 3\n"),
        "'3' is a string for strictyaml",
        skills_ref_valid=True,
    ),
    # ---- license, allowed-tools, metadata
    Case(
        "license-tilde",
        "my-skill",
        basic(extra="license: ~\n"),
        "license: ~ is the string '~'",
        skills_ref_valid=True,
    ),
    Case(
        "license-empty-value",
        "my-skill",
        basic(extra="license:\n"),
        "license: with no value",
        skills_ref_valid=True,
    ),
    Case(
        "license-block-list",
        "my-skill",
        basic(extra="license:\n  - MIT\n  - Apache-2.0\n"),
        "license type is never checked",
        skills_ref_valid=True,
    ),
    Case(
        "allowed-tools-string",
        "my-skill",
        basic(extra="allowed-tools: Bash(git:*) Bash(jq:*) Read\n"),
        "space-separated string, as the spec shows",
        skills_ref_valid=True,
    ),
    Case(
        "allowed-tools-block-list",
        "my-skill",
        basic(extra="allowed-tools:\n  - Read\n  - Bash(git:*)\n"),
        "block sequence: allowed (type not checked)",
        skills_ref_valid=True,
    ),
    Case(
        "metadata-nested-map",
        "my-skill",
        basic(extra="metadata:\n  author:\n    name: Ada\n    email: ada@example.com\n"),
        "nested maps inside metadata are str()-coerced, never rejected",
        skills_ref_valid=True,
    ),
    Case(
        "metadata-block-list",
        "my-skill",
        basic(extra="metadata:\n  - one\n  - two\n"),
        "metadata as a sequence: not checked",
        skills_ref_valid=True,
    ),
    Case(
        "metadata-numbers-and-bools",
        "my-skill",
        basic(extra="metadata:\n  version: 1.0\n  priority: 3\n  beta: true\n"),
        "numbers and booleans are strings for strictyaml",
        skills_ref_valid=True,
    ),
    Case(
        "metadata-empty-value",
        "my-skill",
        basic(extra="metadata:\n"),
        "metadata: with no value is ''",
        skills_ref_valid=True,
    ),
    # ---- unknown keys
    Case(
        "unknown-key-one",
        "my-skill",
        basic(extra="author: Ada\n"),
        "one key outside the six",
        skills_ref_valid=False,
        skills_ref_phrase="Unexpected fields in frontmatter: author.",
    ),
    Case(
        "unknown-keys-several",
        "my-skill",
        basic(extra="tags:\n  - docs\nauthor: Ada\ncategory: writing\n"),
        "several unknown keys are listed sorted in one message",
        skills_ref_valid=False,
        skills_ref_phrase="Unexpected fields in frontmatter: author, category, tags.",
    ),
    Case(
        "unknown-keys-client-extensions",
        "my-skill",
        basic(extra="disable-model-invocation: true\nuser-invocable: false\nargument-hint: <file>\n"),
        "Claude Code extension keys are unknown to skills-ref",
        skills_ref_valid=False,
        skills_ref_phrase="argument-hint, disable-model-invocation, user-invocable",
    ),
    Case(
        "unknown-key-version",
        "my-skill",
        basic(extra="version: 1.2.0\n"),
        "top-level version belongs in metadata",
        skills_ref_valid=False,
        skills_ref_phrase="Unexpected fields in frontmatter: version.",
    ),
    # ---- flow style (strictyaml rejects all of it)
    Case(
        "flow-list-tags",
        "my-skill",
        basic(extra="tags: [docs, writing]\n"),
        "flow list on an unknown key: the YAML error wins over 'unexpected field'",
        skills_ref_valid=False,
        skills_ref_phrase=FLOW,
    ),
    Case(
        "flow-list-allowed-tools",
        "my-skill",
        basic(extra="allowed-tools: [Read, Write]\n"),
        "flow list on a known key",
        skills_ref_valid=False,
        skills_ref_phrase=FLOW,
    ),
    Case(
        "flow-empty-list-allowed-tools",
        "my-skill",
        basic(extra="allowed-tools: []\n"),
        "even an empty flow list",
        skills_ref_valid=False,
        skills_ref_phrase=FLOW,
    ),
    Case(
        "flow-empty-map-metadata",
        "my-skill",
        basic(extra="metadata: {}\n"),
        "empty flow mapping",
        skills_ref_valid=False,
        skills_ref_phrase=FLOW,
    ),
    Case(
        "flow-map-metadata",
        "my-skill",
        basic(extra="metadata: {author: Ada, version: '1'}\n"),
        "flow mapping with entries",
        skills_ref_valid=False,
        skills_ref_phrase=FLOW,
    ),
    Case(
        "flow-list-inside-metadata",
        "my-skill",
        basic(extra="metadata:\n  tags: [docs, writing]\n"),
        "flow list nested one level down",
        skills_ref_valid=False,
        skills_ref_phrase=FLOW,
    ),
    # ---- duplicate keys
    Case(
        "duplicate-key-top-level",
        "my-skill",
        skill(f"name: my-skill\ndescription: {DESC}\nname: my-skill\n"),
        "same key twice at the top (even with equal values)",
        skills_ref_valid=False,
        skills_ref_phrase=DUPLICATE,
    ),
    Case(
        "duplicate-key-in-metadata",
        "my-skill",
        basic(extra="metadata:\n  author: Ada\n  author: Grace\n"),
        "same key twice inside metadata",
        skills_ref_valid=False,
        skills_ref_phrase=DUPLICATE,
    ),
    # ---- tabs, indentation
    Case(
        "tab-indentation",
        "my-skill",
        basic(extra="metadata:\n\tauthor: Ada\n"),
        "a tab used as indentation",
        skills_ref_valid=False,
        skills_ref_phrase="found character '\\t' that cannot start any token",
    ),
    Case(
        "tab-after-colon",
        "my-skill",
        skill(f"name:\tmy-skill\ndescription: {DESC}\n"),
        "a tab as the only separator after ':' (ruamel/strictyaml reject it)",
        skills_ref_valid=False,
        skills_ref_phrase="found character '\\t' that cannot start any token",
    ),
    Case(
        "bad-indentation",
        "my-skill",
        skill(f"name: my-skill\n  description: {DESC}\n"),
        "a key indented under a scalar value",
        skills_ref_valid=False,
        skills_ref_phrase="mapping values are not allowed here",
    ),
    # ---- anchors, aliases, tags
    Case(
        "anchor-and-alias",
        "my-skill",
        skill(f"name: my-skill\ndescription: &desc {DESC}\nmetadata:\n  summary: *desc\n"),
        "anchor on description reused through an alias",
        skills_ref_valid=False,
        skills_ref_phrase="anchor token",
    ),
    Case(
        "anchor-unused",
        "my-skill",
        basic(description=f"&desc {DESC}"),
        "an anchor alone is already rejected",
        skills_ref_valid=False,
        skills_ref_phrase="anchor token",
    ),
    Case(
        "merge-key",
        "my-skill",
        skill(f"name: my-skill\ndescription: {DESC}\nmetadata:\n  <<: *base\n"),
        "merge key with an alias (and no anchor)",
        skills_ref_valid=False,
        skills_ref_phrase=BAD_YAML,
    ),
    Case(
        "explicit-str-tag",
        "my-skill",
        basic("!!str my-skill"),
        "!!str on the name",
        skills_ref_valid=False,
        skills_ref_phrase="disallowed tag tokens",
    ),
    Case(
        "custom-local-tag",
        "my-skill",
        basic(description=f"!note {DESC}"),
        "a local tag on the description",
        skills_ref_valid=False,
        skills_ref_phrase="disallowed tag tokens",
    ),
    # ---- frontmatter structure
    Case(
        "no-frontmatter",
        "my-skill",
        "# My skill\n\nname: my-skill\n",
        "plain Markdown, no delimiters",
        skills_ref_valid=False,
        skills_ref_phrase=NOT_START,
    ),
    Case("empty-file", "my-skill", "", "zero bytes", skills_ref_valid=False, skills_ref_phrase=NOT_START),
    Case(
        "leading-blank-line",
        "my-skill",
        "\n" + basic(),
        "a blank line before the opening ---",
        skills_ref_valid=False,
        skills_ref_phrase=NOT_START,
    ),
    Case(
        "missing-closing-delimiter",
        "my-skill",
        f"---\nname: my-skill\ndescription: {DESC}\n\n# Instructions\n",
        "opening --- only",
        skills_ref_valid=False,
        skills_ref_phrase=NOT_CLOSED,
    ),
    Case(
        "empty-frontmatter",
        "my-skill",
        "---\n---\n" + BODY,
        "nothing between the delimiters",
        skills_ref_valid=False,
        skills_ref_phrase=NOT_MAPPING,
    ),
    Case(
        "comment-only-frontmatter",
        "my-skill",
        "---\n# name: my-skill\n---\n" + BODY,
        "only a comment between the delimiters",
        skills_ref_valid=False,
        skills_ref_phrase=NOT_MAPPING,
    ),
    Case(
        "top-level-list",
        "my-skill",
        "---\n- name: my-skill\n- description: x\n---\n" + BODY,
        "a sequence instead of a mapping",
        skills_ref_valid=False,
        skills_ref_phrase=NOT_MAPPING,
    ),
    Case(
        "scalar-frontmatter",
        "my-skill",
        "---\njust some text\n---\n" + BODY,
        "a plain scalar instead of a mapping",
        skills_ref_valid=False,
        skills_ref_phrase=NOT_MAPPING,
    ),
    Case(
        "four-dash-opening",
        "my-skill",
        f"----\nname: my-skill\ndescription: {DESC}\n---\n" + BODY,
        "opening line of four dashes: skills-ref sees '-' + newline as YAML",
        skills_ref_valid=False,
        skills_ref_phrase=BAD_YAML,
    ),
    Case(
        "trailing-spaces-opening-delimiter",
        "my-skill",
        f"---  \nname: my-skill\ndescription: {DESC}\n---\n" + BODY,
        "'---  ' opens the frontmatter",
        skills_ref_valid=True,
    ),
    Case(
        "trailing-spaces-closing-delimiter",
        "my-skill",
        f"---\nname: my-skill\ndescription: {DESC}\n---  \n" + BODY,
        "'---  ' closes the frontmatter",
        skills_ref_valid=True,
    ),
    Case(
        "document-end-marker",
        "my-skill",
        f"---\nname: my-skill\ndescription: {DESC}\n...\n---\n" + BODY,
        "YAML '...' just before the closing ---",
        skills_ref_valid=True,
    ),
    Case(
        "second-yaml-document",
        "my-skill",
        f"---\nname: my-skill\ndescription: {DESC}\n...\nlicense: MIT\n---\n" + BODY,
        "'...' then more YAML: a second document in the frontmatter",
        skills_ref_valid=False,
        skills_ref_phrase="expected a single document",
    ),
    # ---- line endings and encodings
    Case(
        "crlf-line-endings",
        "my-skill",
        basic().replace("\n", "\r\n"),
        "Windows line endings: no stray \\r may end up in the name",
        skills_ref_valid=True,
    ),
    Case(
        "crlf-invalid-name",
        "my-skill",
        basic("My-Skill").replace("\n", "\r\n"),
        "CRLF file with a name that fails (lowercase + mismatch)",
        skills_ref_valid=False,
        skills_ref_phrase=LOWERCASE,
    ),
    Case(
        "cr-only-line-endings",
        "my-skill",
        basic().replace("\n", "\r"),
        "classic-Mac CR line endings: Path.read_text() turns lone CR into LF",
        skills_ref_valid=True,
    ),
    Case(
        "utf8-bom-valid",
        "my-skill",
        BOM + basic().encode("utf-8"),
        "UTF-8 BOM before an otherwise valid file: read_text keeps U+FEFF, so no leading ---",
        skills_ref_valid=False,
        skills_ref_phrase=NOT_START,
    ),
    Case(
        "utf8-bom-invalid-name",
        "my-skill",
        BOM + basic("My_Skill").encode("utf-8"),
        "UTF-8 BOM and a bad name: invalid either way",
        skills_ref_valid=False,
        skills_ref_phrase=NOT_START,
    ),
    Case(
        "latin1-encoding",
        "my-skill",
        basic(description="Caf\u00e9 menu formatter").encode("latin-1"),
        "not UTF-8: skills-ref's validate() raises UnicodeDecodeError (counted as invalid)",
        skills_ref_valid=False,
        skills_ref_phrase="UnicodeDecodeError",
    ),
    # ---- '---' that is not a whole line
    Case(
        "dashes-in-quoted-description",
        "my-skill",
        basic(description='"Drafts notes --- then publishes them"'),
        "skills-ref cuts the frontmatter inside the quotes: unterminated string",
        skills_ref_valid=False,
        skills_ref_phrase=BAD_YAML,
    ),
    Case(
        "dashes-in-plain-description-name-first",
        "my-skill",
        basic(description="Drafts notes --- then publishes them"),
        "skills-ref cuts the description to 'Drafts notes' but the verdict is still valid",
        skills_ref_valid=True,
    ),
    Case(
        "dashes-in-plain-description-name-after",
        "my-skill",
        skill("description: Drafts notes --- then publishes them\nname: my-skill\n"),
        "the cut drops the name that follows: skills-ref reports it missing",
        skills_ref_valid=False,
        skills_ref_phrase=MISSING_NAME,
    ),
    Case(
        "dashes-in-comment",
        "my-skill",
        skill(f"name: my-skill\n# ---- required fields below ----\ndescription: {DESC}\n"),
        "a comment containing --- ends skills-ref's frontmatter before description",
        skills_ref_valid=False,
        skills_ref_phrase=MISSING_DESC,
    ),
    Case(
        "dashes-in-block-scalar-indented",
        "my-skill",
        skill("name: my-skill\ndescription: |\n  Drafts notes.\n  ---\n  Then publishes them.\n"),
        "an indented --- line in a literal block: skills-ref cuts there, verdict unchanged",
        skills_ref_valid=True,
    ),
    Case(
        "dashes-in-metadata-value",
        "my-skill",
        basic(extra="metadata:\n  range: 1---5\n"),
        "skills-ref cuts metadata.range to '1'; verdict unchanged",
        skills_ref_valid=True,
    ),
    Case(
        "closing-delimiter-with-text",
        "my-skill",
        f"---\nname: my-skill\ndescription: {DESC}\n--- end of frontmatter\n" + BODY,
        "'--- text' is not a delimiter line, but skills-ref splits on the substring",
        skills_ref_valid=True,
    ),
    Case(
        "four-dash-closing",
        "my-skill",
        f"---\nname: my-skill\ndescription: {DESC}\n----\n" + BODY,
        "'----' is not a delimiter line, but skills-ref splits on its first three dashes",
        skills_ref_valid=True,
    ),
]
