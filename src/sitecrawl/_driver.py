"""The crawl driver: one run of a crawl, from its frontier to its sinks, for the library and
every command (``crawl``, ``worker``, ``check``) alike. :class:`CrawlDriver` gives
:class:`~sitecrawl.AsyncCrawler` its :meth:`~CrawlDriver.run`::

    async with AsyncCrawler(url, state="site.db") as crawler:  # the state opened, taken
        run = await crawler.run([sink])                        # or refused (StateError)

In order: on a resume, the pages the crawl's earlier runs stored are written to the sinks
first, so that every output holds the whole crawl, each page once; then the crawl runs, each
page record written to every sink as it completes (before the ``on_page`` hook), until it
ends, :meth:`~sitecrawl.AsyncCrawler.stop` is called, or ``stop_at`` comes (the same stop,
noted in the stats); a state file adds the run's time to the crawl's. A crawl shared through
Redis (:class:`~sitecrawl.frontier.RedisFrontier`, its workers set up by
:func:`shared_settings`) writes every worker's pages to the sinks as they are stored, keeps
its throttle's heartbeat while it crawls, and a lost Redis ends the run with what was
written (:attr:`CrawlRun.lost`) instead of raising. :class:`CrawlRun` says how it went; what
to print of it and the exit codes are the command line's.

A sink is a :class:`sitecrawl.sinks.Sink` (``write(page)``, ``close()``): the driver only
writes; whoever opened a sink closes it. The command line opens its ``-o`` files by their
suffix, registered in one place: :data:`sitecrawl.sinks.SINKS`.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractAsyncContextManager, contextmanager
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, TypeGuard

from ._exceptions import StateError
from ._models import CrawlStats, Page
from .frontier import PageStore, SqliteFrontier
from .sinks import Sink

if TYPE_CHECKING:
    from ._config import CrawlConfig
    from ._crawler import AsyncCrawler
    from .frontier import CrawlStatus, Frontier, SharedFrontier
    from .throttle import Throttle

#: ``() -> async context manager`` entered around the crawl itself (a progress display).
Watch = Callable[[], AbstractAsyncContextManager[Any]]


@dataclass(slots=True)
class CrawlRun:
    """How one run of a crawl went (:meth:`AsyncCrawler.run`).

    ``interrupted``: stopped before its end (:meth:`~sitecrawl.AsyncCrawler.stop`, the
    ``stop_at`` time, Ctrl-C); ``start_failure``: the run is its start page only, and that
    failed (no other page was reached); ``lost``: a shared frontier (Redis) became unusable
    mid-crawl, the pages written so far kept; ``written``: pages the sinks got (a resume's
    earlier pages included); ``status``: a shared crawl's counts, all workers together."""

    stats: CrawlStats
    interrupted: bool = False
    start_failure: Page | None = None
    lost: StateError | None = None
    written: int = 0
    status: CrawlStatus | None = None


class CrawlDriver:
    """:meth:`run`, on :class:`~sitecrawl.AsyncCrawler` beside the engine (which writes each
    page it records to :attr:`sinks`)."""

    #: Where each recorded page is written, for the duration of :meth:`run`.
    sinks: Sequence[Sink] = ()

    async def run(
        self,
        sinks: Sequence[Sink] = (),
        *,
        stop_at: float | None = None,
        watch: Watch | None = None,
    ) -> CrawlRun:
        """Crawl into ``sinks`` (inside ``async with``): a resume's earlier pages first, then
        each page as it completes; at ``stop_at`` (a :func:`time.monotonic` time) stop as
        :meth:`~sitecrawl.AsyncCrawler.stop` does. ``watch()`` is entered around the crawl
        itself (the command line's progress). Returns how it went (:class:`CrawlRun`)."""
        crawler: AsyncCrawler = self  # type: ignore[assignment]
        if _shared(crawler.frontier):  # Redis: follow the stored pages
            return await _run_shared(crawler, crawler.frontier, sinks, stop_at, watch)
        return await _run_local(crawler, sinks, stop_at, watch)


class _StartPage(Sink):
    """The run's own sink: keeps the first failed page at depth 0 (a start URL)."""

    def __init__(self) -> None:
        self.failed: Page | None = None

    def write(self, page: Page) -> None:
        if page.depth == 0 and page.error is not None and self.failed is None:
            self.failed = page

    def close(self) -> None:
        pass


async def _run_local(
    crawler: AsyncCrawler, sinks: Sequence[Sink], stop_at: float | None, watch: Watch | None
) -> CrawlRun:
    frontier = crawler.frontier
    run = CrawlRun(crawler.stats)
    if sinks and isinstance(frontier, PageStore) and (await frontier.stats()).done:
        async for page in frontier.read_pages():  # the pages of earlier runs, once each
            for sink in sinks:
                sink.write(page)
            run.written += 1
    start = _StartPage()
    crawler.sinks = [*sinks, start]
    try:
        run.interrupted = await _crawl(crawler, stop_at, watch)
    finally:
        crawler.sinks = ()
    if sinks:
        run.written += crawler.stats.pages  # each page recorded went to every sink
    if isinstance(frontier, SqliteFrontier):
        frontier.add_crawl_time(crawler.stats.elapsed)
    if not run.interrupted and crawler.stats.pages == 1:
        run.start_failure = start.failed
    return run


