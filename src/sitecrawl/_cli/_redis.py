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
    from .._config import CrawlConfig, Render, Requests
    from .._exceptions import StateError
    from .._models import Page
    from ..frontier._redis import CrawlStatus, RedisFrontier
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
    from ..frontier._redis_crawl import redact

    scheme = url.partition("://")[0].lower() if "://" in url else ""
    if scheme not in ("redis", "rediss", "unix"):
        raise UsageError(f"bad Redis URL {redact(url)!r}: expected redis://HOST:PORT/DB")
    return url


def config_to_dict(config: CrawlConfig) -> dict[str, Any]:
    """The config as stored in Redis: of its requests' credentials, only which were given
    (:meth:`~sitecrawl.Requests.shape`); no proxy (a worker's own)."""
    stored = dataclasses.asdict(dataclasses.replace(config, extract=()))
    stored["requests"] = config.requests.shape()
    stored["extract"] = [rule.to_json() for rule in config.extract]
    return stored


def config_from_dict(
    stored: dict[str, Any], requests: Requests | None = None, **local: Any
) -> CrawlConfig:
    """The config stored at seed time, with this worker's ``requests`` (its credentials and
    proxy: a :class:`UsageError` when it lacks credentials the crawl began with; the site's
    cookies are kept unless the crawl or this worker says ``--no-cookies``),
    ``max_concurrency`` and ``processes`` when given."""
    from .._config import CrawlConfig, Limits, Politeness, Requests, Timeouts
    from ..control._rules import Rules
    from ..parse._extraction import Rule
    from ._requests import require_stored

    shape = stored.get("requests") or {}
    requests = requests or Requests()
    require_stored(requests, shape, "the crawl in Redis")
    requests = dataclasses.replace(
        requests, keep_cookies=shape.get("keep_cookies", True) and requests.keep_cookies
    )

    limits = dict(stored["limits"])
    if local.get("max_concurrency") is not None:
        limits["max_concurrency"] = local["max_concurrency"]
    return CrawlConfig(
        base_url=stored["base_url"],
        start_urls=tuple(stored.get("start_urls", ())),
        rules=Rules.from_dict(stored.get("rules", {})),
        limits=Limits(**limits),
        timeouts=Timeouts(**stored["timeouts"]),
        politeness=Politeness(**stored["politeness"]),
        user_agent=stored["user_agent"],
        requests=requests,
        subdomains=stored["subdomains"],
        processes=local.get("processes") or 1,
        extract=tuple(Rule(**rule) for rule in stored.get("extract") or ()),
        render=_render_here(stored.get("render")),
        allow_private_redirects=stored.get("allow_private_redirects", False),
    )


def _render_here(stored: dict[str, Any] | None) -> Render:
    """The crawl's rendering on this machine: its browser if it has the one the crawl was
    started with, else Chromium on PATH; a :class:`UsageError` names what to install when
    the crawl renders and this machine cannot."""
    from .._config import Render
    from .._exceptions import ConfigError
    from ..render._browser import find_browser

    render = Render(**stored) if stored else Render()
    if render.mode == "never":
        return render
    for browser in dict.fromkeys([render.browser, None]):
        try:
            find_browser(dataclasses.replace(render, browser=browser))
        except ConfigError as exc:
            error = exc
        else:
            return dataclasses.replace(render, browser=browser)
    raise UsageError(f"the crawl in Redis renders pages (--render {render.mode}): {error}")


def crawl_id_of(text: str) -> str:
    """The crawl id ``text`` names: ``HOST:PORT`` is ``HOST_PORT`` (the default's form)."""
    return text.replace(":", "_")


def frontier_for(url: str, crawl_id: str, **options: Any) -> RedisFrontier:
    """The crawl's frontier (not yet open); usage errors for a bad URL or id, or no redis."""
    from ..frontier._redis import RedisFrontier
    from ..frontier._redis_crawl import import_redis

    try:
        import_redis()
        return RedisFrontier(check_url(url), crawl_id=crawl_id_of(crawl_id), **options)
    except ValueError as exc:  # ConfigError: a bad crawl id, the [redis] extra missing
        raise UsageError(str(exc)) from None


