"""`google.adk.skills.Skill` objects from skill folders, read and checked by skills-lsp's core.

ADK's own `load_skill_from_dir` splits the file at the first `---` anywhere (a description
containing `---` is cut), rejects a UTF-8 BOM and raises on the first problem without a line
number. Here discovery (`expand_targets`: the config's `exclude` and `.gitignore` apply),
parsing (`parse_bytes`: line-anchored delimiters, BOM and CRLF handled) and validation
(`check_document`, the workspace rules, then `finish_findings`: `per-file-ignores` and
suppression comments) are the core's, so a skill ADK runs is exactly a skill the editor and
`skills-lsp check` accept.

Modes:
- `load_adk_skills(..., strict=True)` raises one `SkillLoadError` listing every error finding.
- `load_adk_skills(..., strict=False)` returns the valid skills, skips the invalid ones and logs
  each error finding (logger `skills_lsp.adk`); nothing is dropped without a report.
- `load_adk_skills_report(...)` never raises for invalid skills: it returns an `AdkLoadReport`
  with the skills, every finding (errors and warnings) and the skipped files.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pydantic
from google.adk.skills import Frontmatter, Resources, Script, Skill

from skills_lsp.core.files.config import Config
from skills_lsp.core.files.discovery import path_sort_key
from skills_lsp.core.model import FileKind, Finding, Problem, Range, Severity, SkillFile
from skills_lsp.core.parse.frontmatter import Document, parse_bytes, read_limited
from skills_lsp.core.rules.check import expand_targets, named_skill, workspace_findings
from skills_lsp.core.rules.profiles import Profile
from skills_lsp.core.rules.registry import rule_named
from skills_lsp.core.rules.suppress import Directive, parse_directives
from skills_lsp.core.rules.validate import (
    check_document,
    file_findings,
    finish_findings,
    resolve_profile,
    unreadable,
)
from skills_lsp.core.rules.workspace import NamedSkill
from skills_lsp.core.workspace.settings import resolve_config

logger = logging.getLogger("skills_lsp.adk")

# Problems only the ADK bridge reports: ADK's own models refusing a value our profile accepted,
# a resource that cannot be handed to ADK, a name already taken by an earlier skill.
ADK_PROBLEM = "adk-rejects-skill"  # the rule that reports what ADK refuses
ADK_CODE = rule_named(ADK_PROBLEM).code  # SK004

_SKIPPED_NAMES = frozenset({"__pycache__", ".DS_Store"})


def format_finding(f: Finding) -> str:
    """`path:line:col: CODE message` with 1-based line and column, as `skills-lsp check` prints."""
    return f"{f.path}:{f.range.start.line + 1}:{f.range.start.character + 1}: {f.code} {f.message}"


class SkillLoadError(Exception):
    """Skills failed validation; `.findings` holds every error finding (one per problem)."""

    def __init__(self, findings: Sequence[Finding]) -> None:
        self.findings = list(findings)
        lines = "\n".join(format_finding(f) for f in self.findings)
        count = len(self.findings)
        super().__init__(f"{count} error{'s' if count != 1 else ''} loading skills for ADK:\n{lines}")


@dataclass
class AdkLoadReport:
    """What a load produced: the usable skills (and the SKILL.md each came from), every finding,
    and the SKILL.md files skipped."""

    skills: list[Skill] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    loaded: list[str] = field(default_factory=list)  # the path of each of `skills`, in order

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity is Severity.ERROR]


def _skill_files(roots: Iterable[str | os.PathLike[str]], config: Config) -> tuple[list[Path], list[Finding]]:
    """SKILL.md files under each root: a SKILL.md file, a skill folder, or a folder of skills,
    found as `skills-lsp check` finds them (the config's `exclude`, `.gitignore`); a file named
    as a root is taken whatever its name."""
    found: dict[str, Path] = {}
    problems: list[Finding] = []
    for root in roots:
        path = Path(root)
        if path.is_file():
            found.setdefault(os.path.normpath(path), path)
            continue
        files, missing = expand_targets([path], config)
        problems.extend(missing)
        for item in files:
            if item.kind is FileKind.AGENT_SKILL:
                found.setdefault(os.path.normpath(item.path), Path(item.path))
    return sorted(found.values(), key=path_sort_key), problems


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _frontmatter_data(doc: Document) -> dict[str, Any]:
    """The frontmatter as ADK's `Frontmatter` model takes it (YAML 1.2 core scalars)."""
    data = doc.plain_data()
    values: dict[str, Any] = dict(data) if isinstance(data, dict) else {}
    for key in ("name", "description", "license", "compatibility"):
        if key in values:
            values[key] = _text(values[key])
    tools = values.pop("allowed-tools", values.pop("allowed_tools", None))
    if isinstance(tools, list):
        tools = " ".join(str(t) for t in tools if t is not None)
    if tools is not None:
        values["allowed-tools"] = str(tools)
    if values.get("metadata") is None:
        values.pop("metadata", None)
    return values


def _field_range(doc: Document, loc: tuple[int | str, ...]) -> Range:
    pair = doc.get(str(loc[0])) if loc else None
    if pair is None and loc and loc[0] == "allowed_tools":
        pair = doc.get("allowed-tools")
    if pair is not None:
        return pair.value.range
    return doc.frontmatter_range


def _model_findings(path: str, doc: Document, exc: pydantic.ValidationError) -> list[Finding]:
    findings: list[Problem] = []
    for error in exc.errors():
        loc = tuple(error.get("loc", ()))
        where = ".".join(str(part) for part in loc) or "frontmatter"
        message = str(error.get("msg", "invalid value")).removeprefix("Value error, ")
        findings.append(Problem(ADK_PROBLEM, f"ADK rejects `{where}`: {message}.", _field_range(doc, loc)))
    return file_findings(path, findings)


def _inside(path: Path, top: Path) -> bool:
    try:
        path.resolve().relative_to(top)
    except (OSError, ValueError):
        return False
    return True


def _load_dir(skill_md: str, skill_dir: Path, folder: str) -> tuple[dict[str, str | bytes], list[Finding]]:
    """Every file under `skill_dir/folder`, keyed by its POSIX path relative to that folder (as
    ADK's loader does): UTF-8 text as `str`, anything else as `bytes`. Files resolving outside the
    skill folder (symlinks) are left out with a warning."""
    directory = skill_dir / folder
    files: dict[str, str | bytes] = {}
    findings: list[Finding] = []
    if not directory.is_dir() or (directory.is_symlink() and not _inside(directory, skill_dir.resolve())):
        if directory.is_symlink():
            findings.append(_resource_warning(skill_md, f"`{folder}/` points outside the skill folder"))
        return files, findings
    top = skill_dir.resolve()
    for current, dirs, names in os.walk(directory, followlinks=False):
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED_NAMES)
        for name in sorted(names):
            if name in _SKIPPED_NAMES:
                continue
            file_path = Path(current) / name
            relative = file_path.relative_to(directory).as_posix()
            if not _inside(file_path, top):
                message = f"`{folder}/{relative}` points outside the skill folder"
                findings.append(_resource_warning(skill_md, message))
                continue
            if not file_path.is_file():
                continue
            try:
                data = file_path.read_bytes()
            except OSError as exc:
                findings.append(
                    _resource_warning(skill_md, f"cannot read `{folder}/{relative}`: {exc.strerror}")
                )
                continue
            try:
                files[relative] = data.decode("utf-8")
            except UnicodeDecodeError:
                files[relative] = data
    return files, findings


