"""Routing tests: requests and the skill each should select, run against an index.

A test-query file (`skill-queries.yaml` by default, `schema/skill-queries.schema.json`) holds
`defaults` (policy shared by every case) and `cases`: `query`, `expect` (a name, a list of
acceptable names, or `none`), and optional `top_k`, `min_score`, `include_tags`, `exclude_tags`
and `margin` (the lead the expected skill needs over the runner-up). Every case keeps its source
range so editors can put a result next to it.

The agentskills specification's trigger evals are read too: an `eval_queries.json` in a skill's
`evals/` folder (or beside its SKILL.md) is a list of `{"query": ..., "should_trigger": true |
false}`. A `should_trigger: true` query must select that skill; a `false` one must not (another
skill, or none, may take it). The skill is the one whose SKILL.md sits above the file.
"""

from __future__ import annotations

import json
import math
import os
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skills_lsp.core import schema
from skills_lsp.core.errors import ScorerUnavailable
from skills_lsp.core.index.skill_index import SkillIndex, parsed_from_document
from skills_lsp.core.model import FileKind, Finding, Problem, Range, Severity, SkillFile
from skills_lsp.core.parse.frontmatter import (
    YamlNode,
    duplicate_keys,
    duplicate_message,
    node_at,
    parse_text,
    parse_yaml_file,
    read_limited,
    to_python,
)
from skills_lsp.core.routing.scorer import (
    SCORERS,
    ScorerName,
    SelectionPolicy,
    SkillMatch,
    scorer_for,
    scorer_name,
    select_skills,
)
from skills_lsp.core.routing.tokens import f32
from skills_lsp.core.rules.validate import file_findings

if TYPE_CHECKING:
    import jsonschema

QUERIES_PROBLEM = "invalid-test-queries"  # the rule that reports these (SK003)
QUERIES_SCHEMA = "skill-queries.schema.json"
EVAL_QUERIES_FILE = "eval_queries.json"  # the agentskills trigger evals
_NONE_WORDS = frozenset({"none", "None", "NONE"})

Selector = Callable[[SkillIndex, str, SelectionPolicy], list[SkillMatch]]


@dataclass(frozen=True)
class QueryCase:
    query: str
    expect: tuple[str, ...]  # empty: no skill should be selected
    top_k: int = 1
    min_score: float | None = None  # None: the scorer's own default (scoring.DEFAULT_MIN_SCORE)
    include_tags: tuple[str, ...] = ()
    exclude_tags: tuple[str, ...] = ()
    margin: float | None = None
    id: str | None = None
    paraphrase: bool | None = None  # evaluation only: worded without the skill's own vocabulary
    reject: tuple[str, ...] = ()  # skills that must not be selected (`should_trigger: false`)
    range: Range = field(default=Range.point(0, 0), compare=False)  # the case's `query` text

    @property
    def expects_none(self) -> bool:
        return not self.expect and not self.reject

    def policy(self, scorer: str = "lexical") -> SelectionPolicy:
        # Two results at least, to report the runner-up.
        chosen = scorer_name(scorer)
        minimum = self.min_score if self.min_score is not None else SCORERS[chosen].default_min_score
        return SelectionPolicy(
            max(self.top_k, 2), minimum, list(self.include_tags), list(self.exclude_tags), scorer=chosen
        )

    def ranking_policy(self, scorer: str = "lexical") -> SelectionPolicy:
        """The policy of the case's one ranking: `policy` without the threshold. It gives both the
        selection (its prefix at or above min_score, exactly what selecting with min_score
        returns) and the real runner-up."""
        return replace(self.policy(scorer), min_score=0.0)