def per_host(stored: dict[str, Any]) -> int:
    """Requests in flight per host, all workers together: the seed's --per-host (not capped
    by one worker's --concurrency, as a single process's is)."""
    return int(stored["politeness"]["per_host"])


def seed_and_work(args: argparse.Namespace, config: CrawlConfig, sinks_paths: list[str]) -> int:
    """``crawl URL --redis``: create the crawl (or join it: same site), then work on it."""
    from .._urls import split_host
    from ._common import run_async
    from ._outputs import open_sinks

    if args.state or args.no_state:
        raise UsageError("--redis keeps the crawl in Redis: drop --state / --no-state")
    crawl_id = crawl_id_of(args.crawl_id or split_host(config.base_url))
    stored = {**config_to_dict(config), "lease_ttl": args.lease_ttl}
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
            rules_note = same_rules(frontier.config, config)
            if not args.quiet:
                if rules_note:
                    print(rules_note, file=sys.stderr)
                print(
                    f"crawl {crawl_id} in Redis: add workers anywhere with"
                    f" sitecrawl worker --redis {args.redis} --crawl-id {crawl_id}",
                    file=sys.stderr,
                )
            local = config_from_dict(
                frontier.config,
                config.requests,
                max_concurrency=config.limits.max_concurrency,
                processes=config.processes,
            )
            return await work(
                frontier, local, sinks, per_host=per_host(frontier.config), quiet=args.quiet
            )

    with open_sinks(sinks_paths, extract=config.extract) as sinks:
        return run_async(run(sinks))


async def work(
    frontier: RedisFrontier,
    config: CrawlConfig,
    sinks: list[Sink],
    *,
    per_host: int,
    quiet: bool,
) -> int:
    """Crawl as one worker until the shared crawl is finished; with ``sinks``, write every
    page of the crawl (all workers') to them as it is stored. When the crawl loses its Redis,
    say so in one line (and what ``-o`` holds) and return exit 1."""
    from .._crawler import AsyncCrawler
    from .._exceptions import StateError
    from .._progress import summary
    from .._terminal import printable
    from ..throttle._redis import RedisThrottle

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
    try:
        async with ctrl_c_stops(crawler, quiet=quiet), crawler:
            following = asyncio.create_task(output.follow()) if sinks else None
            try:
                async with throttle:  # its heartbeat renews this worker's tokens while it crawls
                    interrupted = await run_crawl(crawler, quiet=quiet)
            finally:
                if following is not None:
                    following.cancel()
                    await asyncio.gather(following, return_exceptions=True)
            await output.catch_up()
            status = await frontier.status()
            if not interrupted:
                failed = await failed_start(frontier, status)
    except* StateError as group:
        lost = _first(group)
    if not quiet:
        print(summary(crawler.stats), file=sys.stderr)
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


def same_rules(stored: dict[str, Any], config: CrawlConfig) -> str | None:
    """A crawl joined in Redis obeys the rules it was created with: a note when this command
    gave none (they are taken), a :class:`UsageError` when it gave others (the queue was
    decided by the stored ones)."""
    from ..control._rules import Rules

    rules = Rules.from_dict(stored.get("rules", {}))
    if rules == config.rules:
        return None
    if config.rules != Rules():
        raise UsageError(
            f"crawl in Redis began with {rules.describe()}, not {config.rules.describe()}:"
            " join it with the same rules (or none, to reuse them), or start over with --fresh"
        )
    return f"joined with the rules this crawl began with: {rules.describe()}"


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
    stored = frontier.config
    frontier.lease_ttl = float(stored.get("lease_ttl", frontier.lease_ttl))
    frontier.max_pages = stored.get("limits", {}).get("max_pages")


def check_source(args: argparse.Namespace) -> None:
    """``export`` and ``report`` read a STATE file, or ``--redis URL --crawl-id ID``."""
    if (args.redis is None) == (args.state is None) or (args.redis and args.crawl_id is None):
        raise UsageError(f"{args.command} reads a STATE file, or --redis URL --crawl-id ID")
