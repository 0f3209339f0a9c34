"""A new skill from a template: a valid SKILL.md and the bundle folders (for `skills-lsp init`
and the language server's `skillsLsp.newSkill`)."""

from __future__ import annotations

import json
from pathlib import Path

from skills_lsp.core.model import BUNDLE_DIRS, Severity
from skills_lsp.core.rules.edits import suggest_name
from skills_lsp.core.rules.validate import validate_text


class ScaffoldError(Exception):
    """Why a skill cannot be created (a bad name, an existing file, a file-system error)."""


TEMPLATE = """---
name: {name}
description: {description}
license: Apache-2.0
metadata:
  version: "0.1.0"
---

# {title}

## When to use

Use this skill when the user asks to ... (the requests this skill is for).

## Steps

1. First step.
2. Second step.

## Examples

Input: ...
Output: ...
"""


def scaffold_skill(name: str, parent: Path, description: str | None = None) -> Path:
    """Create `<parent>/<name>/SKILL.md` (and scripts/, references/, assets/); its path."""
    suggestion = suggest_name(name)
    if suggestion != name:
        raise ScaffoldError(
            f"{name!r} is not a valid skill name (lowercase a-z, 0-9 and single hyphens); try {suggestion!r}"
        )
    if description is not None and not description.strip():
        raise ScaffoldError("the description must not be empty")
    skill_dir = parent / name
    skill_md = skill_dir / "SKILL.md"
    if skill_md.exists():
        raise ScaffoldError(f"{skill_md} already exists; not overwriting it")
    title = name.replace("-", " ").capitalize()
    description = description or f"Describe what {name} does. Use when the user asks to ..."
    text = TEMPLATE.format(name=name, description=json.dumps(description, ensure_ascii=False), title=title)
    problems = [f for f in validate_text(text, skill_md) if f.severity is Severity.ERROR]
    if problems:
        raise ScaffoldError(f"the description does not make a valid skill: {problems[0].message}")
    try:
        skill_dir.mkdir(parents=True, exist_ok=True)
        for sub in BUNDLE_DIRS:
            (skill_dir / sub).mkdir(exist_ok=True)
        skill_md.write_text(text, encoding="utf-8")
    except OSError as exc:
        where = exc.filename if isinstance(exc.filename, str) else str(skill_dir)
        raise ScaffoldError(f"cannot create {where}: {exc.strerror or exc}") from None
    return skill_md
