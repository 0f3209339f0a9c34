"""What the server tests share: opening documents, editing them the way an editor does,
getting diagnostics (pulled or published, whichever the preset does) and position units."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lsprotocol import types
from pytest_lsp import LanguageClient

TIMEOUT = 5.0
RULES_URL = "https://github.com/skills-lsp/skills-lsp/blob/main/docs/rules.md"


def unique(prefix: str) -> str:
    """A skill name no other test (or preset) uses."""
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


# --- what the client is ----------------------------------------------------------------------


def pulls(client: LanguageClient) -> bool:
    """Whether the client pulls diagnostics (else the server publishes them)."""
    caps = client.capabilities
    return bool(caps and caps.text_document and caps.text_document.diagnostic)


def refreshes_code_lenses(client: LanguageClient) -> bool:
    caps = client.capabilities
    return bool(
        caps and caps.workspace and caps.workspace.code_lens and caps.workspace.code_lens.refresh_support
    )


def encoding(client: LanguageClient) -> str:
    """The position encoding the server chose in `initialize` (UTF-16 unless negotiated)."""
    result: types.InitializeResult = client.init_result  # type: ignore[attr-defined]
    return str(result.capabilities.position_encoding or types.PositionEncodingKind.Utf16)


def units(text: str, encoding: str) -> int:
    """The length of `text` in the units of a position encoding."""
    if encoding == types.PositionEncodingKind.Utf8:
        return len(text.encode("utf-8"))
    if encoding == types.PositionEncodingKind.Utf32:
        return len(text)
    return len(text.encode("utf-16-le")) // 2


def position_of(text: str, needle: str, encoding: str, after: int = 0, occurrence: int = 0) -> types.Position:
    """Where `needle` starts in `text` (plus `after` code points), in client units."""
    index = -1
    for _ in range(occurrence + 1):
        index = text.index(needle, index + 1)
    index += after
    line = text.count("\n", 0, index)
    line_start = text.rfind("\n", 0, index) + 1
    return types.Position(line, units(text[line_start:index], encoding))


def range_of(text: str, needle: str, encoding: str, occurrence: int = 0) -> types.Range:
    start = position_of(text, needle, encoding, occurrence=occurrence)
    end = position_of(text, needle, encoding, after=len(needle), occurrence=occurrence)
    return types.Range(start, end)


def offset_at(text: str, position: types.Position, encoding: str) -> int:
    """The string index of a position given in client units."""
    lines = text.split("\n")
    offset = sum(len(line) + 1 for line in lines[: position.line])
    line = lines[position.line] if position.line < len(lines) else ""
    count = 0
    for index, char in enumerate(line):
        if count >= position.character:
            return offset + index
        count += units(char, encoding)
    return offset + len(line)


def apply_edits(text: str, edits: Sequence[types.TextEdit], encoding: str) -> str:
    """`edits` (all relative to `text`, as in a WorkspaceEdit) applied to `text`."""
    spans = sorted(
        (
            (offset_at(text, e.range.start, encoding), offset_at(text, e.range.end, encoding), e.new_text)
            for e in edits
        ),
        reverse=True,
    )
    for start, end, new_text in spans:
        text = text[:start] + new_text + text[end:]
    return text


# --- documents -------------------------------------------------------------------------------


def publications(client: LanguageClient, uri: str) -> list[types.PublishDiagnosticsParams]:
    """Every textDocument/publishDiagnostics received for `uri`, in order."""
    published: dict[str, list[types.PublishDiagnosticsParams]] = client.published  # type: ignore[attr-defined]
    return published.setdefault(uri, [])


@dataclass
class Doc:
    """An open document, edited the way an editor does it (incremental changes)."""

    client: LanguageClient
    uri: str
    text: str
    version: int = 1
    seen: int = 0  # publications for this URI before this document was opened

    @property
    def encoding(self) -> str:
        return encoding(self.client)

    def position(self, needle: str, after: int = 0, occurrence: int = 0) -> types.Position:
        return position_of(self.text, needle, self.encoding, after, occurrence)

    def range(self, needle: str, occurrence: int = 0) -> types.Range:
        return range_of(self.text, needle, self.encoding, occurrence)

    @property
    def end(self) -> types.Position:
        """The end of the text."""
        return position_of(self.text, "", self.encoding, after=len(self.text))

    def edit(self, edits: Sequence[types.TextEdit]) -> None:
        """Send `edits` (relative to the current text) as one didChange, last edit first so each
        change event applies to the text the previous one left."""
        ordered = sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True)
        self.text = apply_edits(self.text, edits, self.encoding)
        self.version += 1
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=self.uri, version=self.version),
                content_changes=[
                    types.TextDocumentContentChangePartial(range=e.range, text=e.new_text) for e in ordered
                ],
            )
        )

    def replace(self, old: str, new: str) -> None:
        """Replace the first `old` by `new` with an incremental change."""
        self.edit([types.TextEdit(self.range(old), new)])

    def set_text(self, text: str) -> None:
        """Replace the whole document."""
        self.text = text
        self.version += 1
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=self.uri, version=self.version),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )

    def save(self) -> None:
        self.client.text_document_did_save(
            types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(self.uri))
        )

    def published(self) -> list[types.PublishDiagnosticsParams]:
        """The publications since this document was opened."""
        return publications(self.client, self.uri)[self.seen :]

    async def diagnostics(
        self, until: Callable[[list[types.Diagnostic]], bool] | None = None, timeout: float = TIMEOUT
    ) -> list[types.Diagnostic]:
        """The diagnostics of the current text: pulled when the client pulls, else the latest
        publication for this version. With `until`, ask (or wait for publications) until it holds."""
        found: list[types.Diagnostic] = []

        async def ask() -> bool:
            nonlocal found
            if pulls(self.client):
                found = await pull(self.client, self.uri)
                return True
            current = [p for p in self.published() if p.version == self.version]
            if not current:
                return False
            found = list(current[-1].diagnostics)
            return True

        async def wait() -> None:
            while not (await ask() and (until is None or until(found))):
                await asyncio.sleep(0.02)

        try:
            await asyncio.wait_for(wait(), timeout)
        except asyncio.TimeoutError:
            raise AssertionError(f"diagnostics of {self.uri} never matched; last: {found}") from None
        return found


async def pull(client: LanguageClient, uri: str) -> list[types.Diagnostic]:
    report = await client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri))
    )
    assert isinstance(report, types.RelatedFullDocumentDiagnosticReport)
    return list(report.items)


def open_doc(
    client: LanguageClient, path: Path, text: str | None = None, language_id: str = "markdown"
) -> Doc:
    """Send didOpen for `path` (its text on disk unless `text` is given; the file need not exist)."""
    if text is None:
        text = path.read_text(encoding="utf-8")
    uri = path.as_uri()
    seen = len(publications(client, uri))
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, language_id, 1, text))
    )
    return Doc(client, uri, text, seen=seen)


async def close_doc(doc: Doc) -> None:
    """Send didClose; a publishing server clears the document's diagnostics, and waiting for that
    means every earlier publication for it has arrived."""
    client = doc.client
    before = len(publications(client, doc.uri))
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(doc.uri))
    )
    if not pulls(client):
        await wait_for(
            lambda: any(not p.diagnostics for p in publications(client, doc.uri)[before:]),
            f"the diagnostics of {doc.uri} cleared on close",
        )


@asynccontextmanager
async def opened(
    client: LanguageClient, path: Path, text: str | None = None, language_id: str = "markdown"
) -> AsyncIterator[Doc]:
    """An open document, closed again afterwards (the tests share one server)."""
    doc = open_doc(client, path, text, language_id)
    try:
        yield doc
    finally:
        await close_doc(doc)


# --- starting a server of a test's own ------------------------------------------------------


async def initialize_examples(
    client: LanguageClient, workspace: Path, capabilities: types.ClientCapabilities
) -> None:
    """`initialize` a client of a test's own on the examples workspace, answering the requests
    pytest-lsp's client does not (code lens refresh, capability registration), with
    `client.published` and `client.init_result` set as the shared clients have them."""

    @client.feature(types.WORKSPACE_CODE_LENS_REFRESH)
    def code_lens_refresh(params: None) -> None:
        pass

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register_capability(params: types.RegistrationParams) -> None:
        pass

    client.published = getattr(client, "published", {})  # type: ignore[attr-defined]
    params = types.InitializeParams(
        capabilities=capabilities,
        root_uri=workspace.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="examples")],
    )
    client.init_result = await client.initialize_session(params)  # type: ignore[attr-defined]


# --- waiting and asking ----------------------------------------------------------------------


async def wait_for(condition: Callable[[], Any], what: str, timeout: float = TIMEOUT) -> None:
    async def wait() -> None:
        while not condition():
            await asyncio.sleep(0.02)

    try:
        await asyncio.wait_for(wait(), timeout)
    except asyncio.TimeoutError:
        raise AssertionError(f"timed out waiting for {what}") from None


def codes(found: Sequence[types.Diagnostic]) -> list[str]:
    return sorted(str(d.code) for d in found)


async def execute(client: LanguageClient, command: str, *arguments: Any) -> Any:
    return await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=command, arguments=list(arguments))
    )


async def reindexed(client: LanguageClient, before: int) -> None:
    """Wait for one more end of the indexing progress than `before` (see `index_ends`)."""
    await wait_for(lambda: index_ends(client) > before, "the end of re-indexing")


def index_ends(client: LanguageClient) -> int:
    return sum(
        isinstance(report, types.WorkDoneProgressEnd)
        for reports in client.progress_reports.values()
        for report in reports
    )
