"""Check whole workspaces, skill directories or single files: discovery, parse, validate, and the
workspace-wide rules, with a content-hash cache so an unchanged workspace is re-checked without
parsing anything.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from skills_lsp._version import __version__
from skills_lsp.core.files.cache import CACHE_DIR_NAME as CACHE_DIR_NAME
from skills_lsp.core.files.cache import default_cache_dir as default_cache_dir
from skills_lsp.core.files.cache import make_cache_folder
from skills_lsp.core.files.cache import workspace_root as workspace_root
from skills_lsp.core.files.config import Config
from skills_lsp.core.files.discovery import WalkRecord, discover_workspace, kind_of, path_sort_key
from skills_lsp.core.model import Applicability, FileKind, Finding, Fix, Position, Range, Severity, SkillFile
from skills_lsp.core.parse.frontmatter import Document, parse_bytes, read_limited, when_to_use
from skills_lsp.core.parse.markdown import Reference, give_references, references_found
from skills_lsp.core.parse.tool_manifest import StaticToolRegistry, load_tool_manifest
from skills_lsp.core.rules import RULES
from skills_lsp.core.rules.common import field_text
from skills_lsp.core.rules.edits import detach_fixes, has_edits
from skills_lsp.core.rules.parallel import ParallelCheck
from skills_lsp.core.rules.profiles import Profile, get_profile
from skills_lsp.core.rules.registry import RuleContext, Target
from skills_lsp.core.rules.suppress import Directive, parse_directives
from skills_lsp.core.rules.validate import (
    DEFAULT_CONFIG,
    DocumentResult,
    check_document,
    enabled_rules,
    file_findings,
    finish_findings,
    resolve_profile,
    severity_for,
    unreadable,
)
from skills_lsp.core.rules.workspace import NamedSkill, WorkspaceRun

_CACHE_FORMAT = 7  # bumped when what is cached changes (7: suppression comments, fixes' kinds, descriptions)
_CONTENT_PROBE = "sha256:"
_PROBE_READ_LIMIT = 1024 * 1024


def _content_digest(path: str) -> str | None:
    try:
        return hashlib.sha256(read_limited(path, _PROBE_READ_LIMIT)).hexdigest()
    except OSError:
        return None


Progress = Callable[[int, int], None]


@dataclass
class CheckResult:
    findings: list[Finding] = field(default_factory=list)
    files: list[SkillFile] = field(default_factory=list)
    cached: int = 0  # files answered from the cache
    named: list[NamedSkill] = field(default_factory=list)  # what the workspace rules compared
    # What the files' results rest on besides their content (with a cache only): does a path
    # exist (bool), or a file's digest (its path prefixed `sha256:`). See `CheckCache`.
    probes: dict[str, Any] = field(default_factory=dict)

    @property
    def errors(self) -> int:
        return sum(f.severity is Severity.ERROR for f in self.findings)


class CheckCache:
    """Findings per file, keyed by path, content hash and configuration.

    A cached result also records every filesystem probe the rules made (does
    `references/x.md` exist?) and is only reused when each probe still gives the same answer.
    """

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.file = directory / "check.json"
        self.entries: dict[str, Any] = {}
        self.dirty = False
        try:
            data = json.loads(self.file.read_text(encoding="utf-8"))
            if data.get("format") == _CACHE_FORMAT and data.get("version") == __version__:
                self.entries = data["entries"]
        except (OSError, ValueError, KeyError, TypeError):
            self.entries = {}

    def get(self, path: str, key: str) -> dict[str, Any] | None:
        entry = self.entries.get(path)
        if entry is None or entry.get("key") != key:
            return None
        for probe, seen in entry.get("probes", {}).items():
            if probe.startswith(_CONTENT_PROBE):  # a file a rule read: its content must match
                if _content_digest(probe[len(_CONTENT_PROBE) :]) != seen:
                    return None
            elif os.path.exists(probe) != seen:
                return None
        return dict(entry)

    def digest(self, path: str, stamp: list[int]) -> str | None:
        """The recorded content digest of `path` if its size and mtime are unchanged."""
        entry = self.entries.get(path)
        if entry is None or entry.get("stamp") != stamp:
            return None
        key: str = entry["key"]
        return key.split(":", 1)[0]

    def put(self, path: str, entry: dict[str, Any]) -> None:
        self.entries[path] = entry
        self.dirty = True

    def save(self) -> None:
        if not self.dirty:
            return
        try:
            make_cache_folder(self.directory)
            payload = json.dumps({"format": _CACHE_FORMAT, "version": __version__, "entries": self.entries})
            fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=".check-", suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(payload)
            os.replace(tmp, self.file)
        except OSError:
            pass  # a read-only workspace still gets its findings


def _finding_to_cache(f: Finding) -> list[Any]:
    r = f.range
    # Only the fixes `--fix` could apply (in this file): the counts and `--statistics` need their kinds.
    fixes = [[fix.title, fix.applicability.value] for fix in f.fixes if has_edits(fix) and not fix.changes]
    return [
        f.code,
        int(f.severity),
        f.message,
        r.start.line,
        r.start.character,
        r.end.line,
        r.end.character,
        fixes,
    ]


def _finding_from_cache(path: str, row: list[Any]) -> Finding:
    """A cached finding. Of its fixes, those that edit only this file are kept, with their titles
    and how far they can be trusted but not their edits: `fixing.fix_file` computes those again
    from the file."""
    code, severity, message, sl, sc, el, ec, fixes = row
    kept = tuple(Fix(title, (), Applicability(kind)) for title, kind in fixes)
    return Finding(path, code, Severity(severity), message, Range(Position(sl, sc), Position(el, ec)), kept)


def _as_found(found: Callable[[SkillFile], object], root: str) -> Callable[[str], object]:
    """A SKILL.md path the walk found, as `discover_workspace` lists it, handed to `found`."""

    def walked(skill: str) -> object:
        return found(SkillFile(os.path.normpath(skill), FileKind.AGENT_SKILL, root))

    return walked


def expand_targets(
    targets: Sequence[str | os.PathLike[str]],
    config: Config,
    walk: WalkRecord | None = None,
    found: Callable[[SkillFile], object] | None = None,
) -> tuple[list[SkillFile], list[Finding]]:
    """Files to check for each target: a workspace, a skill directory or a single file. With
    `walk`, the directories listed and the ignore files looked for are recorded there. With
    `found`, each agentskills `SKILL.md` of a single workspace target is handed to it as the walk
    finds it (the list may still leave it out or give it another layout: see `ParallelCheck`)."""
    files: dict[str, SkillFile] = {}
    problems: list[Finding] = []
    for target in targets:
        path = Path(target)
        if path.is_file():
            files.setdefault(str(path), SkillFile(str(path), kind_of(path), str(path.parent)))
        elif path.is_dir():
            if (path / "SKILL.md").is_file() and not (path / "skills").is_dir():
                skill = path / "SKILL.md"
                files.setdefault(str(skill), SkillFile(str(skill), FileKind.AGENT_SKILL, str(path)))
                continue
            ignore = config.ignore_filter(path)
            visited = walk.dirs if walk is not None else None
            walked = _as_found(found, str(path)) if found is not None and len(targets) == 1 else None
            listed = discover_workspace(
                path, config.roots_for(path), config.max_depth, ignore, visited, walked
            )
            for item in listed:
                files.setdefault(item.path, item)
            if walk is not None and ignore.active:
                walk.probed.extend(ignore.probed)
        else:
            message = "Not a regular file or directory." if path.exists() else "No such file or directory."
            problems.append(unreadable(path, message))
    if len(targets) == 1:  # one target: discovery's order already is path order
        return list(files.values()), problems
    return sorted(files.values(), key=lambda f: path_sort_key(f.path)), problems


@dataclass
class Manifest:
    """The workspace's tool manifest, if it has one, and the digest that keys cached results."""

    registry: StaticToolRegistry | None = None
    digest: str = "-"
    path: Path | None = None


