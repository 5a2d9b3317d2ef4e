"""Command line: arguments -> config -> one ``asyncio`` run; exit codes. No crawl logic.

Exit codes: 0 done; 1 fatal (the start page could not be crawled, the disk is full); 2 bad
usage or a state file that cannot be used; 130 stopped by Ctrl-C, 143 by SIGTERM (what was
crawled is still written); 141 the reader of stdout went away (quietly: :mod:`._ends`).

Each command is one module with ``add_command(commands)``, which registers its subparser and
sets ``handler`` (``args -> exit code``). Modules import their heavy dependencies inside the
handler, so ``sitecrawl --help`` stays fast; this module imports only :mod:`._signals` before
the stop signals are handled (:func:`main`).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, NoReturn

from . import _signals

if TYPE_CHECKING:
    from ._common import Parser


def build_parser() -> Parser:
    from .._version import __version__
    from . import (
        _check,
        _crawl,
        _diff,
        _explain,
        _export,
        _extract,
        _markdown,
        _mcp,
        _report,
        _screenshot,
        _serve,
        _sitemap,
        _status,
        _worker,
    )
    from ._common import Parser

    parser = Parser(prog="sitecrawl", description="A fast, polite, concurrent web crawler.")
    parser.add_argument("--version", action="version", version=f"sitecrawl {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in (
        _crawl,
        _worker,
        _status,
        _export,
        _check,
        _report,
        _sitemap,
        _explain,
        _extract,
        _diff,
        _serve,
        _mcp,
    ):
        command.add_command(commands)
    _markdown.add_command(commands)
    _screenshot.add_command(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; return the exit code (tests call this in-process)."""
    with _signals.handled():
        return _guarded(argv)


def _guarded(argv: Sequence[str] | None) -> int:
    try:
        return _main(argv)
    except KeyboardInterrupt:
        print("sitecrawl: interrupted", file=sys.stderr)
        return _signals.exit_code()
    except (OSError, BaseExceptionGroup) as exc:  # the output's reader gone, a full disk
        from ._ends import ending

        code = ending(exc)
        if code is None:
            raise
        return code


def _main(argv: Sequence[str] | None) -> int:
    with _signals.deferred():  # a signal during the imports and parsing: exit once done
        from .._exceptions import StateError
        from .._terminal import printable
        from ._common import EXIT_INTERRUPTED, EXIT_USAGE, UsageError

        try:
            args = build_parser().parse_args(argv)
        except UsageError as exc:
            message = printable(str(exc))
            print(f"sitecrawl: error: {message} (see sitecrawl --help)", file=sys.stderr)
            return EXIT_USAGE
    try:
        code: int = args.handler(args)
    except (UsageError, StateError) as exc:
        from ._ends import ending

        if (ended := ending(exc)) is not None:  # a state file on a full disk
            return ended
        print(f"sitecrawl: error: {printable(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    return _signals.exit_code() if code == EXIT_INTERRUPTED else code


def run() -> NoReturn:
    """Console-script entry point. Once the command is done, a late stop signal changes
    nothing: the exit code stays the command's (not "killed by SIGINT" during teardown)."""
    with _signals.handled(then_ignore=True):
        code = _guarded(None)
    sys.exit(code)
