"""Each runtime's skill listing under its budget: what is kept of each description, what is
dropped or left out, and the workspace rule (SK703) that reports it."""

from __future__ import annotations

import itertools
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import write

import skills_lsp
from skills_lsp.core.engine.catalog import render_listing, runtime_listing
from skills_lsp.core.index.skill_index import load_workspace_index
from skills_lsp.core.model import Finding
from skills_lsp.core.rules import listing
from skills_lsp.core.rules.check import check_paths
from skills_lsp.core.rules.listing import RUNTIMES, Fate, ListedSkill, budget_variables, fit_listing


def skills(count: int, length: int) -> list[ListedSkill]:
    return [ListedSkill(f"skill-{i:02d}", "d" * length, f"/w/skill-{i:02d}/SKILL.md") for i in range(count)]


def test_a_listing_within_budget_keeps_everything() -> None:
    for runtime in RUNTIMES.values():
        listing = fit_listing(runtime, skills(5, 100))
        assert not listing.cut
        assert listing.used == listing.needed
        assert all(p.fate is Fate.FULL and p.kept == 100 for p in listing.placements)


def test_claude_code_keeps_every_name_and_drops_descriptions_past_the_budget() -> None:
    listing = fit_listing(RUNTIMES["claude-code"], skills(40, 300))
    assert listing.budget == 8000  # the documented fallback: no context window given
    assert listing.needed == 40 * len("- skill-00: " + "d" * 300 + "\n")
    fates = [p.fate for p in listing.placements]
    first_dropped = fates.index(Fate.NAME_ONLY)
    # Listing order (by name): every skill before the cut keeps its description, none after.
    assert set(fates[:first_dropped]) == {Fate.FULL}
    assert set(fates[first_dropped:]) == {Fate.NAME_ONLY}
    assert listing.used <= 8000
    # One more description would not fit.
    assert listing.used + 300 + 2 > 8000
    catalog = render_listing(listing)
    assert catalog.count("\n") == 40  # every name is still there
    assert "- skill-39\n" in catalog


def test_claude_code_budget_follows_the_context_window_and_the_variable() -> None:
    claude = RUNTIMES["claude-code"]
    assert claude.budget(1_000_000, environ={}) == 40_000  # 1% of 1M tokens at 4 characters each
    assert claude.budget(None, environ={"SLASH_COMMAND_TOOL_CHAR_BUDGET": "30000"}) == 30_000
    assert claude.budget(None, environ={"SLASH_COMMAND_TOOL_CHAR_BUDGET": "lots"}) == 8000
    assert fit_listing(claude, skills(40, 300), 1_000_000, environ={}).cut == []


def test_claude_code_caps_each_entry() -> None:
    listing = fit_listing(RUNTIMES["claude-code"], [ListedSkill("long", "x" * 2000, "/w/long/SKILL.md")])
    (placement,) = listing.placements
    assert placement.fate is Fate.SHORTENED and placement.kept == 1536


def test_codex_shortens_descriptions_round_robin_then_omits_skills() -> None:
    codex = RUNTIMES["codex"]
    short = ListedSkill("aaa-short", "tiny", "/w/a/SKILL.md")
    listing = fit_listing(codex, [short, *skills(40, 300)])
    assert listing.used <= 8000
    by_name = {p.skill.name: p for p in listing.placements}
    assert by_name["aaa-short"].fate is Fate.FULL  # a short description keeps all of its own
    kept = {p.kept for name, p in by_name.items() if name != "aaa-short"}
    assert max(kept) - min(kept) <= 1  # the rest share what is left evenly
    assert all(p.fate is Fate.SHORTENED for name, p in by_name.items() if name != "aaa-short")
    crowded = fit_listing(codex, skills(400, 300))
    fates = [p.fate for p in crowded.placements]
    assert Fate.OMITTED in fates and crowded.used <= 8000
    assert fates[-1] is Fate.OMITTED and fates[0] is not Fate.OMITTED
    assert codex.budget(272_000) == 272_000 * 4 * 2 // 100


def test_gemini_cli_and_adk_document_no_cap() -> None:
    for name in ("gemini-cli", "adk"):
        listing = fit_listing(RUNTIMES[name], skills(400, 1000))
        assert listing.budget is None and not listing.cut


def _workspace(root: Path, count: int, length: int) -> None:
    for i in range(count):
        name = f"skill-{i:02d}"
        write(
            root / "skills" / name / "SKILL.md",
            f"---\nname: {name}\ndescription: {'Handles this task. ' * (length // 19)}\n---\n# {name}\n",
        )


