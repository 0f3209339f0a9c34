"""check_paths over a workspace of byte-identical copies, with one and two jobs: each copy gets
the findings of checking it alone (the ones that depend on where it is included)."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import write

from skills_lsp.core.model import Finding
from skills_lsp.core.rules.check import DEFAULT_CONFIG, check_paths
from skills_lsp.core.rules.validate import validate_file

COPIES = 150  # of each text: with 3 texts, enough files for two worker processes
TEXTS = [
    "---\nname: one\ndescription: Formats release notes. Use when asked for release notes.\n---\n"
    "Read [the guide](references/guide.md) first, then run `scripts/build.py`.\n",
    "---\nname: two\ndescription: Plans meals for a week. Use when asked to plan meals.\n---\n"
    "# Steps\n\n1. See [notes](references/notes.md).\n",
    "---\nname: three\ndescription: Checks links. Use when asked to check links.\n---\nNo references.\n",
]


def _own(findings: list[Finding]) -> list[tuple[str, str, str]]:
    """Per-file findings (not the workspace rules', SK7xx: the copies share names on purpose)."""
    return sorted((f.path, f.code, f.message) for f in findings if not f.code.startswith("SK7"))


@pytest.mark.parametrize("jobs", [1, 2])
def test_copies_get_the_findings_of_each_alone(tmp_path: Path, jobs: int) -> None:
    for number in range(COPIES):
        for index, text in enumerate(TEXTS):
            # Every other copy has its references; every copy's folder name differs from `name`
            # but the first's (SK208 depends on where the copy is).
            folder = (
                tmp_path
                / "skills"
                / (["one", "two", "three"][index] if number == 0 else f"c{number}-{index}")
            )
            write(folder / "SKILL.md", text)
            if number % 2:
                write(folder / "references" / "guide.md", "guide\n")
                write(folder / "references" / "notes.md", "notes\n")
                write(folder / "scripts" / "build.py", "print()\n")
    result = check_paths([tmp_path], config=DEFAULT_CONFIG, jobs=jobs)
    assert len(result.files) == COPIES * len(TEXTS)
    alone = [f for item in result.files for f in validate_file(item.path, kind=item.kind)]
    assert _own(result.findings) == _own(alone)
    codes = {code for _, code, _ in _own(result.findings)}
    assert {"SK603", "SK208"} <= codes  # the copies without references, the renamed folders


def test_a_copy_takes_the_references_found_in_its_text_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from skills_lsp.core.parse import markdown

    for number in range(4):
        for index, text in enumerate(TEXTS):
            write(tmp_path / "skills" / f"c{number}-{index}" / "SKILL.md", text)
    write(tmp_path / "skills" / "c0-0" / "references" / "guide.md", "guide\n")
    read: list[str] = []
    real = markdown._find_references

    def counting(doc: markdown.Document, split: bool) -> list[markdown.Reference]:
        read.append(doc.text)
        return real(doc, split)

    monkeypatch.setattr(markdown, "_find_references", counting)
    result = check_paths([tmp_path], config=DEFAULT_CONFIG, jobs=1)
    assert sorted(read) == sorted(TEXTS)  # each text's body read once, for four copies
    missing = {f.path for f in result.findings if f.code == "SK603" and "guide.md" in f.message}
    assert missing == {str(tmp_path / "skills" / f"c{n}-0" / "SKILL.md") for n in (1, 2, 3)}


def test_workspace_findings_take_the_profiles_the_files_were_checked_in(tmp_path: Path) -> None:
    """check_paths hands the workspace rules each skill's profile as checked: the same findings
    as resolving each again, across runtime folders (their own profiles) and a config's."""
    from skills_lsp.core.files.config import Config
    from skills_lsp.core.rules.check import check_file, workspace_findings

    long = "Plans the work in detail. " * 30  # 24 skills of 780 characters: over 8,000
    for folder in ("skills", ".claude/skills", ".agents/skills", ".gemini/skills"):
        for index in range(6):
            text = f"---\nname: s{index}\ndescription: {long}Use when asked for {index}.\n---\nBody.\n"
            write(tmp_path / folder / f"s{index}" / "SKILL.md", text)
    for config in (DEFAULT_CONFIG, Config(profile="codex")):
        result = check_paths([tmp_path], config=config, jobs=1)
        named = [check_file(item, config, None, None).named for item in result.files]
        resolved = workspace_findings(named, config, None)
        assert workspace_findings(named, config, None, as_checked=True) == resolved
        assert {f.code for f in resolved} >= {"SK701", "SK703"}
        assert [f for f in result.findings if f.code.startswith("SK7")] == sorted(
            resolved, key=Finding.sort_key
        )
