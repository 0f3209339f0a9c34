"""`mcp`: a Model Context Protocol server over stdio, on the official `mcp` SDK, so that an agent
writing a skill can check it, score a request against the workspace and read a rule's
documentation. Tools: `check`, `select`, `overlap`, `rule`; each is one call into core, the same
calls the `check`, `select`, `overlap` and `rule` commands make.

The SDK is the `mcp` extra: it is imported when the server starts, never by other commands.
This module does not use postponed annotations: the SDK reads each tool's parameter types and
descriptions from its signature at run time, and the tools are defined where the SDK's types are
imported.
"""

import argparse
import math
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from skills_lsp.cli.common import UsageError, attach_vectors, load_workspace, printable
from skills_lsp.core.files.discovery import kind_of
from skills_lsp.core.model import Finding, Severity
from skills_lsp.core.parse.frontmatter import parse_text
from skills_lsp.core.routing.scorer import SCORERS
from skills_lsp.core.rules import RULES
from skills_lsp.core.rules.check import check_paths, load_manifest
from skills_lsp.core.rules.listing import budget_variables
from skills_lsp.core.rules.profiles import PROFILES
from skills_lsp.core.rules.reference import rule_json
from skills_lsp.core.rules.validate import validate_text
from skills_lsp.core.workspace.settings import resolve_config

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from skills_lsp.cli.common import Subparsers

SERVER_NAME = "skills-lsp"
INSTRUCTIONS = (
    "Tools for agent skills (SKILL.md files): `check` a skill you are writing (a path, or its text) "
    "and fix what it reports; `select` to see which skills of the workspace a request would pick, "
    "and with what score; `overlap` to find the skills that compete with one for the same requests "
    "(rewrite its description until none does); `rule` to read what a finding's code means and how "
    "to fix it."
)
MAX_TEXT = 1024 * 1024  # a SKILL.md sent as text: the limit the checker reads from disk


def register(sub: "Subparsers") -> None:
    server = sub.add_parser(
        "mcp", help="run an MCP server over stdio for agents (tools: check, select, overlap, rule)"
    )
    server.add_argument(
        "--root", default=".", help="workspace folder of the tools; relative paths start here (default: .)"
    )
    server.set_defaults(func=cmd_mcp)