def load_manifest(root: Path, config: Config) -> tuple[Manifest, list[Finding]]:
    path = root / config.tool_manifest
    if not path.is_file():
        return Manifest(), []
    try:
        data = read_limited(path)
    except OSError:
        data = b""
    registry, problems = load_tool_manifest(path)
    return Manifest(registry, hashlib.sha256(data).hexdigest(), path), file_findings(path, problems)


class CopiedReferences:
    """The references found in each content checked so far, by the content's SHA-256 (hex): 27%
    of the corpus's skill files are byte-identical copies of another (a skill mirrored in
    `.claude/skills/`, `.agents/skills/`, ...), and a copy's body has the same references at the
    same places. Only what the reference rules then do with them (which files exist) is per file.

    Each process of a check has its own; they tell each other what they found (`parallel.Exchange`),
    as the copies of one skill are often checked in different processes."""

    def __init__(self) -> None:
        self.found: dict[str, list[Reference]] = {}
        self.fresh: list[str] = []  # found here since last told to the others

    def get(self, digest: str) -> list[Reference] | None:
        return self.found.get(digest)

    def add(self, digest: str, references: list[Reference]) -> None:
        self.found[digest] = references
        self.fresh.append(digest)

    def outgoing(self) -> list[tuple[str, list[Reference]]]:
        news = [(digest, self.found[digest]) for digest in self.fresh]
        self.fresh = []
        return news

    def incoming(self, news: object) -> None:
        for digest, references in news if isinstance(news, list) else ():
            self.found.setdefault(digest, references)


