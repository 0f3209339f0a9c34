"""adk-skill 0.6.0's parser, exact: `parse_skill_markdown` and `parse_instruction_markdown`.

The crate splits the file with Rust's `lines()` after turning CRLF into LF, trims delimiter lines
with Rust's `trim()` (so `  ---  ` counts, a lone CR does not break a line), and deserializes the
YAML with serde_yaml 0.9 into fixed fields. This module reproduces that on top of our libyaml
node tree: string fields take the raw scalar text, optional strings are None only for the plain
null forms, lists must be sequences, and `metadata` values are resolved as serde_yaml resolves
them. Our own validator (`validate.py`) is stricter and reports far more; this is the crate's
reading, for parity and for running `.skills/` the way adk-skill does.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

from skills_lsp.core.errors import InvalidFrontmatter, MissingField, SkillError, Yaml
from skills_lsp.core.files.discovery import component_pattern
from skills_lsp.core.model import ascii_lower, ascii_upper
from skills_lsp.core.parse.frontmatter import (
    MAX_NESTING,
    nesting_too_deep,
    parse_yaml,
    plain_tree,
    simple_tree,
)
from skills_lsp.core.parse.frontmatter import YamlNode as Node

# Rust's char::is_whitespace (Unicode White_Space); Python's str.strip() also strips \x1c-\x1f.
RUST_WHITESPACE = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)

CONVENTION_NAMES = {
    "AGENTS.MD": ("agents", "agents-md"),
    "AGENT.MD": ("agents", "agents-md"),
    "CLAUDE.MD": ("claude", "claude-md"),
    "GEMINI.MD": ("gemini", "gemini-md"),
    "COPILOT.MD": ("copilot", "copilot-md"),
    "SKILLS.MD": ("skills", "skills-md"),
    "SOUL.MD": ("soul", "soul-md"),
}
DESCRIPTION_CHARS = 120


def rust_trim(text: str) -> str:
    return text.strip(RUST_WHITESPACE)


_RUST_WHITESPACE_RUN = re.compile(f"[{re.escape(RUST_WHITESPACE)}]+")


def rust_trimmed_from(text: str, start: int) -> str:
    """`rust_trim(text[start:])` with one copy, not two: bodies are most of a file's bytes (125 MB
    in a 15,000-file index), and each copy of them is fresh memory to fault in."""
    leading = _RUST_WHITESPACE_RUN.match(text, start)
    if leading is not None:
        start = leading.end()
    end = len(text)
    while end > start:  # the trailing run, a block at a time (a body may end in a long one)
        block = text[max(start, end - 256) : end]
        kept = block.rstrip(RUST_WHITESPACE)
        end -= len(block) - len(kept)
        if kept:
            break
    return text[start:end]


def rust_lines(text: str) -> list[str]:
    """Rust `str::lines`: split on LF, drop one CR before it, no empty last line after a final LF."""
    if not text:
        return []
    parts = text.split("\n")
    if parts[-1] == "":
        parts.pop()
    if "\r" not in text:  # most files: no line to trim (a check per line cost millions of calls)
        return parts
    return [p[:-1] if p.endswith("\r") else p for p in parts]


@dataclass
class ParsedSkill:
    """The crate's `ParsedSkill`: frontmatter fields plus the trimmed body."""

    name: str
    description: str
    version: str | None = None
    license: str | None = None
    compatibility: str | None = None
    tags: list[str] = field(default_factory=list)
    allowed_tools: list[str] = field(default_factory=list)
    references: list[str] = field(default_factory=list)
    trigger: bool = False
    hint: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    triggers: list[str] = field(default_factory=list)
    body: str = ""


class _SerdeError(Exception):
    pass


_NULL_FORMS = frozenset({"", "~", "null", "Null", "NULL"})
_TRUE_FORMS = frozenset({"true", "True", "TRUE"})
_FALSE_FORMS = frozenset({"false", "False", "FALSE"})
_STR_TAG = "tag:yaml.org,2002:str"


def _target(node: Node) -> Node:
    seen = 0
    while node.kind == "alias":
        if node.target is None or seen > MAX_NESTING:
            raise _SerdeError(f"unknown anchor `{node.anchor}`")
        node = node.target
        seen += 1
    return node


def _kind_text(node: Node) -> str:
    if node.kind == "sequence":
        return "sequence"
    if node.kind == "mapping":
        return "map"
    if node.style is None and node.value in _NULL_FORMS:
        return "unit value"
    return f'string "{node.value}"'


def _plain(node: Node) -> bool:
    return node.style is None and node.tag is None


