"""Run the rules over one document: pick the profile and the enabled rules, collect findings."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from skills_lsp.core.files.config import Config
from skills_lsp.core.files.discovery import kind_of
from skills_lsp.core.model import FileKind, Finding, Range, Severity
from skills_lsp.core.parse.frontmatter import Document, parse_bytes, parse_text, read_limited
from skills_lsp.core.parse.tool_manifest import ToolRegistry
from skills_lsp.core.rules import RULES, Rule, RuleContext
from skills_lsp.core.rules.profiles import DEFAULT_PROFILE, Profile, get_profile

DEFAULT_CONFIG = Config()


def _matches(code: str, patterns: Iterable[str]) -> bool:
    return any(p == "ALL" or code.startswith(p) for p in patterns)


@lru_cache(maxsize=1024)
def _enabled(
    profile: Profile, select: tuple[str, ...] | None, extend: tuple[str, ...], ignore: tuple[str, ...]
) -> tuple[Rule, ...]:
    chosen: list[Rule] = []
    for code, rule in sorted(RULES.items()):
        explicit = code in (select or ()) or code in extend
        wanted = (select is None or _matches(code, select)) or _matches(code, extend)
        if not wanted or _matches(code, ignore):
            continue
        if not profile.enabled(code) and not explicit:
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
    return profile.severity_of(rule.code, rule.severity)


_PLANS: dict[tuple[int, str], tuple[tuple[Rule, Severity], ...]] = {}


def rule_plan(profile: Profile, config: Config = DEFAULT_CONFIG) -> tuple[tuple[Rule, Severity], ...]:
    """The per-file rules to run and their severities; computed once per profile and config."""
    key = (id(profile), config.fingerprint())
    plan = _PLANS.get(key)
    if plan is None:
        plan = tuple(
            (rule, severity_for(rule, profile, config))
            for rule in enabled_rules(profile, config)
            if not rule.workspace
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
    the layout's default."""
    if isinstance(profile, Profile):
        return profile
    configured = config.profile_for_path(Path(path)) if config.profile or config.profiles else None
    name = profile or configured or DEFAULT_PROFILE[kind]
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
    exists: Callable[[Path], bool] | None = None,
    read: Callable[[Path, int], bytes] | None = None,
    tools: ToolRegistry | None = None,
) -> DocumentResult:
    """Findings for one parsed document, plus the context the workspace rules reuse.

    `tools` is the host's tool manifest: with it, `allowed-tools` entries are checked (SK505)."""
    file_path = Path(path)
    kind = kind or kind_of(file_path)
    chosen = resolve_profile(file_path, kind, profile, config)
    ctx = RuleContext(file_path, doc, kind, chosen, tools=tools)
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


def unreadable(path: str | os.PathLike[str], exc: OSError) -> Finding:
    """SK100 for a file that cannot be read."""
    return Finding(
        str(path), "SK100", Severity.ERROR, f"Cannot read file: {exc.strerror or exc}.", Range.point(0, 0)
    )


def validate_text(
    text: str,
    path: str | os.PathLike[str],
    *,
    kind: FileKind | None = None,
    profile: str | Profile | None = None,
    config: Config = DEFAULT_CONFIG,
    tools: ToolRegistry | None = None,
) -> list[Finding]:
    """Findings for a document held in memory (an editor buffer)."""
    doc = parse_text(text)
    return check_document(doc, path, kind=kind, profile=profile, config=config, tools=tools).findings


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
    return check_document(
        parse_bytes(data), path, kind=kind, profile=profile, config=config, tools=tools
    ).findings