class FileCheck(NamedTuple):
    """One file checked: its findings before suppressions, its suppression comments, what the
    workspace rules need of it, and whether it came from the cache."""

    findings: list[Finding]
    named: NamedSkill
    cached: bool
    directives: list[Directive]


# What Path.exists() takes for "not there" (Python 3.11-3.13); any other error is raised, as it does.
_NOT_THERE_ERRNOS = frozenset({errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP})
_NOT_THERE_WINERRORS = frozenset({21, 123, 1921})  # not ready, invalid name, cannot resolve


def _exists(path: str) -> bool:
    """`path.exists()` without pathlib's layers of calls: a skill's references are probed one by one."""
    try:
        os.stat(path)
    except OSError as exc:
        if exc.errno in _NOT_THERE_ERRNOS or getattr(exc, "winerror", None) in _NOT_THERE_WINERRORS:
            return False
        raise
    except ValueError:  # a NUL in the name
        return False
    return True


def check_file(
    item: SkillFile,
    config: Config,
    profile: str | None,
    cache: CheckCache | None,
    manifest: Manifest | None = None,
    copies: CopiedReferences | None = None,
) -> FileCheck:
    """Findings for one file (from the cache when the file and its probes are unchanged).

    The cache is keyed by the SHA-256 of the content; like git's index, a file whose size and
    mtime (in ns) are unchanged keeps its recorded digest without being read again. With
    `copies`, a file whose content was checked before takes the references found in it then.
    """
    data: bytes | None = None
    digest: str | None = None  # the SHA-256 of `data`, once worked out
    stamp: list[int] = []

    def failed(exc: OSError) -> FileCheck:
        return FileCheck(
            [unreadable(item.path, exc)], NamedSkill(item.path, item.kind, None, None), False, []
        )

    chosen = resolve_profile(item.path, item.kind, profile, config)
    key = ""
    if cache is not None:
        try:
            info = os.stat(item.path)
        except OSError as exc:
            return failed(exc)
        stamp = [info.st_size, info.st_mtime_ns]
        recorded = cache.digest(item.path, stamp)
        if recorded is None:
            try:
                data = read_limited(item.path)
            except OSError as exc:
                return failed(exc)
            recorded = digest = hashlib.sha256(data).hexdigest()
        tools_digest = manifest.digest if manifest is not None else "-"
        key = f"{recorded}:{item.kind.value}:{chosen.name}:{config.fingerprint()}:{tools_digest}"
        hit = cache.get(item.path, key)
        if hit is not None:
            if hit.get("stamp") != stamp:
                hit["stamp"] = stamp
                cache.put(item.path, hit)
            findings = [_finding_from_cache(item.path, row) for row in hit["findings"]]
            nr, dr = hit.get("name_range"), hit.get("description_range")
            named = NamedSkill(
                item.path,
                item.kind,
                hit.get("name"),
                Range.of(*nr) if nr else None,
                hit.get("description"),
                Range.of(*dr) if dr else None,
                profile=chosen.name,
                when_to_use=str(hit.get("when_to_use") or ""),
            )
            directives = [Directive.from_row(row) for row in hit.get("directives", [])]
            return FileCheck(findings, named, True, directives)
    if data is None:
        try:
            data = read_limited(item.path)
        except OSError as exc:
            return failed(exc)
    probes: dict[str, bool | str | None] = {}

    def exists(p: str) -> bool:
        result = _exists(p)
        probes[p] = result
        return result

    def read(p: Path, limit: int) -> bytes:
        try:
            content = read_limited(p, limit)
        except OSError:
            probes[_CONTENT_PROBE + str(p)] = None
            raise
        probes[_CONTENT_PROBE + str(p)] = hashlib.sha256(content).hexdigest()
        return content

    doc = parse_bytes(data)
    copied: list[Reference] | None = None
    if copies is not None:
        digest = digest or hashlib.sha256(data).hexdigest()
        copied = copies.get(digest)
        if copied is not None:  # the same text: the same references, at the same places
            give_references(doc, copied)
    if cache is None:  # nothing keeps the probes: the rules probe directly
        result = check_item(doc, item, chosen, config, manifest, exists=_exists, read=read_limited)
    else:
        result = check_item(doc, item, chosen, config, manifest, exists=exists, read=read)
    if copies is not None and copied is None and digest is not None:
        found = references_found(doc)
        if found is not None:
            copies.add(digest, found)
    named = named_skill(result.context, item)
    directives = parse_directives(doc)
    if cache is not None:
        cache.put(
            item.path,
            {
                "key": key,
                "stamp": stamp,
                "findings": [_finding_to_cache(f) for f in result.findings],
                "probes": probes,
                "name": named.name,
                "name_range": named.name_range.row() if named.name_range else None,
                "directives": [directive.to_row() for directive in directives],
                "description": named.description,
                "when_to_use": named.when_to_use,
                "description_range": named.description_range.row() if named.description_range else None,
            },
        )
    # Fixes' edits are built again from the file when wanted (fixing.fix_file), as for a cached result.
    return FileCheck([detach_fixes(f) for f in result.findings], named, False, directives)