def _untagged_or(node: Node, kind: str) -> bool:
    """A plain scalar, untagged or with the core tag `kind` (serde_yaml reads those alike)."""
    return node.style is None and (node.tag is None or node.tag == _CORE_TAG + kind)


def _string(node: Node, key: str) -> str:
    node = _target(node)
    if node.kind != "scalar":
        raise _SerdeError(f"{key}: invalid type: {_kind_text(node)}, expected a string")
    return str(node.value)


def _optional_string(node: Node, key: str) -> str | None:
    node = _target(node)
    if node.kind == "scalar" and (_plain(node) or _untagged_or(node, "null")) and node.value in _NULL_FORMS:
        return None
    return _string(node, key)


def _optional_bool(node: Node, key: str) -> bool | None:
    node = _target(node)
    if node.kind == "scalar" and node.style is None:
        if node.value in _NULL_FORMS and node.tag is None:
            return None
        if node.value in _TRUE_FORMS:
            return True
        if node.value in _FALSE_FORMS:
            return False
    raise _SerdeError(f"{key}: invalid type: {_kind_text(node)}, expected a boolean")


def _string_list(node: Node, key: str) -> list[str]:
    node = _target(node)
    if node.kind == "scalar" and _untagged_or(node, "seq") and node.value == "":
        return []  # serde_yaml 0.9 reads a bare `tags:` (or `!!seq`) as an empty sequence
    if node.kind != "sequence":
        raise _SerdeError(f"{key}: invalid type: {_kind_text(node)}, expected a sequence")
    return [_string(item, key) for item in node.value]


_DECIMAL = re.compile(r"[-+]?[0-9]+\Z")
_FLOAT = re.compile(r"(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?\Z")
_I64 = (-(2**63), 2**64 - 1)


_RADIX_DIGITS = {
    "0x": (16, re.compile(r"[0-9a-fA-F]+\Z")),
    "0o": (8, re.compile(r"[0-7]+\Z")),
    "0b": (2, re.compile(r"[01]+\Z")),
}
_I128 = (-(2**127), 2**128 - 1)


def _resolve_int(text: str) -> int | None:
    """serde_yaml 0.9's integer forms: decimal without leading zeros, 0x, 0o, 0b (ASCII digits
    only, one optional sign). Beyond 64 bits but within 128 serde_json cannot hold the value and
    the file fails (raises); beyond 128 bits the text is read as a float."""
    sign = -1 if text.startswith("-") else 1
    unsigned = text[1:] if text[:1] in "+-" else text
    value: int | None = None
    for prefix, (base, digits) in _RADIX_DIGITS.items():
        if unsigned.startswith(prefix):
            if not digits.match(unsigned[2:]):
                return None
            value = sign * int(unsigned[2:], base)
            break
    else:
        if not _DECIMAL.match(text) or not text.lstrip("+-").isascii():
            return None
        value = int(text)
    if _I64[0] <= value <= _I64[1]:
        return value
    if _I128[0] <= value <= _I128[1]:
        raise _SerdeError("metadata: a 128-bit integer is not supported")
    return None


def _resolve_float(text: str) -> float | None:
    unsigned = text[1:] if text[:1] in "+-" else text
    if unsigned in (".inf", ".Inf", ".INF"):
        return -math.inf if text.startswith("-") else math.inf
    if text in (".nan", ".NaN", ".NAN"):
        return math.nan
    if unsigned[:1] in "+-" or not _FLOAT.match(unsigned):
        return None
    value = float(text)
    return value if math.isfinite(value) else None


def _leading_zero_digits(text: str) -> bool:
    unsigned = text[1:] if text[:1] in "+-" else text
    return len(unsigned) > 1 and unsigned.startswith("0") and unsigned.isascii() and unsigned.isdigit()


def json_value(node: Node, depth: int = 0) -> Any:
    """A metadata value as serde_yaml 0.9 resolves it into serde_json::Value (non-finite -> null)."""
    if depth > MAX_NESTING:
        raise _SerdeError("recursion limit exceeded")
    node = _target(node)
    if node.kind == "sequence":
        return [json_value(item, depth + 1) for item in node.value]
    if node.kind == "mapping":
        return {_string(p.key, "metadata"): json_value(p.value, depth + 1) for p in node.value}
    text = str(node.value)
    if node.style is not None or node.tag == _STR_TAG:
        return text
    if node.tag is not None:
        return _tagged_value(node.tag, text)
    if text in _NULL_FORMS:
        return None
    if text in _TRUE_FORMS:
        return True
    if text in _FALSE_FORMS:
        return False
    if _leading_zero_digits(text):
        return text
    number: int | float | None = _resolve_int(text)
    if number is None:
        number = _resolve_float(text)
    if number is None:
        return text
    if isinstance(number, float) and not math.isfinite(number):
        return None  # serde_json cannot hold inf or NaN
    return number


