#!/usr/bin/env python3
"""Static security and size audit of a Dockerfile (no Docker daemon needed).

Usage: audit_dockerfile.py [Dockerfile]     (defaults to ./Dockerfile)

Prints LINE SEVERITY RULE: MESSAGE (see HARDENING.md#RULE) and exits 1 when any
critical or high finding is present.
"""

from __future__ import annotations

import os
import re
import sys

SECRET_NAME = re.compile(r"(PASSW(OR)?D|SECRET|TOKEN|API_?KEY|PRIVATE_?KEY|ACCESS_?KEY)", re.I)
RANK = {"critical": 0, "high": 1, "medium": 2, "low": 3}


def logical_lines(text: str) -> list[tuple[int, str]]:
    """Join backslash continuations; return (first line number, instruction) pairs."""
    out: list[tuple[int, str]] = []
    buf, start = "", 0
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip()
        if not buf and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if buf and line.lstrip().startswith("#"):
            continue  # comment lines inside a continuation are ignored by Docker
        if not buf:
            start = number
        if line.endswith("\\"):
            buf += line[:-1] + " "
            continue
        out.append((start, buf + line))
        buf = ""
    if buf:
        out.append((start, buf))
    return out


def audit(path: str) -> list[tuple[int, str, str, str]]:
    with open(path, encoding="utf-8") as fh:
        instructions = logical_lines(fh.read())
    findings: list[tuple[int, str, str, str]] = []

    def add(line: int, severity: str, rule: str, message: str) -> None:
        findings.append((line, severity, rule, message))

    stage_names: set[str] = set()
    last_user: tuple[int, str] | None = None
    has_healthcheck = has_cmd = False
    copies_context = 0

    for line, instr in instructions:
        keyword, _, args = instr.strip().partition(" ")
        keyword, args = keyword.upper(), args.strip()

        if keyword == "FROM":
            parts = args.split()
            image = parts[0] if parts else ""
            if len(parts) >= 3 and parts[1].lower() == "as":
                stage_names.add(parts[2].lower())
            if image.lower() in stage_names or image == "scratch" or "$" in image:
                continue
            last_user = None  # USER resets per stage
            name = image.split("@")[0]
            tag = name.rsplit(":", 1)[1] if ":" in name.rsplit("/", 1)[-1] else None
            if tag is None:
                add(line, "high", "pin-base-image", f"{image} has no tag (means :latest)")
            elif tag == "latest":
                add(line, "high", "pin-base-image", f"{image} uses the moving :latest tag")
            elif "@sha256:" not in image:
                add(line, "low", "pin-base-image", f"{image} is pinned by tag only; add @sha256 digest")
        elif keyword == "USER":
            last_user = (line, args)
        elif keyword in ("ENV", "ARG"):
            # ENV A=1 B=2 / ARG A=1, or the legacy ENV A 1 / ARG A forms
            names = re.findall(r"(?:^|\s)([A-Za-z_]\w*)=", args) if "=" in args else args.split()[:1]
            for name in names:
                if SECRET_NAME.search(name):
                    add(
                        line,
                        "critical",
                        "no-secrets-in-layers",
                        f"{keyword} {name} looks like a secret; use build secrets or runtime env",
                    )
                    break
        elif keyword == "ADD":
            if re.search(r"https?://", args):
                add(line, "medium", "prefer-copy", "ADD with a URL; download with curl and verify a checksum")
            elif not re.search(r"\.(tar|tgz|tar\.gz|tar\.xz|tar\.bz2)\b", args):
                add(line, "medium", "prefer-copy", "ADD for plain files; use COPY")
        elif keyword == "RUN":
            if re.search(r"\b(curl|wget)\b[^|;&]*\|\s*(ba|z)?sh\b", args):
                add(line, "critical", "no-pipe-to-shell", "remote script piped into a shell")
            if "apt-get install" in args:
                if "--no-install-recommends" not in args:
                    add(line, "low", "slim-packages", "apt-get install without --no-install-recommends")
                if "rm -rf /var/lib/apt/lists" not in args:
                    add(line, "low", "slim-packages", "apt lists not removed in the same RUN layer")
            if re.search(r"\bapk add\b", args) and "--no-cache" not in args:
                add(line, "low", "slim-packages", "apk add without --no-cache")
            if re.search(r"\bsudo\b", args):
                add(line, "medium", "no-sudo", "sudo inside a build; use USER switches instead")
        elif keyword == "HEALTHCHECK":
            has_healthcheck = not args.upper().startswith("NONE")
        elif keyword in ("CMD", "ENTRYPOINT"):
            has_cmd = True
            if not args.startswith("["):
                add(line, "low", "exec-form", f"{keyword} in shell form; signals will not reach the app")
        elif keyword == "COPY" and re.match(r"^(--\S+\s+)*\.\s+\S+$", args):
            copies_context = copies_context or line

    end = instructions[-1][0] if instructions else 1
    if last_user is None:
        add(end, "high", "run-as-non-root", "no USER instruction in the final stage; runs as root")
    elif last_user[1].split(":")[0] in ("root", "0"):
        add(last_user[0], "high", "run-as-non-root", "final USER is root")
    if has_cmd and not has_healthcheck:
        add(end, "medium", "healthcheck", "no HEALTHCHECK for a long-running container")
    dockerignore = os.path.join(os.path.dirname(os.path.abspath(path)), ".dockerignore")
    if copies_context and not os.path.exists(dockerignore):
        add(
            copies_context,
            "medium",
            "dockerignore",
            "COPY . without a .dockerignore; .git, .env and caches end up in the image",
        )
    return sorted(findings, key=lambda f: (RANK[f[1]], f[0]))


def main(argv: list[str]) -> int:
    if len(argv) > 2 or (len(argv) == 2 and argv[1] in ("-h", "--help")):
        print(__doc__.strip())
        return 0 if len(argv) == 2 else 2
    path = argv[1] if len(argv) == 2 else "Dockerfile"
    try:
        findings = audit(path)
    except OSError as exc:
        print(f"cannot read {path}: {exc}", file=sys.stderr)
        return 2
    for line, severity, rule, message in findings:
        print(f"{line:>4} {severity:<8} {rule}: {message} (see HARDENING.md#{rule})")
    if not findings:
        print("no findings")
    return 1 if any(f[1] in ("critical", "high") for f in findings) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