def test_the_workspace_rule_reports_each_cut_skill_at_its_description(tmp_path: Path) -> None:
    _workspace(tmp_path, 40, 300)
    found = [f for f in check_paths([tmp_path]).findings if f.code == "SK703"]
    index = load_workspace_index(tmp_path)
    claude = runtime_listing(index, RUNTIMES["claude-code"])
    codex = runtime_listing(index, RUNTIMES["codex"])
    assert claude.cut and codex.cut
    claude_messages = [f for f in found if f.message.startswith("Claude Code's skill listing")]
    codex_messages = [f for f in found if f.message.startswith("Codex's skill listing")]
    assert len(claude_messages) == len(claude.cut)
    assert len(codex_messages) == len(codex.cut)
    dropped = next(f for f in claude_messages if f.path.endswith("skill-39/SKILL.md"))
    assert "listed by name only" in dropped.message
    assert dropped.range.start.line == 2 and dropped.range.start.character == len("description: ")
    assert all("skill-00/" not in f.path for f in claude_messages)


def test_the_workspace_rule_is_quiet_within_budget_and_for_the_claude_profile_only_claude(
    tmp_path: Path,
) -> None:
    _workspace(tmp_path, 5, 300)
    assert not [f for f in check_paths([tmp_path]).findings if f.code == "SK703"]
    found = _sk703_under_profile(tmp_path, "claude-code")
    assert found and all(f.message.startswith("Claude Code") for f in found)


def _sk703_under_profile(root: Path, profile: str) -> list[Finding]:
    """SK703 over 40 skills of 300 characters, every file under `profile`."""
    from skills_lsp.core.workspace.settings import load_config

    _workspace(root, 40, 300)
    write(root / "skills-lsp.toml", f'profile = "{profile}"\n')
    config, _ = load_config(root / "skills-lsp.toml")
    return [f for f in check_paths([root], config=config).findings if f.code == "SK703"]


def test_placing_one_more_skill_agrees_with_fitting_them_all() -> None:
    """The editor places the edited skill against the others summed up once (`listing_base`,
    `place`); `fit_listing` over all of them must say the same, for every runtime and crowd."""
    import random

    from skills_lsp.core.rules.listing import listing_base, place

    rng = random.Random(7)
    for trial in range(120):
        count = rng.choice([0, 1, 3, 20, 60, 200])
        crowd = [
            ListedSkill(
                f"s{rng.randrange(10_000):05d}",
                "d" * rng.choice([0, 5, 80, 300, 1200, 2000]),
                f"/w/{trial}/{i}/SKILL.md",
            )
            for i in range(count + 1)
        ]
        me, others = crowd[rng.randrange(len(crowd))], None
        others = [s for s in crowd if s is not me]
        for runtime in RUNTIMES.values():
            context = rng.choice([None, 20_000, 100_000])
            whole = fit_listing(runtime, crowd, context, environ={})
            expected = whole.placement(me.name, me.path)
            got, needed = place(listing_base(runtime, others, context, environ={}), me)
            assert expected is not None and needed == whole.needed
            assert (got.fate, got.kept) == (expected.fate, expected.kept), (runtime.name, trial)


def test_a_table_without_one_owner_is_the_listing_of_the_others() -> None:
    """The server sorts and sums every skill up once per change (`listed`, `listing_table`) and
    drops the edited file's entries from that (`ListingTable.base`): the same base as summing the
    others up afresh, and so the same placement as fitting them all, for every runtime; with
    namesakes, `when_to_use`, one owner of two entries and owners not listed at all."""
    import random

    from skills_lsp.core.rules.listing import listed, listing_base, listing_table, place

    rng = random.Random(11)
    for trial in range(80):
        rows = []
        for _ in range(rng.choice([1, 2, 5, 40, 150])):
            name = f"s{rng.randrange(30):02d}"  # namesakes: ties broken by path, then input order
            path = f"/w/{trial}/{rng.randrange(60)}/SKILL.md"
            description = "d" * rng.choice([0, 5, 80, 300, 1200, 2000])
            when = rng.choice(["", "", "w" * rng.choice([1, 40, 900])])
            rows.append((ListedSkill(name, description, path, when), f"owner-{rng.randrange(50)}"))
        columns = listed((s.name, s.description, s.path, s.when_to_use, owner) for s, owner in rows)
        owner = rng.choice([*(o for _, o in rows), "nobody"])
        me = ListedSkill(f"s{rng.randrange(30):02d}", "m" * rng.choice([3, 700, 1600]), "/w/me/SKILL.md")
        for runtime in RUNTIMES.values():
            context = rng.choice([None, 2_000, 100_000])
            others = [s for s, o in rows if o != owner]
            table = listing_table(runtime, columns)
            got = table.base(context, {}, without=owner)
            assert got == listing_base(runtime, others, context, environ={}), (runtime.name, trial)
            # The table's own lists are left as they were: the next owner's base starts from them.
            assert table.base(context, {}) == listing_base(runtime, [s for s, _ in rows], context, {})
            whole = fit_listing(runtime, [*others, me], context, environ={})
            expected = whole.placement(me.name, me.path)
            placed, needed = place(got, me)
            assert expected is not None and needed == whole.needed
            assert (placed.fate, placed.kept) == (expected.fate, expected.kept), (runtime.name, trial)