_CORE_TAG = "tag:yaml.org,2002:"


def _tagged_value(tag: str, text: str) -> Any:
    """A plain scalar with an explicit tag: the core tags as serde_yaml reads them; any other
    tag is an enum to serde_json and fails the file."""
    kind = tag.removeprefix(_CORE_TAG) if tag.startswith(_CORE_TAG) else None
    if kind == "null" and text in _NULL_FORMS:
        return None
    if kind == "bool" and text in _TRUE_FORMS | _FALSE_FORMS:
        return text in _TRUE_FORMS
    if kind == "int":
        integer = _resolve_int(text) if not _leading_zero_digits(text) else None
        if integer is not None:
            return integer
    if kind == "float":
        number = _resolve_int(text)
        real = float(number) if number is not None else _resolve_float(text)
        if real is not None:
            return real if math.isfinite(real) else None
    raise _SerdeError(f"metadata: invalid value `{text}` for tag {tag}")


def _metadata(node: Node) -> dict[str, Any]:
    node = _target(node)
    if node.kind == "scalar" and _untagged_or(node, "map") and node.value == "":
        return {}
    if node.kind != "mapping":
        raise _SerdeError(f"metadata: invalid type: {_kind_text(node)}, expected a map")
    # A HashMap: a repeated key keeps the last value.
    return {_string(p.key, "metadata"): json_value(p.value) for p in node.value}


_FIELDS = (
    "name",
    "description",
    "version",
    "license",
    "compatibility",
    "tags",
    "allowed-tools",
    "references",
    "trigger",
    "hint",
    "metadata",
    "triggers",
)


def _frontmatter(root: Node | None) -> dict[str, Any]:
    """serde's derive of SkillFrontmatter: known keys only, each once, every field defaulted."""
    values: dict[str, Any] = {
        "name": "",
        "description": "",
        "version": None,
        "license": None,
        "compatibility": None,
        "tags": [],
        "allowed-tools": [],
        "references": [],
        "trigger": None,
        "hint": None,
        "metadata": {},
        "triggers": [],
    }
    if root is None:
        return values
    root = _target(root)
    if root.kind != "mapping":
        raise _SerdeError(f"invalid type: {_kind_text(root)}, expected struct SkillFrontmatter")
    seen: set[str] = set()
    for pair in root.value:
        key_node = _target(pair.key)
        if key_node.kind != "scalar":
            continue
        key = str(key_node.value)
        if key not in _FIELDS:
            continue
        if key in seen:
            raise _SerdeError(f"duplicate field `{key}`")
        seen.add(key)
        value = pair.value
        if key in ("name", "description"):
            values[key] = _string(value, key)
        elif key in ("version", "license", "compatibility", "hint"):
            values[key] = _optional_string(value, key)
        elif key == "trigger":
            values[key] = _optional_bool(value, key)
        elif key == "metadata":
            values[key] = _metadata(value)
        else:
            values[key] = _string_list(value, key)
    return values


def _clean_list(items: list[str]) -> list[str]:
    return [t for t in (rust_trim(i) for i in items) if t]


# A line that is `---` once trimmed (Rust's `trim()`: every White_Space character but the line break).
_DELIMITER_LINE = re.compile("^[%s]*---[%s]*$" % ((re.escape(RUST_WHITESPACE.replace("\n", "")),) * 2), re.M)


def _frontmatter_lines(text: str) -> tuple[list[str], int | None, int]:
    """`rust_lines(text)` up to the closing delimiter only, for text without CR: (those lines,
    the closing line's index or None, where the body starts). The body is the rest of the text,
    never split into lines (bodies are most of a file). Without an opening or a closing
    delimiter only the first line is returned: the caller then fails the file on it."""
    first_end = text.find("\n")
    if first_end < 0 or not _DELIMITER_LINE.match(text):
        return ([text[:first_end] if first_end >= 0 else text] if text else []), None, len(text)
    close = _DELIMITER_LINE.search(text, first_end + 1)
    if close is None:
        return text.split("\n", 1)[:1], None, len(text)
    lines = text[: close.end()].split("\n")
    return lines, len(lines) - 1, min(close.end() + 1, len(text))


