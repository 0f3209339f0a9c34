"""Diagnostics: codes, exact ranges (in the negotiated position encoding), severities, source and
rule links; pulled or published depending on the client; workspace findings (SK701, SK505,
SK702); edits that fix a problem make it go away."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsp_helpers import (
    RULES_URL,
    codes,
    encoding,
    opened,
    pulls,
    unique,
    units,
)
from lsprotocol import types
from lsprotocol.types import DiagnosticSeverity as Sev
from lsprotocol.types import Position as P
from lsprotocol.types import Range as R
from pytest_lsp import LanguageClient

pytestmark = pytest.mark.asyncio(loop_scope="session")


def summary(found: list[types.Diagnostic]) -> list[tuple[str, types.Range, types.DiagnosticSeverity | None]]:
    return sorted(((str(d.code), d.range, d.severity) for d in found), key=lambda t: (t[1].start.line, t[0]))


def by_code(found: list[types.Diagnostic], code: str) -> types.Diagnostic:
    matches = [d for d in found if d.code == code]
    assert len(matches) == 1, f"expected one {code}, got {codes(found)}"
    return matches[0]


async def test_broken_name_mismatch_codes_ranges_and_severities(
    client: LanguageClient, workspace: Path
) -> None:
    async with opened(client, workspace / "skills" / "broken-name-mismatch" / "SKILL.md") as doc:
        found = await doc.diagnostics()
    name = R(P(1, 6), P(1, 17))
    assert summary(found) == [
        ("SK204", name, Sev.Error),
        ("SK205", name, Sev.Error),
        ("SK208", name, Sev.Error),
        ("SK401", R(P(3, 0), P(3, 7)), Sev.Warning),
        ("SK501", R(P(5, 2), P(7, 8)), Sev.Warning),
        ("SK505", R(P(7, 4), P(7, 8)), Sev.Error),
    ]
    for d in found:
        assert d.source == "skills-lsp"
        assert d.code_description is not None
        assert d.code_description.href == f"{RULES_URL}#{str(d.code).lower()}"
    assert by_code(found, "SK204").code_description.href.endswith("#sk204")  # type: ignore[union-attr]
    assert by_code(found, "SK204").message == "`name` `Broken_Name` must be lowercase."
    assert "did you mean `license`?" in by_code(found, "SK401").message


async def test_broken_references_ranges(client: LanguageClient, workspace: Path) -> None:
    async with opened(client, workspace / "skills" / "broken-references" / "SKILL.md") as doc:
        found = await doc.diagnostics()
    assert summary(found) == [
        ("SK303", R(P(2, 13), P(15, 83)), Sev.Error),
        ("SK403", R(P(17, 15), P(23, 83)), Sev.Error),
        ("SK606", R(P(48, 19), P(48, 33)), Sev.Warning),
        ("SK603", R(P(63, 32), P(63, 53)), Sev.Error),
        ("SK605", R(P(68, 30), P(68, 61)), Sev.Warning),
    ]
    assert by_code(found, "SK603").message == "`references/MISSING.md` does not exist."
    assert by_code(found, "SK303").message == "`description` is 1167 characters; the limit is 1024."


async def test_broken_yaml_reports_the_unquoted_colon(client: LanguageClient, workspace: Path) -> None:
    async with opened(client, workspace / "skills" / "broken-yaml" / "SKILL.md") as doc:
        found = await doc.diagnostics()
    assert summary(found) == [("SK104", R(P(2, 13), P(2, 90)), Sev.Error)]
    assert "quote the value" in found[0].message


async def test_a_valid_skill_has_no_diagnostics(client: LanguageClient, workspace: Path) -> None:
    async with opened(client, workspace / "skills" / "pdf-form-filling" / "SKILL.md") as doc:
        assert await doc.diagnostics() == []


async def test_files_the_server_does_not_serve_get_none(client: LanguageClient, workspace: Path) -> None:
    async with opened(client, workspace / "README.md") as doc:
        assert await doc.diagnostics() == []


async def test_diagnostics_are_pulled_or_pushed_never_both(client: LanguageClient, workspace: Path) -> None:
    async with opened(client, workspace / "skills" / "broken-yaml" / "SKILL.md") as doc:
        found = await doc.diagnostics()
        doc.replace("when: the", "when the")
        await doc.diagnostics(until=lambda ds: not ds)
        if pulls(client):
            await asyncio.sleep(0.2)  # longer than the server's debounce
            assert doc.published() == []
        else:
            assert [p.version for p in doc.published()] == [1, 2]
            assert list(doc.published()[0].diagnostics) == found
            assert list(client.diagnostics[doc.uri]) == []  # what pytest-lsp keeps: the last


async def test_pull_answers_unchanged_for_the_same_result(client: LanguageClient, workspace: Path) -> None:
    if not pulls(client):
        pytest.skip("the client does not pull diagnostics")
    async with opened(client, workspace / "skills" / "broken-yaml" / "SKILL.md") as doc:
        params = types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(doc.uri))
        first = await client.text_document_diagnostic_async(params)
        assert isinstance(first, types.RelatedFullDocumentDiagnosticReport) and first.result_id
        params.previous_result_id = first.result_id
        again = await client.text_document_diagnostic_async(params)
        assert isinstance(again, types.RelatedUnchangedDocumentDiagnosticReport)
        assert again.result_id == first.result_id
        doc.replace("Use this skill when: the user", "Use this skill when the user")
        params.previous_result_id = first.result_id
        changed = await client.text_document_diagnostic_async(params)
        assert isinstance(changed, types.RelatedFullDocumentDiagnosticReport)
        assert list(changed.items) == []


# --- positions in the client's encoding ------------------------------------------------------

EMOJI_BROKEN = """---
name: {name}
description: 🚀 数据 Use when: x
---

