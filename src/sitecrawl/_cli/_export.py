"""``sitecrawl export STATE.db [--table pages|links|...] -o FILE``: write one
table of a state file out (.csv, .jsonl, .json, .parquet)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ._common import EXIT_OK, UsageError, run_async
from ._ends import machine_failure
from ._outputs import check_outputs
from ._redis import add_redis_options, check_source

TABLE_NAMES = ("pages", "links", "redirects", "images", "structured_data")


def add_command(commands: Any) -> None:
    export = commands.add_parser("export", help="write a table of a crawl's state file")
    export.add_argument("state", metavar="STATE", nargs="?", help="a state file written by 'crawl'")
    export.add_argument(
        "-o",
        "--output",
        action="append",
        metavar="FILE",
        help="write the table to FILE (.csv, .jsonl, .json, .parquet; - for JSONL on stdout);"
        " repeatable (default: STATE's name and the table's, STATE.TABLE.csv)",
    )
    export.add_argument(
        "-t",
        "--table",
        choices=TABLE_NAMES,
        default="pages",
        help="which table: pages (default), links, redirects, images or structured_data"
        " (crawled with --structured-data)",
    )
    export.add_argument("-q", "--quiet", action="store_true", help="no summary line")
    add_redis_options(export, required=False)
    export.set_defaults(handler=_execute)


def _execute(args: argparse.Namespace) -> int:
    """Any table of a state file or a crawl in Redis (one :class:`PageStore` either way), any
    format, streamed: rows are written as the store's pages are read
    (:func:`sitecrawl.sinks._tables.store_rows`), never the whole crawl in memory. The files appear
    whole when every row is written: an export stopped (Ctrl-C, SIGTERM, an error) leaves each
    path as it was."""
    from .._exceptions import ConfigError
    from ..parse import stored_rules
    from ..sinks import TABLES, pages_table, store_rows, write_rows_async
    from ._store import default_output, open_store, source_name

    check_source(args)
    args.output = args.output or [default_output(args, f"{args.table}.csv")]
    check_outputs(args.output)
    table = TABLES[args.table]

    async def export() -> int:
        async with open_store(args) as store:
            try:
                chosen = table
                if table.name == "pages":  # a column per extraction rule the crawl ran
                    kept = (getattr(store, name, None) for name in ("options", "config"))
                    found = [stored_rules(item) for item in kept if isinstance(item, dict)]
                    chosen = pages_table(next((rules for rules in found if rules), ()))
                return await write_rows_async(args.output, chosen, store_rows(chosen, store))
            except ConfigError as exc:
                raise UsageError(str(exc)) from None
            except OSError as exc:
                if machine_failure(exc):
                    raise
                path = exc.filename or ", ".join(args.output)
                raise UsageError(f"cannot write output: {exc.strerror or exc} ({path})") from None

    count = run_async(export())
    if not args.quiet:
        what = "pages" if args.table == "pages" else f"{args.table} rows"
        where = "" if args.output == ["-"] else f": {', '.join(args.output)}"
        print(f"{count:,} {what} from {source_name(args)}{where}", file=sys.stderr)
    return EXIT_OK
