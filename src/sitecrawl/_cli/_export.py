"""``sitecrawl export STATE.db [--table pages|links|redirects|images] -o FILE``: write one
table of a state file out (.csv, .jsonl, .json, .parquet)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ._common import EXIT_OK, UsageError, open_sinks, run_async, write_pages
from ._redis import add_redis_options, check_source, export_redis, read_redis

TABLE_NAMES = ("pages", "links", "redirects", "images")


def add_command(commands: Any) -> None:
    export = commands.add_parser("export", help="write a table of a crawl's state file")
    export.add_argument("state", metavar="STATE", nargs="?", help="a state file written by 'crawl'")
    export.add_argument(
        "-o",
        "--output",
        action="append",
        required=True,
        metavar="FILE",
        help="write the table to FILE (.csv, .jsonl, .json, .parquet; - for JSONL on stdout);"
        " repeatable",
    )
    export.add_argument(
        "-t",
        "--table",
        choices=TABLE_NAMES,
        default="pages",
        help="which table: pages (default), links, redirects or images",
    )
    export.add_argument("-q", "--quiet", action="store_true", help="no summary line")
    add_redis_options(export, required=False)
    export.set_defaults(handler=_execute)


def _execute(args: argparse.Namespace) -> int:
    check_source(args)
    if args.table != "pages" or any(out.lower().endswith(".parquet") for out in args.output):
        return _export_table(args)
    if args.redis is not None:
        return export_redis(args)
    from ..frontier import SqliteFrontier

    async def export() -> int:
        async with SqliteFrontier(args.state, create=False) as store:
            with open_sinks(args.output) as sinks:
                count = await write_pages(store.pages(), sinks)
        if not args.quiet:
            print(f"{count:,} pages from {args.state}", file=sys.stderr)
        return EXIT_OK

    return run_async(export())


def _export_table(args: argparse.Namespace) -> int:
    """Any table, any format: built from the state file's pages (:mod:`sitecrawl._tables`)."""
    from .._exceptions import ConfigError
    from .._tables import TABLES, table_rows
    from ..sinks import write_table
    from ._store import read_state

    records = run_async(read_redis(args) if args.redis else read_state(args.state))
    table = TABLES[args.table]
    count = 0
    for path in args.output:
        try:
            count = write_table(path, table, table_rows(table, records.pages, records.base_url))
        except ConfigError as exc:
            raise UsageError(str(exc)) from None
        except OSError as exc:
            raise UsageError(f"cannot write output: {exc.strerror or exc} ({path})") from None
    if not args.quiet:
        source = args.state or f"crawl {args.crawl_id} in Redis"
        print(f"{count:,} {args.table} rows from {source}", file=sys.stderr)
    return EXIT_OK
