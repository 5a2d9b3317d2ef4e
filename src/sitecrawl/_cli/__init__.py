"""Command line: arguments -> config -> one ``asyncio`` run; exit codes. No crawl logic.

Exit codes: 0 done; 1 fatal (the start page could not be crawled); 2 bad usage or a state
file that cannot be used; 130 stopped by Ctrl-C (what was crawled is still written).

Each command is one module with ``add_command(commands)``, which registers its subparser and
sets ``handler`` (``args -> exit code``). Modules import their heavy dependencies inside the
handler, so ``sitecrawl --help`` stays fast.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import NoReturn

from .._terminal import printable
from .._version import __version__
from . import _check, _crawl, _explain, _export, _report, _status, _worker
from ._common import EXIT_USAGE, Parser, UsageError

COMMANDS = (_crawl, _worker, _status, _export, _check, _report, _explain)


def build_parser() -> Parser:
    parser = Parser(prog="sitecrawl", description="A fast, polite, concurrent web crawler.")
    parser.add_argument("--version", action="version", version=f"sitecrawl {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command.add_command(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; return the exit code (tests call this in-process)."""
    try:
        args = build_parser().parse_args(argv)
    except UsageError as exc:
        print(f"sitecrawl: error: {printable(str(exc))} (see sitecrawl --help)", file=sys.stderr)
        return EXIT_USAGE
    from .._exceptions import StateError

    try:
        code: int = args.handler(args)
    except (UsageError, StateError) as exc:
        print(f"sitecrawl: error: {printable(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    return code


def run() -> NoReturn:
    """Console-script entry point."""
    sys.exit(main())
