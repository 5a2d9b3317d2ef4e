"""``sitecrawl export STATE.db -o FILE``: write a state file's pages out."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ._common import EXIT_OK, open_sinks, run_async


def add_command(commands: Any) -> None:
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
    export.set_defaults(handler=_execute)


def _execute(args: argparse.Namespace) -> int:
    from ..frontier import SqliteFrontier

    async def export() -> int:
        count = 0
        async with SqliteFrontier(args.state, create=False) as store:
            sinks = open_sinks(args.output)
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

    return run_async(export())