@dataclass(frozen=True)
class QueryResult:
    case: QueryCase
    matches: tuple[SkillMatch, ...]  # what the selector selects: at or above min_score
    passed: bool
    reason: str
    # The second-ranked skill with a score above 0, selected or not: a runner-up under min_score
    # still competes, and a margin is measured against it. None: read it from `matches`.
    runner: SkillMatch | None = None

    @property
    def range(self) -> Range:
        """Where the case's query is written."""
        return self.case.range

    @property
    def winner(self) -> SkillMatch | None:
        return self.matches[0] if self.matches else None

    @property
    def runner_up(self) -> SkillMatch | None:
        if self.runner is not None:
            return self.runner
        return self.matches[1] if len(self.matches) > 1 else None

    @property
    def lead(self) -> float | None:
        if self.winner is None:
            return None
        return self.winner.score - (self.runner_up.score if self.runner_up else 0.0)

    def to_json(self) -> dict[str, Any]:
        def match(m: SkillMatch | None) -> dict[str, Any] | None:
            return None if m is None else {"name": m.skill.name, "path": str(m.skill.path), "score": m.score}

        return {
            "query": self.case.query,
            "id": self.case.id,
            "expect": list(self.case.expect) or None,
            "reject": list(self.case.reject) or None,
            "winner": match(self.winner),
            "runner_up": match(self.runner_up),
            "lead": self.lead,
            "passed": self.passed,
            "reason": self.reason,
            "range": self.case.range.to_json(),
        }


def run_case(
    index: SkillIndex, case: QueryCase, select: Selector = select_skills, scorer: str = "lexical"
) -> QueryResult:
    ranking = tuple(select(index, case.query, case.ranking_policy(scorer)))
    return judge_case(case, ranking, scorer)


def judge_case(case: QueryCase, ranking: tuple[SkillMatch, ...], scorer: str = "lexical") -> QueryResult:
    """`case`'s result from its ranking: what selecting with `case.ranking_policy(scorer)` gave
    (scored now, or kept from a run over the same skills: routing/kept_rankings.py)."""
    policy = case.policy(scorer)
    bar = threshold_bar(policy)
    matches = tuple(m for m in ranking if m.score >= bar)
    # A runner-up is second to a selected winner; with nothing selected there is none.
    runner = ranking[1] if matches and len(ranking) > 1 and ranking[1].score > 0 else None

    def result(passed: bool, reason: str) -> QueryResult:
        return QueryResult(case, matches, passed, reason, runner)

    if case.reject:
        chosen = [m.skill.name for m in matches[: case.top_k]]
        taken = next((name for name in chosen if name in case.reject), None)
        if taken is not None:
            return result(False, f"should not trigger `{taken}`, but it is selected")
        if not matches:
            return result(True, "no skill selected, so it does not trigger")
        return result(True, f"`{matches[0].skill.name}` takes it, as it may")
    if case.expects_none:
        if matches:
            return result(False, f"expected no skill, but `{matches[0].skill.name}` is selected")
        return result(True, "no skill selected, as expected")
    names = [m.skill.name for m in matches[: case.top_k]]
    hit = next((i for i, name in enumerate(names) if name in case.expect), None)
    wanted = " or ".join(f"`{n}`" for n in case.expect)
    if hit is None:
        if not matches:
            return result(False, f"expected {wanted}, but no skill scores {policy.min_score} or more")
        where = "first" if case.top_k == 1 else f"in the top {case.top_k}"
        return result(False, f"expected {wanted} {where}, got `{matches[0].skill.name}`")
    if case.margin is not None:
        if hit != 0:
            return result(False, f"a margin needs {wanted} first; it is number {hit + 1}")
        lead = matches[0].score - (runner.score if runner else 0.0)
        if lead < f32(case.margin):
            return result(False, f"leads by {lead:.3f}, less than the margin {case.margin}")
    return result(True, "selected as expected")


def run_cases(
    index: SkillIndex, cases: list[QueryCase], select: Selector = select_skills, scorer: str = "lexical"
) -> list[QueryResult]:
    return [run_case(index, case, select, scorer) for case in cases]


def _expect(value: Any) -> tuple[str, ...]:
    if value is None or (isinstance(value, str) and value in _NONE_WORDS):
        return ()
    if isinstance(value, str):
        return (value,)
    return tuple(str(v) for v in value)