def check_item(
    doc: Document,
    item: SkillFile,
    profile: Profile,
    config: Config,
    manifest: Manifest | None,
    exists: Callable[[str], bool] | None = None,
    read: Callable[[Path, int], bytes] | None = None,
) -> DocumentResult:
    """The per-file rules' findings for a discovered file's parse, with the workspace's manifest."""
    return check_document(
        doc,
        item.path,
        kind=item.kind,
        profile=profile,
        config=config,
        exists=exists,
        read=read,
        tools=manifest.registry if manifest is not None else None,
        manifest_path=manifest.path if manifest is not None else None,
    )


def named_skill(ctx: RuleContext, item: SkillFile) -> NamedSkill:
    """What the workspace rules need to know of one checked file."""
    found = field_text(ctx, "name")
    pair, text = found if found is not None else (None, None)
    if pair is None or not text or not text.strip():
        return NamedSkill(item.path, item.kind, None, None, profile=ctx.profile.name)
    described = field_text(ctx, "description")
    description = described[1] if described is not None else None
    return NamedSkill(
        item.path,
        item.kind,
        text.strip(),
        pair.value.range,
        description.strip() if description is not None else None,
        described[0].value.range if described is not None and description is not None else None,
        ctx.profile.name,
        when_to_use(ctx.doc),
    )


def workspace_findings(
    skills: Sequence[NamedSkill], config: Config, profile: str | None, as_checked: bool = False
) -> list[Finding]:
    """Findings of the workspace rules (SK7xx) over every checked file. `as_checked`: each skill's
    `profile`, where set, is the one `check_file` resolved for it with this `config` and `profile`
    (`check_paths`' skills): it is taken by name rather than resolved again from the path."""
    findings: list[Finding] = []
    # A rule's severity in each skill's profile, None where it is off: worked out once per
    # profile, as a workspace rule may report on every skill (`rule in` a tuple of rules would
    # compare whole dataclasses, field by field).
    # The same goes for each skill's profile: SK703 may report on a skill once per runtime.
    severities: dict[tuple[str, Profile], Severity | None] = {}
    profiles: dict[str, tuple[FileKind, Profile]] = {}
    for rule in RULES.values():
        if rule.target is not Target.WORKSPACE:
            continue
        for skill, report in rule.check(WorkspaceRun(skills, config.budget_variables)):
            known = profiles.get(skill.path)
            if known is not None and known[0] is skill.kind:
                chosen = known[1]
            else:
                if as_checked and skill.profile is not None:
                    chosen = get_profile(skill.profile)
                else:
                    chosen = resolve_profile(skill.path, skill.kind, profile, config)
                profiles[skill.path] = (skill.kind, chosen)
            key = (rule.code, chosen)
            if key not in severities:
                enabled = any(other is rule for other in enabled_rules(chosen, config))
                severities[key] = severity_for(rule, chosen, config) if enabled else None
            severity = severities[key]
            if severity is not None:
                findings.append(Finding(skill.path, rule.code, severity, report.message, report.range))
    return findings


