"""SK7xx: findings that need the whole workspace, not one file."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from typing import Any

from skills_lsp.core.model import FileKind, Severity
from skills_lsp.core.rules.name import scalar_text
from skills_lsp.core.rules.registry import Report, RuleContext, rule


@rule("SK701", "duplicate-name", Severity.WARNING, "Two skills in the workspace share a name", workspace=True)
def duplicate_name(contexts: Any) -> Iterator[tuple[RuleContext, Report]]:
    """Agents load skills by name; when two skills share one, which one wins depends on the
    client (the first found, the project-local one, or the last). Rename one of them.
    Convention files (several AGENTS.md in one repo) are exempt."""
    by_name: dict[str, list[tuple[RuleContext, Report]]] = defaultdict(list)
    for ctx in contexts:
        if ctx.kind is FileKind.CONVENTION or ctx.doc.root is None or ctx.doc.root.kind != "mapping":
            continue
        pair = ctx.get("name")
        text = scalar_text(ctx, pair.value) if pair is not None else None
        if pair is None or not text or not text.strip():
            continue
        by_name[text.strip()].append((ctx, Report(pair.value.range, "")))
    for name, places in by_name.items():
        if len(places) < 2:
            continue
        for ctx, report in places:
            others = ", ".join(str(o.path) for o, _ in places if o is not ctx)
            yield ctx, report._replace(message=f"Skill name `{name}` is also used by {others}.")