async def _crawl(crawler: AsyncCrawler, stop_at: float | None, watch: Watch | None) -> bool:
    """``crawler.crawl()`` inside ``watch()`` until ``stop_at``; True when it was stopped
    early. A crawl cancelled after it was stopped (a second Ctrl-C: requests in flight
    dropped) was stopped early too."""
    with _stops_at(crawler, stop_at):
        try:
            if watch is None:
                await crawler.crawl()
            else:
                async with watch():
                    await crawler.crawl()
        except asyncio.CancelledError:
            if not crawler.interrupted:
                raise
            return True
    return crawler.interrupted


@contextmanager
def _stops_at(crawler: AsyncCrawler, when: float | None) -> Iterator[None]:
    """Stop ``crawler`` (as Ctrl-C does) at ``when``, a ``time.monotonic()`` time."""
    if when is None:
        yield
        return

    def stop() -> None:
        crawler.stats.notes.append("time limit reached: stopped taking new pages")
        crawler.stop()

    timer = asyncio.get_running_loop().call_later(max(0.0, when - time.monotonic()), stop)
    try:
        yield
    finally:
        timer.cancel()


# -- a crawl shared through Redis -----------------------------------------------------------


def _shared(frontier: Frontier) -> TypeGuard[SharedFrontier]:
    """Whether ``frontier`` is kept in Redis (a :class:`~sitecrawl.frontier.RedisFrontier`
    or :class:`~sitecrawl.frontier.RedisShards`), without importing their modules for a
    crawl that has neither (one exists only once its module is imported; the modules and
    their scripts cost a short crawl's start ~2 % of its instructions)."""
    redis = sys.modules.get("sitecrawl.frontier._redis")
    shards = sys.modules.get("sitecrawl.frontier._redis_shards")
    return (redis is not None and isinstance(frontier, redis.RedisFrontier)) or (
        shards is not None and isinstance(frontier, shards.RedisShards)
    )


def shared_settings(frontier: SharedFrontier, config: CrawlConfig) -> tuple[CrawlConfig, Throttle]:
    """One worker's part of a crawl kept in Redis (``frontier``, open), for an
    :class:`~sitecrawl.AsyncCrawler` given ``frontier``: the crawl-wide settings stored with
    it (the lease TTL; the page budget, counted in Redis for all workers together, so not by
    the worker's ``config``), the shared throttle (the stored ``per_host``: requests in
    flight per host, all workers together) and the leases taken ahead per round trip (about
    what half the requests in flight ask for). Returns the worker's config and throttle."""
    from .throttle import RedisThrottle

    stored = stored_settings(frontier)
    config = replace(config, limits=replace(config.limits, max_pages=None))
    throttle = RedisThrottle(frontier, config.politeness, max_limit=per_host(stored))
    frontier.lease_batch = max(1, config.limits.max_concurrency // 2)
    return config, throttle


def stored_settings(frontier: SharedFrontier) -> dict[str, Any]:
    """Take the crawl-wide settings every worker (and ``status``) reads from the crawl's
    stored config: the lease TTL and the page budget. Returns the stored config."""
    stored = frontier.config or {}
    frontier.lease_ttl = float(stored.get("lease_ttl", frontier.lease_ttl))
    frontier.max_pages = stored.get("limits", {}).get("max_pages")
    return stored


def per_host(stored: dict[str, Any] | None) -> int:
    """Requests in flight per host, all workers together: the seed's ``per_host`` (not
    capped by one worker's concurrency, as a single process's is)."""
    return int((stored or {})["politeness"]["per_host"])


async def _run_shared(
    crawler: AsyncCrawler,
    frontier: SharedFrontier,
    sinks: Sequence[Sink],
    stop_at: float | None,
    watch: Watch | None,
) -> CrawlRun:
    run = CrawlRun(crawler.stats)
    output = PageFollower(frontier, sinks)
    try:
        following = asyncio.create_task(output.follow()) if sinks else None
        try:
            async with _heartbeat(crawler.throttle):  # renews this worker's tokens meanwhile
                run.interrupted = await _crawl(crawler, stop_at, watch)
        finally:
            if following is not None:
                following.cancel()
                await asyncio.gather(following, return_exceptions=True)
        await output.catch_up()
        run.status = await frontier.status()
        if not run.interrupted:
            run.start_failure = await failed_start(frontier, run.status)
    except* StateError as group:
        run.lost = first_error(group)
    run.written = output.written
    return run


def _heartbeat(throttle: object) -> AbstractAsyncContextManager[Any]:
    """The throttle's own lifetime when it has one (a shared one's heartbeat), else none."""
    if isinstance(throttle, AbstractAsyncContextManager):
        return throttle
    return contextlib.nullcontext()


def first_error(group: BaseException) -> StateError:
    """The first exception of a (nested) exception group: the one that ended the crawl."""
    while isinstance(group, BaseExceptionGroup):
        group = group.exceptions[0]
    assert isinstance(group, StateError)
    return group


async def failed_start(frontier: SharedFrontier, status: CrawlStatus) -> Page | None:
    """The start page, when the whole shared crawl is that one page and it failed."""
    if status.done == 1 and not status.queued and not status.in_flight:
        async for page in frontier.pages():
            if page.depth == 0 and page.error is not None:
                return page
    return None


class PageFollower:
    """Writes a shared crawl's stored pages, every worker's, to ``sinks`` as they are
    stored (all of them, each once, in the order they were stored)."""

    def __init__(
        self, frontier: SharedFrontier, sinks: Sequence[Sink], every: float = 0.25
    ) -> None:
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
