"""What the commands share for a crawl kept in Redis (``--redis URL --crawl-id ID``): the
options, the crawl's config stored at seed time, and one worker's run over the shared frontier
and throttle. ``crawl --redis`` seeds and works (and writes every worker's pages to ``-o`` as
they are stored); ``worker`` joins; ``status`` and ``export`` read. A crawl that loses its
Redis mid-way (unreachable past ``--redis-timeout``, or restarted empty) ends every process
with one line and exit 1, the seed's ``-o`` keeping the pages written so far. Nothing here
imports redis: the frontier does, when opened."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from .._settings import seconds
from ._common import (
    EXIT_FATAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    UsageError,
    ctrl_c_stops,
    progress,
    start_page_failed,
)

if TYPE_CHECKING:
    from .._config import CrawlConfig
    from .._exceptions import StateError
    from ..frontier import CrawlStatus, SharedFrontier
    from ..sinks import Sink


def store_command(
    commands: Any,
    name: str,
    help: str,
    handler: Callable[[argparse.Namespace], int],
    *,
    output: str,
    outputs: bool = False,
) -> argparse.ArgumentParser:
    """The parser of a command that reads one crawl: a state file (``STATE``) or a crawl kept
    in Redis (the Redis options), ``-o FILE`` (its ``output`` help; ``outputs``: repeatable),
    ``-q``, and its ``handler``; the caller adds its own options."""
    parser: argparse.ArgumentParser = commands.add_parser(name, help=help)
    parser.add_argument("state", metavar="STATE", nargs="?", help="a state file written by 'crawl'")
    action = "append" if outputs else "store"
    parser.add_argument("-o", "--output", action=action, metavar="FILE", help=output)
    parser.add_argument("-q", "--quiet", action="store_true", help="no summary line")
    add_redis_options(parser, required=False)
    parser.set_defaults(handler=handler)
    return parser


def add_redis_options(
    parser: argparse.ArgumentParser, *, required: bool, lease: bool = False, worker: bool = False
) -> None:
    """``--redis`` and ``--crawl-id``; with ``lease``, ``--lease-ttl`` (a crawl that creates
    one), with ``worker``, ``--redis-timeout`` (a process that works on one): one group."""
    group = parser.add_argument_group("distributed crawl (Redis)")
    group.add_argument(
        "--redis",
        metavar="URL",
        action=RedisURLs,
        required=required,
        help="keep the crawl in the Redis at URL (redis://HOST:6379/0), shared by its workers;"
        " several (repeated, or URL,URL,...): the crawl spread over them by host, each"
        " process given the same URLs in the same order",
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


class RedisURLs(argparse.Action):
    """``--redis``: repeatable, each value one URL or a comma-separated list; the option's
    value is the list of every URL given (None when none is)."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        urls = list(getattr(namespace, self.dest, None) or [])
        urls += [url.strip() for url in str(values).split(",") if url.strip()]
        setattr(namespace, self.dest, urls)


def redis_arg(urls: list[str]) -> str:
    """The ``--redis`` value naming ``urls`` (passwords left out), for messages."""
    from ..frontier import redact

    return ",".join(redact(url) for url in urls)


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


def frontier_for(urls: str | list[str], crawl_id: str, **options: Any) -> SharedFrontier:
    """The crawl's frontier (not yet open): one Redis, or the shards of several (``urls``: one
    URL, or ``--redis``'s list); usage errors for a bad URL or id, or no redis."""
    from ..frontier import RedisFrontier, RedisShards, import_redis

    if isinstance(urls, str):
        urls = [urls]
    if not urls:
        raise UsageError("--redis needs a URL")
    checked = [check_url(url) for url in urls]
    try:
        import_redis()
        if len(checked) == 1:
            return RedisFrontier(checked[0], crawl_id=crawl_id_of(crawl_id), **options)
        return RedisShards(checked, crawl_id=crawl_id_of(crawl_id), **options)
    except ValueError as exc:  # ConfigError: a bad crawl id, the [redis] extra missing
        raise UsageError(str(exc)) from None


