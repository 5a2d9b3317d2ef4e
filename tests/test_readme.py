"""The README keeps its promises: the two commands first, and a command synopsis in step with
each command's ``--help`` (every option the parser takes is named, and nothing else is)."""

from __future__ import annotations

import argparse
import re
from collections import defaultdict
from pathlib import Path

import pytest

from sitecrawl._cli import build_parser

README = Path(__file__).resolve().parent.parent / "README.md"
_OPTION = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*)")


def synopsis() -> dict[str, tuple[set[str], bool]]:
    """Command -> (options its synopsis lines name, whether they add ``[crawl options]``)."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Command line") :]
    block = section[section.index("```\n") + 4 :]
    block = block[: block.index("```")]
    named: dict[str, set[str]] = defaultdict(set)
    shared: dict[str, bool] = defaultdict(bool)
    command = ""
    for line in block.splitlines():
        if line.startswith("sitecrawl "):
            command = line.split()[1]
        elif not line.startswith(" "):
            raise AssertionError(f"a synopsis line that belongs to no command: {line!r}")
        named[command] |= set(_OPTION.findall(line))
        shared[command] |= "[crawl options]" in line
    return {command: (named[command], shared[command]) for command in named}


def commands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    (sub,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def test_the_readme_starts_with_its_two_commands() -> None:
    text = README.read_text(encoding="utf-8")
    blocks = re.findall(r"```sh\n(.*?)```", text, re.S)
    assert "sitecrawl crawl" in blocks[0]
    assert "pytest" in blocks[1]
    assert text.index(blocks[1]) < text.index("\n## ")


def test_every_command_is_in_the_synopsis() -> None:
    assert set(synopsis()) == set(commands())


@pytest.mark.parametrize("command", sorted(commands()))
def test_the_synopsis_names_exactly_the_options_of_help(command: str) -> None:
    named, with_crawl_options = synopsis()[command]
    allowed = named | (synopsis()["crawl"][0] if with_crawl_options else set())
    actions = [a for a in commands()[command]._actions if a.option_strings and a.dest != "help"]
    missing = [a.option_strings[-1] for a in actions if not allowed & set(a.option_strings)]
    assert not missing, f"sitecrawl {command} --help has options the README omits: {missing}"
    known = {option for action in actions for option in action.option_strings}
    unknown = sorted(named - known)
    assert not unknown, f"the README names options sitecrawl {command} does not take: {unknown}"
