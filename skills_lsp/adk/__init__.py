"""Run the skills skills-lsp checks in Google ADK (the `adk` extra: `pip install skills-lsp[adk]`).

- `load_adk_skills` / `load_adk_skills_report`: `google.adk.skills.Skill` objects for ADK's own
  `SkillToolset`, discovered, parsed and validated by skills-lsp's core.
- `run_script`: a skill's `scripts/` file run in a subprocess with a timeout, capped output and a
  scrubbed environment.

Only this package imports google.adk; `skills_lsp.core` never does.
"""

from __future__ import annotations

try:
    import google.adk.skills  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised without the extra installed
    raise ImportError(
        "skills_lsp.adk needs google-adk: install skills-lsp[adk] (pip install 'skills-lsp[adk]')"
    ) from exc

from skills_lsp.adk.loader import (
    ADK_CODE,
    AdkLoadReport,
    SkillLoadError,
    format_finding,
    load_adk_skills,
    load_adk_skills_report,
)
from skills_lsp.adk.sandbox import ScriptRefused, ScriptResult, run_script

__all__ = [
    "ADK_CODE",
    "AdkLoadReport",
    "ScriptRefused",
    "ScriptResult",
    "SkillLoadError",
    "format_finding",
    "load_adk_skills",
    "load_adk_skills_report",
    "run_script",
]