def cmd_mcp(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    root = Path(args.root)
    if not root.is_dir():
        raise UsageError(f"not a directory: {printable(str(root))}")
    try:
        server = build_server(root.resolve())
    except ImportError:
        raise UsageError("`skills-lsp mcp` needs the MCP SDK: pip install 'skills-lsp[mcp]'") from None
    server.run("stdio")  # until the client closes stdin
    return 0


# --- what the tools do (plain functions over core) ------------------------------------------------


class ToolInputError(ValueError):
    """A tool call's arguments cannot be used; the message says why and where."""


def _under(root: Path, given: str) -> Path:
    path = Path(given)
    return path if path.is_absolute() else root / path


def _shown(root: Path, path: str) -> str:
    """A finding's path relative to the workspace when it is inside it, with `/` separators."""
    try:
        rel = os.path.relpath(path, root)
    except ValueError:  # pragma: no cover - another Windows drive
        return printable(path)
    if rel == os.pardir or rel.startswith(os.pardir + os.sep):
        return printable(path.replace(os.sep, "/"))
    return printable(rel.replace(os.sep, "/"))


def _finding(root: Path, finding: Finding) -> dict[str, Any]:
    row = dict(finding.to_json(), path=_shown(root, finding.path), message=printable(finding.message))
    row["fixes"] = [{"title": fix.title, "applicability": fix.applicability.value} for fix in finding.fixes]
    return row


def _report(root: Path, findings: list[Finding], files: int) -> dict[str, Any]:
    findings = sorted(findings, key=Finding.sort_key)
    counts = {s.label: sum(f.severity is s for f in findings) for s in Severity}
    return {
        "files": files,
        "errors": counts["error"],
        "warnings": counts["warning"],
        "findings": [_finding(root, f) for f in findings],
    }


def _profile(profile: str | None) -> str | None:
    if profile and profile not in PROFILES:
        raise ToolInputError(f"unknown profile {profile!r}; choose one of {', '.join(PROFILES)}")
    return profile or None


def check_skill(
    root: Path,
    path: str | None = None,
    text: str | None = None,
    file_path: str | None = None,
    profile: str | None = None,
) -> dict[str, Any]:
    """Findings for files on disk (`path`: a workspace, skill directory or file) or for a
    SKILL.md held in memory (`text`, judged as if it were at `file_path`)."""
    chosen = _profile(profile)
    if (path is None) == (text is None):
        raise ToolInputError("give either `path` (a file or folder) or `text` (a SKILL.md's content)")
    if path is not None:
        target = _under(root, path)
        if not target.exists():
            raise ToolInputError(f"no such file or directory: {printable(str(target))}")
        config, config_problems = resolve_config([target])
        # the agent's runtime may have set its listing budget in the environment it gave us
        config = config.with_overrides(budget_variables=budget_variables(os.environ))
        from skills_lsp.core.routing.queries import query_file_problems

        result = check_paths(
            [target],
            config=config,
            profile=chosen,
            cache_dir=None,
            workspace_files=lambda top, files: query_file_problems(top, config.query_file, files),
        )
        return _report(root, [*config_problems, *result.findings], len(result.files))
    assert text is not None
    if len(text.encode("utf-8", "surrogatepass")) > MAX_TEXT:
        raise ToolInputError(f"`text` is over {MAX_TEXT} bytes")
    where = _under(root, file_path) if file_path else _default_location(root, text)
    config, config_problems = resolve_config([where.parent if where.parent.is_dir() else root])
    manifest, _ = load_manifest(config.root or root, config)
    findings = validate_text(
        text, where, kind=kind_of(where), profile=chosen, config=config, tools=manifest.registry
    )
    return _report(root, [*config_problems, *findings], 1)


def _default_location(root: Path, text: str) -> Path:
    """Where a SKILL.md sent as text is judged to be: in a folder named after its `name`, so
    the name-directory rule judges the name and not a made-up folder."""
    name = parse_text(text).get("name")
    folder = str(name.value.value) if name is not None and name.value.kind == "scalar" else ""
    if not folder or folder in (".", "..") or any(sep in folder for sep in "/\\\0"):
        folder = "skill"
    return root / folder / "SKILL.md"


def select_skills(
    root: Path, request: str, top_k: int = 5, scorer: str | None = None, min_score: float | None = None
) -> dict[str, Any]:
    """The workspace's skills ranked for `request` by the configured (or default) scorer."""
    from skills_lsp.core.routing.scorer import SelectionPolicy
    from skills_lsp.core.workspace.scorers import default_scorer

    if not request.strip():
        raise ToolInputError("`request` is empty")
    if top_k < 1:
        raise ToolInputError("`top_k` must be 1 or more")
    if scorer is not None and scorer not in SCORERS:
        raise ToolInputError(f"unknown scorer {scorer!r}; choose one of {', '.join(SCORERS)}")
    if min_score is not None and not math.isfinite(min_score):
        raise ToolInputError("`min_score` must be a finite number")
    config, _ = resolve_config([root])
    index = load_workspace(root, config)
    name = scorer or default_scorer(config, index)
    spec = SCORERS[name]
    attach_vectors(root, config, [name])
    threshold = spec.default_min_score if min_score is None else min_score
    policy = SelectionPolicy(top_k, threshold, [], [], "ascii", name)
    matches = spec.select_once(index, request, policy)
    return {
        "scorer": name,
        "min_score": threshold,
        "skills": len(index),
        "matches": [
            {"rank": rank, "name": m.skill.name, "path": _shown(root, str(m.skill.path)), "score": m.score}
            for rank, m in enumerate(matches, 1)
        ],
    }


def overlap_skills(
    root: Path, skill: str | None = None, scorer: str | None = None, close: float | None = None
) -> dict[str, Any]:
    """The pairs of skills that compete for the same requests (`skills-lsp overlap`), or only
    `skill`'s rivals: for each, the request (a sentence of the description) both would take."""
    from skills_lsp.core.routing.overlap import CLOSE, collisions_for, overlapping_pairs
    from skills_lsp.core.workspace.scorers import default_scorer

    if scorer is not None and scorer not in SCORERS:
        raise ToolInputError(f"unknown scorer {scorer!r}; choose one of {', '.join(SCORERS)}")
    ratio = CLOSE if close is None else close
    if not (math.isfinite(ratio) and 0.0 < ratio <= 1.0):
        raise ToolInputError("`close` must be a ratio above 0 and at most 1, e.g. 0.9")
    config, _ = resolve_config([root])
    index = load_workspace(root, config)
    name = scorer or default_scorer(config, index)
    attach_vectors(root, config, [name])
    if skill is None:
        found = overlapping_pairs(index, name, config.accepted_overlaps(), ratio)
    else:
        document = next((d for d in index if d.name == skill), None)
        if document is None:
            known = ", ".join(sorted(d.name for d in index)[:20])
            raise ToolInputError(f"no skill named {skill!r} in the workspace; skills: {known}")
        found = collisions_for(index, document, name, config.accepted_overlaps(), ratio)
    pairs = []
    for collision in found:
        row = collision.to_json()
        row["paths"] = [_shown(root, str(p)) for p in (collision.skill_path, collision.rival_path)]
        pairs.append(row)
    return {"scorer": name, "skills": len(index), "close": ratio, "pairs": pairs}


def explain_rule(code: str) -> dict[str, Any]:
    """A rule's entry in the registry and its documentation."""
    wanted = code.strip().upper()
    rule = RULES.get(wanted)
    if rule is None:
        group = [c for c in sorted(RULES) if wanted and c.startswith(wanted[:3])]
        known = f"{group[0]}-{group[-1]}" if group else f"{min(RULES)}-{max(RULES)}"
        raise ToolInputError(f"unknown rule {printable(code)!r}; known codes run {known}")
    return dict(rule_json(rule), doc=rule.doc)


# --- the MCP layer ----------------------------------------------------------------------------


def build_server(root: Path) -> "MCPServer[Any]":
    """An MCP server whose tools work in `root`. Raises ImportError without the `mcp` extra."""
    from typing import Annotated

    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.types import ToolAnnotations
    from pydantic import Field

    from skills_lsp._version import __version__

    server: MCPServer[Any] = MCPServer(SERVER_NAME, instructions=INSTRUCTIONS, version=__version__)
    read_only = ToolAnnotations(read_only_hint=True, open_world_hint=False)

    def answer(call: Any, *args: Any, **kwargs: Any) -> dict[str, Any]:
        try:
            result: dict[str, Any] = call(*args, **kwargs)
        except ToolInputError as exc:
            raise ToolError(str(exc)) from None
        return result

    @server.tool(annotations=read_only)
    def check(
        path: Annotated[
            str | None, Field(description="A workspace, skill folder or file, relative to the server's root")
        ] = None,
        text: Annotated[str | None, Field(description="A SKILL.md's content, instead of `path`")] = None,
        file_path: Annotated[
            str | None,
            Field(description="With `text`: where the file would be (e.g. `skills/my-skill/SKILL.md`)"),
        ] = None,
        profile: Annotated[
            str | None, Field(description=f"Judge every file by this profile: {', '.join(PROFILES)}")
        ] = None,
    ) -> dict[str, Any]:
        """Check agent skills and return every finding: its rule code, severity, message,
        0-based range and the fixes it offers. Give `path` for files on disk or `text` for a
        SKILL.md you are writing."""
        return answer(check_skill, root, path=path, text=text, file_path=file_path, profile=profile)

    @server.tool(annotations=read_only)
    def select(
        request: Annotated[str, Field(description="What a user would ask, in their words")],
        top_k: Annotated[int, Field(description="How many skills to return at most", ge=1, le=100)] = 5,
        scorer: Annotated[
            str | None, Field(description=f"One of {', '.join(SCORERS)}; default: the workspace's")
        ] = None,
        min_score: Annotated[
            float | None, Field(description="Lowest score selected; default: the scorer's own")
        ] = None,
    ) -> dict[str, Any]:
        """Score a request against the workspace's skills with the configured scorer (or the
        default for the workspace) and return the skills it would select, best first."""
        return answer(select_skills, root, request, top_k=top_k, scorer=scorer, min_score=min_score)

    @server.tool(annotations=read_only)
    def overlap(
        skill: Annotated[
            str | None, Field(description="A skill's name: only its rivals; default: every competing pair")
        ] = None,
        scorer: Annotated[
            str | None, Field(description=f"One of {', '.join(SCORERS)}; default: the workspace's")
        ] = None,
        close: Annotated[
            float | None,
            Field(description="A rival competes when it scores at least this share of the skill's own score"),
        ] = None,
    ) -> dict[str, Any]:
        """Find skills that compete for the same requests: each sentence of a description is
        scored as a request, and a rival that scores close to the skill itself is reported with
        that request and both scores. Pairs accepted in the workspace's config are left out."""
        return answer(overlap_skills, root, skill=skill, scorer=scorer, close=close)

    @server.tool(annotations=read_only)
    def rule(
        code: Annotated[str, Field(description="A rule code such as SK401")],
    ) -> dict[str, Any]:
        """Explain a rule: its name, severity, the profiles it runs in, whether its fixes are
        safe, and its documentation (what it checks, why, and how to fix it)."""
        return answer(explain_rule, code)

    return server