def load_query_file(path: str | Path) -> tuple[list[QueryCase], list[Finding]]:
    """Cases and problems (code SK003, with positions) of a test-query file; never raises."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        message = f"Cannot read the test-query file: {exc}."
        return [], file_findings(file, [Problem(QUERIES_PROBLEM, message, Range.point(0, 0))])
    return parse_query_file(text, str(file))


def query_file_paths(root: Path, query_file: str, files: Sequence[SkillFile]) -> list[Path]:
    """Where `query_file_problems` looks for test-query files (most of them do not exist)."""
    return [Path(name) for name in _query_file_names(root, query_file, files)]


def _query_file_names(root: Path, query_file: str, files: Sequence[SkillFile]) -> list[str]:
    # Strings, not paths: one per skill of a workspace, for a stat that mostly finds nothing.
    names = [os.path.join(root, query_file)]
    for item in files:
        if item.kind is FileKind.AGENT_SKILL:
            names.append(os.path.join(os.path.dirname(item.path), "evals", EVAL_QUERIES_FILE))
    return names


def _may_be_file(name: str) -> bool:
    """False when `name` surely is no regular file; else `Path.is_file` decides (and raises
    what it raises)."""
    try:
        return stat.S_ISREG(os.stat(name).st_mode)
    except (FileNotFoundError, NotADirectoryError):
        return False
    except (OSError, ValueError):
        return True


def query_file_problems(root: Path, query_file: str, files: Sequence[SkillFile]) -> list[Finding]:
    """SK003 of the workspace's test-query file (when there is one) and of each checked skill's
    `evals/eval_queries.json`: what `check` reports of them, as the editor does (no scoring:
    whether the cases pass is `skills-lsp test`'s question)."""
    found: list[Finding] = []
    seen: set[Path] = set()
    for name in _query_file_names(root, query_file, files):
        if not _may_be_file(name):
            continue
        path = Path(name)
        if path in seen or not path.is_file():
            continue
        seen.add(path)
        found.extend(load_query_file(path)[1])
    return found


def parse_query_file(text: str, path: str) -> tuple[list[QueryCase], list[Finding]]:
    """Cases and problems (SK003) of a test-query file's text; never raises."""
    cases, problems = _read_cases(text, path)
    return cases, file_findings(path, problems)


def _read_cases(text: str, path: str) -> tuple[list[QueryCase], list[Problem]]:
    problems: list[Problem] = []
    root: YamlNode | None = None
    if Path(path).name == EVAL_QUERIES_FILE:
        return _read_eval_queries(text, Path(path))
    if path.endswith(".json"):
        data, root, problems = _json_root(text)
        if problems:
            return [], problems
        if _looks_like_trigger_evals(data):  # the spec's trigger evals, under another name
            return _eval_cases(data, root, Path(path))
    else:
        root, yaml_problems = parse_yaml_file(text)
        for p in yaml_problems:
            problems.append(Problem(QUERIES_PROBLEM, p.message.replace("Frontmatter", "The file"), p.range))
        if root is None:
            return [], problems
        data = to_python(root)

    def where(json_path: list[Any]) -> Range:
        return node_at(root, json_path).range if root is not None else Range.point(0, 0)

    validator = schema.validator(QUERIES_SCHEMA)
    bad_cases: set[int] = set()
    for error in sorted(validator.iter_errors(data), key=lambda e: [str(p) for p in e.absolute_path]):
        path_parts = list(error.absolute_path)
        if len(path_parts) >= 2 and path_parts[0] == "cases" and isinstance(path_parts[1], int):
            bad_cases.add(path_parts[1])
        elif path_parts[:1] in (["defaults"], ["cases"]) or not path_parts:
            bad_cases.add(-1)  # nothing can be read case by case
        problems.append(Problem(QUERIES_PROBLEM, _schema_message(error), where(path_parts)))
    for first, duplicate in duplicate_keys(root) if root is not None else []:
        problems.append(Problem(QUERIES_PROBLEM, duplicate_message(first, duplicate), duplicate.range))
    if not isinstance(data, dict) or -1 in bad_cases:
        return [], problems
    if not data.get("cases"):
        message = "The file has no test cases: routing is not under test."
        problems.append(Problem(QUERIES_PROBLEM, message, where(["cases"]), severity=Severity.WARNING))
    defaults = data.get("defaults") or {}
    cases: list[QueryCase] = []
    for i, entry in enumerate(data.get("cases") or []):
        if i in bad_cases or not isinstance(entry, dict):
            continue
        merged = {**defaults, **entry}
        numbers = [float(merged[k]) for k in ("min_score", "margin") if isinstance(merged.get(k), float)]
        if any(not math.isfinite(n) for n in numbers):
            message = "`min_score` and `margin` must be finite numbers."
            problems.append(Problem(QUERIES_PROBLEM, message, where(["cases", i])))
            continue
        cases.append(
            QueryCase(
                query=str(entry["query"]),
                expect=_expect(entry["expect"]),
                top_k=int(merged.get("top_k", 1)),
                min_score=float(merged["min_score"]) if merged.get("min_score") is not None else None,
                include_tags=tuple(merged.get("include_tags", ())),
                exclude_tags=tuple(merged.get("exclude_tags", ())),
                margin=float(merged["margin"]) if merged.get("margin") is not None else None,
                id=entry.get("id"),
                paraphrase=entry.get("paraphrase") if isinstance(entry.get("paraphrase"), bool) else None,
                range=where(["cases", i, "query"]),
            )
        )
    return cases, problems


def _json_root(text: str) -> tuple[Any, YamlNode | None, list[Problem]]:
    """JSON data and, when the position-keeping YAML parser reads the same data, its tree (for
    ranges). JSON is YAML; YAML refuses tabs where JSON allows them as whitespace, and JSON
    strings cannot hold a raw tab, so a space in each tab's place keeps every position."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        rng = Range.point(exc.lineno - 1, exc.colno - 1)
        return None, None, [Problem(QUERIES_PROBLEM, f"Invalid JSON: {exc.msg}.", rng)]
    shadow, shadow_problems = parse_yaml_file(text.replace("\t", " "))
    if shadow is not None and not shadow_problems and to_python(shadow) == data:
        return data, shadow, []
    return data, None, []


def eval_owner(path: Path) -> str | None:
    """The skill an `eval_queries.json` tests: the `name` of the SKILL.md in the folder above
    `evals/` (or beside the file), else that folder's name; None without a SKILL.md there."""
    folder = path.parent.parent if path.parent.name == "evals" else path.parent
    skill = folder / "SKILL.md"
    if not skill.is_file():
        skill = path.parent / "SKILL.md"
        if not skill.is_file():
            return None
        folder = path.parent
    try:
        parsed = parsed_from_document(parse_text(read_limited(skill).decode("utf-8", errors="replace")))
    except OSError:
        return folder.name
    return parsed.name if parsed is not None else folder.name


def _read_eval_queries(text: str, path: Path) -> tuple[list[QueryCase], list[Problem]]:
    """The agentskills trigger evals: a JSON list of `{"query", "should_trigger"}`."""
    data, root, problems = _json_root(text)
    if problems:
        return [], problems
    return _eval_cases(data, root, path)


def _looks_like_trigger_evals(data: Any) -> bool:
    return (
        isinstance(data, list)
        and bool(data)
        and all(isinstance(e, dict) and "query" in e and "should_trigger" in e for e in data)
    )


def _schema_message(error: jsonschema.ValidationError) -> str:
    """A schema error said without the offending value: jsonschema's own message holds its
    repr, which for a wrong top level is the whole file."""
    place = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path).lstrip(".")
    if error.validator == "type":
        kinds: dict[type, str] = {dict: "mapping", list: "list", str: "string"}
        found = kinds.get(type(error.instance), "scalar")
        if not error.absolute_path:
            return (
                f"A test-query file is a mapping with `cases:` (schema/skill-queries.schema.json), "
                f'or a JSON list of trigger evals {{"query": ..., "should_trigger": true or false}}; '
                f"this one is a {found}."
            )
        if len(error.message) > 120:
            return f"`{place}` must be of type {error.validator_value}, not {found}."
    message = error.message
    return (message if len(message) <= 200 else message[:197] + "...") + "."


