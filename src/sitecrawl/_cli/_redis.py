"""What the commands share for a crawl kept in Redis (``--redis URL --crawl-id ID``): the
options, the crawl's config stored at seed time, and one worker's run over the shared frontier
and throttle. ``crawl --redis`` seeds and works; ``worker`` joins; ``status`` and ``export``
read. Nothing here imports redis: the frontier does, when opened."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from typing import TYPE_CHECKING, Any

from ._common import (
    EXIT_INTERRUPTED,
    EXIT_OK,
    UsageError,
    ctrl_c_stops,
    run_crawl,
    seconds,
    start_page_failed,
)
from ._outputs import write_pages

if TYPE_CHECKING:
    from .._config import CrawlConfig, Requests
    from ..frontier._redis import RedisFrontier
    from ..sinks import Sink


def add_redis_options(parser: argparse.ArgumentParser, *, required: bool) -> None:
    group = parser.add_argument_group("distributed crawl (Redis)")
    group.add_argument(
        "--redis",
        metavar="URL",
        required=required,
        help="keep the crawl in the Redis at URL (redis://HOST:6379/0), shared by its workers",
    )
    group.add_argument(
        "--crawl-id",
        metavar="ID",
        required=required,
        help="the crawl's name in Redis" + ("" if required else " (default: the start host)"),
    )


def add_lease_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--lease-ttl",
        type=seconds,
        default=30.0,
        metavar="SECONDS",
        help="a dead worker's pages and host slots go to others after SECONDS (default 30)",
    )


def check_url(url: str) -> str:
    """A one-line usage error for a URL that is not redis://, rediss:// or unix://."""
    from ..frontier._redis import redact

    scheme = url.partition("://")[0].lower() if "://" in url else ""
    if scheme not in ("redis", "rediss", "unix"):
        raise UsageError(f"bad Redis URL {redact(url)!r}: expected redis://HOST:PORT/DB")
    return url


def config_to_dict(config: CrawlConfig) -> dict[str, Any]:
    """The config as stored in Redis: of its requests' credentials, only which were given
    (:meth:`~sitecrawl.Requests.shape`); no proxy (a worker's own)."""
    stored = dataclasses.asdict(config)
    stored["requests"] = config.requests.shape()
    return stored


def config_from_dict(
    stored: dict[str, Any], requests: Requests | None = None, **local: Any
) -> CrawlConfig:
    """The config stored at seed time, with this worker's ``requests`` (its credentials and
    proxy: a :class:`UsageError` when it lacks credentials the crawl began with; whether the
    site's cookies are kept is the crawl's), ``max_concurrency`` and ``processes`` when
    given."""
    from .._config import CrawlConfig, Limits, Politeness, Requests, Timeouts
    from .._rules import Rules
    from ._requests import require_stored

    shape = stored.get("requests") or {}
    requests = requests or Requests()
    require_stored(requests, shape, "the crawl in Redis")
    requests = dataclasses.replace(
        requests, keep_cookies=shape.get("keep_cookies", requests.keep_cookies)
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
    )


def frontier_for(url: str, crawl_id: str, **options: Any) -> RedisFrontier:
    """The crawl's frontier (not yet open); usage errors for a bad URL or id, or no redis."""
    from ..frontier._redis import RedisFrontier, _import_redis

    try:
        _import_redis()
        return RedisFrontier(check_url(url), crawl_id=crawl_id, **options)
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
    crawl_id = args.crawl_id or split_host(config.base_url).replace(":", "_")
    stored = {**config_to_dict(config), "lease_ttl": args.lease_ttl}
    frontier = frontier_for(
        args.redis, crawl_id, base_url=config.base_url, config=stored, fresh=args.fresh
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
                max_concurrency=args.concurrency,
                processes=args.processes,
            )
            return await work(
                frontier, local, sinks, per_host=per_host(frontier.config), quiet=args.quiet
            )

    with open_sinks(sinks_paths) as sinks:
        return run_async(run(sinks))


async def work(
    frontier: RedisFrontier,
    config: CrawlConfig,
    sinks: list[Sink],
    *,
    per_host: int,
    quiet: bool,
) -> int:
    """Crawl as one worker until the shared crawl is finished; then, with ``sinks``, write
    every page of the crawl (all workers') to them."""
    from .._crawler import AsyncCrawler
    from .._progress import summary
    from .._throttle_redis import RedisThrottle

    throttle = RedisThrottle(frontier, config.politeness, max_limit=per_host)
    crawler = AsyncCrawler(
        config.base_url, config=config, frontier=frontier, throttle=throttle, keep_pages=False
    )
    async with ctrl_c_stops(crawler, quiet=quiet), crawler:
        async with throttle:  # its heartbeat renews this worker's tokens while it crawls
            interrupted = await run_crawl(crawler, quiet=quiet)
        status = await frontier.status()
        if sinks and not interrupted:
            await write_pages(frontier.read_pages(), sinks)
        failed = None
        if not interrupted and status.done == 1 and not status.queued and not status.in_flight:
            # The whole crawl is one page: when it is the start page and it failed, say so
            # and exit 1, as a crawl without Redis does.
            async for page in frontier.pages():
                if page.depth == 0 and page.error is not None:
                    failed = page
    if not quiet:
        print(summary(crawler.stats), file=sys.stderr)
        print(status_line(frontier, status), file=sys.stderr)
    if failed is not None:
        return start_page_failed(failed)
    return EXIT_INTERRUPTED if interrupted else EXIT_OK


def same_rules(stored: dict[str, Any], config: CrawlConfig) -> str | None:
    """A crawl joined in Redis obeys the rules it was created with: a note when this command
    gave none (they are taken), a :class:`UsageError` when it gave others (the queue was
    decided by the stored ones)."""
    from .._rules import Rules

    rules = Rules.from_dict(stored.get("rules", {}))
    if rules == config.rules:
        return None
    if config.rules != Rules():
        raise UsageError(
            f"crawl in Redis began with {rules.describe()}, not {config.rules.describe()}:"
            " join it with the same rules (or none, to reuse them), or start over with --fresh"
        )
    return f"joined with the rules this crawl began with: {rules.describe()}"


def status_line(frontier: RedisFrontier, status: Any) -> str:
    from .._terminal import printable

    state = "finished" if not status.queued and not status.in_flight else "running"
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