def test_codex_removes_every_description_when_skills_must_go() -> None:
    listing = fit_listing(RUNTIMES["codex"], skills(400, 300))
    fates = {p.fate for p in listing.placements}
    assert fates == {Fate.NAME_ONLY, Fate.OMITTED}


def test_core_reads_no_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    # The CLI and the server read SLASH_COMMAND_TOOL_CHAR_BUDGET and pass it in; core only
    # uses what it is given, so the same call gives the same answer in any process.
    monkeypatch.setenv("SLASH_COMMAND_TOOL_CHAR_BUDGET", "100000")
    claude = RUNTIMES["claude-code"]
    assert claude.budget(None) == 8000
    assert fit_listing(claude, skills(40, 300)).budget == 8000
    assert budget_variables({"SLASH_COMMAND_TOOL_CHAR_BUDGET": "30000", "HOME": "/h"}) == (
        ("SLASH_COMMAND_TOOL_CHAR_BUDGET", "30000"),
    )


def test_every_profile_names_the_runtimes_it_is_checked_against() -> None:
    """An empty tuple is a decision (no runtime lists such files); a missing profile is an oversight."""
    from skills_lsp.core.rules.listing import PROFILE_RUNTIMES
    from skills_lsp.core.rules.profiles import PROFILES

    assert set(PROFILE_RUNTIMES) == set(PROFILES)
    assert all(name in RUNTIMES for names in PROFILE_RUNTIMES.values() for name in names)
    for own in ("claude-code", "codex", "gemini-cli", "adk", "vscode-copilot"):
        assert PROFILE_RUNTIMES[own] == (own,)


def test_codex_profile_skills_get_sk703(tmp_path: Path) -> None:
    found = _sk703_under_profile(tmp_path, "codex")
    assert found and all(f.message.startswith("Codex's skill listing") for f in found)


def test_vscode_copilot_documents_no_cap() -> None:
    listing = fit_listing(RUNTIMES["vscode-copilot"], skills(400, 1000))
    assert listing.budget is None and not listing.cut
    assert "code.visualstudio.com" in RUNTIMES["vscode-copilot"].docs


WHEN = "Use when the user asks for a quarterly report of the sales figures."


def _with_when_to_use(root: Path, count: int) -> None:
    for i in range(count):
        name = f"skill-{i:02d}"
        write(
            root / ".claude" / "skills" / name / "SKILL.md",
            f"---\nname: {name}\ndescription: {'Handles this task. ' * 10}\n"
            f"when_to_use: {WHEN}\n---\n# {name}\n",
        )


def test_claude_code_lists_when_to_use_with_the_description(tmp_path: Path) -> None:
    """Claude Code's per-entry text is `description` + `when_to_use` (docs/budgets.md); the
    other runtimes list the description alone."""
    _with_when_to_use(tmp_path, 3)
    index = load_workspace_index(tmp_path)
    description = ("Handles this task. " * 10).strip()
    claude = runtime_listing(index, RUNTIMES["claude-code"])
    assert claude.needed == 3 * len(f"- skill-00: {description} {WHEN}\n")
    assert WHEN in render_listing(claude)
    codex = runtime_listing(index, RUNTIMES["codex"])
    assert WHEN not in render_listing(codex)


def test_when_to_use_can_push_a_claude_code_listing_over_budget(tmp_path: Path) -> None:
    # 38 entries of 202 characters fit 8,000 without when_to_use, and not with it (270 each).
    _with_when_to_use(tmp_path, 38)
    found = [f for f in check_paths([tmp_path]).findings if f.code == "SK703"]
    assert found and all(f.message.startswith("Claude Code's skill listing") for f in found)
    index = load_workspace_index(tmp_path)
    assert runtime_listing(index, RUNTIMES["claude-code"]).cut


