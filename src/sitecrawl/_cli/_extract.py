"""``sitecrawl extract URL -x NAME=SPEC ...``: fetch one page and print each rule's value.

The way to write extraction rules: the page is fetched as a crawl would fetch it (robots.txt
obeyed, redirects in scope followed, the same headers and throttle), and nothing else is.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ._archive import check_assets
from ._common import EXIT_FATAL, EXIT_OK, UsageError, run_async
from ._options import add_crawl_options, config_from_args

if TYPE_CHECKING:
    from .._config import CrawlConfig
    from .._models import Page


def add_command(commands: Any) -> None:
    extract = commands.add_parser(
        "extract",
        help="fetch one page politely and print each extraction rule's value (-x NAME=SPEC)",
    )
    extract.add_argument("url", metavar="URL", help="the page")
    extract.add_argument("--json", action="store_true", help="print the values as one JSON object")
    add_crawl_options(extract)  # -x, --extract-file, and the options a crawl fetches with
    extract.set_defaults(handler=_execute)


async def fetch_one(config: CrawlConfig) -> Page:
    """The page at ``config.base_url``, fetched and parsed as a crawl would (no sitemaps)."""
    from .._crawler import AsyncCrawler

    got: list[Page] = []
    config = replace(
        config,
        limits=replace(config.limits, max_pages=1, max_depth=0),
        politeness=replace(config.politeness, sitemaps=False),
    )
    async with AsyncCrawler(config.base_url, config=config, on_page=got.append) as crawler:
        await crawler.crawl()
    return got[0]


def value_line(name: str, value: Any) -> str:
    """``NAME: value``: text as it is, anything else as JSON (``null`` for no match)."""
    from .._json import dumps

    return f"{name}: {value if isinstance(value, str) else dumps(value)}"


def _execute(args: argparse.Namespace) -> int:
    from .._json import dumps
    from .._terminal import printable

    config = config_from_args(args)
    check_assets(config.archive_assets, [], "extract")
    if not config.extract:
        raise UsageError("give at least one rule: -x NAME=SPEC or --extract-file RULES.toml")
    page = run_async(fetch_one(config))
    if page.error is not None:
        print(printable(f"sitecrawl: error: {page.url}: {page.error}"), file=sys.stderr)
        return EXIT_FATAL
    values = {rule.name: page.extracted.get(rule.name) for rule in config.extract}
    if args.json:
        print(dumps(values))
    else:
        for name, value in values.items():
            print(printable(value_line(name, value)))
    return EXIT_OK
