"""Run the rules: pick the profile and the enabled rules of a document and collect its findings;
turn a loader's problems (`file` rules) and the routing tests' outcomes (`routing` rules) into
findings with the registry's codes and severities."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from skills_lsp.core.files.config import Config
from skills_lsp.core.files.discovery import kind_of
from skills_lsp.core.model import FileKind, Finding, Problem, Range, Severity
from skills_lsp.core.parse.frontmatter import Document, parse_bytes, parse_text, read_limited
from skills_lsp.core.parse.tool_manifest import ToolRegistry
from skills_lsp.core.rules import RULES, Rule, RuleContext
from skills_lsp.core.rules.profiles import Profile, default_profile, get_profile
from skills_lsp.core.rules.registry import FileProblems, Rivalry, RoutingRun, Target, rule_named
from skills_lsp.core.rules.suppress import Directive, SuppressionRun, parse_directives, suppress

DEFAULT_CONFIG = Config()


def code_matches(code: str, patterns: Iterable[str]) -> bool:
    """Whether `code` is one of `patterns`: codes, prefixes or `ALL` (select/ignore semantics)."""
    return any(p == "ALL" or code.startswith(p) for p in patterns)


@lru_cache(maxsize=1024)
def _enabled(
    profile: Profile, select: tuple[str, ...] | None, extend: tuple[str, ...], ignore: tuple[str, ...]
) -> tuple[Rule, ...]:
    chosen: list[Rule] = []
    for code, rule in sorted(RULES.items()):
        explicit = code in (select or ()) or code in extend
        wanted = (select is None or code_matches(code, select)) or code_matches(code, extend)
        if not wanted or code_matches(code, ignore):
            continue
        if not rule.enabled_in(profile.name) and not explicit:
            continue
        chosen.append(rule)
    return tuple(chosen)


def enabled_rules(profile: Profile, config: Config = DEFAULT_CONFIG) -> tuple[Rule, ...]:
    """The rules that run for `profile` under `config` (ruff-style select/extend-select/ignore;
    naming a code exactly turns it on even where the profile leaves it off)."""
    return _enabled(profile, config.select, config.extend_select, config.ignore)


def severity_for(rule: Rule, profile: Profile, config: Config = DEFAULT_CONFIG) -> Severity:
    for pattern in sorted(config.severity, key=len, reverse=True):
        if rule.code.startswith(pattern):
            return config.severity[pattern]
    return rule.severity_for(profile.name)


_PLANS: dict[tuple[int, str], tuple[tuple[Rule, Severity], ...]] = {}


def rule_plan(profile: Profile, config: Config = DEFAULT_CONFIG) -> tuple[tuple[Rule, Severity], ...]:
    """The per-file rules to run and their severities; computed once per profile and config."""
    key = (id(profile), config.fingerprint())
    plan = _PLANS.get(key)
    if plan is None:
        plan = tuple(
            (rule, severity_for(rule, profile, config))
            for rule in enabled_rules(profile, config)
            if rule.target is Target.DOCUMENT
        )
        _PLANS[key] = plan
    return plan


def resolve_profile(
    path: str | os.PathLike[str],
    kind: FileKind,
    profile: str | Profile | None = None,
    config: Config = DEFAULT_CONFIG,
) -> Profile:
    """The profile for a file: an explicit one, else the config's (global or per glob), else
    the default: the runtime's for a `SKILL.md` in its skills folder, else the layout's."""
    if isinstance(profile, Profile):
        return profile
    configured = config.profile_for_path(Path(path)) if config.profile or config.profiles else None
    name = profile or configured or default_profile(path, kind)
    return get_profile(name)


@dataclass
class DocumentResult:
    findings: list[Finding]
    context: RuleContext


def check_document(
    doc: Document,
    path: str | os.PathLike[str],
    *,
    kind: FileKind | None = None,
    profile: str | Profile | None = None,
    config: Config = DEFAULT_CONFIG,
    exists: Callable[[str], bool] | None = None,
    read: Callable[[Path, int], bytes] | None = None,
    tools: ToolRegistry | None = None,
    manifest_path: Path | None = None,
) -> DocumentResult:
    """Findings for one parsed document, plus the context the workspace rules reuse.

    `tools` is the host's tool manifest: with it, `allowed-tools` entries are checked (SK505)."""
    file_path = Path(path)
    kind = kind or kind_of(file_path)
    chosen = resolve_profile(file_path, kind, profile, config)
    ctx = RuleContext(file_path, doc, kind, chosen, tools=tools, manifest_path=manifest_path)
    if exists is not None:
        ctx.exists = exists
    if read is not None:
        ctx.read = read
    findings: list[Finding] = []
    for rule, severity in rule_plan(chosen, config):
        for report in rule.check(ctx):
            findings.append(
                Finding(str(path), rule.code, severity, report.message, report.range, report.fixes)
            )
    findings.sort(key=Finding.sort_key)
    return DocumentResult(findings, ctx)