def test_sk703_findings_keep_one_order_whatever_the_string_hash_seed(tmp_path: Path) -> None:
    """A skill cut from two runtimes' listings gets two findings on one range; their order once
    followed a set of profile names, so it changed between runs (PYTHONHASHSEED)."""
    _workspace(tmp_path, 40, 300)
    write(
        tmp_path / ".codex" / "skills" / "extra" / "SKILL.md",
        f"---\nname: extra\ndescription: {'Handles that task. ' * 15}\n---\n# extra\n",
    )
    command = [sys.executable, "-m", "skills_lsp", "check", str(tmp_path), "--format", "json"]
    package_root = str(Path(skills_lsp.__file__).parents[1])  # the code under test, not an installed one
    outputs = set()
    for seed in ("0", "1", "2", "3", "4", "5"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": package_root}
        done = subprocess.run(
            [*command, "--no-cache", "--exit-zero"],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            check=True,
        )
        assert '"SK703"' in done.stdout
        outputs.add(done.stdout)
    assert len(outputs) == 1


def test_each_sk703_message_is_the_skills_own_placement(tmp_path: Path) -> None:
    """SK703 makes each message once per runtime and placement (fate, characters kept and listed):
    skills of many description lengths, shortened to shares by Codex and dropped by Claude Code,
    each get the message of their own placement."""
    for i in range(60):
        name = f"skill-{i:02d}"
        description = "Handles this task. " * (4 + i % 9) + "x" * (i % 5)
        write(
            tmp_path / "skills" / name / "SKILL.md",
            f"---\nname: {name}\ndescription: {description}\n---\n# {name}\n",
        )
    found = [f for f in check_paths([tmp_path]).findings if f.code == "SK703"]
    index = load_workspace_index(tmp_path)
    expected = set()
    for runtime in (RUNTIMES["claude-code"], RUNTIMES["codex"]):
        listing = runtime_listing(index, runtime)
        assert listing.budget is not None and listing.needed > listing.budget
        for placement in listing.cut:
            message = (
                f"{runtime.title}'s skill listing: {placement.describe()} (the listing needs "
                f"{listing.needed:,} of its {listing.budget:,} characters)."
            )
            expected.add((placement.skill.name, message))
    assert len({message for _, message in expected}) > 5  # shares of several lengths
    assert {(Path(f.path).parent.name, f.message) for f in found} == expected
    assert len(found) == len(expected)


def reference_base(
    runtime: listing.Runtime, skills: list[ListedSkill], context: int | None, environ: dict[str, str]
) -> listing.ListingBase:
    """The listing base made skill by skill, as before the column tables: the rules of
    as_listed_by, _capped, _bare and entry_cost, applied one skill at a time."""
    ordered = sorted((s.as_listed_by(runtime) for s in skills), key=lambda s: (s.name, s.path))
    capped = [listing._capped(runtime, s) for s in ordered]
    bare = [listing._bare(runtime, s) for s in ordered]
    full = [listing.entry_cost(runtime, s, length) for s, length in zip(ordered, capped, strict=True)]
    lengths = sorted(capped)
    return listing.ListingBase(
        runtime,
        runtime.budget(context, environ),
        [(s.name, s.path) for s in ordered],
        list(itertools.accumulate((f - b for f, b in zip(full, bare, strict=True)), initial=0)),
        list(itertools.accumulate(bare, initial=0)),
        sum(full),
        lengths,
        list(itertools.accumulate(lengths, initial=0)),
    )


def test_the_column_tables_give_every_runtime_the_skill_by_skill_base() -> None:
    """listing_table's columns against the per-skill rules: namesakes whose paths sort either side
    of the one left out, when_to_use, entry caps, budgets near the listing's whole cost."""
    rng = random.Random(15)
    for _ in range(400):
        rows = [
            (
                rng.choice(["a", "b", "ab", "a-b", "Z", "é"]),
                rng.choice(["", "x", "d" * rng.randrange(2000)]),
                rng.choice(["/w/1", "/w/2", "/w/10", "/x/é", "C:\\w\\1", "/w/a b", "/a/0"]),
                rng.choice(["", "", "w" * rng.randrange(900)]),
                rng.choice(["o1", "o2", "o3"]),
            )
            for _ in range(rng.choice([0, 1, 2, 5, 40]))
        ]
        without = rng.choice(["o1", "o2", "nobody", None])
        context = rng.choice([None, 1, 500, 2000, 100000])
        for name, runtime in RUNTIMES.items():
            others = [ListedSkill(n, d, p, w) for n, d, p, w, owner in rows if owner != without]
            whole = reference_base(runtime, others, None, {}).full_total
            near = str(max(1, whole + rng.randrange(-200, 200)))
            environ = rng.choice([{}, {"SLASH_COMMAND_TOOL_CHAR_BUDGET": near}])
            columns = listing.listed(rows)
            assert columns.keys == list(zip(columns.names, columns.paths, strict=True))
            table = listing.listing_table(runtime, columns)
            made = table.base(context, environ, without=without)
            assert made == reference_base(runtime, others, context, environ), (name, rows, without)