def finish_all(
    findings: list[Finding],
    files: Sequence[SkillFile],
    directives: dict[str, list[Directive]],
    config: Config,
    profile: str | None,
) -> list[Finding]:
    """Every file's findings as reported (`validate.finish_findings`): per-file ignores and
    suppression comments applied, SK005 added. Only files that have either are regrouped."""
    if not directives and not config.per_file_ignores:
        return findings
    kinds = {item.path: item.kind for item in files}
    by_path: dict[str, list[Finding]] = {}
    for finding in findings:
        by_path.setdefault(finding.path, []).append(finding)
    for path in directives:
        by_path.setdefault(path, [])
    finished: list[Finding] = []
    for path, group in by_path.items():
        kind = kinds.get(path)
        chosen = resolve_profile(path, kind if kind is not None else kind_of(Path(path)), profile, config)
        finished.extend(finish_findings(group, path, directives.get(path, ()), chosen, config))
    return finished


# Findings of files of the workspace that are not skills, given its root and checked files.
WorkspaceFiles = Callable[[Path, Sequence[SkillFile]], list[Finding]]


def check_paths(
    targets: Sequence[str | os.PathLike[str]],
    *,
    config: Config = DEFAULT_CONFIG,
    profile: str | None = None,
    cache_dir: Path | None = None,
    progress: Progress | None = None,
    jobs: int = 1,
    workspace_files: WorkspaceFiles | None = None,
    walk: WalkRecord | None = None,
) -> CheckResult:
    """Check every target. `cache_dir=None` disables the cache. `jobs` > 1 checks files in that
    many processes (parallel.py); the result is the same. `workspace_files` checks the files
    beside the skills that a later stage reads (test queries, trigger evals). `walk`: see
    `expand_targets`."""
    root = workspace_root(targets, config)
    manifest, manifest_problems = load_manifest(root, config)
    cache = CheckCache(cache_dir) if cache_dir is not None else None

    copies = CopiedReferences()

    def check_one(item: SkillFile) -> tuple[FileCheck, dict[str, Any] | None]:
        checked = check_file(item, config, profile, cache, manifest, copies)
        return checked, cache.entries.get(item.path) if cache is not None else None

    # The workers start on the files the walk finds while it goes on (parallel.py).
    with ParallelCheck(check_one, jobs, copies) as parallel:
        found = parallel.found if parallel.starts_early else None
        files, problems = expand_targets(targets, config, walk, found)
        result = CheckResult(findings=[*problems, *manifest_problems], files=files)
        # While the workers check the chunks the walk left queued.
        if workspace_files is not None:
            for finding in workspace_files(root, files):
                chosen = resolve_profile(finding.path, kind_of(Path(finding.path)), profile, config)
                if any(rule.code == finding.code for rule in enabled_rules(chosen, config)):
                    result.findings.append(finding)
        checked_files = parallel.results(files, progress)
    named = result.named
    directives: dict[str, list[Directive]] = {}
    for item, (checked, entry) in zip(files, checked_files, strict=True):
        result.findings.extend(checked.findings)
        result.cached += checked.cached
        named.append(checked.named)
        if checked.directives:
            directives[item.path] = checked.directives
        # A worker process wrote its entry into its own copy of the cache: copy it back.
        if cache is not None and entry is not None and cache.entries.get(item.path) != entry:
            cache.put(item.path, entry)
        if entry is not None:
            result.probes.update(entry.get("probes", {}))
    result.findings.extend(workspace_findings(named, config, profile, as_checked=True))
    result.findings = finish_all(result.findings, files, directives, config, profile)
    result.findings.sort(key=Finding.sort_key)
    if cache is not None:
        cache.save()
    return result