def _eval_cases(data: Any, root: YamlNode | None, path: Path) -> tuple[list[QueryCase], list[Problem]]:
    problems: list[Problem] = []

    def where(json_path: list[Any]) -> Range:
        return node_at(root, json_path).range if root is not None else Range.point(0, 0)

    owner = eval_owner(path)
    if owner is None:
        message = (
            f"`{EVAL_QUERIES_FILE}` tests the skill it belongs to: put it in a skill's `evals/` folder "
            "(beside no SKILL.md, no skill is under test)."
        )
        return [], [Problem(QUERIES_PROBLEM, message, Range.point(0, 0))]
    if not isinstance(data, list):
        message = 'Trigger evals are a JSON list of {"query": "...", "should_trigger": true or false}.'
        return [], [Problem(QUERIES_PROBLEM, message, where([]))]
    if not data:
        message = "The file has no trigger evals: routing is not under test."
        return [], [Problem(QUERIES_PROBLEM, message, where([]), severity=Severity.WARNING)]
    cases: list[QueryCase] = []
    for i, entry in enumerate(data):
        if not isinstance(entry, dict):
            problems.append(Problem(QUERIES_PROBLEM, "Each trigger eval is an object.", where([i])))
            continue
        query, trigger = entry.get("query"), entry.get("should_trigger")
        if not isinstance(query, str) or not query.strip():
            problems.append(Problem(QUERIES_PROBLEM, "`query` must be a non-empty string.", where([i])))
            continue
        if not isinstance(trigger, bool):
            message = "`should_trigger` must be true or false."
            problems.append(
                Problem(
                    QUERIES_PROBLEM,
                    message,
                    where([i, "should_trigger"] if "should_trigger" in entry else [i]),
                )
            )
            continue
        unknown = sorted(k for k in entry if k not in ("query", "should_trigger"))
        if unknown:
            message = f"Unknown key `{unknown[0]}`: a trigger eval has `query` and `should_trigger`."
            problems.append(
                Problem(QUERIES_PROBLEM, message, where([i, unknown[0]]), severity=Severity.WARNING)
            )
        cases.append(
            QueryCase(
                query=query,
                expect=(owner,) if trigger else (),
                reject=() if trigger else (owner,),
                id=f"{owner}#{i + 1}",
                range=where([i, "query"]),
            )
        )
    return cases, problems


