#!/usr/bin/env python3
"""Group commits from collect_commits.sh into a Markdown release-notes draft.

Usage: collect_commits.sh FROM [TO] | group_commits.py [--all]

By default chore/ci/test/build/style commits are left out; --all keeps them.
"""

from __future__ import annotations

import re
import sys
from collections import OrderedDict

SUBJECT = re.compile(r"^(?P<type>[a-zA-Z]+)(?:\((?P<scope>[^)]+)\))?(?P<bang>!)?:\s*(?P<desc>.+)$")
BREAKING_FOOTER = re.compile(r"^BREAKING[ -]CHANGE:\s*(?P<text>.+)", re.MULTILINE)
ISSUE_REF = re.compile(r"\(#\d+\)$")

SECTIONS = OrderedDict(
    [
        ("feat", "Features"),
        ("fix", "Bug fixes"),
        ("perf", "Performance"),
        ("revert", "Reverts"),
        ("docs", "Documentation"),
        ("refactor", "Refactoring"),
        ("deps", "Dependencies"),
        ("build", "Build"),
        ("ci", "Continuous integration"),
        ("test", "Tests"),
        ("style", "Style"),
        ("chore", "Chores"),
    ]
)
HIDDEN_BY_DEFAULT = {"chore", "ci", "test", "build", "style"}


def parse(stream: str) -> list[dict[str, str]]:
    commits = []
    for record in stream.split("\x1e"):
        record = record.strip("\n")
        if not record:
            continue
        parts = record.split("\x1f")
        if len(parts) != 4:
            print(f"skipping malformed record: {record[:60]!r}", file=sys.stderr)
            continue
        sha, subject, author, body = parts
        commits.append({"sha": sha, "subject": subject.strip(), "author": author, "body": body})
    return commits


def entry(desc: str, scope: str | None, sha: str) -> str:
    prefix = f"**{scope}:** " if scope else ""
    suffix = "" if ISSUE_REF.search(desc) else f" ({sha[:7]})"
    return f"- {prefix}{desc}{suffix}"


def render(commits: list[dict[str, str]], show_all: bool) -> str:
    groups: dict[str, list[str]] = {key: [] for key in SECTIONS}
    other: list[str] = []
    breaking: list[str] = []
    authors: list[str] = []

    for commit in commits:
        if commit["author"] not in authors:
            authors.append(commit["author"])
        match = SUBJECT.match(commit["subject"])
        footer = BREAKING_FOOTER.search(commit["body"])
        if match is None:
            other.append(entry(commit["subject"], None, commit["sha"]))
            if footer:
                breaking.append(f"- {footer.group('text').strip()} ({commit['sha'][:7]})")
            continue
        kind = match.group("type").lower()
        scope, desc = match.group("scope"), match.group("desc").strip()
        if match.group("bang") or footer:
            text = footer.group("text").strip() if footer else desc
            breaking.append(entry(text, scope, commit["sha"]))
        if kind in SECTIONS:
            groups[kind].append(entry(desc, scope, commit["sha"]))
        else:
            other.append(entry(commit["subject"], None, commit["sha"]))

    out = ["# Release notes draft", ""]
    if breaking:
        out += ["## Breaking changes", "", *breaking, ""]
    for kind, title in SECTIONS.items():
        if groups[kind] and (show_all or kind not in HIDDEN_BY_DEFAULT):
            out += [f"## {title}", "", *groups[kind], ""]
    if other:
        out += ["## Other changes", "", *other, ""]
    hidden = sum(len(groups[k]) for k in HIDDEN_BY_DEFAULT)
    if hidden and not show_all:
        out += [f"_{hidden} maintenance commit(s) hidden; re-run with --all to include them._", ""]
    if authors:
        out += ["## Contributors", "", *(f"- {name}" for name in authors), ""]
    return "\n".join(out)


def main(argv: list[str]) -> int:
    if any(arg in ("-h", "--help") for arg in argv[1:]):
        print(__doc__.strip())
        return 0
    show_all = "--all" in argv[1:]
    commits = parse(sys.stdin.read())
    if not commits:
        print("no commits on stdin", file=sys.stderr)
        return 1
    sys.stdout.write(render(commits, show_all))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