def _resource_warning(skill_md: str, what: str) -> Finding:
    problem = Problem(ADK_PROBLEM, f"{what}; not given to ADK.", Range.point(0, 0), severity=Severity.WARNING)
    (finding,) = file_findings(skill_md, [problem])
    return finding


def _resources(skill_md: str, skill_dir: Path) -> tuple[Resources, list[Finding]]:
    references, ref_findings = _load_dir(skill_md, skill_dir, "references")
    assets, asset_findings = _load_dir(skill_md, skill_dir, "assets")
    raw_scripts, script_findings = _load_dir(skill_md, skill_dir, "scripts")
    findings = [*ref_findings, *asset_findings, *script_findings]
    scripts: dict[str, Script] = {}
    for name, src in raw_scripts.items():
        if isinstance(src, bytes):  # ADK's loader drops these too: Script.src is source text
            findings.append(_resource_warning(skill_md, f"`scripts/{name}` is not UTF-8 text"))
            continue
        scripts[name] = Script(src=src)
    return Resources(references=references, assets=assets, scripts=scripts), findings


@dataclass
class _Candidate:
    """One SKILL.md, checked on its own: its findings before the workspace rules and the
    suppression comments (`finish_findings`) have had their say."""

    path: Path
    doc: Document | None  # None: unreadable
    profile: Profile
    findings: list[Finding]
    directives: list[Directive]
    named: NamedSkill