# Heading
"""

EMOJI_VALID = """---
name: {name}
description: "🚀 数据 Summarises rocket telemetry. Use when: the user asks about 数据."
licence: MIT
allowed-tools: Read 🚀Raed
---

# 🚀 数据 heading

🚀 数据 see [the guide](references/MISSING.md) for details.
"""


async def test_ranges_count_emoji_and_cjk_in_client_units(client: LanguageClient, workspace: Path) -> None:
    enc = encoding(client)
    # Literal columns: an emoji is 2 UTF-16 units (4 UTF-8 bytes), a CJK character 1 (3 bytes).
    expected_end = {"utf-16": 30, "utf-8": 36, "utf-32": 29}[enc]
    assert 13 + units("🚀 数据 Use when: x", enc) == expected_end
    name = unique("zz-emoji")
    path = workspace / "skills" / name / "SKILL.md"
    async with opened(client, path, EMOJI_BROKEN.format(name=name)) as doc:
        found = await doc.diagnostics()
    assert summary(found) == [("SK104", R(P(2, 13), P(2, expected_end)), Sev.Error)]


async def test_ranges_after_emoji_on_the_same_line(client: LanguageClient, workspace: Path) -> None:
    enc = encoding(client)
    name = unique("zz-emoji")
    path = workspace / "skills" / name / "SKILL.md"
    async with opened(client, path, EMOJI_VALID.format(name=name)) as doc:
        found = await doc.diagnostics()
        tool = {"utf-16": (20, 26), "utf-8": (20, 28), "utf-32": (20, 25)}[enc]
        reference = {"utf-16": (22, 43), "utf-8": (28, 49), "utf-32": (21, 42)}[enc]
        assert summary(found) == [
            ("SK401", R(P(3, 0), P(3, 7)), Sev.Warning),
            ("SK505", R(P(4, tool[0]), P(4, tool[1])), Sev.Error),
            ("SK603", R(P(9, reference[0]), P(9, reference[1])), Sev.Error),
        ]
        assert by_code(found, "SK505").range == doc.range("🚀Raed")
        assert by_code(found, "SK603").range == doc.range("references/MISSING.md")
        assert "did you mean `Read`?" in by_code(found, "SK505").message


# --- edits -----------------------------------------------------------------------------------


async def test_a_change_that_fixes_a_problem_removes_it(client: LanguageClient, workspace: Path) -> None:
    async with opened(client, workspace / "skills" / "broken-name-mismatch" / "SKILL.md") as doc:
        assert "SK401" in codes(await doc.diagnostics())
        doc.replace("licence", "license")
        found = await doc.diagnostics(until=lambda ds: "SK401" not in codes(ds))
        assert codes(found) == ["SK204", "SK205", "SK208", "SK501", "SK505"]
        doc.replace("Broken_Name", "broken-name-mismatch")
        found = await doc.diagnostics(until=lambda ds: "SK208" not in codes(ds))
        assert codes(found) == ["SK501", "SK505"]


async def test_a_change_that_breaks_a_skill_reports_it(client: LanguageClient, workspace: Path) -> None:
    async with opened(client, workspace / "skills" / "csv-data-cleaning" / "SKILL.md") as doc:
        assert await doc.diagnostics() == []
        doc.replace("name: csv-data-cleaning", "name: CSV-cleaning")
        found = await doc.diagnostics(until=lambda ds: bool(ds))
        assert codes(found) == ["SK204", "SK208"]
        assert all(d.range == R(P(1, 6), P(1, 18)) for d in found)


# --- workspace findings ----------------------------------------------------------------------

DUPLICATE = """---
name: pdf-form-filling
description: Fills PDF forms a second time. Use when the user asks to fill a PDF form again.
---

