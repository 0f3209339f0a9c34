#!/usr/bin/env python3
"""Generate a deterministic synthetic workspace of agent skills for benchmarks.

Usage::

    python benchmarks/generate_workspace.py OUT_DIR [--skills 20000] [--seed 1] [--force]

The same arguments always give a byte-identical tree: one ``random.Random(seed)``, no clock, no uuid, no
iteration over sets or other hash-ordered containers. ``--skills N`` is the number of instruction documents
a checker should discover, split as:

* 85 % agentskills layout ``OUT_DIR/skills/<group>/<name>/SKILL.md`` (200 skills per group directory), about
  30 % of them with ``scripts/``, ``references/`` (sometimes ``assets/``, ``LICENSE.txt``) files;
* 12 % adk-skill flat layout ``OUT_DIR/.skills/<group>/<name>.md``;
* the rest (3 %) convention files (``AGENTS.md``, ``CLAUDE.md``, ``GEMINI.md``): ``OUT_DIR/AGENTS.md`` and
  ``OUT_DIR/projects/pNNNN/...``.

About 20 % of the skills of each layout carry one realistic mistake. For the agentskills layout, the kinds
are weighted by the counts of the public 15,728-file corpus (``/work/shared/reference/spec.md`` section 3.5),
with a floor so that every kind shows up. Bodies follow the corpus' length distribution (log-normal, median
175 lines, about 10 % over 500 lines, capped at 1,500).

The root holds ``workspace-manifest.json`` (written last): parameters, counts, and one entry per document
with its path, layout, name, mistake kind, body line count and the files its body references that do not
exist. ``"mistake": null`` means the frontmatter is valid per the specification (and skills-ref 0.1.1).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shutil
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MANIFEST_NAME = "workspace-manifest.json"
GENERATOR_VERSION = 1

AGENTSKILLS_SHARE = 0.85
ADK_SHARE = 0.12
MISTAKE_SHARE = 0.20
RESOURCES_SHARE = 0.30
GROUP_SIZE = 200
CONVENTION_FILES_PER_PROJECT = 3

BODY_MEDIAN_LINES = 175
# P(lines > 500) = 10 %  =>  sigma = ln(500 / 175) / z(0.90)
BODY_SIGMA = math.log(500 / BODY_MEDIAN_LINES) / 1.2816
BODY_MIN_LINES = 6
BODY_MAX_LINES = 1500

# ----------------------------------------------------------------------------------------------------
# Vocabulary
# ----------------------------------------------------------------------------------------------------


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


VERBS = _words(
    "analyze audit automate benchmark build bundle cache check clean compare compile compose convert "
    "debug deploy design detect diff document draft edit encrypt estimate evaluate export extract "
    "fetch filter format generate grade import index inspect lint load merge migrate monitor "
    "normalize optimize orchestrate package parse patch plan plot profile publish query rank redact "
    "refactor render report resolve review rewrite route sample scaffold scan schedule scrape search "
    "secure simplify sketch slice sort split summarize sync test trace transcribe translate triage "
    "tune upgrade validate visualize write"
)

TECH = _words(
    "api ansible aws azure bash bigquery celery changelog chart cli cloudflare cmake commit container "
    "cron csv css dashboard database dataset dbt diagram django docker dockerfile docx dotnet "
    "elasticsearch email embedding eslint excel fastapi figma firebase flask fortran gcp git github "
    "gitlab golang gradle grafana graphql helm html http invoice java javascript jenkins jira jest "
    "json jupyter kafka kotlin kubernetes lambda latex linux llm logs makefile markdown matplotlib "
    "maven migration mongodb mysql nextjs nginx notebook npm numpy oauth openapi pandas pdf "
    "playwright postgres pptx prometheus prompt protobuf pytest python pytorch react redis regex rest "
    "ruby rust s3 sass schema selenium sentry shell slack snowflake spark sql sqlite ssh svg swift "
    "tailwind terraform tensorflow typescript vite vue webhook webpack wordpress xlsx yaml zod"
)

GENERIC = _words(
    "accessibility alert analytics architecture archive asset backlog backup billing brand budget "
    "calendar campaign catalog certificate checklist citation classifier cluster codebase compliance "
    "config contract coverage credential customer deployment dependency diagnostics docs domain "
    "experiment feedback finance forecast form funnel glossary grammar guideline hypothesis image "
    "incident infrastructure interview inventory issue keyword label latency layout lead ledger "
    "license localization meeting metric milestone model network newsletter onboarding outline "
    "payment performance permission persona pipeline pitch policy portfolio postmortem presentation "
    "pricing privacy proposal protocol query quota receipt recipe release repository research resume "
    "risk roadmap runbook sales scene screenshot security sentiment sitemap slide snippet spec sprint "
    "storage story strategy style survey table task template tenant theme ticket timeline token "
    "transcript translation trend tutorial upload user vendor video vulnerability wiki workflow "
    "workspace"
)

ROLES = _words(
    "assistant auditor builder checker converter designer doctor explorer extractor fixer formatter "
    "generator guide helper inspector linter manager mapper migrator monitor optimizer parser planner "
    "reviewer runner scanner scout toolkit tracker tutor validator writer"
)

ADJECTIVES = _words(
    "accessible async automated batch clean compact concise consistent declarative detailed "
    "distributed dynamic efficient incremental interactive legacy lightweight local minimal modular "
    "multilingual offline parallel portable private reproducible responsive robust safe scalable "
    "secure serverless static structured typed versioned"
)

THINGS = _words(
    "files documents reports projects pipelines configs repositories datasets workflows services "
    "dashboards tests templates notebooks schemas endpoints issues changelogs queries migrations "
    "diagrams spreadsheets slides scripts logs releases"
)

# Organisation words for group names; none of them is an adk support dir (references, agents, scripts) or a
# directory the convention walk prunes (build, dist, target, coverage, node_modules, ...).
ORGS = _words(
    "acme contoso globex initech umbrella hooli vandelay wonka tyrell cyberdyne soylent aperture "
    "oscorp nakatomi gringotts stark wayne monarch dunder massive northwind fabrikam tailspin adatum "
    "litware proseware woodgrove lucerne alpine fourth-coffee"
)

# Directory names adk-skill's convention walk prunes; never used for a directory that holds a document.
IGNORED_DIRS = ("target", "node_modules", "dist", "build", "coverage", "next", "git", "hg", "svn")
PACKAGE_DIRS = tuple(w for w in GENERIC if w not in IGNORED_DIRS)

PROPER = {
    "api": "API",
    "aws": "AWS",
    "cli": "CLI",
    "csv": "CSV",
    "css": "CSS",
    "gcp": "GCP",
    "html": "HTML",
    "http": "HTTP",
    "json": "JSON",
    "llm": "LLM",
    "pdf": "PDF",
    "rest": "REST",
    "s3": "S3",
    "sql": "SQL",
    "ssh": "SSH",
    "svg": "SVG",
    "yaml": "YAML",
    "docx": "DOCX",
    "pptx": "PPTX",
    "xlsx": "XLSX",
    "github": "GitHub",
    "gitlab": "GitLab",
    "postgres": "PostgreSQL",
    "mongodb": "MongoDB",
    "mysql": "MySQL",
    "graphql": "GraphQL",
    "javascript": "JavaScript",
    "typescript": "TypeScript",
    "nextjs": "Next.js",
    "fastapi": "FastAPI",
    "pytorch": "PyTorch",
    "tensorflow": "TensorFlow",
    "openapi": "OpenAPI",
    "numpy": "NumPy",
    "bigquery": "BigQuery",
    "oauth": "OAuth",
    "sqlite": "SQLite",
    "latex": "LaTeX",
    "wordpress": "WordPress",
    "jupyter": "Jupyter",
    "kubernetes": "Kubernetes",
    "docker": "Docker",
    "terraform": "Terraform",
    "ansible": "Ansible",
    "azure": "Azure",
    "celery": "Celery",
    "cloudflare": "Cloudflare",
    "django": "Django",
    "elasticsearch": "Elasticsearch",
    "figma": "Figma",
    "firebase": "Firebase",
    "flask": "Flask",
    "golang": "Go",
    "gradle": "Gradle",
    "grafana": "Grafana",
    "java": "Java",
    "jenkins": "Jenkins",
    "jira": "Jira",
    "jest": "Jest",
    "kafka": "Kafka",
    "kotlin": "Kotlin",
    "linux": "Linux",
    "maven": "Maven",
    "nginx": "nginx",
    "playwright": "Playwright",
    "prometheus": "Prometheus",
    "python": "Python",
    "react": "React",
    "redis": "Redis",
    "ruby": "Ruby",
    "rust": "Rust",
    "selenium": "Selenium",
    "sentry": "Sentry",
    "slack": "Slack",
    "snowflake": "Snowflake",
    "spark": "Spark",
    "swift": "Swift",
    "tailwind": "Tailwind",
    "vite": "Vite",
    "vue": "Vue",
    "fortran": "Fortran",
    "excel": "Excel",
    "cmake": "CMake",
    "dotnet": ".NET",
}

SECTION_TITLES = (
    "Overview",
    "When to use this skill",
    "When not to use",
    "Quick start",
    "Prerequisites",
    "Installation",
    "Workflow",
    "Step 1 - Gather context",
    "Step 2 - Plan the change",
    "Step 3 - Apply the change",
    "Step 4 - Validate the output",
    "Examples",
    "Example session",
    "Output format",
    "Configuration",
    "Troubleshooting",
    "Common pitfalls",
    "Best practices",
    "Reference",
    "Error handling",
    "Edge cases",
    "Checklist",
    "Testing",
    "Security notes",
    "Performance tips",
    "FAQ",
    "Limitations",
    "Resources",
    "Notes",
)

LICENSES = (
    "MIT",
    "MIT",
    "Apache-2.0",
    "Apache-2.0",
    "Complete terms in LICENSE.txt",
    "Proprietary. LICENSE.txt has complete terms",
    "BSD-3-Clause",
    "CC-BY-4.0",
)

COMPATIBILITY = (
    "Requires git, docker, jq, and access to the internet",
    "Requires Python 3.10+ and uv",
    "Designed for Claude Code (or similar products)",
    "Requires Node.js 20 or later and npm",
    "Needs network access to api.github.com and a GITHUB_TOKEN",
    "Works on macOS and Linux; Windows needs WSL",
    "Requires the gh CLI, authenticated",
)

TOOLS = ("Read", "Write", "Edit", "Grep", "Glob", "Bash", "WebFetch", "WebSearch", "TodoWrite", "Task")
BASH_TOOLS = ("git:*", "jq:*", "npm:*", "python:*", "pytest:*", "docker:*", "kubectl:*", "gh:*", "uv:*")

UNKNOWN_KEYS = (
    "version",
    "author",
    "tags",
    "category",
    "origin",
    "source",
    "risk",
    "date_added",
    "tools",
    "homepage",
    "triggers",
    "dependencies",
    "argument-hint",
    "user-invocable",
    "disable-model-invocation",
    "model",
    "when_to_use",
)

# (kind, weight). Weights: occurrences in the public corpus, from the error table of spec.md section 3.5;
# "metadata-non-string", "allowed-tools-list" and "allowed-tools-commas" from the facts below that table
# (metadata with non-string values, allowed-tools as a YAML list, comma-separated allowed-tools).
AGENTSKILLS_MISTAKES: tuple[tuple[str, int], ...] = (
    ("unknown-keys", 7208),
    ("flow-list", 2747),
    ("name-mismatch", 1631),
    ("metadata-non-string", 1472),
    ("invalid-chars", 586),
    ("no-frontmatter", 405),
    ("allowed-tools-commas", 394),
    ("uppercase", 277),
    ("allowed-tools-list", 254),
    ("missing-name", 45),
    ("yaml-colon", 41),
    ("empty-description", 16),
    ("missing-description", 7),
    ("bom", 6),
    ("long-description", 5),
    ("duplicate-key", 5),
    ("consecutive-hyphens", 2),
)

# adk-skill (serde_yaml, strict): unknown keys are ignored, lists must be sequences.
ADK_MISTAKES: tuple[tuple[str, int], ...] = (
    ("tags-scalar", 30),
    ("allowed-tools-string", 25),
    ("no-frontmatter", 12),
    ("missing-description", 10),
    ("yaml-colon", 10),
    ("missing-name", 8),
    ("duplicate-key", 5),
)


# ----------------------------------------------------------------------------------------------------
# Helpers
# ----------------------------------------------------------------------------------------------------


def display(word: str) -> str:
    return PROPER.get(word, word)


def third_person(verb: str) -> str:
    if verb.endswith(("s", "sh", "ch", "x", "z")):
        return verb + "es"
    if verb.endswith("y") and verb[-2:-1] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def title_of(name: str) -> str:
    return " ".join(display(w) if w in PROPER else w.capitalize() for w in name.split("-"))


def wrap(text: str, width: int, indent: str) -> list[str]:
    lines: list[str] = []
    current: list[str] = []
    size = 0
    for word in text.split(" "):
        if current and size + 1 + len(word) > width:
            lines.append(indent + " ".join(current))
            current, size = [], 0
        current.append(word)
        size += len(word) + (1 if size else 0)
    if current:
        lines.append(indent + " ".join(current))
    return lines


def allocate(
    total: int, weights: Sequence[tuple[str, int]], floor_share: float = 0.005
) -> list[tuple[str, int]]:
    """Split ``total`` items over kinds: a floor for every kind, the rest by weight (largest remainder)."""
    kinds = sorted(weights, key=lambda kw: -kw[1])
    if total <= 0:
        return [(k, 0) for k, _ in kinds]
    floor = max(1, round(floor_share * total))
    if floor * len(kinds) > total:
        return [(k, 1 if i < total else 0) for i, (k, _) in enumerate(kinds)]
    rest = total - floor * len(kinds)
    weight_sum = sum(w for _, w in kinds)
    exact = [rest * w / weight_sum for _, w in kinds]
    counts = [math.floor(x) for x in exact]
    order = sorted(range(len(kinds)), key=lambda i: (-(exact[i] - counts[i]), i))
    for i in order[: rest - sum(counts)]:
        counts[i] += 1
    return [(k, floor + c) for (k, _), c in zip(kinds, counts, strict=True)]


def assign_kinds(rng: random.Random, n: int, weights: Sequence[tuple[str, int]]) -> list[str | None]:
    plan = allocate(round(MISTAKE_SHARE * n), weights)
    kinds: list[str | None] = [k for k, c in plan for _ in range(c)]
    kinds += [None] * (n - len(kinds))
    rng.shuffle(kinds)
    return kinds


# ----------------------------------------------------------------------------------------------------
# Text pools
# ----------------------------------------------------------------------------------------------------


@dataclass
class Pools:
    sentences: list[str]
    bullets: list[str]
    python: list[str]
    bash: list[str]
    yaml: list[str]
    json: list[str]


def _noun(rng: random.Random) -> str:
    return rng.choice(TECH) if rng.random() < 0.55 else rng.choice(GENERIC)


def _sentence(rng: random.Random, topic: Sequence[str] | None = None) -> str:
    def n() -> str:
        return display(rng.choice(topic)) if topic and rng.random() < 0.6 else display(_noun(rng))

    v = rng.choice(VERBS)
    t = rng.choice(THINGS)
    a = rng.choice(ADJECTIVES)
    r = rng.randrange(12)
    if r == 0:
        return f"{third_person(v).capitalize()} {n()} {t} before they reach production."
    if r == 1:
        return f"Always {v} the {n()} {t} first, then {rng.choice(VERBS)} the {a} {n()} output."
    if r == 2:
        return f"If the {n()} step fails, {v} the {t} again with verbose logging enabled."
    if r == 3:
        return f"Prefer {a} {n()} {t} over ad hoc scripts; they are easier to {v} and review."
    if r == 4:
        return f"The {n()} {t} are stored next to the {n()} config, one file per environment."
    if r == 5:
        return f"Keep each {n()} change small so reviewers can {v} it in one pass."
    if r == 6:
        return f"Use the {a} mode when the {n()} {t} contain more than a few thousand rows."
    if r == 7:
        return f"Do not {v} {n()} {t} that belong to another team without asking first."
    if r == 8:
        return f"This step {third_person(v)} every {n()} entry and reports what changed."
    if r == 9:
        return f"Ask the user which {n()} {t} to {v} when the request is ambiguous."
    if r == 10:
        return f"Record the {n()} version and the command used so the result is reproducible."
    return f"A {a} {n()} setup makes it easy to {v} {t} locally and in CI."


def _bullet(rng: random.Random) -> str:
    v = rng.choice(VERBS)
    r = rng.randrange(6)
    if r == 0:
        return f"{v.capitalize()} the {display(_noun(rng))} {rng.choice(THINGS)}"
    if r == 1:
        return f"**{display(_noun(rng))}**: {rng.choice(ADJECTIVES)} {rng.choice(THINGS)} only"
    if r == 2:
        return f"`{_noun(rng)}.{rng.choice(('json', 'yaml', 'toml', 'md', 'csv'))}` - {v} before use"
    if r == 3:
        return f"Check that the {display(_noun(rng))} {rng.choice(THINGS)} are {rng.choice(ADJECTIVES)}"
    if r == 4:
        return f"Never {v} {display(_noun(rng))} credentials into the repository"
    return _sentence(rng)


def _python_line(rng: random.Random) -> str:
    v, n, m = rng.choice(VERBS), rng.choice(TECH), rng.choice(GENERIC)
    r = rng.randrange(10)
    if r == 0:
        return (
            f"import {rng.choice(('json', 'csv', 'sys', 'pathlib', 'subprocess', 're', 'argparse', 'yaml'))}"
        )
    if r == 1:
        return f"def {v}_{m}(path: str) -> dict:"
    if r == 2:
        return f"    result = {v}_{m}({n}_data)"
    if r == 3:
        return f"    for item in {m}_items:"
    if r == 4:
        return f'        print(f"{{item.name}}: {v}d")'
    if r == 5:
        return f'parser.add_argument("--{m}", default="{n}.json")'
    if r == 6:
        return '    with open(path, encoding="utf-8") as fh:'
    if r == 7:
        return f"        data = json.load(fh)  # {v} {m}"
    if r == 8:
        return f"    return {{'{m}': {m}, 'status': 'ok'}}"
    return ""


def _bash_line(rng: random.Random) -> str:
    v, n, m = rng.choice(VERBS), rng.choice(TECH), rng.choice(GENERIC)
    r = rng.randrange(9)
    if r == 0:
        return f"npm run {v}"
    if r == 1:
        sub = rng.choice(("status", "diff --stat", "log --oneline -20", "fetch origin", "switch -c"))
        return f"git {sub} {m}"
    if r == 2:
        return f"docker build -t {n}-{m}:latest ."
    if r == 3:
        return f"kubectl get pods -n {m} -o wide"
    if r == 4:
        return f"pytest -q tests/test_{m}.py -k {v}"
    if r == 5:
        return f"curl -s https://api.example.com/v1/{m}s | jq '.items[] | .{n}'"
    if r == 6:
        return f"uv run {v}-{m} --config {n}.yaml"
    if r == 7:
        return f"# {v} the {m} {rng.choice(THINGS)}"
    return f"export {m.upper()}_{n.upper()}=1"


def _yaml_line(rng: random.Random) -> str:
    m = rng.choice(GENERIC)
    r = rng.randrange(4)
    if r == 0:
        return f"{m}:"
    if r == 1:
        return f"  {rng.choice(TECH)}: {rng.choice(ADJECTIVES)}"
    if r == 2:
        return f"  - {rng.choice(VERBS)}"
    return f"  {m}_limit: {rng.randrange(1, 500)}"


def _json_line(rng: random.Random) -> str:
    return f'  "{rng.choice(GENERIC)}": "{rng.choice(TECH)}-{rng.choice(VERBS)}",'


def build_pools(rng: random.Random) -> Pools:
    return Pools(
        sentences=[_sentence(rng) for _ in range(6000)],
        bullets=[_bullet(rng) for _ in range(3000)],
        python=[_python_line(rng) for _ in range(1200)],
        bash=[_bash_line(rng) for _ in range(1200)],
        yaml=[_yaml_line(rng) for _ in range(400)],
        json=[_json_line(rng) for _ in range(400)],
    )


# ----------------------------------------------------------------------------------------------------
# Names and descriptions
# ----------------------------------------------------------------------------------------------------


class NameFactory:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.used: set[str] = set()

    def _candidate(self) -> str:
        rng = self.rng
        r = rng.randrange(10)
        if r < 3:
            parts = [_noun(rng), rng.choice(ROLES)]
        elif r < 5:
            parts = [rng.choice(VERBS), _noun(rng)]
        elif r < 7:
            parts = [_noun(rng), _noun(rng), rng.choice(ROLES)]
        elif r < 8:
            parts = [rng.choice(VERBS), _noun(rng), _noun(rng)]
        elif r < 9:
            parts = [_noun(rng), _noun(rng)]
        else:
            parts = [rng.choice(ADJECTIVES), _noun(rng), rng.choice(ROLES)]
        return "-".join(p.replace("_", "-") for p in parts)

    def new(self) -> str:
        for _ in range(30):
            name = self._candidate()
            if name not in self.used and len(name) <= 64:
                break
        else:
            base = self._candidate()[:56]
            n = 2
            while f"{base}-{n}" in self.used:
                n += 1
            name = f"{base}-{n}"
        self.used.add(name)
        return name


def topic_of(rng: random.Random, name: str) -> list[str]:
    words = [w for w in name.split("-") if w not in ROLES and w not in VERBS]
    if not words:
        words = [_noun(rng)]
    return [*words, _noun(rng), _noun(rng)]


def description(rng: random.Random, name: str, topic: Sequence[str], target: int) -> str:
    def n() -> str:
        return display(rng.choice(topic)) if rng.random() < 0.7 else display(_noun(rng))

    verbs = [third_person(v) for v in rng.sample(VERBS, 3)]
    t, t2 = rng.choice(THINGS), rng.choice(THINGS)
    r = rng.randrange(5)
    if r == 0:
        what = f"{verbs[0].capitalize()} {n()} {t} and {verbs[1]} the results as {n()} {t2}."
    elif r == 1:
        what = f"{verbs[0].capitalize()}, {verbs[1]} and {verbs[2]} {rng.choice(ADJECTIVES)} {n()} {t}."
    elif r == 2:
        what = f"Comprehensive {n()} {t} toolkit with support for {n()}, {n()} and {n()}."
    elif r == 3:
        what = f"Helps {rng.choice(VERBS)} {n()} {t} using {n()} and {n()}."
    else:
        what = f"Guide for {rng.choice(ADJECTIVES)} {n()} {t} in {n()} projects."
    r = rng.randrange(4)
    if r == 0:
        when = f"Use when the user asks to {rng.choice(VERBS)} {n()} {t}."
    elif r == 1:
        when = f"Use when working with {n()} {t}, {n()} or {n()} {t2}."
    elif r == 2:
        when = f"Use this skill whenever the user mentions {n()}, {n()} or wants to {rng.choice(VERBS)} {t2}."
    else:
        when = f"Use it to {rng.choice(VERBS)} {n()} {t} before a release or a review."
    parts = [what]
    size = len(what)
    if size < 50 or target - size > 30:
        parts.append(when)
        size += 1 + len(when)
    while size < target:
        r = rng.randrange(6)
        if r == 0:
            extra = f"Supports {n()}, {n()} and {n()}."
        elif r == 1:
            extra = f"Includes helper scripts to {rng.choice(VERBS)} and {rng.choice(VERBS)} {n()} {t}."
        elif r == 2:
            extra = f"Requires {n()} to be installed and configured."
        elif r == 3:
            extra = f"Do not use for {n()} {t2}; prefer the {NameFactory(rng)._candidate()} skill instead."
        elif r == 4:
            extra = f"Works offline and never uploads {n()} data."
        else:
            extra = _sentence(rng, topic)
        parts.append(extra)
        size += 1 + len(extra)
    text = " ".join(parts)
    if len(text) > max(600, target):
        cut = text.rfind(" ", 0, max(600, target) - 1)
        text = text[:cut].rstrip(",;") + "."
    return text


def yaml_description(rng: random.Random, text: str, key: str = "description") -> list[str]:
    """Render a description in one of the styles seen in the corpus (all valid YAML)."""
    r = rng.random()
    if r < 0.70:
        return [f"{key}: {text}"]
    if r < 0.82:
        if rng.random() < 0.3:
            words = text.split(" ")
            i = rng.randrange(len(words))
            words[i] = '\\"' + words[i].rstrip(".,;") + '\\"' + words[i][len(words[i].rstrip(".,;")) :]
            return [f'{key}: "{" ".join(words)}"']
        return [f'{key}: "{text}"']
    if r < 0.85:
        return [f"{key}: '" + text.replace("'", "''") + "'"]
    if r < 0.93:
        return [f"{key}: {rng.choice(('>', '>', '>-'))}", *wrap(text, 78, "  ")]
    if r < 0.97:
        return [f"{key}: |", *wrap(text, 78, "  ")]
    # plain scalar continued on indented lines
    lines = wrap(text, 90, "  ")
    return [f"{key}: {lines[0].strip()}", *lines[1:]]


# ----------------------------------------------------------------------------------------------------
# Bodies
# ----------------------------------------------------------------------------------------------------


def body_length(rng: random.Random) -> int:
    n = round(rng.lognormvariate(math.log(BODY_MEDIAN_LINES), BODY_SIGMA))
    return min(BODY_MAX_LINES, max(BODY_MIN_LINES, n))


def _ref_lines(rng: random.Random, path: str) -> list[str]:
    label = path.rsplit("/", 1)[-1]
    if path.endswith(".py"):
        r = rng.randrange(3)
        if r == 0:
            return [
                "```bash",
                f"python {path} --input input.{rng.choice(('pdf', 'csv', 'json'))} --out out/",
                "```",
            ]
        if r == 1:
            return [f"Run `python {path} --help` to list every option."]
        return [f"The helper [{label}]({path}) does the heavy lifting; read it before changing the flags."]
    if path.endswith(".sh"):
        return (
            ["```bash", f"bash {path}", "```"]
            if rng.random() < 0.5
            else [f"Execute `{path}` from the skill root."]
        )
    r = rng.randrange(4)
    if r == 0:
        return [f"See [{label}]({path}) for the full reference."]
    if r == 1:
        return [f"- Details: [{label.rsplit('.', 1)[0].lower()} guide]({path})"]
    if r == 2:
        return [f"Read `{path}` when the task needs the complete field list."]
    return [f"For edge cases, consult {path} (loaded on demand)."]


def body(
    rng: random.Random,
    pools: Pools,
    name: str,
    topic: Sequence[str],
    target: int,
    refs: Sequence[str],
) -> list[str]:
    title = title_of(name)
    lines: list[str] = [f"# {title}", ""]
    lines.append(
        f"This skill helps {rng.choice(VERBS)} {display(topic[0])} {rng.choice(THINGS)}. "
        + _sentence(rng, topic)
    )
    lines.append("")
    pending = list(refs)
    # spread references over the expected number of blocks
    expected_blocks = max(1, target // 6)
    slots = sorted(rng.randrange(expected_blocks) for _ in pending)
    block = 0
    sentences, bullets = pools.sentences, pools.bullets
    choices = rng.choices
    stop = target - 5  # blocks overshoot by about this much on average
    while len(lines) < stop:
        while slots and slots[0] <= block and pending:
            slots.pop(0)
            lines += _ref_lines(rng, pending.pop(0))
            lines.append("")
        block += 1
        r = rng.random()
        if r < 0.16:
            if rng.random() < 0.5:
                lines.append(f"## {rng.choice(SECTION_TITLES)}")
            else:
                lines.append(
                    f"## {rng.choice(VERBS).capitalize()} {display(rng.choice(topic))} {rng.choice(THINGS)}"
                )
            lines.append("")
        elif r < 0.22:
            lines.append(f"### {rng.choice(SECTION_TITLES)}")
            lines.append("")
        elif r < 0.50:
            k = rng.randrange(1, 4)
            if rng.random() < 0.5:
                lines.append(" ".join(choices(sentences, k=k + 1)))
            else:
                lines += choices(sentences, k=k)
            if rng.random() < 0.3:
                lines.append(_sentence(rng, topic))
            lines.append("")
        elif r < 0.70:
            items = choices(bullets, k=rng.randrange(3, 9))
            if rng.random() < 0.3:
                lines += [f"{i}. {b}" for i, b in enumerate(items, 1)]
            else:
                lines += ["- " + b for b in items]
            lines.append("")
        elif r < 0.90:
            lang = rng.choice(("bash", "bash", "python", "python", "yaml", "json", ""))
            n = rng.randrange(2, 22)
            lines.append("```" + lang)
            if lang == "python":
                lines += choices(pools.python, k=n)
            elif lang == "yaml":
                lines += choices(pools.yaml, k=n)
            elif lang == "json":
                lines += ["{", *choices(pools.json, k=n), '  "done": true', "}"]
            else:
                lines += choices(pools.bash, k=n)
            lines += ["```", ""]
        elif r < 0.95:
            cols = rng.sample(("Option", "Default", "Description", "Type", "Example", "Required"), 3)
            lines.append("| " + " | ".join(cols) + " |")
            lines.append("|" + "---|" * len(cols))
            for _ in range(rng.randrange(2, 8)):
                lines.append(
                    f"| `{rng.choice(GENERIC)}` | {rng.choice(ADJECTIVES)} | {rng.choice(bullets)} |"
                )
            lines.append("")
        else:
            lines.append(f"> **Note:** {rng.choice(sentences)}")
            lines.append("")
            if rng.random() < 0.3:
                lines.append(
                    f"More at https://docs.example.com/{rng.choice(TECH)}/{rng.choice(VERBS)}#usage."
                )
                lines.append("")
    if pending:
        lines += ["## Resources", ""]
        for path in pending:
            lines += _ref_lines(rng, path)
        lines.append("")
    while lines and lines[-1] == "":
        lines.pop()
    return lines


def resource_content(rng: random.Random, pools: Pools, path: str, topic: Sequence[str]) -> str:
    if path.endswith(".py"):
        lines = ["#!/usr/bin/env python3", f'"""{_sentence(rng, topic)}"""', "", "import json", ""]
        lines += rng.choices(pools.python, k=rng.randrange(15, 200))
        lines += ["", 'if __name__ == "__main__":', "    main()"]
    elif path.endswith(".sh"):
        lines = [
            "#!/usr/bin/env bash",
            "set -euo pipefail",
            "",
            *rng.choices(pools.bash, k=rng.randrange(5, 60)),
        ]
    elif path.endswith(".txt"):
        lines = [
            "Copyright (c) the skill authors.",
            "",
            *rng.choices(pools.sentences, k=rng.randrange(5, 30)),
        ]
    else:
        name = path.rsplit("/", 1)[-1].rsplit(".", 1)[0].lower()
        lines = body(rng, pools, name, topic, rng.randrange(30, 400), ())
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------------------------------
# Workspace
# ----------------------------------------------------------------------------------------------------


@dataclass
class Stats:
    documents: dict[str, int] = field(default_factory=lambda: {"agentskills": 0, "adk": 0, "convention": 0})
    document_bytes: dict[str, int] = field(
        default_factory=lambda: {"agentskills": 0, "adk": 0, "convention": 0}
    )
    support_files: int = 0
    support_bytes: int = 0
    mistakes: dict[str, dict[str, int]] = field(default_factory=lambda: {"agentskills": {}, "adk": {}})
    missing_refs: int = 0
    long_bodies: int = 0


class Writer:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.made: set[str] = set()

    def write(self, rel: str, text: str) -> int:
        path = os.path.join(self.root, rel)
        parent = os.path.dirname(path)
        if parent not in self.made:
            os.makedirs(parent, exist_ok=True)
            self.made.add(parent)
        data = text.encode("utf-8")
        with open(path, "wb") as fh:
            fh.write(data)
        return len(data)


def _group_names(rng: random.Random, count: int, suffix: str) -> list[str]:
    names: list[str] = []
    used: set[str] = set()
    for i in range(count):
        base = f"{rng.choice(ORGS)}-{rng.choice(TECH + GENERIC)}-{suffix}"
        name = base if base not in used else f"{base}-{i}"
        used.add(name)
        names.append(name)
    return names


def _metadata_strings(rng: random.Random, topic: Sequence[str]) -> list[str]:
    lines = ["metadata:"]
    pool = [
        f"  author: {rng.choice(ORGS)}-labs",
        f'  version: "{rng.randrange(1, 4)}.{rng.randrange(0, 10)}"',
        f"  category: {rng.choice(GENERIC)}",
        f"  short-description: {rng.choice(VERBS).capitalize()} {display(topic[0])} {rng.choice(THINGS)}",
        f"  homepage: https://github.com/{rng.choice(ORGS)}/{topic[0]}-skills",
        f'  tags: "{topic[0]}, {rng.choice(GENERIC)}"',
    ]
    lines += rng.sample(pool, rng.randrange(1, 5))
    return lines


def _unknown_key_lines(rng: random.Random, topic: Sequence[str]) -> list[str]:
    out: list[str] = []
    for key in rng.sample(UNKNOWN_KEYS, rng.randrange(1, 4)):
        if key == "version":
            out.append(rng.choice(("version: 1.0.0", 'version: "1.0"', "version: 2", "version: 0.3.1")))
        elif key == "author":
            out.append(
                rng.choice(("author: Jane Doe", f"author: {rng.choice(ORGS)}-labs", "author: '@devrel'"))
            )
        elif key in ("tags", "triggers"):
            out.append(f"{key}:")
            out += [f"  - {w}" for w in (topic[0], rng.choice(GENERIC), rng.choice(VERBS))]
        elif key == "category":
            out.append(f"category: {rng.choice(GENERIC)}")
        elif key == "origin":
            out.append("origin: ECC")
        elif key == "source":
            out.append(
                rng.choice(("source: community", f"source: https://github.com/{rng.choice(ORGS)}/skills"))
            )
        elif key == "risk":
            out.append(f"risk: {rng.choice(('low', 'safe', 'medium', 'unknown'))}")
        elif key == "date_added":
            d = f"2025-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}"
            out.append(f"date_added: {d}" if rng.random() < 0.5 else f'date_added: "{d}"')
        elif key == "tools":
            out.append(f"tools: {', '.join(rng.sample(TOOLS, 3))}")
        elif key == "homepage":
            out.append(f"homepage: https://example.com/{topic[0]}")
        elif key == "dependencies":
            out.append("dependencies:")
            out += [f"  - {rng.choice(TECH)}>={rng.randrange(1, 9)}.0" for _ in range(2)]
        elif key == "argument-hint":
            out.append(f'argument-hint: "[{rng.choice(GENERIC)}-path]"')
        elif key in ("user-invocable", "disable-model-invocation"):
            out.append(f"{key}: {rng.choice(('true', 'false'))}")
        elif key == "model":
            out.append(f"model: {rng.choice(('sonnet', 'opus', 'haiku', 'inherit'))}")
        else:
            out.append(f"when_to_use: When the user wants to {rng.choice(VERBS)} {display(topic[0])} files.")
    return out


def _allowed_tools_string(rng: random.Random) -> str:
    tools = [f"Bash({t})" for t in rng.sample(BASH_TOOLS, rng.randrange(0, 3))]
    tools += rng.sample(TOOLS, rng.randrange(1, 4))
    return " ".join(tools)


def _plan_resources(rng: random.Random, topic: Sequence[str], has_dirs: bool) -> tuple[list[str], list[str]]:
    """Return (referenced paths, paths that exist). Referenced files are mostly created."""
    if not has_dirs:
        if rng.random() < 0.05:  # a body that mentions a file nobody shipped
            return [rng.choice(("scripts/run.py", "references/GUIDE.md", "references/REFERENCE.md"))], []
        return [], []
    t = topic[0].replace("-", "_")
    v = rng.choice(VERBS)
    candidates = [
        f"scripts/{v}_{t}.py",
        "scripts/run.py",
        f"scripts/{rng.choice(VERBS)}.sh",
        "scripts/validate.py",
        "references/GUIDE.md",
        "references/REFERENCE.md",
        f"references/{t.upper()}.md",
        "references/FORMS.md",
        "references/api/ENDPOINTS.md",
        "assets/templates/report.md",
    ]
    weights = [8, 5, 3, 3, 8, 5, 4, 2, 1, 1]
    chosen: list[str] = []
    for _ in range(rng.randrange(1, 6)):
        p = rng.choices(candidates, weights=weights)[0]
        if p not in chosen:
            chosen.append(p)
    existing = [p for p in chosen if rng.random() >= 0.07]
    # some shipped files are not mentioned anywhere in the body
    if rng.random() < 0.2:
        extra = rng.choice(("references/NOTES.md", "scripts/helpers.py", "assets/template.md"))
        if extra not in chosen:
            existing.append(extra)
    return chosen, existing


def _agentskills_skill(
    rng: random.Random,
    pools: Pools,
    names: NameFactory,
    group: str,
    used_dirs: set[str],
    mistake: str | None,
    stats: Stats,
    writer: Writer,
) -> dict[str, Any]:
    base = names.new()
    topic = topic_of(rng, base)
    dirname, name = base, base
    if mistake == "name-mismatch":
        r = rng.random()
        if r < 0.4:
            name = f"{rng.choice(ORGS)}-{base}"[:64].rstrip("-")
        elif r < 0.7 and "-" in base:
            name = base.rsplit("-", 1)[0] + "-" + rng.choice(ROLES)
            if name == base:
                name = base + "-skill"
        else:
            name = base + "-skill"
    elif mistake == "invalid-chars":
        name = base.replace("-", "_") if "-" in base else base + "_" + rng.choice(ROLES)
        if rng.random() < 0.2:
            name = name.replace("_", ".", 1)
        dirname = name
    elif mistake == "uppercase":
        if rng.random() < 0.6:
            name = "-".join(
                w.upper() if PROPER.get(w, "").isupper() else w.capitalize() for w in base.split("-")
            )
        else:
            name = "".join(w.capitalize() for w in base.split("-"))
        if name == base:
            name = base.upper()
        dirname = name
    elif mistake == "consecutive-hyphens":
        name = base.replace("-", "--", 1) if "-" in base else base + "--" + rng.choice(ROLES)
        dirname = name
    if dirname.lower() in used_dirs:  # cannot happen with unique bases, but keep case-insensitive FS safe
        dirname = f"{dirname}-{len(used_dirs)}"
    used_dirs.add(dirname.lower())
    rel_dir = f"skills/{group}/{dirname}"

    target = round(rng.triangular(50, 600, 120))
    if mistake == "long-description":
        target = rng.randrange(1030, 1500)
    desc = description(rng, name, topic, target)
    if mistake == "long-description" and len(desc) <= 1024:
        desc += " " + " ".join(rng.choices(pools.sentences, k=8))

    fm: list[str] = []
    name_line = f"name: {name}"
    if mistake == "yaml-colon":
        first, _, rest = desc.partition(". ")
        desc_lines = [f"description: {first}. Use this skill when: {rest or 'the user asks for it.'}"]
    elif mistake == "empty-description":
        desc_lines = [rng.choice(('description: ""', "description:"))]
    elif mistake == "missing-description":
        desc_lines = []
    elif mistake in ("long-description", "duplicate-key"):
        desc_lines = [f"description: {desc}"]
    else:
        desc_lines = yaml_description(rng, desc)
    if mistake != "missing-name":
        fm.append(name_line)
    if rng.random() < 0.05:
        fm = desc_lines + fm
    else:
        fm += desc_lines
    if mistake == "duplicate-key":
        if rng.random() < 0.7:
            fm.append(f"description: {description(rng, name, topic, 120)}")
        else:
            fm.append(name_line)

    license_value: str | None = None
    if rng.random() < 0.35:
        license_value = rng.choice(LICENSES)
        fm.append(f"license: {license_value}")
    if rng.random() < 0.08:
        fm.append(f"compatibility: {rng.choice(COMPATIBILITY)}")
    if mistake == "metadata-non-string":
        fm += [
            "metadata:",
            f"  version: {rng.randrange(1, 3)}.{rng.randrange(0, 10)}",
            f"  priority: {rng.randrange(1, 10)}",
            f"  verified: {rng.choice(('true', 'false'))}",
        ]
        if rng.random() < 0.5:
            fm += ["  keywords:", f"    - {topic[0]}", f"    - {topic[1]}"]
        else:
            fm += ["  openclaw:", '    emoji: "\U0001f527"', "    requires:", "      bins:", "        - jq"]
    elif rng.random() < 0.17:
        fm += _metadata_strings(rng, topic)
    if mistake == "allowed-tools-list":
        fm.append("allowed-tools:")
        fm += [f"  - {t}" for t in rng.sample(TOOLS, rng.randrange(2, 5))]
    elif mistake == "allowed-tools-commas":
        fm.append(f"allowed-tools: {', '.join(rng.sample(TOOLS, rng.randrange(2, 6)))}")
    elif mistake == "flow-list":
        r = rng.random()
        if r < 0.45:
            fm.append(f"allowed-tools: [{', '.join(rng.sample(TOOLS, rng.randrange(2, 5)))}]")
        elif r < 0.9:
            fm.append(f"tags: [{topic[0]}, {rng.choice(GENERIC)}, {rng.choice(VERBS)}]")
        else:
            fm.append("metadata: {}")
    elif rng.random() < 0.06:
        fm.append(f"allowed-tools: {_allowed_tools_string(rng)}")
    if mistake == "unknown-keys":
        fm += _unknown_key_lines(rng, topic)

    refs, existing = _plan_resources(rng, topic, rng.random() < RESOURCES_SHARE)
    if license_value and "LICENSE.txt" in license_value and (existing or rng.random() < 0.5):
        existing.append("LICENSE.txt")
    n_body = body_length(rng)
    body_lines = body(rng, pools, name, topic, n_body, refs)

    if mistake == "no-frontmatter":
        lines = body_lines
        if rng.random() < 0.2:  # frontmatter that does not start on the first line
            lines = ["", "---", *fm, "---", "", *body_lines]
    else:
        lines = ["---", *fm, "---", "", *body_lines]
    text = "\n".join(lines) + "\n"
    crlf = mistake is None and rng.random() < 0.01
    if crlf:
        text = text.replace("\n", "\r\n")
    if mistake == "bom":
        text = "\ufeff" + text

    rel = f"{rel_dir}/SKILL.md"
    stats.document_bytes["agentskills"] += writer.write(rel, text)
    for res in existing:
        stats.support_bytes += writer.write(f"{rel_dir}/{res}", resource_content(rng, pools, res, topic))
        stats.support_files += 1
    missing = [p for p in refs if p not in existing]
    stats.missing_refs += len(missing)
    entry: dict[str, Any] = {
        "path": rel,
        "layout": "agentskills",
        "name": name if mistake != "missing-name" else None,
        "mistake": mistake,
        "body_lines": len(body_lines),
    }
    if missing:
        entry["missing_refs"] = missing
    if crlf:
        entry["crlf"] = True
    return entry


def _adk_skill(
    rng: random.Random,
    pools: Pools,
    names: NameFactory,
    group: str,
    mistake: str | None,
    stats: Stats,
    writer: Writer,
) -> dict[str, Any]:
    name = names.new()
    topic = topic_of(rng, name)
    desc = description(rng, name, topic, round(rng.triangular(50, 400, 140)))
    fm: list[str] = []
    if mistake != "missing-name":
        fm.append(f"name: {name}")
    if mistake == "yaml-colon":
        first, _, rest = desc.partition(". ")
        fm.append(f"description: {first}. Use when: {rest or 'the user asks.'}")
    elif mistake != "missing-description":
        fm += yaml_description(rng, desc)
    if mistake == "duplicate-key":
        fm.append(f"name: {name}")
    fm.append(
        f'version: "{rng.randrange(1, 3)}.{rng.randrange(0, 4)}"' if rng.random() < 0.5 else 'version: "1.0"'
    )
    tags = [topic[0], rng.choice(GENERIC), rng.choice(TECH)][: rng.randrange(1, 4)]
    if mistake == "tags-scalar":
        fm.append(f"tags: {tags[0]}")
    elif rng.random() < 0.2:
        fm.append(f"tags: [{', '.join(tags)}]")
    else:
        fm += ["tags:", *[f"  - {t}" for t in tags]]
    tools = rng.sample(TOOLS, rng.randrange(1, 4))
    if mistake == "allowed-tools-string":
        fm.append(f"allowed-tools: {' '.join(tools)}")
    elif rng.random() < 0.7:
        fm += ["allowed-tools:", *[f"  - {t}" for t in tools]]
    if rng.random() < 0.6:
        fm += [
            "references:",
            f"  - https://docs.example.com/{topic[0]}/{rng.choice(VERBS)}",
            f"  - docs/{rng.choice(GENERIC)}.md",
        ]
    if rng.random() < 0.15:
        fm.append(f"trigger: {rng.choice(('true', 'false'))}")
    if rng.random() < 0.15:
        fm.append(
            f"hint: {rng.choice(VERBS).capitalize()} {display(topic[0])} {rng.choice(THINGS)} on request"
        )
    if rng.random() < 0.2:
        fm.append(f"license: {rng.choice(LICENSES[:4])}")
    body_lines = body(rng, pools, name, topic, body_length(rng), ())
    lines = body_lines if mistake == "no-frontmatter" else ["---", *fm, "---", "", *body_lines]
    rel = f".skills/{group}/{name}.md"
    stats.document_bytes["adk"] += writer.write(rel, "\n".join(lines) + "\n")
    return {
        "path": rel,
        "layout": "adk",
        "name": name if mistake != "missing-name" else None,
        "mistake": mistake,
        "body_lines": len(body_lines),
    }


def _convention_paths(rng: random.Random, count: int) -> list[str]:
    paths: list[str] = []
    if count > 0:
        paths.append("AGENTS.md")
    project = 0
    while len(paths) < count:
        p = f"projects/p{project:04d}"
        pkg = rng.choice(PACKAGE_DIRS)
        slots = [f"{p}/AGENTS.md"]
        r = rng.random()
        if r < 0.4:
            slots.append(f"{p}/CLAUDE.md")
        elif r < 0.5:
            slots.append(f"{p}/GEMINI.md")
        slots.append(f"{p}/packages/{pkg}/AGENTS.md")
        if rng.random() < 0.5:
            slots.append(f"{p}/services/{rng.choice(TECH)}-api/src/CLAUDE.md")
        for s in slots[:CONVENTION_FILES_PER_PROJECT]:
            if len(paths) < count:
                paths.append(s)
        project += 1
    return paths


def _convention_file(
    rng: random.Random, pools: Pools, rel: str, stats: Stats, writer: Writer
) -> dict[str, Any]:
    file_name = rel.rsplit("/", 1)[-1]
    kind = file_name[:-3].lower()
    topic = [_noun(rng), _noun(rng), _noun(rng)]
    lines: list[str] = []
    if rng.random() < 0.05:
        lines += ["---", f"description: Project instructions for the {display(topic[0])} service", "---", ""]
    if kind == "claude":
        lines += [
            "# CLAUDE.md",
            "",
            "This file provides guidance to Claude Code (claude.ai/code) when working with code in this "
            "repository.",
            "",
        ]
    else:
        lines += [f"# {file_name}" if rng.random() < 0.5 else f"# {title_of(topic[0])} project", ""]
    for section in (
        "Project overview",
        "Setup commands",
        "Code style",
        "Testing instructions",
        "PR instructions",
    ):
        if rng.random() < 0.8:
            lines += [f"## {section}", ""]
            if section in ("Setup commands", "Testing instructions"):
                lines += [f"- `{c}`" for c in rng.choices(pools.bash, k=rng.randrange(2, 8))]
            else:
                lines += ["- " + b for b in rng.choices(pools.bullets, k=rng.randrange(2, 10))]
            lines.append("")
    if rng.random() < 0.5:
        lines += body(rng, pools, topic[0], topic, rng.randrange(10, 200), ())[2:]
    text = "\n".join(lines).rstrip("\n") + "\n"
    stats.document_bytes["convention"] += writer.write(rel, text)
    return {
        "path": rel,
        "layout": "convention",
        "name": kind if kind != "agent" else "agents",
        "mistake": None,
    }


def generate(out_dir: Path | str, skills: int = 20000, seed: int = 1) -> dict[str, Any]:
    """Write the workspace into ``out_dir`` (which must not exist or be empty); return the manifest."""
    if skills < 1:
        raise ValueError("--skills must be at least 1")
    root = Path(out_dir)
    if root.exists() and any(root.iterdir()):
        raise FileExistsError(f"{root} exists and is not empty")
    root.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    pools = build_pools(rng)
    names = NameFactory(rng)
    writer = Writer(root)
    stats = Stats()

    n_agent = round(AGENTSKILLS_SHARE * skills)
    n_adk = round(ADK_SHARE * skills)
    n_conv = skills - n_agent - n_adk
    agent_kinds = assign_kinds(rng, n_agent, AGENTSKILLS_MISTAKES)
    adk_kinds = assign_kinds(rng, n_adk, ADK_MISTAKES)
    agent_groups = _group_names(rng, math.ceil(n_agent / GROUP_SIZE), "skills")
    adk_groups = _group_names(rng, math.ceil(n_adk / GROUP_SIZE), "team")

    files: list[dict[str, Any]] = []
    used_dirs: dict[str, set[str]] = {}
    for i, mistake in enumerate(agent_kinds):
        group = agent_groups[i // GROUP_SIZE]
        entry = _agentskills_skill(
            rng, pools, names, group, used_dirs.setdefault(group, set()), mistake, stats, writer
        )
        files.append(entry)
    for i, mistake in enumerate(adk_kinds):
        files.append(_adk_skill(rng, pools, names, adk_groups[i // GROUP_SIZE], mistake, stats, writer))
    for rel in _convention_paths(rng, n_conv):
        files.append(_convention_file(rng, pools, rel, stats, writer))

    for entry in files:
        layout = entry["layout"]
        stats.documents[layout] += 1
        if entry["mistake"]:
            bucket = stats.mistakes[layout]
            bucket[entry["mistake"]] = bucket.get(entry["mistake"], 0) + 1
        if entry.get("body_lines", 0) > 500:
            stats.long_bodies += 1

    manifest: dict[str, Any] = {
        "generator": "benchmarks/generate_workspace.py",
        "generator_version": GENERATOR_VERSION,
        "skills": skills,
        "seed": seed,
        "counts": {
            "documents": len(files),
            "by_layout": stats.documents,
            "document_bytes": stats.document_bytes,
            "support_files": stats.support_files,
            "support_bytes": stats.support_bytes,
            "total_files": len(files) + stats.support_files,
            "total_bytes": sum(stats.document_bytes.values()) + stats.support_bytes,
            "bodies_over_500_lines": stats.long_bodies,
            "missing_refs": stats.missing_refs,
            "mistakes": {k: dict(sorted(v.items())) for k, v in stats.mistakes.items()},
        },
        "files": files,
    }
    (root / MANIFEST_NAME).write_text(
        json.dumps(manifest, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n",
        encoding="utf-8",
    )
    return manifest


def load_manifest(root: Path | str) -> dict[str, Any] | None:
    path = Path(root) / MANIFEST_NAME
    if not path.is_file():
        return None
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def format_counts(manifest: dict[str, Any]) -> str:
    c = manifest["counts"]
    by = c["by_layout"]
    db = c["document_bytes"]
    mib = 1024 * 1024
    invalid = {k: sum(v.values()) for k, v in c["mistakes"].items()}
    rows = [
        f"documents:     {c['documents']:>8,}  "
        f"({c['total_bytes'] / mib:,.1f} MiB in {c['total_files']:,} files)",
        f"  agentskills: {by['agentskills']:>8,}  {db['agentskills'] / mib:>8.1f} MiB  "
        f"({invalid['agentskills']:,} with a mistake)",
        f"  adk:         {by['adk']:>8,}  {db['adk'] / mib:>8.1f} MiB  ({invalid['adk']:,} with a mistake)",
        f"  convention:  {by['convention']:>8,}  {db['convention'] / mib:>8.1f} MiB",
        f"support files: {c['support_files']:>8,}  {c['support_bytes'] / mib:>8.1f} MiB  "
        f"({c['missing_refs']:,} referenced files missing)",
        f"bodies > 500 lines: {c['bodies_over_500_lines']:,}",
    ]
    for layout in ("agentskills", "adk"):
        kinds = sorted(c["mistakes"][layout].items(), key=lambda kv: (-kv[1], kv[0]))
        rows.append(f"mistakes ({layout}): " + (", ".join(f"{k} {v}" for k, v in kinds) or "none"))
    return "\n".join(rows)


def read_manifest(workspace: Path) -> dict[str, Any] | None:
    """The manifest `generate` wrote into `workspace`, or None if there is none."""
    path = workspace / MANIFEST_NAME
    if not path.is_file():
        return None
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


class WorkspaceError(Exception):
    """A workspace to benchmark cannot be used as it is; the message says what to do."""


def prepare_workspace(
    given: str | Path | None, cache_dir: Path, skills: int, seed: int, log: Callable[[str], None]
) -> tuple[Path, bool, dict[str, Any] | None, float | None]:
    """The workspace a benchmark runs on: `given` as it is, else `cache_dir/<skills>-<seed>`,
    generated once (into a partial folder, renamed when complete) and reused while the generator
    version matches. Returns (workspace, generated by this call, manifest or None, seconds or None)."""
    if given is not None:
        workspace = Path(given).resolve()
        if not workspace.is_dir():
            raise WorkspaceError(f"--workspace {workspace} is not a directory")
        return workspace, False, read_manifest(workspace), None
    workspace = (cache_dir / f"{skills}-{seed}").resolve()
    if workspace.exists():
        manifest = read_manifest(workspace)
        if manifest is None:
            raise WorkspaceError(f"{workspace} exists but has no {MANIFEST_NAME}; delete it and run again")
        expected = (skills, seed, GENERATOR_VERSION)
        found = (manifest.get("skills"), manifest.get("seed"), manifest.get("generator_version"))
        if found != expected:
            raise WorkspaceError(
                f"{workspace} was made with (skills, seed, version) {found}, not {expected}; delete it"
            )
        log(f"reusing workspace {workspace}")
        return workspace, False, manifest, None
    workspace.parent.mkdir(parents=True, exist_ok=True)
    partial = workspace.parent / f".{workspace.name}.partial-{os.getpid()}"
    log(f"generating workspace {workspace} (skills={skills}, seed={seed}) ...")
    start = time.perf_counter()
    try:
        manifest = generate(partial, skills=skills, seed=seed)
        partial.rename(workspace)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    elapsed = time.perf_counter() - start
    log(f"generated in {elapsed:.1f} s")
    return workspace, True, manifest, elapsed


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("out_dir", type=Path, help="directory to create (must not exist or be empty)")
    parser.add_argument("--skills", type=int, default=20000, help="number of documents (default 20000)")
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    parser.add_argument(
        "--force",
        action="store_true",
        help=f"replace OUT_DIR if it is a workspace made by this script ({MANIFEST_NAME})",
    )
    args = parser.parse_args(argv)
    if args.skills < 1:
        parser.error("--skills must be at least 1")
    out: Path = args.out_dir
    if out.exists() and any(out.iterdir()):
        if not args.force:
            print(
                f"error: {out} exists and is not empty (use --force to replace a generated workspace)",
                file=sys.stderr,
            )
            return 2
        if not (out / MANIFEST_NAME).is_file():
            print(f"error: refusing to delete {out}: no {MANIFEST_NAME} in it", file=sys.stderr)
            return 2
        shutil.rmtree(out)
    start = time.perf_counter()
    manifest = generate(out, skills=args.skills, seed=args.seed)
    elapsed = time.perf_counter() - start
    print(f"generated {out} (skills={args.skills}, seed={args.seed}) in {elapsed:.1f} s")
    print(format_counts(manifest))
    return 0


if __name__ == "__main__":
    sys.exit(main())