def explain_case(
    index: SkillIndex,
    case: QueryCase,
    top: int = 5,
    scorer: str = "lexical",
    compare: Sequence[ScorerName] | None = None,
) -> str:
    """Markdown: how the top skills score for a test query under `scorer`, and what each scorer
    of `compare` that is installed here ranks first."""
    policy = case.policy(scorer)
    threshold = policy.min_score
    tags = list(case.include_tags), list(case.exclude_tags)
    ranking = SelectionPolicy(top, 0.0, *tags, scorer=policy.scorer)
    matches = select_skills(index, case.query, ranking)
    expected = " or ".join(f"`{n}`" for n in case.expect) or (
        "not " + " or ".join(f"`{n}`" for n in case.reject) if case.reject else "no skill"
    )
    lines = [f"**{case.query}**", "", f"Expected: {expected} ({scorer} scorer, min_score {threshold})", ""]
    if not matches:
        lines.append("No skill scores above 0.")
    explainer = scorer_for(index, policy.scorer)
    for rank, match in enumerate(matches, 1):
        document = index.find_by_id(match.skill.id)
        if document is None:  # pragma: no cover - a match always comes from the index
            continue
        below = " (below min_score)" if match.score < threshold_bar(policy) else ""
        lines.append(f"{rank}. **{match.skill.name}** {match.score:.3f}{below}")
        lines.append(f"   - {explainer.explain(case.query, document)}")
    firsts = []
    for name in SCORERS if compare is None else compare:
        rank_only = SelectionPolicy(1, 0.0, *tags, scorer=name)
        try:
            ranked = select_skills(index, case.query, rank_only)
        except ScorerUnavailable:
            continue  # an optional scorer that is not installed here
        if ranked and ranked[0].score > 0:  # the crate's lexical keeps zero scores at min_score 0
            firsts.append(f"{name} ranks `{ranked[0].skill.name}` first")
        else:
            firsts.append(f"{name} selects nothing")
    lines += ["", "Scorers: " + ", ".join(firsts) + "."]
    return "\n".join(lines)


def threshold_bar(policy: SelectionPolicy) -> float:
    """The score a skill must reach under `policy`: the crate compares `min_score` as float32."""
    return policy.min_score if SCORERS[policy.scorer].unit_scale else f32(policy.min_score)


def expecting(results: list[QueryResult], name: str) -> list[QueryResult]:
    """The results of the test queries that expect the skill `name`."""
    return [r for r in results if name in r.case.expect]
