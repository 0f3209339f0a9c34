"""One module per role a file plays in a workspace folder (skill, tool manifest, test queries,
config), each with how it updates the folder and what findings a buffer of it has. Adding a file
role is one module and one line in ROLES."""

from __future__ import annotations

from skills_lsp.server.folder import FileRole, Role
from skills_lsp.server.roles import config, manifest, queries, skill

ROLES: dict[FileRole, Role] = {
    FileRole.SKILL: skill.ROLE,
    FileRole.MANIFEST: manifest.ROLE,
    FileRole.QUERIES: queries.ROLE,
    FileRole.CONFIG: config.ROLE,
}
