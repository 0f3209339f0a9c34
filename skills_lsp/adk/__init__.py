"""Run the skills skills-lsp checks in Google ADK (the `adk` extra: `pip install skills-lsp[adk]`).

- `load_adk_skills` / `load_adk_skills_report`: `google.adk.skills.Skill` objects for ADK's own
  `SkillToolset`, discovered, parsed and validated by skills-lsp's core.
- `run_script`: a skill's `scripts/` file run in a subprocess with a timeout, capped output, a
  scrubbed environment and the strongest sandbox layer that works here (`process_isolation()`:
  bubblewrap, unprivileged namespaces, or none with a warning).
- `skill_tools`: the on-demand tools `use_skill` (with the `<available_skills>` catalog),
  `read_reference` and `run_script`; errors come back as `{"error": ...}` results.
- `SkillInjectorPlugin`: the core's prompt injection on each user message.
- `bind_skill` / `skill_agent`: a skill's instruction with exactly the ADK tools its
  `allowed-tools` resolve to (the core coordinator's strict / permissive / fallback modes).
- `SkillsLspRegistry`: a `google.adk.skills.SkillRegistry` for ADK's `SkillToolset(registry=...)`:
  `search_skills` ranks the checked skills with the workspace's scorer at its calibrated threshold.
- `SkillsShellTool`: one allow-listed command in the skills root, no shell, no path outside it.
- `UploadStagingPlugin`: the user's file parts saved under a per-session `uploads/` folder, the
  model told their paths; `StagingShellTool` runs the shell there with `skills/` linked in.

Only this package imports google.adk; `skills_lsp.core` never does.
"""

from __future__ import annotations

try:
    import google.adk.skills  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised without the extra installed
    raise ImportError(
        "skills_lsp.adk needs google-adk: install skills-lsp[adk] (pip install 'skills-lsp[adk]')"
    ) from exc

from skills_lsp.adk.binding import AdkToolRegistry, SkillBindError, SkillBinding, bind_skill, skill_agent
from skills_lsp.adk.loader import (
    ADK_CODE,
    AdkLoadReport,
    SkillLoadError,
    format_finding,
    load_adk_skills,
    load_adk_skills_report,
)
from skills_lsp.adk.plugin import Injection, SkillInjectorPlugin
from skills_lsp.adk.registry import SkillsLspRegistry
from skills_lsp.adk.sandbox import (
    Isolation,
    Limits,
    PathRefused,
    ScriptRefused,
    ScriptResult,
    process_isolation,
    run_script,
)
from skills_lsp.adk.shell import DEFAULT_COMMANDS, ShellRefused, SkillsShellTool, parse_command
from skills_lsp.adk.tools import (
    ReadReferenceTool,
    RunScriptTool,
    SkillSource,
    UseSkillTool,
    skill_index,
    skill_tools,
)
from skills_lsp.adk.uploads import StagedFile, StagingShellTool, UploadStagingPlugin, safe_name, staging_root
from skills_lsp.core.engine.coordinator import ValidationMode

__all__ = [
    "ADK_CODE",
    "DEFAULT_COMMANDS",
    "AdkLoadReport",
    "AdkToolRegistry",
    "Injection",
    "Isolation",
    "Limits",
    "PathRefused",
    "ReadReferenceTool",
    "RunScriptTool",
    "ScriptRefused",
    "ScriptResult",
    "ShellRefused",
    "SkillBindError",
    "SkillBinding",
    "SkillInjectorPlugin",
    "SkillLoadError",
    "SkillSource",
    "SkillsLspRegistry",
    "SkillsShellTool",
    "StagedFile",
    "StagingShellTool",
    "UploadStagingPlugin",
    "UseSkillTool",
    "ValidationMode",
    "bind_skill",
    "format_finding",
    "load_adk_skills",
    "load_adk_skills_report",
    "parse_command",
    "process_isolation",
    "run_script",
    "safe_name",
    "skill_agent",
    "skill_index",
    "skill_tools",
    "staging_root",
]
