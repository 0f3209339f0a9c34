"""The engine commands: `index` (every skill of a workspace), `select` (rank skills for a request,
with `--explain`), `prompt` (the `<available_skills>` catalog) and `budget` (the listing a
runtime builds, and which skills its budget cuts)."""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import sys
import time
from pathlib import Path
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
    from skills_lsp.core.routing import warm
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
    if args.top_k < 0:
        raise UsageError("--top-k must be 0 or more")
    started = time.time_ns()
    # A plain request over a warm cache is answered from the scorer's saved state (warm.py),
    # without loading the index (nor, for lexical and bm25f, numpy); the full path below saves
    # that state for the next run (quick.py).
    plain = (
        args.scorer is not None  # the default scorer depends on the index
        and not (args.crate or args.explain or tags(args.include_tags) or tags(args.exclude_tags))
        and (args.min_score is None or math.isfinite(args.min_score))
    )
    if plain:
        if args.scorer in ("lexical", "bm25f", "hybrid") and "numpy" not in sys.modules:
            # No scorer multiplies large matrices here (hybrid: one vector by the skills', memory
            # bound): OpenBLAS need not start a thread per core when numpy is imported (30-60 ms
            # of CPU on 2 cores, more on larger machines). lexical and bm25f import no numpy
            # unless the saved state cannot answer.
            os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
        from skills_lsp.core.routing import warm

        spec = SCORERS[args.scorer]
        min_score = spec.default_min_score if args.min_score is None else args.min_score
        scoring = _hybrid_saved if args.scorer == "hybrid" else None
        found = warm.select(
            args.root, args.scorer, args.tokenizer, args.query, args.top_k, min_score, os.getcwd(), scoring
        )
        if found is not None:
            return _print_matches(args, found, min_score, out)
    from skills_lsp.core.routing.scorer import SelectionPolicy, scorer_for
    from skills_lsp.core.workspace.scorers import default_scorer

    index = load_index(args, keep_stamps=plain)
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

    if plain:
        from skills_lsp.core.files.cache import find_config
        from skills_lsp.core.routing import quick

        found_config = find_config(Path(args.root))
        config = None if found_config is None else os.fspath(found_config)
        key = quick.run_key(os.getcwd(), args.root, config, args.scorer, args.tokenizer)
        extra = None
        if args.scorer == "hybrid":
            from skills_lsp.core.routing import hybrid

            extra = hybrid.saved_state
        # A state that cannot be saved costs the next run its time, never this run its answer.
        with contextlib.suppress(Exception):
            quick.save(index, args.scorer, args.tokenizer, key, config, started, extra)
    printed = [(m.score, m.skill.name, str(m.skill.path), m.skill.id) for m in matches]
    explained = [details(m) for m in matches] if args.explain else None
    return _print_matches(args, printed, min_score, out, explained)


def _hybrid_saved(
    columns: warm.Columns, query: str, tokenizer: str, top_k: int, min_score: float
) -> list[tuple[float, str, str, str]]:
    """hybrid.select_saved, imported only now: numpy, onnxruntime and the model then load while
    a child process checks the saved state's stats (warm.select)."""
    from skills_lsp.core.routing import hybrid

    return hybrid.select_saved(columns, query, tokenizer, top_k, min_score)


def _print_matches(
    args: argparse.Namespace,
    matches: list[tuple[float, str, str, str]],
    min_score: float,
    out: TextIO,
    explained: list[dict[str, Any]] | None = None,
) -> int:
    """`select`'s output: each match as (score, name, path, id), with its explanation if asked."""
    if args.format == "json":
        rows: list[dict[str, Any]] = [
            {"name": name, "path": display(path), "id": skill_id, "score": score}
            for score, name, path, skill_id in matches
        ]
        for row, explanation in zip(rows, explained or [], strict=False):
            row["explain"] = explanation
        out.write(json.dumps(rows, indent=2, ensure_ascii=False) + "\n")
        return 0
    if not matches:
        out.write(f"No skill scores {min_score} or more ({args.scorer} scorer) for: {args.query}\n")
        return 0
    for rank, (score, name, path, _) in enumerate(matches, 1):
        out.write(f"{rank}. {score:8.4f}  {name}  ({display(path)})\n")
        if explained:
            out.write(_explanation(explained[rank - 1], score))
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
