"""The `<available_skills>` catalog and the lazy skill API of the Python ADK designs.

`to_prompt` is byte-identical to skills-ref 0.1.1's `to-prompt`: one `<skill>` block per skill
with name, description (HTML-escaped) and the absolute path of its file, each on its own line.
`SkillCatalog` serves metadata at start-up and loads a body and its resource listing only when a
skill is used.
"""

from __future__ import annotations

import html
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from skills_lsp.core.index.skill_index import SkillDocument, SkillIndex, SkillSummary
from skills_lsp.core.model import BUNDLE_DIRS, FileKind
from skills_lsp.core.rules.listing import Fate, ListedSkill, Listing, Runtime, fit_listing

MAX_RESOURCES = 500


def to_prompt(skills: Iterable[SkillDocument | SkillSummary], *, locations: bool = True) -> str:
    """The `<available_skills>` XML block, exactly as skills-ref's `to_prompt` writes it.

    `locations=False` leaves out `<location>`: for agents that load a skill by name through a
    tool, where a host path tells the model nothing it can use and reveals the file layout."""
    lines = ["<available_skills>"]
    for skill in skills:
        # skills-ref strips with Python's str.strip(), which also drops U+001C..U+001F.
        lines += ["<skill>", "<name>", html.escape(skill.name.strip()), "</name>"]
        lines += ["<description>", html.escape(skill.description.strip()), "</description>"]
        if locations:
            lines += ["<location>", str(_location(skill.path)), "</location>"]
        lines.append("</skill>")
    lines.append("</available_skills>")
    return "\n".join(lines)


def _location(path: Path) -> Path:
    """skills-ref's location: the skill folder resolved, then the file name (a linked SKILL.md
    is not followed)."""
    return Path(path).parent.resolve() / Path(path).name


@dataclass(frozen=True)
class SkillMetadata:
    name: str
    description: str
    location: str
    id: str


@dataclass(frozen=True)
class LoadedSkill:
    metadata: SkillMetadata
    instructions: str
    resources: tuple[str, ...]  # paths relative to the skill directory, `/`-separated
    directory: str | None


class SkillCatalog:
    """Progressive disclosure over an index: metadata first, bodies and files on demand."""

    def __init__(self, index: SkillIndex) -> None:
        self.index = index

    def list_metadata(self) -> list[SkillMetadata]:
        return [self._metadata(d) for d in self.index]

    def get_metadata(self, name: str) -> SkillMetadata | None:
        document = self.index.find_by_name(name)
        return None if document is None else self._metadata(document)

    def load_skill(self, name: str) -> LoadedSkill | None:
        document = self.index.find_by_name(name)
        if document is None:
            return None
        directory = skill_directory(document)
        resources = tuple(list_resources(directory)) if directory is not None else ()
        return LoadedSkill(
            self._metadata(document), document.body, resources, str(directory) if directory else None
        )

    def to_prompt(self, *, locations: bool = True) -> str:
        return to_prompt(self.index, locations=locations)

    @staticmethod
    def _metadata(document: SkillDocument) -> SkillMetadata:
        return SkillMetadata(document.name, document.description, str(_location(document.path)), document.id)


def skill_directory(document: SkillDocument) -> Path | None:
    """The folder whose files belong to a skill: only agentskills `<name>/SKILL.md` skills have one."""
    if document.kind is FileKind.AGENT_SKILL or Path(document.path).name == "SKILL.md":
        return Path(document.path).parent
    return None


def list_resources(directory: Path) -> list[str]:
    """Files under the skill's `scripts/`, `references/` and `assets/` (symlinks not followed)."""
    found: list[str] = []
    for sub in BUNDLE_DIRS:
        top = directory / sub
        if top.is_symlink() or not top.is_dir():
            continue  # a linked folder may lead outside the skill
        for current, dirs, files in os.walk(top):
            dirs.sort()
            for name in sorted(files):
                path = Path(current, name)
                if path.is_symlink():
                    continue
                found.append(path.relative_to(directory).as_posix())
                if len(found) >= MAX_RESOURCES:
                    return found
    return found


def listed_skills(index: SkillIndex) -> list[ListedSkill]:
    """The skills a runtime lists: every indexed skill but convention files (AGENTS.md and the
    like are always-on instructions, not skills to choose)."""
    return [
        ListedSkill(d.name.strip(), d.description.strip(), str(_location(d.path)), d.when_to_use)
        for d in index
        if d.kind is not FileKind.CONVENTION
    ]


def runtime_listing(
    index: SkillIndex,
    runtime: Runtime,
    context_tokens: int | None = None,
    environ: Mapping[str, str] | None = None,
) -> Listing:
    """What `runtime`'s skill listing keeps of each skill of `index` (`environ`: the budget
    variables the caller read, see `listing.budget_variables`)."""
    return fit_listing(runtime, listed_skills(index), context_tokens, environ)


def render_listing(listing: Listing) -> str:
    """The listing as the runtime writes it for its model, after its cuts (entries in the
    runtime's format; omitted skills are not there at all)."""
    runtime = listing.runtime
    parts: list[str] = []
    for placement in listing.placements:
        skill = placement.skill
        if placement.fate is Fate.OMITTED:
            continue
        if placement.fate is Fate.NAME_ONLY and runtime.name == "claude-code":
            parts.append(f"- {skill.name}\n")
            continue
        description = skill.description[: placement.kept]
        if runtime.entry.startswith("<"):
            parts.append(
                runtime.entry.format(
                    name=html.escape(skill.name), description=html.escape(description), path=skill.path
                )
            )
        else:
            parts.append(runtime.entry.format(name=skill.name, description=description, path=skill.path))
    body = "".join(parts)
    if runtime.entry.startswith("<"):
        return f"<available_skills>\n{body}</available_skills>\n"
    return body
