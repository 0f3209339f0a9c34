#!/usr/bin/env python3
"""Turn pasted chat logs, alert lines and notes into a sorted UTC timeline (Markdown).

Usage: build_timeline.py NOTES.txt [--date YYYY-MM-DD] [--tz ZONE]

Recognised timestamps, anywhere near the start of a line:
  2024-03-14T13:05:22Z, 2024-03-14 14:05:22+01:00, 2024-03-14 14:05   (ISO 8601)
  [14:05], 14:05:22, 2:05 PM                                          (needs --date)
Times without an offset are read in --tz (an IANA zone name, default UTC).
Reads standard input when NOTES.txt is "-".
"""

from __future__ import annotations

import argparse
import re
import sys
from datetime import date, datetime, timedelta, timezone
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

ISO = re.compile(
    r"(?P<date>\d{4}-\d{2}-\d{2})[T ](?P<time>\d{1,2}:\d{2}(?::\d{2})?)(?:\.\d+)?"
    r"\s*(?P<offset>Z|[+-]\d{2}:?\d{2}|UTC)?"
)
CLOCK = re.compile(r"^\W{0,3}(?P<time>\d{1,2}:\d{2}(?::\d{2})?)\s*(?P<ampm>[AaPp][Mm])?\b\W{0,2}")
SEARCH_WINDOW = 40  # a timestamp must start within the first 40 characters


def parse_offset(text: str | None, default_tz: ZoneInfo | timezone, naive: datetime) -> datetime:
    if not text or text == "UTC":
        tz = timezone.utc if text == "UTC" else default_tz
        return naive.replace(tzinfo=tz)
    if text == "Z":
        return naive.replace(tzinfo=timezone.utc)
    text = text.replace(":", "")
    sign = 1 if text[0] == "+" else -1
    hours, minutes = int(text[1:3]), int(text[3:5])
    return naive.replace(tzinfo=timezone(sign * timedelta(hours=hours, minutes=minutes)))


def parse_time(text: str) -> tuple[int, int, int]:
    parts = [int(p) for p in text.split(":")]
    return parts[0], parts[1], parts[2] if len(parts) > 2 else 0


def extract(line: str, day: date | None, tz: ZoneInfo | timezone) -> tuple[datetime, str] | None:
    match = ISO.search(line, 0, SEARCH_WINDOW + 30)
    if match and match.start() <= SEARCH_WINDOW:
        hour, minute, second = parse_time(match.group("time"))
        naive = datetime.fromisoformat(match.group("date")).replace(hour=hour, minute=minute, second=second)
        when = parse_offset(match.group("offset"), tz, naive)
        rest = (line[: match.start()] + line[match.end() :]).strip(" -|:[]\t")
        return when.astimezone(timezone.utc), rest
    match = CLOCK.match(line)
    if match and day is not None:
        hour, minute, second = parse_time(match.group("time"))
        ampm = (match.group("ampm") or "").lower()
        if ampm == "pm" and hour < 12:
            hour += 12
        elif ampm == "am" and hour == 12:
            hour = 0
        if hour > 23 or minute > 59:
            return None
        naive = datetime(day.year, day.month, day.day, hour, minute, second)
        return naive.replace(tzinfo=tz).astimezone(timezone.utc), line[match.end() :].strip(" -|:]\t")
    return None


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notes")
    parser.add_argument("--date", help="day for clock-only times, YYYY-MM-DD")
    parser.add_argument("--tz", default="UTC", help="zone for times without an offset")
    args = parser.parse_args(argv[1:])

    try:
        tz: ZoneInfo | timezone = timezone.utc if args.tz == "UTC" else ZoneInfo(args.tz)
    except ZoneInfoNotFoundError:
        print(f"unknown time zone {args.tz!r}; use an IANA name like Europe/Berlin", file=sys.stderr)
        return 2
    day = date.fromisoformat(args.date) if args.date else None

    if args.notes == "-":
        lines = sys.stdin.read().splitlines()
    else:
        with open(args.notes, encoding="utf-8") as fh:
            lines = fh.read().splitlines()

    events: dict[tuple[datetime, str], None] = {}
    undated: list[str] = []
    clock_only_without_date = 0
    for line in lines:
        if not line.strip():
            continue
        found = extract(line, day, tz)
        if found is None:
            if day is None and CLOCK.match(line):
                clock_only_without_date += 1
            undated.append(line.strip())
            continue
        when, text = found
        events.setdefault((when, " ".join(text.split())), None)

    print("| Time (UTC) | Event |")
    print("|------------|-------|")
    for when, text in sorted(events):
        print(f"| {when:%Y-%m-%d %H:%M:%S} | {text.replace('|', '/')} |")
    if undated:
        print()
        print(f"Lines without a usable timestamp ({len(undated)}), place these by hand:")
        for line in undated:
            print(f"- {line}")
    if clock_only_without_date:
        print(
            f"\n{clock_only_without_date} line(s) have a clock time only; pass --date to use them.",
            file=sys.stderr,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
