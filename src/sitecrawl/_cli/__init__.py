"""Command line: arguments -> config -> one ``asyncio`` run; exit codes. No crawl logic.

Exit codes: 0 done; 1 fatal (the start page could not be crawled, the disk is full); 2 bad
usage or a state file that cannot be used; 130 stopped by Ctrl-C, 143 by SIGTERM (what was
crawled is still written); 141 the reader of stdout went away (quietly: :mod:`._ends`).

Each command is one module, ``_<command>``, with ``add_command(commands)``, which registers its
subparser and sets ``handler`` (``args -> exit code``); a run registers only its own command.
Modules import their heavy dependencies inside the handler, so ``sitecrawl --help`` stays
fast; this module imports only :mod:`._signals` before the stop signals are handled
(:func:`main`).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, NoReturn

from . import _signals

if TYPE_CHECKING:
    from ._common import Parser


#: The commands, in the order ``--help`` lists them: each is the module ``_<name>``.
COMMANDS = (
    "crawl",
    "worker",
    "status",
    "export",
    "check",
    "report",
    "sitemap",
    "explain",
    "extract",
    "diff",
    "serve",
    "mcp",
    "markdown",
    "screenshot",
)


def build_parser(argv: Sequence[str] | None = None) -> Parser:
    """The command line's parser. With ``argv`` naming a command first, only that command
    is registered: building every command's options (the settings walk, for most of them)
    was a third of a crawl's start-up; ``sitecrawl --help``, ``--version`` and a mistyped
    command get them all."""
    import importlib

    from .._version import __version__
    from ._common import Parser

    parser = Parser(prog="sitecrawl", description="A fast, polite, concurrent web crawler.")
    parser.add_argument("--version", action="version", version=f"sitecrawl {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    named = argv[0] if argv else None
    for name in (named,) if named in COMMANDS else COMMANDS:
        importlib.import_module(f"{__name__}._{name}").add_command(commands)
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
            argv = sys.argv[1:] if argv is None else argv
            args = build_parser(argv).parse_args(argv)
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
