"""A Google ADK agent over the example skills, with file uploads: `python examples/adk_agent.py "request"`.

What it wires together (all from `skills_lsp.adk`, the `adk` extra: `pip install 'skills-lsp[adk]'`):

- `load_adk_skills_report`: the skills under `examples/skills`, checked by skills-lsp; the three
  `broken-*` skills have errors and are left out (and listed);
- `skill_tools`: `use_skill` (with the `<available_skills>` catalog), `read_reference`, `run_script`
  over the valid skills;
- `UploadStagingPlugin`: files sent with the message (`--file data.csv`) are saved under the
  session's `uploads/` folder and the model is told their paths;
- `SkillInjectorPlugin`: the best-matching skill is put in front of the user's message;
- `StagingShellTool` (a `SkillsShellTool`): `shell(command)` in the session's folder, where
  `uploads/` holds the files and `skills/` links to the skills folder (all of it: the shell's
  root is a folder, so it also sees the skipped `broken-*` skills);
- `bind_skill` (the context coordinator): the injected skill's `allowed-tools` resolved against a
  registry of host tools, so an agent built for it gets exactly those tools;
- ADK's own `SkillToolset`, built from the same checked `Skill` objects.

`skills-lsp registry export MODULE:ATTR -o skill-tools.yaml` writes the tool manifest the editor
checks `allowed-tools` against from an agent like `host_tools()` below.

With GOOGLE_API_KEY (or GEMINI_API_KEY) set, a real Gemini model answers (`--model`, default
gemini-2.5-flash). Without one, a tiny scripted model plays the agent offline: it loads the
injected skill, runs the skill's profiling script on the uploaded file, and reports. Without
`--file`, a small demo CSV is uploaded.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import mimetypes
import os
import re
import sys
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import InMemoryRunner
from google.adk.tools.skill_toolset import SkillToolset
from google.genai import types

from skills_lsp.adk import (
    SkillInjectorPlugin,
    UploadStagingPlugin,
    bind_skill,
    load_adk_skills_report,
    skill_tools,
)

SKILLS = Path(__file__).resolve().parent / "skills"
DEFAULT_REQUEST = "Profile the attached CSV export and tell me what needs cleaning before I import it."
DEMO_CSV = (
    b"id,name,email,signup_date\n"
    b"1, Ada Lovelace ,ada@example.com,03/04/2024\n"
    b"2,Grace Hopper,grace@example.com,2024-04-13\n"
    b"2,Grace Hopper,grace@example.com,2024-04-13\n"
    b"3,Alan Turing,NA,13/04/2024\n"
)
INSTRUCTION = (
    "You help with data and engineering chores using skills. Load the relevant skill with use_skill "
    "before acting, follow its steps, and use the shell tool to run its scripts on the user's uploaded "
    "files (paths like uploads/data.csv; skill scripts are under skills/<name>/scripts/). Summarise what "
    "you found."
)


class OfflineModel(BaseLlm):
    """A scripted stand-in for Gemini: use_skill, then one shell command, then a summary."""

    model: str = "offline-demo"

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        contents = llm_request.contents
        user = "\n".join(p.text or "" for c in contents if c.role == "user" for p in c.parts or [])
        responses = [p.function_response for c in contents for p in c.parts or [] if p.function_response]
        injected = re.search(r"\[skill:([a-z0-9-]+)\]", user)
        skill = injected.group(1) if injected else "csv-data-cleaning"
        upload = re.search(r"saved as '(uploads/[^']+)'", user)
        if not responses:
            part = types.Part.from_function_call(name="use_skill", args={"name": skill})
        elif len(responses) == 1:
            scripts = sorted(p.name for p in (SKILLS / skill / "scripts").glob("*.py"))
            profile = next((s for s in scripts if s.startswith("profile")), None)
            if upload and profile:
                command = f"python skills/{skill}/scripts/{profile} {upload.group(1)}"
            else:
                command = f"ls skills/{skill}"
            part = types.Part.from_function_call(name="shell", args={"command": command})
        else:
            result = dict(responses[-1].response or {})
            output = str(result.get("stdout") or result.get("error") or "").strip()
            shown = "\n".join(output.splitlines()[:12])
            part = types.Part(
                text=f"(offline demo) I loaded the {skill} skill and ran `{result.get('command')}`:\n{shown}"
            )
        usage = types.GenerateContentResponseUsageMetadata(
            prompt_token_count=0, candidates_token_count=0, total_token_count=0
        )
        yield LlmResponse(content=types.Content(role="model", parts=[part]), usage_metadata=usage)


def _short(value: Any, limit: int = 160) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _upload(path: Path) -> types.Part:
    mime_type = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    blob = types.Blob(data=path.read_bytes(), mime_type=mime_type, display_name=path.name)
    return types.Part(inline_data=blob)


def Read(path: str) -> str:  # named as the example skills name the tool
    """Read a file from the workspace."""
    return Path(path).read_text(encoding="utf-8")


def Write(path: str, text: str) -> str:
    """Create or overwrite a file in the workspace."""
    Path(path).write_text(text, encoding="utf-8")
    return f"wrote {len(text)} characters to {path}"


def host_tools() -> list[Any]:
    """The host's own tools, by the names the skills' `allowed-tools` use."""
    return [Read, Write]


async def run(request: str, files: list[Path], model_name: str, online: bool) -> int:
    report = load_adk_skills_report(SKILLS)
    print(f"Loaded {len(report.skills)} skills: {', '.join(s.name for s in report.skills)}")
    for skipped in report.skipped:
        print(f"  skipped (errors): {Path(skipped).parent.name}")
    valid = [SKILLS / skill.name for skill in report.skills]

    staging = UploadStagingPlugin()  # a temporary folder; pass a path to keep the uploads
    model: BaseLlm | str = model_name if online else OfflineModel()
    agent = LlmAgent(
        name="skills_agent",
        model=model,
        instruction=INSTRUCTION,
        tools=[*skill_tools(valid), staging.shell_tool(SKILLS)],
    )
    # The staging plugin goes first: it rewrites the message in place, then the injector sees it.
    injector = SkillInjectorPlugin(valid)
    app = App(name="skills_demo", root_agent=agent, plugins=[staging, injector])
    runner = InMemoryRunner(app=app)
    session = await runner.session_service.create_session(app_name=app.name, user_id="user")
    parts = [types.Part(text=request)]
    if files:
        parts += [_upload(path) for path in files]
    elif not online:
        demo = types.Blob(data=DEMO_CSV, mime_type="text/csv", display_name="customers.csv")
        parts.append(types.Part(inline_data=demo))
    print(f"User: {request}" + "".join(f" [+ {p.inline_data.display_name}]" for p in parts if p.inline_data))
    final = ""
    async for event in runner.run_async(
        user_id="user", session_id=session.id, new_message=types.Content(role="user", parts=parts)
    ):
        for call in event.get_function_calls():
            print(f"-> {call.name}({_short(call.args or {})})")
        for response in event.get_function_responses():
            print(f"<- {response.name}: {_short(response.response or {})}")
        if event.author != "user" and event.content and not event.get_function_calls():
            text = "".join(p.text or "" for p in event.content.parts or [] if not p.thought)
            final = text or final
    await runner.close()
    for staged in staging.staged:
        refused = f", refused: {staged.refused}" if staged.refused else ""
        print(f"Staged: {staged.path or staged.name} ({staged.size} bytes{refused})")
    for injection in injector.injections:
        print(f"Injected skill: {injection.skill} (score {injection.score:.2f})")
        # The coordinator: an agent dedicated to this skill would get exactly these host tools
        # (permissive: `Bash(python3:*)` is not a host tool here, so it is left out, not promised).
        binding = bind_skill(valid, host_tools(), injection.skill, mode="permissive")
        print(f"Coordinator binds {injection.skill} to: {', '.join(binding.tool_names) or '(no tools)'}")
    toolset = SkillToolset(skills=report.skills)
    adk_tools = [tool.name for tool in await toolset.get_tools(None)]
    print(f"ADK's own SkillToolset over the same skills offers: {', '.join(adk_tools)}")
    print(f"Agent: {final}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("request", nargs="?", default=DEFAULT_REQUEST, help="what to ask the agent")
    parser.add_argument("--file", action="append", type=Path, default=[], help="upload a file (repeatable)")
    parser.add_argument("--model", default="gemini-2.5-flash", help="Gemini model (with an API key)")
    args = parser.parse_args(argv)
    for path in args.file:
        if not path.is_file():
            parser.error(f"no such file: {path}")
    online = bool(os.environ.get("GOOGLE_API_KEY") or os.environ.get("GEMINI_API_KEY"))
    if not online:
        print(
            "No GOOGLE_API_KEY or GEMINI_API_KEY set: running the scripted offline demo "
            "(set one to use a real Gemini model)."
        )
    return asyncio.run(run(args.request, args.file, args.model, online))


if __name__ == "__main__":
    sys.exit(main())
