"""``sitecrawl status --redis URL --crawl-id ID``: one line on a crawl kept in Redis."""

from __future__ import annotations

import argparse
from typing import Any

from ._common import EXIT_OK, run_async
from ._redis import add_redis_options


def add_command(commands: Any) -> None:
    status = commands.add_parser("status", help="show the progress of a crawl kept in Redis")
    add_redis_options(status, required=True)
    status.set_defaults(handler=_execute)


def _execute(args: argparse.Namespace) -> int:
    from .._driver import stored_settings
    from ._redis import frontier_for, status_line

    frontier = frontier_for(args.redis, args.crawl_id)

    async def run() -> int:
        async with frontier:
            stored_settings(frontier)
            print(status_line(frontier, await frontier.status()))
        return EXIT_OK

    return run_async(run())
