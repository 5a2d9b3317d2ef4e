"""``sitecrawl sitemap STATE -o sitemap.xml``: the sitemap of a finished crawl.

It lists the crawl's indexable, self-canonical HTML pages that answered 200
(:func:`sitecrawl.audit.sitemap_entry`), ``lastmod`` from their ``Last-Modified``, sorted by
URL; past 50,000 URLs or 50 MB, numbered parts beside the file and an index in it
(:func:`sitecrawl.sinks.write_sitemaps`), every file whole or not at all. Read from the store
after the crawl, a few dozen bytes a page.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ._common import EXIT_OK, UsageError, run_async
from ._ends import machine_failure
from ._redis import check_source, store_command


def add_command(commands: Any) -> None:
    sitemap = store_command(
        commands,
        "sitemap",
        "write the sitemap of a crawl",
        _execute,
        output="the sitemap to write (default: STATE's name, STATE.sitemap.xml); past 50,000"
        " URLs or 50 MB, FILE is an index of FILE-1.xml, FILE-2.xml, ...",
    )
    sitemap.add_argument(
        "--base-url",
        metavar="URL",
        help="where the parts of a split sitemap will be served, for the index (default: the"
        " crawl's start URL's origin)",
    )


def _execute(args: argparse.Namespace) -> int:
    from ..audit import page_key, sitemap_entry
    from ..sinks import write_sitemaps
    from ._store import default_output, open_store, source_name

    check_source(args)
    args.output = args.output or default_output(args, "sitemap.xml")
    if args.output == "-":
        raise UsageError("sitemap writes files (an index and its parts past 50,000 URLs): -o FILE")
    if args.base_url is not None and not args.base_url.startswith(("http://", "https://")):
        raise UsageError(f"--base-url must be an http(s) URL, not {args.base_url!r}")

    async def read() -> tuple[str, dict[str, tuple[str, str | None]]]:
        entries: dict[str, tuple[str, str | None]] = {}
        async with open_store(args) as store:
            async for page in store.read_pages():
                if (entry := sitemap_entry(page)) is not None:
                    entries.setdefault(page_key(entry[0]), entry)
            assert store.base_url is not None, "an open store knows its crawl's start URL"
            return store.base_url, entries

    base_url, entries = run_async(read())
    origin = base_url.split("/", 3)
    try:
        written = write_sitemaps(
            sorted(entries.values()),
            args.output,
            base_url=args.base_url or "/".join(origin[:3]) + "/",
        )
    except OSError as exc:
        if machine_failure(exc):
            raise
        path = exc.filename or args.output
        raise UsageError(f"cannot write sitemap: {exc.strerror or exc} ({path})") from None
    if not args.quiet:
        files = f"{len(written) - 1} sitemaps and their index" if len(written) > 1 else "sitemap"
        print(
            f"{len(entries):,} URLs from {source_name(args)}: {files}: {args.output}",
            file=sys.stderr,
        )
    return EXIT_OK
