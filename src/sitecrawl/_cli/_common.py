"""What every command shares: exit codes, the one-line usage error, option parsers, the crawl
options (limits, politeness) and their translation into a :class:`CrawlConfig`, running a
crawler under Ctrl-C and SIGTERM with live progress, and the CLI's only event loop. Output files
are :mod:`._outputs`'s."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

if TYPE_CHECKING:
    from .._config import CrawlConfig
    from .._crawler import AsyncCrawler
    from .._models import Page
    from ..control._rules import Rules

EXIT_OK, EXIT_FATAL, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
T = TypeVar("T")


class UsageError(Exception):
    """Bad command line: printed as one line, exit 2."""


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def count(minimum: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        return value

    return parse


def seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {text}")
    return value


def non_negative(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {text}")
    return value


def fraction(text: str) -> float:
    value = non_negative(text)
    if value > 1:
        raise argparse.ArgumentTypeError(f"must be a fraction between 0 and 1, got {text}")
    return value


def _add_politeness(crawl: argparse.ArgumentParser) -> None:
    group = crawl.add_argument_group("politeness")
    group.add_argument(
        "--ignore-robots", action="store_true", help="do not fetch or obey robots.txt"
    )
    group.add_argument(
        "--max-crawl-delay",
        type=non_negative,
        default=30.0,
        metavar="SECONDS",
        help="cap on a robots.txt Crawl-delay (default 30)",
    )
    group.add_argument(
        "--no-sitemaps", action="store_true", help="do not seed the crawl from sitemaps"
    )
    group.add_argument(
        "--follow-nofollow", action="store_true", help='also follow rel="nofollow" links'
    )
    group.add_argument(
        "--no-revalidate",
        action="store_true",
        help="in a later crawl of a state file, fetch every page in full (no If-None-Match"
        " / If-Modified-Since)",
    )
    group.add_argument(
        "--per-host",
        type=count(1),
        default=8,
        metavar="N",
        help="requests in flight per host at most (default 8, never above --concurrency)",
    )
    group.add_argument(
        "--delay",
        type=non_negative,
        default=0.0,
        metavar="SECONDS",
        help="minimum time between request starts on one host (default 0)",
    )
    group.add_argument(
        "--jitter",
        type=fraction,
        default=0.0,
        metavar="FRACTION",
        help="lengthen each delay by a random 0..FRACTION of it (default 0)",
    )
    group.add_argument(
        "--retries",
        type=count(0),
        default=2,
        metavar="N",
        help="retries on timeouts, connection errors, 408/429/5xx (default 2)",
    )
    limits = crawl.add_argument_group("limits")
    limits.add_argument(
        "--max-bytes",
        type=count(1),
        default=10 * 1024 * 1024,
        metavar="N",
        help="cut bodies at N decoded bytes (default 10 MiB)",
    )
    limits.add_argument(
        "--max-url-length",
        type=count(16),
        default=2048,
        metavar="N",
        help="do not follow longer URLs (default 2048)",
    )
    limits.add_argument(
        "--max-query-variants",
        type=count(1),
        default=100,
        metavar="N",
        help="follow at most N query strings per path (default 100)",
    )
    limits.add_argument(
        "--max-pattern-pages",
        type=count(0),
        default=10_000,
        metavar="N",
        help="path traps: past N URLs of one pattern (digits folded: /cal/#/#) found ever "
        "deeper, and paths repeating a segment 4 times, are not followed (default 10000; "
        "0: no limit)",
    )


def add_crawl_options(crawl: argparse.ArgumentParser) -> None:
    """The options of any command that crawls: scope, limits, HTTP, politeness."""
    crawl.add_argument(
        "-c",
        "--concurrency",
        type=count(1),
        default=16,
        help="requests in flight at most (default 16)",
    )
    crawl.add_argument("-n", "--max-pages", type=count(1), help="stop after N pages")
    crawl.add_argument("-d", "--max-depth", type=count(0), help="follow links N levels deep")
    add_rules_options(crawl)
    from ._extract import add_extract_options

    add_extract_options(crawl)
    crawl.add_argument("--user-agent", metavar="UA", help="User-Agent header")
    crawl.add_argument(
        "--timeout",
        type=seconds,
        default=30.0,
        metavar="SECONDS",
        help="total time allowed per request (default 30)",
    )
    add_processes_option(crawl, default=min(2, os.cpu_count() or 1))
    from ._requests import add_request_options

    add_request_options(crawl)
    _add_politeness(crawl)
    from ._render import add_render_options

    add_render_options(crawl)


def add_rules_options(parser: argparse.ArgumentParser) -> None:
    """Scope, include/exclude, strip-params, rewrite: what the crawl follows (issue 15)."""
    group = parser.add_argument_group("crawl control")
    group.add_argument(
        "--scope",
        choices=("site", "prefix", "subdomains", "domain"),
        help="what to crawl: the start host (site), its folder (prefix), its subdomains too,"
        " or its whole registrable domain (default: prefix when the start URL is a folder"
        " other than /, else site)",
    )
    group.add_argument(
        "--subdomains",
        action="store_const",
        const="subdomains",
        dest="scope",
        help="the same as --scope subdomains",
    )
    group.add_argument(
        "--include",
        action="append",
        default=[],
        metavar="REGEX",
        help="follow only URLs matching REGEX (Python re.search; repeatable: any of them)",
    )
    group.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="REGEX",
        help="never follow URLs matching REGEX (repeatable)",
    )
    group.add_argument(
        "--strip-params",
        metavar="NAMES",
        default="",
        help="drop these query parameters from discovered URLs (comma-separated globs:"
        " 'utm_*,fbclid'; '*' drops the whole query)",
    )
    group.add_argument(
        "--rewrite",
        nargs=2,
        action="append",
        default=[],
        metavar=("REGEX", "REPLACEMENT"),
        help="rewrite discovered URLs (re.sub, repeatable, applied in order)",
    )


def rules_from_args(args: argparse.Namespace) -> Rules:
    """The :class:`~sitecrawl.control._rules.Rules` of the options; a bad one is a
    :class:`UsageError`."""
    from .._exceptions import ConfigError
    from ..control._rules import Rules, parse_strip_params

    try:
        return Rules(
            scope=args.scope,
            include=tuple(args.include),
            exclude=tuple(args.exclude),
            strip_params=parse_strip_params(args.strip_params),
            rewrite=tuple((pattern, replacement) for pattern, replacement in args.rewrite),
        )
    except ConfigError as exc:
        raise UsageError(str(exc)) from None


def add_processes_option(parser: argparse.ArgumentParser, *, default: int) -> None:
    parser.add_argument(
        "-p",
        "--processes",
        type=count(1),
        default=default,
        help="processes to use: 1 parses on the event loop, N adds N-1 parser processes"
        f" (default {default}: {'one per core, up to 2' if default > 1 else 'one'})",
    )


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


def config_from_args(args: argparse.Namespace) -> CrawlConfig:
    """Options from :func:`add_crawl_options` (and ``args.url``) as a frozen config."""
    from .._config import DEFAULT_USER_AGENT, CrawlConfig, Limits, Politeness, Timeouts
    from .._exceptions import SitecrawlError
    from ._extract import extract_from_args
    from ._render import render_from_args
    from ._requests import requests_from_args

    rules = rules_from_args(args)
    requests = requests_from_args(args)
    starts = tuple(getattr(args, "urls", None) or [args.url])
    try:
        return CrawlConfig(
            base_url=starts[0],
            start_urls=starts if len(starts) > 1 else (),
            rules=rules,
            limits=Limits(
                max_concurrency=args.concurrency,
                max_pages=args.max_pages,
                max_depth=args.max_depth,
                max_bytes=args.max_bytes,
                max_url_length=args.max_url_length,
                max_query_variants=args.max_query_variants,
                max_pattern_pages=args.max_pattern_pages or None,
            ),
            timeouts=Timeouts(total=args.timeout, connect=min(10.0, args.timeout)),
            politeness=Politeness(
                obey_robots=not args.ignore_robots,
                max_crawl_delay=args.max_crawl_delay,
                sitemaps=not args.no_sitemaps,
                follow_nofollow=args.follow_nofollow,
                revalidate=not args.no_revalidate,
                per_host=args.per_host,
                delay=args.delay,
                jitter=args.jitter,
                retries=args.retries,
            ),
            processes=args.processes,
            user_agent=args.user_agent or DEFAULT_USER_AGENT,
            requests=requests,
            extract=extract_from_args(args),
            render=render_from_args(args),
        )
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


async def run_crawl(crawler: AsyncCrawler, *, quiet: bool, verbose: bool = False) -> bool:
    """``crawler.crawl()`` with its progress on stderr (a live line on a terminal, else, or
    with ``verbose`` logging each request there, a line every few seconds); True when Ctrl-C
    ended it early."""
    from .._progress import LiveProgress

    try:
        if quiet:
            await crawler.crawl()
        else:
            async with LiveProgress(crawler, live=sys.stderr.isatty() and not verbose):
                await crawler.crawl()
    except asyncio.CancelledError:
        return True
    return crawler.interrupted


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
