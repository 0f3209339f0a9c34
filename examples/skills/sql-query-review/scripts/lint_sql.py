#!/usr/bin/env python3
"""Heuristic SQL linter: flags common correctness and performance problems.

Usage: lint_sql.py [FILE.sql]     (reads standard input when no file is given)

Prints one finding per line as LINE:RULE:MESSAGE and exits 1 if anything was found.
This is a fast first pass, not a parser: verify every finding by reading the query.
"""

from __future__ import annotations

import re
import sys

RULES: list[tuple[str, re.Pattern[str], str]] = [
    (
        "select-star",
        re.compile(r"\bselect\s+(?:distinct\s+)?\*", re.I),
        "SELECT * returns every column; list the columns the caller needs",
    ),
    (
        "leading-wildcard",
        re.compile(r"\b(?:i?like)\s+'%", re.I),
        "LIKE with a leading % cannot use a B-tree index",
    ),
    (
        "function-on-column",
        re.compile(
            r"\b(?:where|and|or)\s+(?:lower|upper|date|trim|cast|coalesce|year|month|substr|substring)"
            r"\s*\(\s*[a-z_][\w.]*",
            re.I,
        ),
        "function applied to a column in a predicate; the index on that column is not used",
    ),
    (
        "not-in-subquery",
        re.compile(r"\bnot\s+in\s*\(\s*select\b", re.I),
        "NOT IN (SELECT ...) returns no rows if the subquery yields a NULL; use NOT EXISTS",
    ),
    (
        "order-by-random",
        re.compile(r"\border\s+by\s+(?:rand|random|newid)\s*\(\s*\)", re.I),
        "ORDER BY random() sorts the whole table; sample with TABLESAMPLE or a keyed lookup",
    ),
    (
        "large-offset",
        re.compile(r"\boffset\s+(\d{4,})\b", re.I),
        "large OFFSET scans and discards rows; use keyset pagination (WHERE id > last_id)",
    ),
    (
        "implicit-join",
        re.compile(r"\bfrom\s+[\w.]+(?:\s+(?:as\s+)?\w+)?\s*,\s*[\w.]+", re.I),
        "comma join; write an explicit JOIN ... ON so a missing condition is visible",
    ),
]

STATEMENT_SPLIT = re.compile(r";\s*(?:\n|$)")
WRITE_WITHOUT_WHERE = re.compile(r"^\s*(update|delete)\b(?![\s\S]*\bwhere\b)", re.I)
LIMIT_WITHOUT_ORDER = re.compile(r"\blimit\b", re.I)
ORDER_BY = re.compile(r"\border\s+by\b", re.I)


def strip_comments(sql: str) -> str:
    """Remove comments but keep the line structure, so line numbers stay right."""
    sql = re.sub(r"/\*[\s\S]*?\*/", lambda m: re.sub(r"[^\n]", " ", m.group()), sql)
    return re.sub(r"--[^\n]*", "", sql)


def line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def lint(sql: str) -> list[tuple[int, str, str]]:
    clean = strip_comments(sql)
    findings: list[tuple[int, str, str]] = []
    for rule, pattern, message in RULES:
        for match in pattern.finditer(clean):
            findings.append((line_of(clean, match.start()), rule, message))

    start = 0
    for stmt_match in [*STATEMENT_SPLIT.finditer(clean), None]:
        end = stmt_match.start() if stmt_match else len(clean)
        statement = clean[start:end]
        leading = len(statement) - len(statement.lstrip())
        line = line_of(clean, start + leading)
        if statement.strip():
            write = WRITE_WITHOUT_WHERE.match(statement)
            if write:
                findings.append(
                    (
                        line,
                        "write-without-where",
                        f"{write.group(1).upper()} without WHERE changes every row in the table",
                    )
                )
            if LIMIT_WITHOUT_ORDER.search(statement) and not ORDER_BY.search(statement):
                findings.append(
                    (line, "limit-without-order", "LIMIT without ORDER BY returns arbitrary rows")
                )
        if stmt_match is None:
            break
        start = stmt_match.end()
    return sorted(set(findings))


def main(argv: list[str]) -> int:
    if len(argv) > 2 or (len(argv) == 2 and argv[1] in ("-h", "--help")):
        print(__doc__.strip())
        return 0 if len(argv) == 2 else 2
    if len(argv) == 2:
        with open(argv[1], encoding="utf-8") as fh:
            sql = fh.read()
    else:
        sql = sys.stdin.read()
    findings = lint(sql)
    for line, rule, message in findings:
        print(f"{line}:{rule}:{message}")
    if not findings:
        print("no findings (heuristic check only; still review the query by hand)", file=sys.stderr)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
