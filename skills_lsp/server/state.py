"""What the server knows: one `Folder` per workspace folder and the client's settings. A changed
file goes to the module of its role (`server/roles/`); nothing here knows LSP types.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from skills_lsp.core.memory import long_lived, trim_heap, unfreeze
from skills_lsp.core.model import Finding
from skills_lsp.core.parse.frontmatter import Document
from skills_lsp.core.rules.profiles import Profile
from skills_lsp.core.rules.registry import rule_named
from skills_lsp.core.rules.validate import code_matches, resolve_profile
from skills_lsp.server import cold_build
from skills_lsp.server.folder import FileRole, Folder, LoadProgress, Outcome, load_folder
from skills_lsp.server.roles import ROLES

QUERY_FAILURE_CODE = rule_named("failing-test-query").code  # SK702


class State:
    """Workspace folders and client settings."""

    def __init__(self) -> None:
        self.folders: dict[str, Folder] = {}
        self.settings: dict[str, Any] = {}
        # Bumped whenever a folder changes: findings of every open document may change with it.
        self.generation = 0
        # Folders a worker thread is loading (sync.index_folders).
        self.indexing: set[Path] = set()

    def load_folder(
        self, root: Path, progress: LoadProgress | None = None, trust_saved: bool = False
    ) -> Folder:
        """Load `root` (again). `trust_saved`: take its saved index without a stat where it can
        (folder.folder_index); the caller then checks `Folder.saved_check` (sync.py)."""
        # A large folder without a saved index is indexed by a child process (both cores): its
        # documents are loaded here once the child has saved them, its scorers once it has ended.
        build = cold_build.start(root, self.settings, progress)
        try:
            build.wait_indexed()
            # The folder stays until it is loaded again or dropped.
            with long_lived(replacing=str(root) in self.folders):
                folder = load_folder(
                    root, self.settings, progress, build.fresh_since, build.finish, trust_saved
                )
                self.folders[str(root)] = folder
        finally:
            build.close()
        # What the load freed (bodies decoded for the vector keys, the vector file, the store's
        # pickles) goes back to the system: 42 MiB of a server's 417 at 20,000 skills.
        trim_heap()
        self.generation += 1
        return folder

    def save_pending(self) -> None:
        """Every folder's saves still waiting, made now (the server stops)."""
        for folder in list(self.folders.values()):
            folder.save_now()

    def drop_folder(self, root: Path) -> None:
        self.folders.pop(str(root), None)
        unfreeze()  # what long_lived froze of it can be collected
        self.generation += 1

    def folder_for(self, path: Path) -> Folder | None:
        best: Folder | None = None
        for folder in self.folders.values():
            try:
                path.relative_to(folder.root)
            except ValueError:
                continue
            if best is None or len(str(folder.root)) > len(str(best.root)):
                best = folder
        return best

    def update(self, path: Path, text: str | None) -> FileRole:
        """A file changed (text None: read it from disk, or it was deleted). Returns its role, or
        OTHER when the change affects nothing the server keeps."""
        folder = self.folder_for(path)
        if folder is None:
            return FileRole.OTHER
        role = folder.role(path)
        handler = ROLES.get(role)
        if handler is None:
            return FileRole.OTHER
        if text is None and path.is_file():
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                text = None
        outcome = handler.update(folder, path, text)
        if outcome is Outcome.UNCHANGED:
            return FileRole.OTHER
        if outcome is Outcome.RELOAD:
            self.load_folder(folder.root)
            return role
        folder.changed()
        self.generation += 1
        return role

    def profile_for(self, folder: Folder, path: Path) -> Profile:
        return resolve_profile(path, folder.kind(path), None, folder.config)

    def findings(
        self, path: Path, text: str, doc: Document | None = None, quick: bool = False
    ) -> list[Finding]:
        """The findings for a document's current text (an open buffer); `doc` is its parse, when
        the caller already has it. `quick`: the rules that rank it over the whole workspace give
        their last result (Role.quick_findings)."""
        folder = self.folder_for(path)
        if folder is None:
            return []
        role = folder.role(path)
        handler = ROLES.get(role)
        if handler is None:
            return []
        check = handler.quick_findings if quick and handler.quick_findings is not None else handler.findings
        found = check(folder, path, text, doc)
        ignored = folder.config.ignored_for(path)  # the skill role applies them with its comments
        if ignored and role is not FileRole.SKILL:
            found = [f for f in found if not code_matches(f.code, ignored)]
        return found
