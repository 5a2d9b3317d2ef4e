"""Command line: arguments -> config -> one ``asyncio`` run; exit codes. No crawl logic.

Exit codes: 0 done; 1 fatal (the start page could not be crawled); 2 bad usage or a state
file that cannot be used; 130 stopped by Ctrl-C (what was crawled is still written).

``crawl`` keeps its state in ``./<host>.sitecrawl.db`` unless told otherwise, so running the
same command again resumes; ``export`` writes a state file's pages out.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from collections.abc import Callable, Coroutine, Sequence
from typing import TYPE_CHECKING, Any, NoReturn

from ._version import __version__

if TYPE_CHECKING:
    from ._config import CrawlConfig
    from ._models import Page
    from .frontier import SqliteFrontier
    from .sinks import Sink

EXIT_OK, EXIT_FATAL, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


class UsageError(Exception):
    """Bad command line: printed as one line, exit 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def _count(minimum: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        return value

    return parse


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {text}")
    return value


def _non_negative(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {text}")
    return value


def _fraction(text: str) -> float:
    value = _non_negative(text)
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
        type=_non_negative,
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
        "--per-host",
        type=_count(1),
        default=8,
        metavar="N",
        help="requests in flight per host at most (default 8, never above --concurrency)",
    )
    group.add_argument(
        "--delay",
        type=_non_negative,
        default=0.0,
        metavar="SECONDS",
        help="minimum time between request starts on one host (default 0)",
    )
    group.add_argument(
        "--jitter",
        type=_fraction,
        default=0.0,
        metavar="FRACTION",
        help="lengthen each delay by a random 0..FRACTION of it (default 0)",
    )
    group.add_argument(
        "--retries",
        type=_count(0),
        default=2,
        metavar="N",
        help="retries on timeouts, connection errors, 408/429/5xx (default 2)",
    )
    limits = crawl.add_argument_group("limits")
    limits.add_argument(
        "--max-bytes",
        type=_count(1),
        default=10 * 1024 * 1024,
        metavar="N",
        help="cut bodies at N decoded bytes (default 10 MiB)",
    )
    limits.add_argument(
        "--max-url-length",
        type=_count(16),
        default=2048,
        metavar="N",
        help="do not follow longer URLs (default 2048)",
    )
    limits.add_argument(
        "--max-query-variants",
        type=_count(1),
        default=100,
        metavar="N",
        help="follow at most N query strings per path (default 100)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="sitecrawl", description="A fast, polite, concurrent web crawler.")
    parser.add_argument("--version", action="version", version=f"sitecrawl {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    crawl = commands.add_parser("crawl", help="crawl a site and write its pages")
    crawl.add_argument("url", metavar="URL", help="the start URL; its host is the site")
    crawl.add_argument(
        "-c",
        "--concurrency",
        type=_count(1),
        default=16,
        help="requests in flight at most (default 16)",
    )
    crawl.add_argument("-n", "--max-pages", type=_count(1), help="stop after N pages")
    crawl.add_argument("-d", "--max-depth", type=_count(0), help="follow links N levels deep")
    crawl.add_argument(
        "-o",
        "--output",
        action="append",
        default=[],
        metavar="FILE",
        help="write pages to FILE (.csv, .jsonl, .json; - for JSONL on stdout); repeatable",
    )
    crawl.add_argument(
        "--subdomains", action="store_true", help="also crawl subdomains of the start URL's host"
    )
    crawl.add_argument("--user-agent", metavar="UA", help="User-Agent header")
    crawl.add_argument(
        "--timeout",
        type=_seconds,
        default=30.0,
        metavar="SECONDS",
        help="total time allowed per request (default 30)",
    )
    crawl.add_argument(
        "-p",
        "--processes",
        type=_count(1),
        default=1,
        help="processes to use: 1 parses on the event loop, N adds N-1 parser processes",
    )
    crawl.add_argument(
        "--state",
        metavar="PATH",
        help="keep the crawl's state in PATH (default ./<host>.sitecrawl.db); rerun to resume",
    )
    crawl.add_argument(
        "--no-state", action="store_true", help="keep everything in memory (no resume)"
    )
    crawl.add_argument(
        "--fresh", action="store_true", help="start over: forget what the state file holds"
    )
    crawl.add_argument("-q", "--quiet", action="store_true", help="no progress, no summary")
    _add_politeness(crawl)
    export = commands.add_parser("export", help="write the pages of a crawl's state file")
    export.add_argument("state", metavar="STATE", help="a state file written by 'crawl'")
    export.add_argument(
        "-o",
        "--output",
        action="append",
        required=True,
        metavar="FILE",
        help="write pages to FILE (.csv, .jsonl, .json; - for JSONL on stdout); repeatable",
    )
    export.add_argument("-q", "--quiet", action="store_true", help="no summary line")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; return the exit code (tests call this in-process)."""
    try:
        args = build_parser().parse_args(argv)
    except UsageError as exc:
        print(f"sitecrawl: error: {exc} (see sitecrawl --help)", file=sys.stderr)
        return EXIT_USAGE
    from ._exceptions import StateError

    try:
        return _export_command(args) if args.command == "export" else _crawl_command(args)
    except (UsageError, StateError) as exc:
        print(f"sitecrawl: error: {exc}", file=sys.stderr)
        return EXIT_USAGE


def run() -> NoReturn:
    """Console-script entry point."""
    sys.exit(main())


def _crawl_command(args: argparse.Namespace) -> int:
    from ._config import DEFAULT_USER_AGENT, CrawlConfig, Limits, Politeness, Timeouts
    from ._exceptions import SitecrawlError
    from ._urls import parse_base_url

    if args.no_state and (args.state or args.fresh):
        raise UsageError("--no-state cannot be combined with --state or --fresh")
    try:
        base_url = parse_base_url(args.url)
        config = CrawlConfig(
            base_url=args.url,
            limits=Limits(
                max_concurrency=args.concurrency,
                max_pages=args.max_pages,
                max_depth=args.max_depth,
                max_bytes=args.max_bytes,
                max_url_length=args.max_url_length,
                max_query_variants=args.max_query_variants,
            ),
            timeouts=Timeouts(total=args.timeout, connect=min(10.0, args.timeout)),
            politeness=Politeness(
                obey_robots=not args.ignore_robots,
                max_crawl_delay=args.max_crawl_delay,
                sitemaps=not args.no_sitemaps,
                follow_nofollow=args.follow_nofollow,
                per_host=args.per_host,
                delay=args.delay,
                jitter=args.jitter,
                retries=args.retries,
            ),
            subdomains=args.subdomains,
            processes=args.processes,
            user_agent=args.user_agent or DEFAULT_USER_AGENT,
        )
    except SitecrawlError as exc:
        raise UsageError(str(exc)) from None
    state = None
    if not args.no_state:
        from .frontier import SqliteFrontier

        path = args.state or default_state_path(base_url)
        state = SqliteFrontier(path, base_url=base_url, fresh=args.fresh)
    sinks = _open_sinks(args.output)
    try:
        return _run(_crawl(config, sinks, state, quiet=args.quiet))
    finally:
        for sink in sinks:
            sink.close()


def default_state_path(base_url: str) -> str:
    """``<host>.sitecrawl.db`` in the current directory (``:`` of a port becomes ``_``)."""
    from ._urls import split_host

    return split_host(base_url).replace(":", "_") + ".sitecrawl.db"


def _export_command(args: argparse.Namespace) -> int:
    from .frontier import SqliteFrontier

    async def export() -> int:
        count = 0
        async with SqliteFrontier(args.state, create=False) as store:
            sinks = _open_sinks(args.output)
            try:
                for page in store.pages():
                    for sink in sinks:
                        sink.write(page)
                    count += 1
            finally:
                for sink in sinks:
                    sink.close()
        if not args.quiet:
            print(f"{count:,} pages from {args.state}", file=sys.stderr)
        return EXIT_OK

    return _run(export())


def _open_sinks(paths: Sequence[str]) -> list[Sink]:
    from ._exceptions import ConfigError
    from .sinks import sink_for

    sinks: list[Sink] = []
    try:
        for path in paths:
            sinks.append(sink_for(path))
    except (ConfigError, OSError) as exc:
        for sink in sinks:
            sink.close()
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise UsageError(f"cannot write output: {reason} ({path})") from None
    return sinks


def _run(coro: Coroutine[Any, Any, int]) -> int:
    """The CLI's only event loop; uvloop when installed."""
    try:
        import uvloop

        loop_factory = uvloop.new_event_loop
    except ImportError:
        loop_factory = None
    with asyncio.Runner(loop_factory=loop_factory) as runner:
        return runner.run(coro)


async def _crawl(
    config: CrawlConfig, sinks: list[Sink], state: SqliteFrontier | None, *, quiet: bool
) -> int:
    from contextlib import AsyncExitStack

    from ._crawler import AsyncCrawler
    from ._progress import LiveProgress, summary

    base_failure: list[Page] = []

    def on_page(page: Page) -> None:
        for sink in sinks:
            sink.write(page)
        if page.depth == 0 and page.error is not None:
            base_failure.append(page)

    crawler = AsyncCrawler(
        config.base_url, config=config, frontier=state, on_page=on_page, keep_pages=False
    )
    main_task = asyncio.current_task()

    def on_sigint() -> None:
        if crawler.stopped and main_task is not None:
            main_task.cancel()
            return
        crawler.stop()
        if not quiet:
            print(
                "\nstopping: finishing requests in flight (Ctrl-C again to abort)", file=sys.stderr
            )

    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGINT, on_sigint)
    interrupted = False
    try:
        async with AsyncExitStack() as stack:
            await stack.enter_async_context(crawler)
            if state is not None:
                await _resume(state, sinks, quiet=quiet)
            if not quiet and sys.stderr.isatty():
                await stack.enter_async_context(LiveProgress(crawler))
            try:
                await crawler.crawl()
            except asyncio.CancelledError:
                interrupted = True
    finally:
        loop.remove_signal_handler(signal.SIGINT)
    interrupted = interrupted or crawler.interrupted
    if not quiet:
        print(summary(crawler.stats), file=sys.stderr)
    if interrupted:
        if state is not None and not quiet:
            print(
                f"interrupted: run the same command again to resume ({state.path})", file=sys.stderr
            )
        return EXIT_INTERRUPTED
    if base_failure and crawler.stats.pages == 1:
        page = base_failure[0]
        print(f"sitecrawl: error: could not crawl {page.url}: {page.error}", file=sys.stderr)
        return EXIT_FATAL
    return EXIT_OK


async def _resume(state: SqliteFrontier, sinks: list[Sink], *, quiet: bool) -> None:
    """Say where the state lives; on a resume, first write the pages of earlier runs so every
    output holds the whole crawl, each page once."""
    stats = await state.stats()
    if not quiet:
        line = f"state: {state.path}"
        if stats.done:
            line += (
                f" (resuming: {stats.done:,} pages done, {stats.queued:,} queued"
                f", {state.reclaimed:,} in flight when the last run stopped)"
            )
        print(line, file=sys.stderr)
    if stats.done and sinks:
        for page in state.pages():
            for sink in sinks:
                sink.write(page)