def finish_findings(
    findings: Sequence[Finding],
    path: str | os.PathLike[str],
    directives: Sequence[Directive],
    profile: Profile,
    config: Config = DEFAULT_CONFIG,
) -> list[Finding]:
    """One file's findings as reported: without the codes `per-file-ignores` turns off for it and
    the ones its suppression comments silence, plus the `suppression` rules' findings (SK005)
    on those comments. Every finding of the file must be in `findings` (the workspace rules'
    too), or a comment that silences one of them would look unused."""
    ignored = config.ignored_for(path)
    kept, used = suppress((f for f in findings if not code_matches(f.code, ignored)), directives)
    if directives:
        run = SuppressionRun(directives, used)
        for rule in enabled_rules(profile, config):
            if rule.target is not Target.SUPPRESSION or code_matches(rule.code, ignored):
                continue
            severity = severity_for(rule, profile, config)
            for report in rule.check(run):
                kept.append(
                    Finding(str(path), rule.code, severity, report.message, report.range, report.fixes)
                )
        kept.sort(key=Finding.sort_key)
    return kept


def file_findings(path: str | os.PathLike[str], problems: Sequence[Problem]) -> list[Finding]:
    """Findings for the problems a loader recorded about `path`: each problem's kind names the
    `file` rule that reports it (its code, severity unless the problem has a lesser one)."""
    findings: list[Finding] = []
    file = FileProblems(str(path), problems)
    for kind in dict.fromkeys(p.kind for p in problems):
        rule = rule_named(kind)
        for report in rule.check(file):
            severity = report.severity or rule.severity
            findings.append(Finding(str(path), rule.code, severity, report.message, report.range))
    return findings


def routing_findings(path: str | os.PathLike[str], run: RoutingRun) -> list[Finding]:
    """Findings of the `routing` rules for the test-query file at `path`."""
    return [
        Finding(str(path), rule.code, rule.severity, report.message, report.range)
        for rule in RULES.values()
        if rule.target is Target.ROUTING
        for report in rule.check(run)
    ]


def collision_findings(
    path: str | os.PathLike[str],
    rivalries: Sequence[Rivalry],
    profile: Profile,
    config: Config = DEFAULT_CONFIG,
) -> list[Finding]:
    """Findings of the `collision` rules (SK704) for one skill, as its profile and the config
    enable them; a lesser severity a report asks for is kept unless the config sets one."""
    findings: list[Finding] = []
    for rule in enabled_rules(profile, config):
        if rule.target is not Target.COLLISION:
            continue
        configured = any(rule.code.startswith(p) for p in config.severity)
        base = severity_for(rule, profile, config)
        for rivalry in rivalries:
            for report in rule.check(rivalry):
                severity = report.severity if report.severity is not None and not configured else base
                findings.append(Finding(str(path), rule.code, severity, report.message, report.range))
    return findings


def unreadable(path: str | os.PathLike[str], exc: OSError | str) -> Finding:
    """SK100 for a file that cannot be read (or a path that is not a file or folder)."""
    reason = exc if isinstance(exc, str) else f"Cannot read file: {exc.strerror or exc}."
    (finding,) = file_findings(path, [Problem("unreadable-file", reason, Range.point(0, 0))])
    return finding


def validate_text(
    text: str,
    path: str | os.PathLike[str],
    *,
    kind: FileKind | None = None,
    profile: str | Profile | None = None,
    config: Config = DEFAULT_CONFIG,
    tools: ToolRegistry | None = None,
) -> list[Finding]:
    """Findings for a document held in memory (an editor buffer), as reported: suppressions
    applied (without the workspace rules, which need every file)."""
    doc = parse_text(text)
    result = check_document(doc, path, kind=kind, profile=profile, config=config, tools=tools)
    return finish_findings(result.findings, path, parse_directives(doc), result.context.profile, config)


def validate_file(
    path: str | os.PathLike[str],
    *,
    profile: str | Profile | None = None,
    config: Config = DEFAULT_CONFIG,
    kind: FileKind | None = None,
    tools: ToolRegistry | None = None,
) -> list[Finding]:
    """Findings for one file on disk. An unreadable file is a finding, not an exception."""
    try:
        data = read_limited(path)
    except OSError as exc:
        return [unreadable(path, exc)]
    doc = parse_bytes(data)
    result = check_document(doc, path, kind=kind, profile=profile, config=config, tools=tools)
    return finish_findings(result.findings, path, parse_directives(doc), result.context.profile, config)