def _check_one(path: Path, config: Config, profile: str | Profile | None) -> _Candidate:
    text_path = str(path)
    chosen = resolve_profile(path, FileKind.AGENT_SKILL, profile, config)
    try:
        data = read_limited(path)
    except OSError as exc:
        named = NamedSkill(text_path, FileKind.AGENT_SKILL, None, None)
        return _Candidate(path, None, chosen, [unreadable(path, exc)], [], named)
    doc = parse_bytes(data)
    result = check_document(doc, path, kind=FileKind.AGENT_SKILL, profile=chosen, config=config)
    # What the workspace rules read of it, as `check` gives it to them.
    named = named_skill(result.context, SkillFile(text_path, FileKind.AGENT_SKILL, str(path.parent)))
    return _Candidate(path, doc, chosen, list(result.findings), parse_directives(doc), named)


def _skill_of(candidate: _Candidate, findings: list[Finding]) -> Skill | None:
    """ADK's `Skill` for a file whose finished findings hold no error (`findings` gets what ADK's
    models refuse and the resources that cannot be handed over); None otherwise."""
    doc = candidate.doc
    if doc is None or any(f.severity is Severity.ERROR for f in findings):
        return None
    text_path = str(candidate.path)
    try:
        frontmatter = Frontmatter.model_validate(_frontmatter_data(doc))
    except pydantic.ValidationError as exc:
        findings.extend(_model_findings(text_path, doc, exc))
        return None
    resources, resource_findings = _resources(text_path, candidate.path.parent)
    findings.extend(resource_findings)
    skill = Skill(frontmatter=frontmatter, instructions=doc.body, resources=resources)
    skill._uri = candidate.path.parent.resolve().as_uri()
    return skill


def load_adk_skills_report(
    roots: Iterable[str | os.PathLike[str]] | str | os.PathLike[str],
    profile: str | Profile | None = None,
    *,
    config: Config | None = None,
) -> AdkLoadReport:
    """Load every skill under `roots` leniently: valid skills are returned, a skill with any
    error finding is skipped and listed in `skipped`, and all findings are in `findings`.

    `roots`: SKILL.md files, skill folders or folders searched for skills (like `skills-lsp
    check`). `profile`: a profile name or object (default: the config's, else the layout's).
    `config`: default is the nearest `skills-lsp` config above the first root.
    """
    root_list = [roots] if isinstance(roots, (str, os.PathLike)) else list(roots)
    report = AdkLoadReport()
    if config is None:
        config, config_findings = resolve_config(root_list)
        report.findings.extend(config_findings)
    files, problems = _skill_files(root_list, config)
    report.findings.extend(problems)
    candidates = [_check_one(path, config, profile) for path in files]
    named = [c.named for c in candidates]
    by_path: dict[str, list[Finding]] = {}
    profile_name = profile.name if isinstance(profile, Profile) else profile
    for finding in workspace_findings(named, config, profile_name):
        by_path.setdefault(finding.path, []).append(finding)
    seen: dict[str, str] = {}
    for candidate in candidates:
        path = str(candidate.path)
        # As `check` reports them: per-file-ignores and suppression comments applied last.
        findings = finish_findings(
            candidate.findings + by_path.get(path, []), path, candidate.directives, candidate.profile, config
        )
        skill = _skill_of(candidate, findings)
        if skill is not None and skill.name in seen:  # SkillToolset refuses duplicate names
            message = f"ADK needs unique names: `{skill.name}` is already used by {seen[skill.name]}."
            where = candidate.named.name_range or Range.point(0, 0)
            findings += file_findings(path, [Problem(ADK_PROBLEM, message, where)])
        if skill is not None and not any(f.severity is Severity.ERROR for f in findings):
            seen[skill.name] = path
            report.skills.append(skill)
            report.loaded.append(path)
        else:
            report.skipped.append(path)
        report.findings.extend(findings)
    report.findings.sort(key=Finding.sort_key)
    return report


def load_adk_skills(
    roots: Iterable[str | os.PathLike[str]] | str | os.PathLike[str],
    profile: str | Profile | None = None,
    strict: bool = True,
    *,
    config: Config | None = None,
) -> list[Skill]:
    """`google.adk.skills.Skill` objects for ADK's `SkillToolset`, in path order.

    strict=True: any error finding raises one `SkillLoadError` listing all of them.
    strict=False: invalid skills are skipped and each error is logged as a warning on the
    `skills_lsp.adk` logger; use `load_adk_skills_report` to get them as data.
    """
    report = load_adk_skills_report(roots, profile, config=config)
    errors = report.errors
    if errors and strict:
        raise SkillLoadError(errors)
    for finding in errors:
        logger.warning("skipped: %s", format_finding(finding))
    return report.skills
