"""What every command shares: exit codes, the one-line usage error, running a crawler under
Ctrl-C and SIGTERM with live progress, and the CLI's only event loop. The crawl options are
:mod:`._options`'s (derived from the config), output files :mod:`._outputs`'s."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

if TYPE_CHECKING:
    from .._crawler import AsyncCrawler
    from .._models import Page
    from .._progress import LiveProgress

EXIT_OK, EXIT_FATAL, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
T = TypeVar("T")


class UsageError(Exception):
    """Bad command line: printed as one line, exit 2."""


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def start_page_failed(page: Page) -> int:
    """Say why a crawl that is only its failed start page failed; the exit code for it."""
    from .._terminal import printable

    message = printable(f"could not crawl {page.url}: {page.error}")
    print(f"sitecrawl: error: {message}", file=sys.stderr)
    return EXIT_FATAL


def base_url_of(args: argparse.Namespace) -> str:
    """``args.url`` as a canonical start URL; bad input is a :class:`UsageError`."""
    from .._exceptions import SitecrawlError
    from .._urls import parse_base_url

    try:
        return parse_base_url(args.url)
    except SitecrawlError as exc:
        raise UsageError(str(exc)) from None


def run_async(coro: Coroutine[Any, Any, T]) -> T:
    """The CLI's only event loop; uvloop when installed."""
    try:
        import uvloop

        loop_factory = uvloop.new_event_loop
    except ImportError:
        loop_factory = None
    with asyncio.Runner(loop_factory=loop_factory) as runner:
        return runner.run(coro)


@asynccontextmanager
async def ctrl_c_stops(crawler: AsyncCrawler, *, quiet: bool) -> AsyncIterator[None]:
    """While inside: a first stop signal (Ctrl-C or SIGTERM, :mod:`._signals`) stops the
    crawler (requests in flight finish and are recorded), a second one cancels the running
    task, later ones change nothing (the outputs are being written). A signal that arrived
    before (during the start-up) stops the crawler at once."""
    from . import _signals

    main_task = asyncio.current_task()
    count = 0

    def on_signal(signum: int) -> None:
        nonlocal count
        count += 1
        _signals.record(signum)
        if count == 1:
            crawler.stop()
            message = "stopping: finishing requests in flight (Ctrl-C again to abort)"
        elif count == 2 and main_task is not None:
            main_task.cancel()
            message = "aborting: requests in flight are dropped"
        else:
            message = "still stopping: writing what was crawled"
        if not quiet:
            print(f"\n{_signals.name(signum)}: {message}", file=sys.stderr)

    loop = asyncio.get_running_loop()
    for signum in _signals.STOP_SIGNALS:
        loop.add_signal_handler(signum, on_signal, signum)
    try:
        if _signals.take_pending():  # during the start-up
            count = 1
            crawler.stop()
        yield
    finally:
        for signum in _signals.STOP_SIGNALS:
            loop.remove_signal_handler(signum)
        _signals.install()


def progress(crawler: AsyncCrawler, verbose: bool = False) -> Callable[[], LiveProgress]:
    """The crawl's progress on stderr, for :meth:`AsyncCrawler.run`'s ``watch``: a live line
    on a terminal, else (or with ``verbose`` logging each request there) a line every few
    seconds."""
    from .._progress import LiveProgress

    return lambda: LiveProgress(crawler, live=sys.stderr.isatty() and not verbose)


@contextmanager
def verbose(args: argparse.Namespace) -> Iterator[None]:
    """``-v``: the ``sitecrawl`` logger's records (one per request) on stderr meanwhile."""
    if not getattr(args, "verbose", False) or args.quiet:
        yield
        return
    import logging

    from .._log import logger

    class RequestLines(logging.Formatter):
        """A page's record as its request line (``_log.request_line``), others as they are."""

        def format(self, record: logging.LogRecord) -> str:
            return getattr(record, "request_line", None) or record.getMessage()

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(RequestLines())
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def add_state_options(parser: Any, *, state: str, fresh: str, no_state: bool = False) -> None:
    """``--state PATH`` and ``--fresh`` (with ``no_state``, ``--no-state`` between), with the
    command's help for each."""
    parser.add_argument("--state", metavar="PATH", help=state)
    if no_state:
        parser.add_argument(
            "--no-state", action="store_true", help="keep everything in memory (no resume)"
        )
    parser.add_argument("--fresh", action="store_true", help=fresh)