def seed_and_work(args: argparse.Namespace, config: CrawlConfig, sinks_paths: list[str]) -> int:
    """``crawl URL --redis``: create the crawl (or join it: same site), then work on it."""
    from .._urls import split_host
    from ._common import run_async
    from ._outputs import open_sinks

    if args.state or args.no_state:
        raise UsageError("--redis keeps the crawl in Redis: drop --state / --no-state")
    from ..frontier import encode, joined

    crawl_id = crawl_id_of(args.crawl_id or split_host(config.base_url))
    if len(args.redis) > 1 and config.limits.max_pages is not None:
        raise UsageError("--max-pages needs a single --redis: a page budget is counted in one")
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
            hello = (
                f"crawl {crawl_id} in Redis: add workers anywhere with"
                f" sitecrawl worker --redis {redis_arg(args.redis)} --crawl-id {crawl_id}"
            )
            # The crawl's settings, with this command's aim: taken or refused by the crawler.
            local = joined(frontier.config or stored, config)
            return await work(
                frontier, local, sinks, quiet=args.quiet, hello=hello, verbose=args.verbose
            )

    from ._archive import archive_options, worker_name, worker_outputs

    csv_markdown = bool(getattr(args, "csv_markdown", False))
    with open_sinks(
        worker_outputs(sinks_paths, worker_name()),  # web archives: a series per worker
        extract=config.extract,
        csv_markdown=csv_markdown,
        base_url=config.base_url,
        archive=archive_options(args, config),
    ) as sinks:
        return run_async(run(sinks))


async def work(
    frontier: SharedFrontier,
    config: CrawlConfig,
    sinks: list[Sink],
    *,
    quiet: bool,
    hello: str | None = None,
    verbose: bool = False,
) -> int:
    """Crawl as one worker (:meth:`AsyncCrawler.run`) until the shared crawl is finished;
    with ``sinks``, write every page of the crawl (all workers') to them as it is stored;
    its web archives (``-o site.warc.gz``) hold this worker's exchanges, written before the
    page is done in Redis.
    When the crawl loses its Redis, say so in one line (and what ``-o`` holds) and return
    exit 1. ``hello`` is said once the crawler has taken the crawl (a run it refuses says
    only why)."""
    from .._crawler import AsyncCrawler
    from .._driver import CrawlRun, first_error, shared_settings
    from .._exceptions import ResumeRefused, StateError
    from .._progress import summary
    from .._terminal import printable
    from ..frontier import RedisShards
    from ..sinks import archived_hook, recorder_of

    config, throttle = shared_settings(frontier, config)
    crawler = AsyncCrawler(
        config.base_url,
        config=config,
        frontier=frontier,
        throttle=throttle,
        keep_pages=False,
        on_page=archived_hook(sinks, durable=True),  # a page done in Redis is archived
        recorder=recorder_of(sinks),
    )
    run = CrawlRun(crawler.stats)
    refused: StateError | None = None
    try:
        async with ctrl_c_stops(crawler, quiet=quiet), crawler:
            if hello is not None and not quiet:
                print(hello, file=sys.stderr)
            watch = None if quiet else progress(crawler, verbose)
            run = await crawler.run(sinks, watch=watch)
    except* ResumeRefused as group:  # before anything was fetched: one line, exit 2
        refused = first_error(group)
    except* StateError as group:
        run.lost = first_error(group)
    if refused is not None:
        raise refused
    if not quiet:
        urls = frontier.urls if isinstance(frontier, RedisShards) else [frontier.url]
        rest = (
            f"sitecrawl export --redis {redis_arg(urls)} --crawl-id {frontier.crawl_id}"
            " -o pages.csv (error, error_kind)"
        )
        print(summary(crawler.stats, rest), file=sys.stderr)
        if run.status is not None:
            print(status_line(frontier, run.status), file=sys.stderr)
    if run.lost is not None:
        reason = frontier.lost or str(run.lost)
        if sinks:
            reason += f"; the {run.written:,} pages written to -o are a partial crawl"
        print(f"sitecrawl: error: {printable(reason)}", file=sys.stderr)
        return EXIT_FATAL
    if run.start_failure is not None:
        return start_page_failed(run.start_failure)
    return EXIT_INTERRUPTED if run.interrupted else EXIT_OK


def status_line(frontier: SharedFrontier, status: CrawlStatus) -> str:
    from .._terminal import printable

    # nothing queued yet: the crawl is created, its start URLs not yet added
    state = "starting" if not status.seen else "finished" if status.finished else "running"
    return printable(
        f"crawl {frontier.crawl_id} of {frontier.base_url} ({state}): {status.done:,} done"
        f" · {status.queued:,} queued · {status.in_flight:,} in flight"
        f" · {status.errors:,} errors · {status.workers:,} workers alive"
    )


def check_source(args: argparse.Namespace) -> None:
    """``export`` and ``report`` read a STATE file, or ``--redis URL --crawl-id ID``."""
    if (args.redis is None) == (args.state is None) or (args.redis and args.crawl_id is None):
        raise UsageError(f"{args.command} reads a STATE file, or --redis URL --crawl-id ID")
