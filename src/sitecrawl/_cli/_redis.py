"""What the commands share for a crawl kept in Redis (``--redis URL --crawl-id ID``): the
options, the crawl's config stored at seed time, and one worker's run over the shared frontier
and throttle. ``crawl --redis`` seeds and works (and writes every worker's pages to ``-o`` as
they are stored); ``worker`` joins; ``status`` and ``export`` read. A crawl that loses its
Redis mid-way (unreachable past ``--redis-timeout``, or restarted empty) ends every process
with one line and exit 1, the seed's ``-o`` keeping the pages written so far. Nothing here
imports redis: the frontier does, when opened."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import sys
from typing import TYPE_CHECKING, Any

from .._settings import seconds
from ._common import (
    EXIT_FATAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    UsageError,
    ctrl_c_stops,
    run_crawl,
    start_page_failed,
)

if TYPE_CHECKING:
    from .._config import CrawlConfig
    from .._exceptions import StateError
    from .._models import Page
    from ..frontier import CrawlStatus, RedisFrontier
    from ..sinks import Sink


def add_redis_options(
    parser: argparse.ArgumentParser, *, required: bool, lease: bool = False, worker: bool = False
) -> None:
    """``--redis`` and ``--crawl-id``; with ``lease``, ``--lease-ttl`` (a crawl that creates
    one), with ``worker``, ``--redis-timeout`` (a process that works on one): one group."""
    group = parser.add_argument_group("distributed crawl (Redis)")
    group.add_argument(
        "--redis",
        metavar="URL",
        required=required,
        help="keep the crawl in the Redis at URL (redis://HOST:6379/0), shared by its workers",
    )
    default = "the start URL's HOST_PORT, or HOST on its scheme's default port; "
    group.add_argument(
        "--crawl-id",
        metavar="ID",
        required=required,
        help=f"the crawl's name in Redis ({'' if required else 'default: ' + default}"
        "HOST:PORT names the same crawl as HOST_PORT)",
    )
    if lease:
        group.add_argument(
            "--lease-ttl",
            type=seconds,
            default=30.0,
            metavar="SECONDS",
            help="a dead worker's pages and host slots go to others after SECONDS (default 30)",
        )
    if worker:
        group.add_argument(
            "--redis-timeout",
            type=seconds,
            default=60.0,
            metavar="SECONDS",
            help="when Redis is unreachable that long mid-crawl, stop with exit 1 (default 60)",
        )


def check_url(url: str) -> str:
    """A one-line usage error for a URL that is not redis://, rediss:// or unix://."""
    from ..frontier import redact

    scheme = url.partition("://")[0].lower() if "://" in url else ""
    if scheme not in ("redis", "rediss", "unix"):
        raise UsageError(f"bad Redis URL {redact(url)!r}: expected redis://HOST:PORT/DB")
    return url


def crawl_id_of(text: str) -> str:
    """The crawl id ``text`` names: ``HOST:PORT`` is ``HOST_PORT`` (the default's form)."""
    return text.replace(":", "_")


def frontier_for(url: str, crawl_id: str, **options: Any) -> RedisFrontier:
    """The crawl's frontier (not yet open); usage errors for a bad URL or id, or no redis."""
    from ..frontier import RedisFrontier, import_redis

    try:
        import_redis()
        return RedisFrontier(check_url(url), crawl_id=crawl_id_of(crawl_id), **options)
    except ValueError as exc:  # ConfigError: a bad crawl id, the [redis] extra missing
        raise UsageError(str(exc)) from None


def per_host(stored: dict[str, Any] | None) -> int:
    """Requests in flight per host, all workers together: the seed's --per-host (not capped
    by one worker's --concurrency, as a single process's is)."""
    return int((stored or {})["politeness"]["per_host"])


def seed_and_work(args: argparse.Namespace, config: CrawlConfig, sinks_paths: list[str]) -> int:
    """``crawl URL --redis``: create the crawl (or join it: same site), then work on it."""
    from .._urls import split_host
    from ._common import run_async
    from ._outputs import open_sinks

    if args.state or args.no_state:
        raise UsageError("--redis keeps the crawl in Redis: drop --state / --no-state")
    from ..frontier import encode, joined

    crawl_id = crawl_id_of(args.crawl_id or split_host(config.base_url))
    stored = {**encode(config), "lease_ttl": args.lease_ttl}
    frontier = frontier_for(
        args.redis,
        crawl_id,
        base_url=config.base_url,
        config=stored,
        fresh=args.fresh,
        reconnect_timeout=args.redis_timeout,
    )

    async def run(sinks: list[Sink]) -> int:
        async with frontier:
            prepare(frontier)
            hello = (
                f"crawl {crawl_id} in Redis: add workers anywhere with"
                f" sitecrawl worker --redis {args.redis} --crawl-id {crawl_id}"
            )
            # The crawl's settings, with this command's aim: taken or refused by the crawler.
            local = joined(frontier.config or stored, config)
            return await work(
                frontier,
                local,
                sinks,
                per_host=per_host(frontier.config),
                quiet=args.quiet,
                hello=hello,
                verbose=args.verbose,
            )

    csv_markdown = bool(getattr(args, "csv_markdown", False))
    with open_sinks(
        sinks_paths, extract=config.extract, csv_markdown=csv_markdown, base_url=config.base_url
    ) as sinks:
        return run_async(run(sinks))


