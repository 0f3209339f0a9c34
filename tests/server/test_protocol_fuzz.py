"""A protocol fuzz: Hypothesis writes message sequences (random methods, params of the wrong
shape, positions out of range, edits past the end of a document, large documents) and a raw
JSON-RPC client sends them over stdio to one real server. Every request must get exactly one
answer, and the server must still answer afterwards. Bounded: a few dozen sequences, within the
normal test budget."""

from __future__ import annotations

import itertools
import json
import os
import random
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st
from raw_client import EXAMPLES, FUZZ_SUMMARY, RawClient

METHODS = [
    "textDocument/hover",
    "textDocument/completion",
    "textDocument/definition",
    "textDocument/documentSymbol",
    "textDocument/codeLens",
    "textDocument/codeAction",
    "textDocument/inlayHint",
    "textDocument/documentLink",
    "textDocument/diagnostic",
    "codeLens/resolve",
    "workspace/executeCommand",
    "skills/unknown",
]
_ids = itertools.count(1000)

numbers = st.one_of(st.integers(-5, 5), st.integers(-(2**31), 2**31), st.just(10**9))
positions = st.fixed_dictionaries({"line": numbers, "character": numbers})
junk = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=20)),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)


@st.composite
def request(draw: st.DrawFn, uri: str) -> dict[str, Any]:
    method = draw(st.sampled_from(METHODS))
    start, end = draw(positions), draw(positions)
    params = draw(
        st.one_of(
            st.just({"textDocument": {"uri": uri}, "position": start}),
            st.just(
                {
                    "textDocument": {"uri": uri},
                    "range": {"start": start, "end": end},
                    "context": {"diagnostics": []},
                }
            ),
            st.just({"textDocument": {"uri": uri}}),
            st.just({"command": "skillsLsp.scoreQuery", "arguments": [draw(st.text(max_size=30))]}),
            junk,
        )
    )
    return {"id": next(_ids), "method": method, "params": params}


@st.composite
def edit(draw: st.DrawFn, uri: str, version: int) -> dict[str, Any]:
    start, end = draw(positions), draw(positions)
    text = draw(st.one_of(st.text(max_size=40), st.just("---\nname: x\n---\n" + "word " * 20_000)))
    change = draw(
        st.one_of(st.just({"range": {"start": start, "end": end}, "text": text}), st.just({"text": text}))
    )
    return {
        "method": "textDocument/didChange",
        "params": {"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]},
    }


# Printed at the end, with the message count: a failure can be replayed with
# SKILLS_LSP_FUZZ_SEED=<seed>.
SEED = int(os.environ.get("SKILLS_LSP_FUZZ_SEED") or random.SystemRandom().randrange(2**32))
RSS_LIMIT_MIB = 1024  # the examples workspace plus fuzzed documents stays far under this


def peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text(encoding="utf-8").splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


@pytest.fixture(scope="module")
def server(request: pytest.FixtureRequest) -> Any:
    client = RawClient()
    client.send(
        {
            "id": 1,
            "method": "initialize",
            "params": {"processId": None, "rootUri": EXAMPLES.as_uri(), "capabilities": {}},
        }
    )
    client.send({"method": "initialized", "params": {}})
    client.answers(1)
    try:
        yield client
        # Bounded memory, then a clean shutdown: `shutdown` answered, `exit` ends the process with 0.
        rss = peak_rss_mib(client.process.pid)
        client.send({"id": 2, "method": "shutdown"})
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and 2 not in client.answered_ids():
            time.sleep(0.02)
        client.send({"method": "exit"})
        status = client.process.wait(timeout=30)
        request.config.stash[FUZZ_SUMMARY] = (
            f"protocol fuzz: seed {SEED}, {client.sent} messages sent, peak RSS {rss:.0f} MiB, "
            f"exit status {status}"
        )
        assert 2 in client.answered_ids() and status == 0
        assert rss < RSS_LIMIT_MIB
    finally:
        client.close()


@seed(SEED)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_random_message_sequences_get_one_answer_each(server: RawClient, data: st.DataObject) -> None:
    uri = (EXAMPLES / "skills" / f"fuzz-{next(_ids)}" / "SKILL.md").as_uri()
    text = data.draw(st.text(max_size=200), label="opened text")
    server.send(
        {
            "method": "textDocument/didOpen",
            "params": {"textDocument": {"uri": uri, "languageId": "markdown", "version": 1, "text": text}},
        }
    )
    sent: list[int] = []
    for version in range(2, data.draw(st.integers(2, 12), label="messages")):
        if data.draw(st.booleans(), label="edit?"):
            server.send(data.draw(edit(uri, version)))
        else:
            message = data.draw(request(uri))
            sent.append(message["id"])
            server.send(message)
        if sent and data.draw(st.booleans(), label="cancel?"):
            # A cancelled request still gets exactly one answer: its result, or -32800.
            target = data.draw(st.sampled_from(sent), label="cancelled")
            server.send({"method": "$/cancelRequest", "params": {"id": target}})
    if data.draw(st.booleans(), label="garbage?"):
        server.send_body(json.dumps({"jsonrpc": "2.0", "id": next(_ids)})[:-3].encode())  # not JSON
    alive = next(_ids)
    server.send(
        {"id": alive, "method": "textDocument/documentSymbol", "params": {"textDocument": {"uri": uri}}}
    )
    server.send({"method": "textDocument/didClose", "params": {"textDocument": {"uri": uri}}})
    wanted = set(sent) | {alive}
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not wanted <= set(server.answered_ids()):
        time.sleep(0.02)
    time.sleep(0.2)  # a second answer to any of them would be here by now
    got = [i for i in server.answered_ids() if i in wanted]
    assert sorted(got) == sorted(wanted), f"answers missing or repeated: {sorted(wanted)}, {sorted(got)}"
    assert server.process.poll() is None  # still running
