"""``sitecrawl worker --redis URL --crawl-id ID``: join a crawl kept in Redis, from anywhere."""

from __future__ import annotations

import argparse
from typing import Any

from .._settings import count
from ._archive import add_archive_options
from ._common import UsageError, run_async, verbose
from ._options import add_setting_options
from ._redis import add_redis_options
from ._requests import requests_from_args

#: The settings a worker takes (the rest are the crawl's, stored with it).
_REQUEST_OPTIONS = ("header", "cookie", "cookies", "auth", "no_cookies", "proxy")


def add_command(commands: Any) -> None:
    worker = commands.add_parser(
        "worker", help="work on a crawl kept in Redis (started by 'crawl URL --redis')"
    )
    add_redis_options(worker, required=True, worker=True)
    worker.add_argument(
        "-c",
        "--concurrency",
        type=count(1),
        help="requests in flight at most in this worker (default: the crawl's)",
    )
    # One process each: scale a machine by starting more workers.
    add_setting_options(worker, only=("processes",), defaults={"processes": 1})
    worker.add_argument("-q", "--quiet", action="store_true", help="no progress, no summary")
    worker.add_argument("-v", "--verbose", action="store_true", help="log each request on stderr")
    # The crawl's credentials are not stored in Redis: a worker is given them again.
    add_setting_options(worker, only=_REQUEST_OPTIONS)
    worker.add_argument(
        "-o",
        "--output",
        action="append",
        default=[],
        metavar="FILE.warc.gz",
        help="archive this worker's exchanges as WARC: FILE-HOST-PID.warc.gz and its numbered"
        " segments (gathered into one WACZ by export --warc FILE.warc.gz); repeatable",
    )
    add_archive_options(worker)
    worker.set_defaults(handler=_execute)


def _execute(args: argparse.Namespace) -> int:
    from ..frontier import decode
    from ..sinks import is_archive
    from ._archive import archive_options, check_archives, worker_name, worker_outputs
    from ._outputs import open_sinks
    from ._redis import frontier_for, work

    for path in args.output:
        if not path.lower().endswith((".warc.gz", ".warc")) or not is_archive(path):
            raise UsageError(f"-o {path}: a worker writes WARC only (FILE.warc.gz, FILE.warc)")
    check_archives(args.output, redis=True)
    requests = requests_from_args(args)
    processes = args.processes or 1  # one process each: scale by starting more workers
    frontier = frontier_for(args.redis, args.crawl_id, reconnect_timeout=args.redis_timeout)

    async def run() -> int:
        async with frontier:
            stored = frontier.config or {}
            config = decode(
                stored,
                requests=requests,
                max_concurrency=args.concurrency,
                processes=processes,
            )
            paths = worker_outputs(args.output, worker_name())
            with open_sinks(paths, archive=archive_options(args, config)) as sinks:
                return await work(frontier, config, sinks, quiet=args.quiet, verbose=args.verbose)

    with verbose(args):
        return run_async(run())