async def work(
    frontier: RedisFrontier,
    config: CrawlConfig,
    sinks: list[Sink],
    *,
    per_host: int,
    quiet: bool,
    hello: str | None = None,
    verbose: bool = False,
) -> int:
    """Crawl as one worker until the shared crawl is finished; with ``sinks``, write every
    page of the crawl (all workers') to them as it is stored. When the crawl loses its Redis,
    say so in one line (and what ``-o`` holds) and return exit 1. ``hello`` is said once the
    crawler has taken the crawl (a run it refuses says only why)."""
    from .._crawler import AsyncCrawler
    from .._exceptions import ResumeRefused, StateError
    from .._progress import summary
    from .._terminal import printable
    from ..throttle import RedisThrottle

    # The page budget lives in Redis (frontier.max_pages), for all workers together.
    limits = dataclasses.replace(config.limits, max_pages=None)
    config = dataclasses.replace(config, limits=limits)
    throttle = RedisThrottle(frontier, config.politeness, max_limit=per_host)
    # Leases taken ahead per round trip: about what half the requests in flight ask for.
    frontier.lease_batch = max(1, config.limits.max_concurrency // 2)
    crawler = AsyncCrawler(
        config.base_url, config=config, frontier=frontier, throttle=throttle, keep_pages=False
    )
    output = PageFollower(frontier, sinks)
    status: CrawlStatus | None = None
    failed: Page | None = None
    interrupted = False
    lost: StateError | None = None
    refused: StateError | None = None
    try:
        async with ctrl_c_stops(crawler, quiet=quiet), crawler:
            if hello is not None and not quiet:
                print(hello, file=sys.stderr)
            following = asyncio.create_task(output.follow()) if sinks else None
            try:
                async with throttle:  # its heartbeat renews this worker's tokens while it crawls
                    interrupted = await run_crawl(crawler, quiet=quiet, verbose=verbose)
            finally:
                if following is not None:
                    following.cancel()
                    await asyncio.gather(following, return_exceptions=True)
            await output.catch_up()
            status = await frontier.status()
            if not interrupted:
                failed = await failed_start(frontier, status)
    except* ResumeRefused as group:  # before anything was fetched: one line, exit 2
        refused = _first(group)
    except* StateError as group:
        lost = _first(group)
    if refused is not None:
        raise refused
    if not quiet:
        from ..frontier import redact

        rest = (
            f"sitecrawl export --redis {redact(frontier.url)} --crawl-id {frontier.crawl_id}"
            " -o pages.csv (error, error_kind)"
        )
        print(summary(crawler.stats, rest), file=sys.stderr)
        if status is not None:
            print(status_line(frontier, status), file=sys.stderr)
    if lost is not None:
        reason = frontier.lost or str(lost)
        if sinks:
            reason += f"; the {output.written:,} pages written to -o are a partial crawl"
        print(f"sitecrawl: error: {printable(reason)}", file=sys.stderr)
        return EXIT_FATAL
    if failed is not None:
        return start_page_failed(failed)
    return EXIT_INTERRUPTED if interrupted else EXIT_OK


def _first(group: BaseException) -> StateError:
    while isinstance(group, BaseExceptionGroup):
        group = group.exceptions[0]
    assert isinstance(group, Exception)
    return group  # type: ignore[return-value]


async def failed_start(frontier: RedisFrontier, status: CrawlStatus) -> Page | None:
    """The start page, when the whole crawl is that one page and it failed (then the crawl
    exits 1 and says why, as a crawl without Redis does)."""
    if status.done == 1 and not status.queued and not status.in_flight:
        async for page in frontier.pages():
            if page.depth == 0 and page.error is not None:
                return page
    return None


class PageFollower:
    """Writes the crawl's stored pages, every worker's, to ``sinks`` as they are stored."""

    def __init__(self, frontier: RedisFrontier, sinks: list[Sink], every: float = 0.25) -> None:
        self.frontier = frontier
        self.sinks = sinks
        self.every = every
        self.written = 0

    async def catch_up(self) -> None:
        """Write the pages stored since the last call."""
        if not self.sinks:
            return
        async for page in self.frontier.pages(start=self.written):
            for sink in self.sinks:
                sink.write(page)
            self.written += 1

    async def follow(self) -> None:
        """Catch up every ``every`` seconds, until cancelled or Redis is lost."""
        while True:
            await self.catch_up()
            await asyncio.sleep(self.every)


def status_line(frontier: RedisFrontier, status: CrawlStatus) -> str:
    from .._terminal import printable

    # nothing queued yet: the crawl is created, its start URLs not yet added
    state = "starting" if not status.seen else "finished" if status.finished else "running"
    return printable(
        f"crawl {frontier.crawl_id} of {frontier.base_url} ({state}): {status.done:,} done"
        f" · {status.queued:,} queued · {status.in_flight:,} in flight"
        f" · {status.errors:,} errors · {status.workers:,} workers alive"
    )


def prepare(frontier: RedisFrontier) -> None:
    """Crawl-wide settings every worker takes from the stored config."""
    stored = frontier.config or {}
    frontier.lease_ttl = float(stored.get("lease_ttl", frontier.lease_ttl))
    frontier.max_pages = stored.get("limits", {}).get("max_pages")


def check_source(args: argparse.Namespace) -> None:
    """``export`` and ``report`` read a STATE file, or ``--redis URL --crawl-id ID``."""
    if (args.redis is None) == (args.state is None) or (args.redis and args.crawl_id is None):
        raise UsageError(f"{args.command} reads a STATE file, or --redis URL --crawl-id ID")