def parse_skill_markdown(path: str | os.PathLike[str], content: str) -> ParsedSkill:
    """Strict parse of a skill file: `---` frontmatter with `name` and `description`.

    Raises `InvalidFrontmatter`, `Yaml` or `MissingField` with the crate's messages.
    """
    text = content.replace("\r\n", "\n") if "\r" in content else content
    if "\r" in text:  # a CR anywhere (rare): every line read, as rust_lines trims one before a LF
        lines = rust_lines(text)
        close = next((i for i in range(1, len(lines)) if rust_trim(lines[i]) == "---"), None)
        body = rust_trim("\n".join(lines[close + 1 :])) if close is not None else ""
    else:
        lines, close, body_start = _frontmatter_lines(text)
        body = rust_trimmed_from(text, body_start)
    if not lines or rust_trim(lines[0]) != "---":
        raise InvalidFrontmatter(path, "missing opening frontmatter delimiter (`---`)")
    if close is None:
        raise InvalidFrontmatter(path, "missing closing frontmatter delimiter (`---`)")
    yaml_lines = lines[1:close]
    source = "\n".join(yaml_lines)
    root: Node | None = None
    if source.strip():
        # plain `key: value` lines first: they never nest deeply, and are most frontmatter
        root = simple_tree(source)
        if root is None and nesting_too_deep(yaml_lines) is not None:
            raise Yaml("recursion limit exceeded")
        if root is None:
            root = plain_tree(source)
        if root is None:  # tags, anchors or an error: the full reading, with its messages
            root, problems = parse_yaml(source, lines, 1, close - 1, yaml12_line_breaks=False)
            if problems:
                raise Yaml(problems[0].message.removeprefix("Invalid YAML: ").rstrip("."))
    try:
        fm = _frontmatter(root)
    except _SerdeError as exc:
        raise Yaml(str(exc)) from None
    name = rust_trim(fm["name"])
    if not name:
        raise MissingField(path, "name")
    description = rust_trim(fm["description"])
    if not description:
        raise MissingField(path, "description")
    return ParsedSkill(
        name=name,
        description=description,
        version=fm["version"],
        license=fm["license"],
        compatibility=fm["compatibility"],
        tags=_clean_list(fm["tags"]),
        allowed_tools=_clean_list(fm["allowed-tools"]),
        references=_clean_list(fm["references"]),
        trigger=bool(fm["trigger"]),
        hint=fm["hint"],
        metadata=fm["metadata"],
        triggers=list(fm["triggers"]),
        body=body,
    )


def _convention_description(body: str, file_name: str) -> str:
    for line in body.split("\n"):
        text = rust_trim(line)
        if not text:
            continue
        if text.startswith("#"):
            heading = rust_trim(text.lstrip("#"))
            if heading:
                return heading
        return text[:DESCRIPTION_CHARS]
    return f"Instructions loaded from {file_name}"


def parse_convention_markdown(path: str | os.PathLike[str], content: str) -> ParsedSkill:
    """A convention file (AGENTS.md, CLAUDE.md, ...): its own frontmatter when that parses
    strictly, else the whole file as the body with a derived name, description and tags."""
    first = rust_lines(content)[:1]
    if first and rust_trim(first[0]) == "---":
        try:
            return parse_skill_markdown(path, content)
        except SkillError:
            pass  # the crate falls through to the convention reading
    file_name = PurePath(os.fspath(path)).name
    body = rust_trim(content.replace("\r\n", "\n"))
    mapped = CONVENTION_NAMES.get(ascii_upper(file_name))
    if mapped is not None:
        name, tag = mapped
        tags = ["convention", tag]
    else:
        stem = PurePath(file_name).stem
        name = ascii_lower(stem)
        tags = ["convention"]
    return ParsedSkill(name=name, description=_convention_description(body, file_name), tags=tags, body=body)


_SKILLS_COMPONENT = component_pattern(".skills")


def parse_instruction_markdown(path: str | os.PathLike[str], content: str) -> ParsedSkill:
    """The crate's dispatch by path: under `.skills/` strict; a convention file name gets the
    convention reading; anything else strict."""
    text = os.fspath(path)
    # Plain string tests, not PurePath: a cold index dispatches 15,000 paths.
    if _SKILLS_COMPONENT.search(text):  # a `.skills` component, in any ASCII case
        return parse_skill_markdown(path, content)
    name = text.rpartition(os.sep)[2]
    if name in ("", ".", "..") or (os.altsep and os.altsep in name):  # PurePath knows these best
        name = PurePath(text).name
    if ascii_upper(name) in CONVENTION_NAMES:
        return parse_convention_markdown(path, content)
    return parse_skill_markdown(path, content)
