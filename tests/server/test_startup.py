"""Start-up on a folder of a few hundred skills: `$/progress` reports how far the folder's own
load got (not only once per folder), and a skill opened while the folder loads is served once
the load ends: its code-lens request answered meanwhile, its symbols, inlay hints and completion
once the load ends; and a warm start (the saved index and postings) answers what a cold one
answered.

The server is started here (not the session's shared one), on a workspace written for the test,
with a cache folder of its own (XDG_CACHE_HOME), so the load reads every file."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from lsp_helpers import index_ends, wait_for
from lsprotocol import types
from pygls.uris import from_fs_path
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from skills_lsp.core.files.cache import CACHE_DIR_NAME
from skills_lsp.core.index.store import DOCUMENTS_FILE, LISTING_FILE, read_frame, schema_key, write_frame
from skills_lsp.server.cold_build import CHILD_FROM_VARIABLE

pytestmark = pytest.mark.asyncio(loop_scope="session")

SKILLS = 400


def write_workspace(root: Path) -> Path:
    """SKILLS skills in `.claude/skills/`, one of them with a name that differs from its folder."""
    for number in range(SKILLS):
        # `@` in a path: pygls keys open documents unquoted, clients send it as `%40`.
        folder = root / "team@work" / ".claude" / "skills" / f"skill-{number:03d}"
        folder.mkdir(parents=True)
        name = "misnamed" if number == 7 else f"skill-{number:03d}"
        (folder / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: Handles task number {number} of the quarterly "
            f"report pipeline. Use when asked about report {number}.\n---\n\n# Skill {number}\n\n"
            "Steps to follow.\n",
            encoding="utf-8",
        )
    (root / "skills-lsp.toml").write_text(
        'scorer = "bm25f"\nroots = ["team@work/.claude/skills"]\n', encoding="utf-8"
    )
    return root


async def start(
    workspace: Path, cache: Path, env: dict[str, str] | None = None, log: Path | None = None
) -> tuple[LanguageClient, list[types.PublishDiagnosticsParams]]:
    """A server on `workspace` with `cache` as XDG_CACHE_HOME (and `env`, logging to `log` at
    INFO), initialized as VS Code does it, and the diagnostics it will publish."""
    logging = ["--log-level", "INFO", "--log-file", str(log)] if log is not None else []
    config = ClientServerConfig(
        server_command=[sys.executable, "-m", "skills_lsp", "serve", "--stdio", *logging],
        server_env={**os.environ, "XDG_CACHE_HOME": str(cache), **(env or {})},
    )
    client = await config.start()
    assert isinstance(client, LanguageClient)
    published: list[types.PublishDiagnosticsParams] = []
    client.protocol.fm.features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = published.append
    uri = workspace.as_uri()
    await client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual_studio_code"),
            root_uri=uri,
            workspace_folders=[types.WorkspaceFolder(uri=uri, name="ws")],
        )
    )
    return client, published


async def test_progress_is_reported_within_one_folders_load(tmp_path: Path) -> None:
    workspace = write_workspace(tmp_path / "ws")
    client, published = await start(workspace, tmp_path / "cache")
    try:
        # Opened at once, most likely while the folder loads.
        skill = workspace / "team@work" / ".claude" / "skills" / "skill-007" / "SKILL.md"
        skill_uri = from_fs_path(str(skill))
        assert skill_uri is not None and "%40" in skill_uri
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                # An empty line at the end of the frontmatter (line 3), where keys complete.
                types.TextDocumentItem(
                    skill_uri,
                    "markdown",
                    1,
                    skill.read_text(encoding="utf-8").replace("\n---\n", "\n\n---\n", 1),
                )
            )
        )
        loading = index_ends(client) == 0
        # Answered (no lenses while the folder loads, the skill's once it is loaded), not an error.
        await client.text_document_code_lens_async(
            types.CodeLensParams(types.TextDocumentIdentifier(skill_uri))
        )
        # Completion too: the file's allowed keys, not nothing.
        completion = await client.text_document_completion_async(
            types.CompletionParams(types.TextDocumentIdentifier(skill_uri), types.Position(3, 0))
        )
        # A client asks for these once per version: asked while the folder loads, they are
        # answered once it has loaded, with the skill's own symbols and hint, not left empty.
        symbols = await client.text_document_document_symbol_async(
            types.DocumentSymbolParams(types.TextDocumentIdentifier(skill_uri))
        )
        whole = types.Range(types.Position(0, 0), types.Position(20, 0))
        hints = await client.text_document_inlay_hint_async(
            types.InlayHintParams(types.TextDocumentIdentifier(skill_uri), whole)
        )
        assert loading or index_ends(client) >= 1
        assert isinstance(completion, types.CompletionList)
        assert "license" in {item.label for item in completion.items}
        assert symbols is not None and all(isinstance(s, types.DocumentSymbol) for s in symbols)
        outline = {s.name: [c.name for c in s.children or []] for s in symbols}
        assert outline == {"frontmatter": ["name", "description"], "Skill 7": []}, outline
        assert hints and "tokens in the catalog" in str(hints[0].label)
        await wait_for(lambda: index_ends(client) >= 1, "the end of the indexing progress", timeout=60.0)
        [reports] = client.progress_reports.values()
        assert isinstance(reports[0], types.WorkDoneProgressBegin)
        assert isinstance(reports[-1], types.WorkDoneProgressEnd)
        assert f"{SKILLS} skills indexed" in (reports[-1].message or "")
        middle = reports[1:-1]
        assert all(isinstance(r, types.WorkDoneProgressReport) for r in middle)
        steps = [r for r in middle if isinstance(r, types.WorkDoneProgressReport)]
        percentages = [r.percentage for r in steps]
        # One folder: reports before its load ended, with a percentage, never going back.
        assert any(p is not None and 0 < p < 100 for p in percentages), percentages
        assert percentages == sorted(p for p in percentages if p is not None)
        assert any("files" in (r.message or "") for r in steps)

        # Published under the URI the client sent.
        await wait_for(lambda: any(p.uri == skill_uri for p in published), "the skill's diagnostics")
        [first] = [p for p in published if p.uri == skill_uri][:1]
        assert first.version == 1
        assert "SK208" in {str(d.code) for d in first.diagnostics}  # the name is not its folder's
        lenses = await client.text_document_code_lens_async(
            types.CodeLensParams(types.TextDocumentIdentifier(skill_uri))
        )
        assert lenses  # the folder is indexed: the skill's lenses are there
    finally:
        await client.shutdown_session()
        await client.stop()


async def first_answers(
    workspace: Path,
    cache: Path,
    env: dict[str, str] | None = None,
    log: Path | None = None,
    before_exit: Callable[[], bool] | None = None,
    reloaded: bool = False,
) -> dict[str, object]:
    """A start-up as an editor makes it: a skill and the test-query file opened at once; the
    first diagnostics published for each, the query file's lenses resolved and a hover on its
    first case, once the folder is loaded (then, when given, `before_exit` awaited). `reloaded`:
    the diagnostics are the first published after the progress ends (a folder loaded again
    once its saved index failed its check), waited for."""
    client, published = await start(workspace, cache, env, log)
    after_end: list[types.PublishDiagnosticsParams] = []

    def publish(params: types.PublishDiagnosticsParams) -> None:
        published.append(params)
        if index_ends(client) >= 1:
            after_end.append(params)

    client.protocol.fm.features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = publish
    refreshes: list[None] = []
    client.protocol.fm.features[types.WORKSPACE_CODE_LENS_REFRESH] = refreshes.append
    skill = workspace / "team@work" / ".claude" / "skills" / "skill-007" / "SKILL.md"
    queries = workspace / "skill-queries.yaml"
    opened = {}
    try:
        for path, language in ((skill, "markdown"), (queries, "yaml")):
            opened[path] = from_fs_path(str(path))
            client.text_document_did_open(
                types.DidOpenTextDocumentParams(
                    types.TextDocumentItem(opened[path], language, 1, path.read_text(encoding="utf-8"))
                )
            )
        await wait_for(lambda: index_ends(client) >= 1, "the end of the indexing progress", timeout=60.0)
        seen = after_end if reloaded else published
        for path in (skill, queries):
            await wait_for(
                lambda path=path: any(p.uri == opened[path] for p in seen), f"{path.name}'s diagnostics"
            )
        query_doc = types.TextDocumentIdentifier(opened[queries])
        lenses = await client.text_document_code_lens_async(types.CodeLensParams(query_doc))
        assert lenses
        resolved = [await client.code_lens_resolve_async(lens) for lens in lenses]
        hover = await client.text_document_hover_async(types.HoverParams(query_doc, lenses[0].range.start))
        if before_exit is not None:
            await wait_for(before_exit, "the server's work after its answers")
        first = {
            path.name: [
                (str(d.code), d.range, d.message)
                for d in next(p for p in seen if p.uri == opened[path]).diagnostics
            ]
            for path in (skill, queries)
        }
        return {
            "diagnostics": first,
            "lenses": [(lens.range, lens.command.title if lens.command else None) for lens in resolved],
            "hover": hover.contents if hover is not None else None,
        }
    finally:
        await client.shutdown_session()
        await client.stop()


def write_queries(workspace: Path) -> list[str]:
    cases = [
        f"  - query: Handles task number {n} of the quarterly report pipeline\n    expect: skill-{n:03d}\n"
        for n in range(0, SKILLS, 40)
    ]
    cases.append("  - query: nothing here matches zzz\n    expect: none\n")
    (workspace / "skill-queries.yaml").write_text("cases:\n" + "".join(cases), encoding="utf-8")
    return cases


async def test_a_warm_start_answers_as_a_cold_one(tmp_path: Path) -> None:
    workspace = write_workspace(tmp_path / "ws")
    cases = write_queries(workspace)
    cache = tmp_path / "cache"
    cold = await first_answers(workspace, cache)
    saved = sorted(tmp_path.rglob("index-bm25f.bin"))  # in the config's folder
    assert len(saved) == 1
    stamp = saved[0].stat().st_mtime_ns
    warm = await first_answers(workspace, cache)
    assert saved[0].stat().st_mtime_ns == stamp  # the saved postings were used, not built again
    assert warm == cold
    lens_titles = [title for _, title in cold["lenses"]]  # type: ignore[attr-defined]
    assert len(lens_titles) == len(cases) and all(title and "bm25f" in title for title in lens_titles)


async def test_a_warm_start_ranks_no_test_query_again(tmp_path: Path) -> None:
    """The test queries' rankings are kept between starts (core/routing/kept_rankings.py): a
    warm start answers every lens from them, as the start that ranked them did."""
    workspace = write_workspace(tmp_path / "ws")
    cases = write_queries(workspace)
    cache = tmp_path / "cache"

    def kept() -> bool:
        return any(workspace.rglob("test-query-rankings-bm25f.bin"))  # beside the config file

    cold_log, warm_log = tmp_path / "cold.log", tmp_path / "warm.log"
    # Stopped right after its answers, before the save's delay (KEEP_RANKINGS_AFTER): the save
    # is made as the server stops.
    cold = await first_answers(workspace, cache, log=cold_log)
    assert kept()
    warm = await first_answers(workspace, cache, log=warm_log)
    assert warm == cold
    assert f"ranked {len(cases)} times" in cold_log.read_text(encoding="utf-8")
    counts = [
        line for line in warm_log.read_text(encoding="utf-8").splitlines() if "test queries ranked" in line
    ]
    assert counts and all("ranked 0 times" in line for line in counts), counts


async def test_a_cold_start_indexed_in_a_child_process_answers_as_one_indexed_in_the_server(
    tmp_path: Path,
) -> None:
    workspace = write_workspace(tmp_path / "ws")
    write_queries(workspace)
    here = await first_answers(workspace, tmp_path / "cache")
    shutil.rmtree(workspace / CACHE_DIR_NAME)  # beside the config file: the next start is cold
    log = tmp_path / "server.log"
    # Any folder is indexed in a child process (server/cold_build.py), not only a large one.
    child = await first_answers(workspace, tmp_path / "cache", {CHILD_FROM_VARIABLE: "1"}, log)
    assert "indexed in a child process" in log.read_text(encoding="utf-8")
    assert child == here


def age_saved_index(workspace: Path) -> None:
    """Make the index saved beside the workspace's config look saved long ago: every stamp in it
    old enough to trust (frames.RACY_NS), as in an editor started again the next day."""
    (listing_file,) = (workspace / CACHE_DIR_NAME).rglob(LISTING_FILE)
    for file, kind, field in (
        (listing_file, "listing", "started"),
        (listing_file.with_name(DOCUMENTS_FILE), "documents", "saved_ns"),
    ):
        payload = read_frame(file, schema_key(kind))
        assert payload is not None
        payload[field] += 10**12
        assert write_frame(file, schema_key(kind), payload)


async def test_a_warm_start_answers_from_the_saved_index_and_loads_again_what_changed_meanwhile(
    tmp_path: Path,
) -> None:
    workspace = write_workspace(tmp_path / "ws")
    write_queries(workspace)
    cache = tmp_path / "cache"
    await first_answers(workspace, cache)  # saves the index
    age_saved_index(workspace)
    unchanged_log = tmp_path / "unchanged.log"
    unchanged = await first_answers(workspace, cache, log=unchanged_log)
    logged = unchanged_log.read_text(encoding="utf-8")
    assert "first answers from its saved index" in logged and "changed since" not in logged

    # Edited while no editor ran: skill-040 no longer does what the second test query asks.
    edited = workspace / "team@work" / ".claude" / "skills" / "skill-040" / "SKILL.md"
    edited.write_text("---\nname: skill-040\ndescription: Bakes sourdough bread.\n---\n", encoding="utf-8")
    age_saved_index(workspace)
    changed_log = tmp_path / "changed.log"
    warm = await first_answers(workspace, cache, log=changed_log, reloaded=True)
    assert "changed since its index was saved" in changed_log.read_text(encoding="utf-8")
    shutil.rmtree(workspace / CACHE_DIR_NAME)
    cold = await first_answers(workspace, cache)
    assert warm["lenses"] == cold["lenses"] != unchanged["lenses"]
    assert warm["hover"] == cold["hover"]
    assert warm["diagnostics"] == cold["diagnostics"] != unchanged["diagnostics"]  # published anew


def slow_stats_server(tmp_path: Path, seconds: float) -> tuple[list[str], Path]:
    """A server command whose saved-index checks start `seconds` late (the interpreter its stats
    children run, sys.executable, is a script that sleeps first), and the file where each such
    child writes its process id."""
    children = tmp_path / "children"
    slow = tmp_path / "slow-python"
    slow.write_text(
        f'#!/bin/sh\necho $$ >> "{children}"\nsleep {seconds}\nexec "{sys.executable}" "$@"\n',
        encoding="utf-8",
    )
    slow.chmod(0o755)
    launcher = tmp_path / "launch.py"
    launcher.write_text(
        f"import sys\nsys.executable = {str(slow)!r}\nfrom skills_lsp.cli import main\n"
        "raise SystemExit(main(sys.argv[1:]))\n",
        encoding="utf-8",
    )
    return [sys.executable, str(launcher), "serve", "--stdio"], children


async def start_checking(
    tmp_path: Path, workspaces: list[Path], cache: Path, seconds: float
) -> tuple[LanguageClient, Path, Path]:
    """A server on `workspaces` whose saved-index checks take `seconds`, once it checks: the
    client, the server's log and the file of its stats children's process ids."""
    command, children = slow_stats_server(tmp_path, seconds)
    log = tmp_path / "server.log"
    config = ClientServerConfig(
        server_command=[*command, "--log-level", "INFO", "--log-file", str(log)],
        server_env={**os.environ, "XDG_CACHE_HOME": str(cache)},
    )
    client = await config.start()
    assert isinstance(client, LanguageClient)
    await client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual_studio_code"),
            root_uri=workspaces[0].as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=w.as_uri(), name=w.name) for w in workspaces],
        )
    )
    await wait_for(lambda: "checking its files" in read_log(log), "the saved index's check", timeout=60.0)
    return client, log, children


def read_log(log: Path) -> str:
    return log.read_text(encoding="utf-8") if log.exists() else ""


async def saved_and_edited(tmp_path: Path, name: str = "ws") -> tuple[Path, Path]:
    """A workspace with its index saved long ago, and skill-040 edited since (its check fails)."""
    workspace = write_workspace(tmp_path / name)
    write_queries(workspace)
    cache = tmp_path / "cache"
    await first_answers(workspace, cache)
    edited = workspace / "team@work" / ".claude" / "skills" / "skill-040" / "SKILL.md"
    edited.write_text("---\nname: skill-040\ndescription: Bakes sourdough bread.\n---\n", encoding="utf-8")
    age_saved_index(workspace)
    return workspace, cache


async def test_a_folder_removed_while_its_saved_index_is_checked_is_not_loaded_again(tmp_path: Path) -> None:
    workspace, cache = await saved_and_edited(tmp_path)
    client, log, _ = await start_checking(tmp_path, [workspace], cache, 2.0)
    try:
        client.workspace_did_change_workspace_folders(
            types.DidChangeWorkspaceFoldersParams(
                types.WorkspaceFoldersChangeEvent(
                    added=[], removed=[types.WorkspaceFolder(workspace.as_uri(), "ws")]
                )
            )
        )
        await wait_for(lambda: "no longer served" in read_log(log), "the failed check's end", timeout=60.0)
        assert "loading it again" not in read_log(log)
    finally:
        await client.shutdown_session()
        await client.stop()


async def test_a_shutdown_while_a_saved_index_is_checked_stops_the_check(tmp_path: Path) -> None:
    workspace, cache = await saved_and_edited(tmp_path)
    client, _, children = await start_checking(tmp_path, [workspace], cache, 30.0)
    await wait_for(children.exists, "the check's child process")
    child = int(children.read_text(encoding="utf-8").split()[0])
    await client.shutdown_session()  # returns once the server has exited
    await client.stop()
    await wait_for(lambda: not Path(f"/proc/{child}").exists(), "the check's child to end", timeout=10.0)


async def test_a_second_folders_answers_do_not_wait_for_the_first_ones_check(tmp_path: Path) -> None:
    first, cache = await saved_and_edited(tmp_path, "ws")
    second = write_workspace(tmp_path / "ws2")
    write_queries(second)
    await first_answers(second, cache)
    age_saved_index(second)
    client, _, _ = await start_checking(tmp_path, [first, second], cache, 30.0)
    try:
        # The first folder's check takes 30 s: the second folder is served already.
        shown = await client.workspace_execute_command_async(
            types.ExecuteCommandParams("skillsLsp.showIndex", [second.as_uri()])
        )
        assert isinstance(shown, list) and len(shown) == SKILLS
        assert all(skill["uri"].startswith(second.resolve().as_uri()) for skill in shown)
    finally:
        await client.shutdown_session()
        await client.stop()
