"""A command imports its own group only: the table that says which group registers each command
matches what the groups register, and a command's parser is the one the full parser has."""

from __future__ import annotations

import argparse
import subprocess
import sys

from skills_lsp.cli import GROUP_OF, build_parser


def commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def test_every_command_is_filed_under_the_group_that_registers_it() -> None:
    everything = commands(build_parser())
    assert set(everything) - {"serve"} == set(GROUP_OF)
    for group in set(GROUP_OF.values()):
        own = commands(build_parser(group))
        assert set(own) - {"serve"} == {name for name, g in GROUP_OF.items() if g == group}
        for name, parser in own.items():
            assert parser.format_help() == everything[name].format_help()


def test_check_help_lists_the_profiles() -> None:
    from skills_lsp.core.rules.profiles import PROFILES

    def squeezed(text: str) -> str:  # the help is wrapped, at spaces and after hyphens
        return "".join(text.split()).replace("-", "")

    text = commands(build_parser("check"))["check"].format_help()
    assert squeezed(f"profile for every file ({', '.join(PROFILES)})") in squeezed(text)


def test_a_check_imports_no_rule_when_it_needs_none() -> None:
    # `check --help` needs the parser only: the stages are imported by the runs that use them.
    code = (
        "import sys; from skills_lsp.cli import build_parser; build_parser('check'); "
        "print(sorted(m for m in sys.modules if m.startswith(('skills_lsp.core.rules', 'numpy'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
