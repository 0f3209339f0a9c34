"""The engine commands: `index` (every skill of a workspace), `select` (rank skills for a request,
with `--explain`), `prompt` (the `<available_skills>` catalog) and `budget` (the listing a
runtime builds, and which skills its budget cuts)."""

from __future__ import annotations

import argparse
import json
import math
from typing import TYPE_CHECKING, Any, TextIO

from skills_lsp.cli.common import (
    UsageError,
    display,
    keep_vectors,
    load_index,
    scorer_help,
    tags,
    workspace_of,
)
from skills_lsp.core.routing.scorer import SCORERS

if TYPE_CHECKING:
    from skills_lsp.cli.common import Subparsers
    from skills_lsp.core.routing.scorer import SkillMatch


def register(sub: Subparsers) -> None:
    _add_index(sub)
    _add_select(sub)
    _add_prompt(sub)


def _add_index(sub: Subparsers) -> None:
    index = sub.add_parser("index", help="list the skill index of a workspace")
    index.add_argument("root", nargs="?", default=".", help="workspace folder (default: .)")
    index.add_argument("--format", choices=["text", "json"], default="text")
    index.add_argument("--crate", action="store_true", help="only what adk-skill 0.6.0 itself indexes")
    index.set_defaults(func=cmd_index)


def _add_select(sub: Subparsers) -> None:
    what = "rank skills for a request with the workspace's scorer (or --scorer)"
    select = sub.add_parser("select", help=what, description=what[0].upper() + what[1:] + ".")
    select.add_argument("query")
    select.add_argument("--root", default=".", help="workspace folder (default: .)")
    select.add_argument(
        "--top-k", type=int, default=3, help="results to show (default 3, as `adk skills match`)"
    )
    select.add_argument(
        "--min-score",
        type=float,
        default=None,
        help="lowest score selected (default: the scorer's own: 1.0 for lexical, calibrated for the others)",
    )
    select.add_argument("--include-tags", help="only skills with one of these tags (comma-separated)")
    select.add_argument("--exclude-tags", help="never skills with one of these tags (comma-separated)")
    select.add_argument(
        "--tokenizer",
        choices=["ascii", "unicode"],
        default="ascii",
        help="ascii (adk-skill's) or unicode letters and digits",
    )
    select.add_argument("--crate", action="store_true", help="only what adk-skill 0.6.0 itself indexes")
    select.add_argument(
        "--scorer",
        choices=tuple(SCORERS),
        help=scorer_help("default: the config's, else the profile's: lexical for .skills/, else hybrid"),
    )
    select.add_argument("--format", choices=["text", "json"], default="text")
    select.add_argument("--explain", action="store_true", help="show which tokens hit which field")
    select.set_defaults(func=cmd_select)


def _add_prompt(sub: Subparsers) -> None:
    prompt = sub.add_parser("prompt", help="print the <available_skills> catalog")
    prompt.add_argument("root", nargs="?", default=".", help="workspace folder (default: .)")
    prompt.add_argument("--crate", action="store_true", help="only what adk-skill 0.6.0 itself indexes")
    prompt.set_defaults(func=cmd_prompt)


def cmd_index(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    index = load_index(args)
    if args.format == "json":
        rows = []
        for doc in index:
            row = doc.to_json()
            row["path"] = display(str(doc.path))
            rows.append(row)
        out.write(json.dumps(rows, indent=2, ensure_ascii=False) + "\n")
        return 0
    out.write(f"{len(index)} skill{'s' if len(index) != 1 else ''}\n")
    for doc in index:
        tags = f" [{', '.join(doc.tags)}]" if doc.tags else ""
        out.write(f"{doc.id}  {display(str(doc.path))}{tags}\n    {doc.description[:100]}\n")
    return 0


def cmd_select(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from skills_lsp.core.routing.scorer import SelectionPolicy, scorer_for

    if args.top_k < 0:
        raise UsageError("--top-k must be 0 or more")
    from skills_lsp.core.workspace.scorers import default_scorer

    index = load_index(args)
    if args.scorer is None:
        args.scorer = "lexical" if args.crate else default_scorer(workspace_of(args)[1], index)
    keep_vectors(args, [args.scorer])
    if args.min_score is not None and not math.isfinite(args.min_score):
        raise UsageError(f"--min-score must be a number, not {args.min_score}")
    spec = SCORERS[args.scorer]
    min_score = spec.default_min_score if args.min_score is None else args.min_score
    policy = SelectionPolicy(
        args.top_k,
        min_score,
        tags(args.include_tags),
        tags(args.exclude_tags),
        args.tokenizer,
        args.scorer,
    )
    matches = spec.select_once(index, args.query, policy)

    def details(match: SkillMatch) -> dict[str, Any]:
        document = index.find_by_id(match.skill.id)
        assert document is not None
        return scorer_for(index, args.scorer).details(args.query, document, policy.tokenizer)

    if args.format == "json":
        rows = [
            {"name": m.skill.name, "path": display(str(m.skill.path)), "id": m.skill.id, "score": m.score}
            for m in matches
        ]
        if args.explain:
            for row, match in zip(rows, matches, strict=True):
                row["explain"] = details(match)
        out.write(json.dumps(rows, indent=2, ensure_ascii=False) + "\n")
        return 0
    if not matches:
        out.write(f"No skill scores {min_score} or more ({args.scorer} scorer) for: {args.query}\n")
        return 0
    for rank, match in enumerate(matches, 1):
        out.write(f"{rank}. {match.score:8.4f}  {match.skill.name}  ({display(str(match.skill.path))})\n")
        if args.explain:
            out.write(_explanation(details(match), match.score))
    return 0


def _explanation(hits: dict[str, Any], score: float) -> str:
    """A scorer's `details()` as the lines `select --explain` prints under a match."""
    if "embedded" in hits:  # meaning, not vocabulary: no words to show
        return "     cosine similarity of meaning (name, description, tags, body start)\n"
    lines = []
    if "shared_words" in hits:
        for field_name, words in hits["shared_words"].items():
            if words:
                lines.append(f"     {field_name:<11} {' '.join(words)}\n")
        if "semantic" in hits:
            fused = f"     bm25f {hits['bm25f']:.4f}, semantic {hits['semantic']:.4f}"
            if penalty := hits.get("quick_answer_penalty"):
                from skills_lsp.core.routing.intent import TASK_FLOOR

                chance = hits["task_probability"]
                fused += (
                    f", minus {penalty:.4f}: the request reads {chance:.0%} task-like, under {TASK_FLOOR:.0%}"
                )
            lines.append(fused + "\n")
        return "".join(lines)
    from skills_lsp.core.routing.lexical import FIELD_WEIGHTS

    for field_name, weight in FIELD_WEIGHTS.items():
        if hits[field_name]:
            lines.append(f"     {field_name:<11} x{weight}: {' '.join(hits[field_name])}\n")
    lines.append(
        f"     raw {hits['raw']} / sqrt({hits['unique_body_tokens']} unique body tokens) = "
        f"{hits['raw']} / {hits['norm']:.4f} = {score:.4f}\n"
    )
    return "".join(lines)


def cmd_prompt(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from skills_lsp.core.engine.catalog import to_prompt

    out.write(to_prompt(load_index(args)) + "\n")
    return 0
