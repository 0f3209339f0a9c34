#!/usr/bin/env python3
"""Time skills-lsp on a real tree of skills, side by side with agnix, in one run.

Usage::

    python benchmarks/bench_corpus.py ROOT [--repeat 3] [--agnix PATH] [--no-agnix]
        [--scorers lexical,bm25f] [--query "..."] [--python-cmd "python -m skills_lsp"]
        [--format text|json]
    python benchmarks/bench_corpus.py --extract GIT_DIR DEST [--prefix mirrors/]

ROOT is any folder: a checkout of the public corpus `gabrielmoreira/agent-skills-mirror` (mixed
licences: keep it outside this repository, never commit it), a generated workspace, a project.
``--extract`` writes the blobs of a bare repository's HEAD into DEST without a checkout (``git
ls-tree -r HEAD`` + ``git cat-file --batch``); blobs missing from a partial clone are skipped
and counted, where ``git archive`` would stop.

Every figure is one whole child process, timed from spawn to reaping by this script (``os.wait4``
gives its CPU time and peak RSS), start-up included: what a user waits for. Each kind of run is
repeated ``--repeat`` times and reported as the median and the range (min-max); the runs of one
repeat are interleaved (agnix, cold check, re-check, ...) so that a noisy neighbour on a shared
machine slows every tool alike, and ratios are taken between medians of the same run.

The skills-lsp cache lives in a fresh ``XDG_CACHE_HOME`` per repeat (ROOT must not be inside a git
checkout or have a skills-lsp config, else the cache goes beside them; ``--cache-home`` overrides),
so the runs are (each in an empty working directory, so that ``--python-cmd "env PYTHONPATH=OLD
python -m skills_lsp"`` times another checkout, e.g. the previous commit):

* ``agnix``: ``agnix ROOT --format json --max-files 0`` (agnix has no cache)
* ``check cold``: ``check ROOT --format json --exit-zero --no-cache`` (not with ``--no-cold-check``)
* ``check fill``: ``check ROOT --format json --exit-zero`` with an empty cache
* ``re-check``: the same again, nothing changed
* ``index cold`` / ``index warm``: ``index ROOT --format json`` with an empty cache, then again
* ``select S cold`` / ``select S warm``: ``select QUERY --root ROOT --scorer S --format json`` for
  every scorer S, with an empty cache, then again (``warm``: the persistent index, if any, is filled)

``--check-only`` times agnix and ``check cold --jobs N`` for each N of ``--jobs`` (default 1,2)
only, and with ``--baseline-cmd CMD`` the same cold checks of CMD (e.g. ``env PYTHONPATH=OLD
python -m skills_lsp``), interleaved in each repeat: before and after in one run.

Exit status: 0 whatever the timings; 1 if a command fails; 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
DEFAULT_QUERY = "review a pull request and suggest fixes for failing tests"


@dataclass
class Sample:
    wall: float
    cpu: float
    rss_mib: float


@dataclass
class Series:
    label: str
    command: list[str]
    samples: list[Sample] = field(default_factory=list)

    def median(self, attribute: str = "wall") -> float:
        return statistics.median(getattr(s, attribute) for s in self.samples)

    def spread(self, attribute: str = "wall") -> tuple[float, float]:
        values = [getattr(s, attribute) for s in self.samples]
        return min(values), max(values)


class BenchError(Exception):
    pass


def run_timed(command: Sequence[str], env: dict[str, str], cwd: Path, ok: tuple[int, ...] = (0,)) -> Sample:
    """Run `command` to completion, its output discarded; wall, CPU (user + system) and peak RSS.
    An exit status outside `ok` is an error (agnix exits 1 when it reports findings)."""
    with open(os.devnull, "wb") as null, tempfile.TemporaryFile() as errors:
        start = time.perf_counter()
        proc = subprocess.Popen(command, stdout=null, stderr=errors, env=env, cwd=cwd)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode not in ok:
            errors.seek(0)
            tail = errors.read()[-2000:].decode("utf-8", "replace")
            raise BenchError(f"{shlex.join(command)} exited {proc.returncode}:\n{tail}")
    return Sample(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)


def extract(git_dir: Path, dest: Path, prefix: str = "") -> tuple[int, int]:
    """Write HEAD's blobs of a bare repository below `dest`; (written, missing)."""
    listing = subprocess.run(
        ["git", "--git-dir", str(git_dir), "ls-tree", "-r", "-z", "HEAD"], capture_output=True, check=True
    ).stdout
    entries: list[tuple[str, str]] = []
    for record in listing.split(b"\0"):
        if not record:
            continue
        meta, raw_path = record.split(b"\t", 1)
        mode, kind, sha = meta.split()
        if kind != b"blob" or mode in (b"120000", b"160000"):  # no symbolic links, no submodules
            continue
        path = os.fsdecode(raw_path)
        if path.startswith(prefix) and ".." not in Path(path).parts:
            entries.append((sha.decode(), path))
    proc = subprocess.Popen(
        ["git", "--git-dir", str(git_dir), "cat-file", "--batch"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert proc.stdin is not None and proc.stdout is not None
    stdin = proc.stdin

    def feed() -> None:  # in a thread: cat-file's output would fill its pipe and block us both
        for sha, _ in entries:
            stdin.write(sha.encode() + b"\n")
        stdin.close()

    threading.Thread(target=feed, daemon=True).start()
    written = missing = 0
    for _sha, path in entries:
        header = proc.stdout.readline().split()
        if len(header) >= 2 and header[1] == b"missing":
            missing += 1
            continue
        data = proc.stdout.read(int(header[2]))
        proc.stdout.read(1)  # the newline after each object
        target = dest / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        written += 1
    proc.wait()
    return written, missing


def warm_page_cache(root: Path) -> int:
    count = 0
    for folder, _, names in os.walk(root):
        for name in names:
            try:
                with open(os.path.join(folder, name), "rb") as handle:
                    while handle.read(1 << 20):
                        pass
                count += 1
            except OSError:
                pass
    return count


def plan(args: argparse.Namespace) -> list[tuple[str, list[str], bool]]:
    """(label, command, fresh cache first?) in the order one repeat runs them."""
    cli = shlex.split(args.python_cmd)
    root = str(args.root)
    steps: list[tuple[str, list[str], bool]] = []
    if args.agnix:
        steps.append(("agnix", [args.agnix, root, "--format", "json", "--max-files", "0"], False))
    check = [*cli, "check", root, "--format", "json", "--exit-zero"]
    if args.check_only:
        commands = [("", cli)]
        if args.baseline_cmd:
            commands.insert(0, (", baseline", shlex.split(args.baseline_cmd)))
        for suffix, command in commands:
            cold = [*command, "check", root, "--format", "json", "--exit-zero", "--no-cache"]
            steps += [
                (f"check cold{suffix} --jobs {jobs}", [*cold, "--jobs", str(jobs)], False)
                for jobs in args.jobs
            ]
        return steps
    if not args.no_cold_check:
        steps.append(("check cold", [*check, "--no-cache"], False))
    steps += [
        ("check fill", check, True),
        ("re-check", check, False),
        ("index cold", [*cli, "index", root, "--format", "json"], True),
        ("index warm", [*cli, "index", root, "--format", "json"], False),
    ]
    for scorer in args.scorers:
        select = [*cli, "select", args.query, "--root", root, "--scorer", scorer, "--format", "json"]
        steps += [(f"select {scorer} cold", select, True), (f"select {scorer} warm", select, False)]
    return steps


def measure(args: argparse.Namespace) -> list[Series]:
    steps = plan(args)
    series = {label: Series(label, command) for label, command, _ in steps}
    scratch = Path(tempfile.mkdtemp(prefix="bench-corpus-"))
    try:
        for repeat in range(args.repeat):
            cache_home = Path(args.cache_home) if args.cache_home else scratch / "cache"
            for label, command, fresh in steps:
                if fresh:
                    shutil.rmtree(cache_home, ignore_errors=True)
                    cache_home.mkdir(parents=True)
                env = {**os.environ, "XDG_CACHE_HOME": str(cache_home), "PYTHONHASHSEED": "0"}
                sample = run_timed(command, env, scratch, (0, 1) if label == "agnix" else (0,))
                series[label].samples.append(sample)
                print(
                    f"[{repeat + 1}/{args.repeat}] {label:<22} {sample.wall:7.2f} s wall "
                    f"{sample.cpu:7.2f} s cpu {sample.rss_mib:7.0f} MiB",
                    file=sys.stderr,
                    flush=True,
                )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return list(series.values())


def report(results: list[Series], args: argparse.Namespace, files: int) -> str:
    by_label = {s.label: s for s in results}
    agnix = by_label.get("agnix")
    lines = [
        f"tree: {args.root} ({files} files), repeat {args.repeat}, cpus {os.cpu_count()}",
        "",
        "| run | wall median (s) | range (s) | cpu median (s) | peak RSS (MiB) | x agnix |",
        "|---|---|---|---|---|---|",
    ]
    for s in results:
        low, high = s.spread()
        ratio = f"{s.median() / agnix.median():.2f}" if agnix and s is not agnix else ""
        lines.append(
            f"| {s.label} | {s.median():.2f} | {low:.2f}-{high:.2f} | {s.median('cpu'):.2f} | "
            f"{s.median('rss_mib'):.0f} | {ratio} |"
        )
    lines += ["", "commands:"]
    lines += [f"- {s.label}: `{shlex.join(s.command)}`" for s in results]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("root", nargs="?", type=Path)
    parser.add_argument("--extract", nargs=2, metavar=("GIT_DIR", "DEST"))
    parser.add_argument("--prefix", default="", help="with --extract: only paths starting with this")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--agnix", default=shutil.which("agnix"), help="agnix executable (default: on PATH)")
    parser.add_argument("--no-agnix", dest="agnix", action="store_const", const=None)
    parser.add_argument("--scorers", default="lexical,bm25f", type=lambda t: [s for s in t.split(",") if s])
    parser.add_argument("--query", default=DEFAULT_QUERY)
    parser.add_argument(
        "--no-cold-check", action="store_true", help="leave out `check cold` (to time the warm paths sooner)"
    )
    parser.add_argument("--python-cmd", default=f"{shlex.quote(sys.executable)} -m skills_lsp")
    parser.add_argument("--cache-home", help="XDG_CACHE_HOME for the skills-lsp runs (default: a fresh one)")
    parser.add_argument("--format", choices=["text", "json"], default="text")
    parser.add_argument(
        "--check-only", action="store_true", help="only agnix and cold checks, once per --jobs value"
    )
    parser.add_argument(
        "--jobs",
        default=[1, 2],
        type=lambda t: [int(n) for n in t.split(",") if n],
        help="with --check-only: the --jobs values to time (default: 1,2)",
    )
    parser.add_argument(
        "--baseline-cmd",
        help="with --check-only: also time this command's cold checks (e.g. the previous commit)",
    )
    args = parser.parse_args(argv)
    if args.extract:
        written, missing = extract(Path(args.extract[0]), Path(args.extract[1]), args.prefix)
        print(f"{written} files written, {missing} blobs missing (skipped)")
        return 0
    if args.root is None or not args.root.is_dir():
        parser.error("ROOT must be a folder")
    if args.repeat < 1:
        parser.error("--repeat must be 1 or more")
    args.root = args.root.resolve()
    if args.agnix is None:
        print(
            "agnix not found: `pip install agnix` (or pass --agnix PATH); running without it", file=sys.stderr
        )
    files = warm_page_cache(args.root)
    try:
        results = measure(args)
    except BenchError as exc:
        print(exc, file=sys.stderr)
        return 1
    if args.format == "json":
        payload: dict[str, Any] = {
            "root": str(args.root),
            "files": files,
            "repeat": args.repeat,
            "runs": [
                {
                    "label": s.label,
                    "command": s.command,
                    "wall": [x.wall for x in s.samples],
                    "cpu": [x.cpu for x in s.samples],
                    "rss_mib": [x.rss_mib for x in s.samples],
                }
                for s in results
            ],
        }
        print(json.dumps(payload, indent=2))
    else:
        print(report(results, args, files))
    return 0


if __name__ == "__main__":
    sys.exit(main())