# Copy
"""


async def test_two_skills_sharing_a_name_are_sk701(client: LanguageClient, workspace: Path) -> None:
    original = workspace / "skills" / "pdf-form-filling" / "SKILL.md"
    copy = workspace / "skills" / unique("zz-copy") / "SKILL.md"
    async with opened(client, copy, DUPLICATE) as doc:
        found = await doc.diagnostics(until=lambda ds: "SK701" in codes(ds))
        sk701 = by_code(found, "SK701")
        assert sk701.range == R(P(1, 6), P(1, 22))
        assert sk701.severity == Sev.Warning
        assert sk701.message == f"Skill name `pdf-form-filling` is also used by {original}."
        assert sk701.code_description and sk701.code_description.href.endswith("#sk701")
        async with opened(client, original) as other:
            mirrored = by_code(await other.diagnostics(until=lambda ds: "SK701" in codes(ds)), "SK701")
            assert mirrored.range == R(P(1, 6), P(1, 22))
            assert str(copy) in mirrored.message


TRANSLATOR = """---
name: {name}
description: Translate a paragraph into Japanese. Use when asked to translate a paragraph into Japanese.
---

# Translate into Japanese

Translate the paragraph into Japanese.
"""


async def test_closing_an_unsaved_skill_updates_the_other_files_diagnostics(
    client: LanguageClient, workspace: Path
) -> None:
    name = unique("zz-translate")
    async with opened(client, workspace / "skill-queries.yaml", language_id="yaml") as queries:
        assert [d.range.start.line for d in await queries.diagnostics()] == [36]
        async with opened(client, workspace / "skills" / name / "SKILL.md", TRANSLATOR.format(name=name)):
            found = await queries.diagnostics(until=lambda ds: 38 in [d.range.start.line for d in ds])
            assert f"expected no skill, but `{name}` is selected." in [
                d.message.removeprefix("Routing test fails: ") for d in found
            ]
        # The skill was never saved: closed, it is gone, and so are the failures it caused.
        found = await queries.diagnostics(until=lambda ds: len(ds) == 1, timeout=2.0)
        assert [d.range.start.line for d in found] == [36]


async def test_a_phantom_tool_is_sk505_with_did_you_mean(client: LanguageClient, workspace: Path) -> None:
    name = unique("zz-tools")
    text = (
        f"---\nname: {name}\ndescription: Checks tools. Use when the user asks to check tools.\n"
        "allowed-tools: Bash(git:*) Raed code_serch\n---\n\n# Tools\n"
    )
    async with opened(client, workspace / "skills" / name / "SKILL.md", text) as doc:
        found = await doc.diagnostics()
        assert summary(found) == [
            ("SK505", doc.range("Raed"), Sev.Error),
            ("SK505", doc.range("code_serch"), Sev.Error),
        ]
        messages = sorted(d.message for d in found)
        assert messages == [
            "Tool `Raed` is not in the tool manifest; did you mean `Read`?",
            "Tool `code_serch` is not in the tool manifest; did you mean `code_search`?",
        ]


async def test_a_failing_test_query_is_sk702_on_its_query(client: LanguageClient, workspace: Path) -> None:
    queries = workspace / "skill-queries.yaml"
    async with opened(client, queries, language_id="yaml") as doc:
        found = await doc.diagnostics()
        assert summary(found) == [("SK702", R(P(36, 11), P(36, 59)), Sev.Warning)]
        assert found[0].range == doc.range("Book me a table for two at an Italian restaurant")
        assert (
            found[0].message == "Routing test fails: expected no skill, but `broken-references` is selected."
        )
        assert found[0].source == "skills-lsp"
        # Expect what the scorer picks and the case passes.
        doc.replace("expect: none", "expect: broken-references")
        assert await doc.diagnostics(until=lambda ds: not ds) == []


async def test_a_skill_edit_can_make_a_test_query_fail(client: LanguageClient, workspace: Path) -> None:
    queries = workspace / "skill-queries.yaml"
    async with opened(client, queries, language_id="yaml") as qdoc:
        assert codes(await qdoc.diagnostics()) == ["SK702"]
        # An unsaved rename of the skill a case expects makes that case fail.
        async with opened(client, workspace / ".skills" / "weather-lookup.md") as sdoc:
            await sdoc.diagnostics()
            sdoc.replace("name: weather-lookup", "name: weather-lookup-renamed")
            found = await qdoc.diagnostics(until=lambda ds: len(ds) == 2)
            renamed = [d for d in found if d.range.start.line == 25]
            assert len(renamed) == 1 and renamed[0].code == "SK702"
            assert "weather-lookup" in renamed[0].message


# --- the manifest, the test-query file and the config file -----------------------------------


async def test_manifest_problems_are_sk002(client: LanguageClient, workspace: Path) -> None:
    manifest = workspace / "skill-tools.yaml"
    async with opened(client, manifest, language_id="yaml") as doc:
        assert await doc.diagnostics() == []
        doc.replace("  - name: Write\n", "  - name: Read\n")
        found = await doc.diagnostics(until=lambda ds: bool(ds))
        second = types.Range(
            doc.position("name: Read", after=6, occurrence=1),
            doc.position("name: Read", after=10, occurrence=1),
        )
        assert summary(found) == [("SK002", second, Sev.Warning)]
        assert found[0].message == "Tool `Read` is listed twice."
        doc.replace("  - name: geocode", "  - nme: geocode")
        found = await doc.diagnostics(until=lambda ds: len(ds) == 3)
        messages = sorted(d.message for d in found if d.severity == Sev.Error)
        assert messages == [
            "'name' is a required property.",
            "Additional properties are not allowed ('nme' was unexpected).",
        ]
        assert all(d.code == "SK002" and d.source == "skills-lsp" for d in found)


async def test_query_file_problems_are_sk003(client: LanguageClient, workspace: Path) -> None:
    async with opened(client, workspace / "skill-queries.yaml", language_id="yaml") as doc:
        assert codes(await doc.diagnostics()) == ["SK702"]
        doc.replace("    margin: 0.5", "    margin: high")
        found = await doc.diagnostics(until=lambda ds: "SK003" in codes(ds))
        sk003 = by_code(found, "SK003")
        assert sk003.range == doc.range("high")
        assert sk003.severity == Sev.Error
        assert sk003.message == "'high' is not of type 'number'."


async def test_a_broken_config_file_is_sk001(client: LanguageClient, workspace: Path) -> None:
    config = workspace / "skills-lsp.toml"  # a new, unsaved file
    async with opened(client, config, 'profile = "nope"\nselct = ["SK1"]\n', language_id="toml") as doc:
        found = await doc.diagnostics()
        assert summary(found) == [
            ("SK001", doc.range("profile"), Sev.Error),
            ("SK001", doc.range("selct"), Sev.Error),
        ]
        assert found[1].message == "Unknown config key `selct`; did you mean `select`?"
        doc.set_text("profile = \n")
        found = await doc.diagnostics(until=lambda ds: len(ds) == 1)
        assert found[0].message == "Invalid TOML: Invalid value."
    async with opened(client, workspace / "skills" / "broken-yaml" / "SKILL.md") as skill:
        assert codes(await skill.diagnostics()) == ["SK104"]


async def test_an_unknown_skill_in_the_configs_overlap_is_sk001(
    client: LanguageClient, workspace: Path
) -> None:
    """An accepted pair naming no skill accepts nothing: said at the name, once the folder's
    skills are known."""
    config = workspace / "skills-lsp.toml"
    text = 'scorer = "lexical"\noverlap = [["csv-data-cleaning", "csv-data-claening"]]\n'
    async with opened(client, config, text, language_id="toml") as doc:
        found = await doc.diagnostics(until=lambda ds: bool(ds))
        assert summary(found) == [("SK001", doc.range('"csv-data-claening"'), Sev.Error)]
        assert found[0].message == (
            "`overlap`: no skill named `csv-data-claening`; did you mean `csv-data-cleaning`?"
        )
        doc.set_text('scorer = "lexical"\noverlap = [["csv-data-cleaning", "sql-query-review"]]\n')
        assert await doc.diagnostics(until=lambda ds: not ds) == []


async def test_convention_files_are_checked(client: LanguageClient, workspace: Path) -> None:
    path = workspace / "AGENTS.md"
    async with opened(client, path) as doc:
        assert await doc.diagnostics() == []
        doc.set_text("---\nnme: x\ntrigger: maybe\n---\n" + path.read_text(encoding="utf-8"))
        found = await doc.diagnostics(until=lambda ds: bool(ds))
        assert summary(found) == [
            ("SK401", R(P(1, 0), P(1, 3)), Sev.Warning),
            ("SK402", R(P(2, 9), P(2, 14)), Sev.Error),
        ]
        assert "for the convention profile; did you mean `name`?" in found[0].message
