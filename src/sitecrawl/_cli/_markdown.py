"""``sitecrawl markdown URL [URL ...]``: fetch pages politely and print their content as
Markdown.

The pages are fetched as a crawl fetches its start pages (one crawl of the given URLs, nothing
else: no links followed, no sitemaps): robots.txt obeyed, each host's pace kept, a redirect
followed wherever it leads, the same headers, retries and limits; the Markdown is made as
``--markdown`` makes it (``--scope main``: the main content; ``full``: the whole page). One
URL prints its Markdown; several print each page's under its YAML front matter (url, title,
description, fetched_at), in the order given. A page that could not be fetched or has no
Markdown (not HTML, blocked by robots.txt, 404) is named on stderr with its error, and the
exit code is 1; the others are printed.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ._common import EXIT_FATAL, EXIT_OK, UsageError, run_async
from ._options import add_setting_options, config_from_args

if TYPE_CHECKING:
    from .._config import CrawlConfig
    from .._models import Page

#: The crawl options that say how a page is fetched (the rest aim a crawl: scope, limits,
#: links, extraction; or are the command's own: --scope).
FETCH_OPTIONS = (
    "max_bytes",
    "timeout",
    "ignore_robots",
    "max_crawl_delay",
    "delay",
    "jitter",
    "retries",
    "user_agent",
    "ca_bundle",
    "header",
    "cookie",
    "cookies",
    "auth",
    "no_cookies",
    "proxy",
    "render",
    "browser",
    "render_timeout",
    "render_allow_third_party",
    "allow_private_redirects",
)


def add_command(commands: Any) -> None:
    markdown = commands.add_parser(
        "markdown",
        help="fetch pages politely (robots.txt obeyed) and print each one's content as Markdown",
    )
    markdown.add_argument("urls", nargs="+", metavar="URL", help="the pages")
    markdown.add_argument(
        "--scope",
        dest="markdown_scope",
        choices=("main", "full"),
        help="main (default: the main content; navigation, header, footer, sidebars and"
        " banners dropped) or full (the whole page, scripts and styles out)",
    )
    add_setting_options(markdown, only=FETCH_OPTIONS)
    markdown.set_defaults(handler=_execute)


async def fetch_pages(config: CrawlConfig) -> dict[str, Page]:
    """The start pages of ``config``, fetched and parsed as a crawl would (nothing else), by
    normalized URL."""
    from .._crawler import AsyncCrawler
    from .._urls import normalize_url

    got: dict[str, Page] = {}

    def keep(page: Page) -> None:
        got[normalize_url(page.url)] = page

    config = replace(
        config,
        limits=replace(config.limits, max_pages=len(config.starts), max_depth=0),
        politeness=replace(config.politeness, sitemaps=False),
    )
    async with AsyncCrawler(config.base_url, config=config, on_page=keep) as crawler:
        await crawler.crawl()
    return got


def shown(markdown: str) -> str:
    """Markdown fit for a terminal: each line :func:`~sitecrawl.printable` (tabs kept)."""
    from .._terminal import printable

    return "\n".join(
        "\t".join(printable(part) for part in line.split("\t")) for line in markdown.split("\n")
    )


def _execute(args: argparse.Namespace) -> int:
    from .._exceptions import SitecrawlError
    from .._terminal import printable
    from .._urls import normalize_url, parse_base_url
    from ..sinks import markdown_document, now_utc

    for url in args.urls:  # a bad one: a usage error, before anything is fetched
        try:
            parse_base_url(url)
        except SitecrawlError as exc:
            raise UsageError(str(exc)) from None
    args.markdown = True  # as --markdown: the extra is required, naming the install command
    config = config_from_args(args)
    pages = run_async(fetch_pages(config))
    failed = 0
    printed = 0
    for url in dict.fromkeys(config.starts):
        page = pages.get(normalize_url(url))
        if page is None or page.error is not None or page.markdown is None:
            failed += 1
            print(f"sitecrawl: error: {printable(url)}: {printable(_why(page))}", file=sys.stderr)
            continue
        text = page.markdown if len(config.starts) == 1 else markdown_document(page, now_utc())
        if printed:
            sys.stdout.write("\n")
        sys.stdout.write(shown(text.rstrip("\n")) + "\n")
        printed += 1
    sys.stdout.flush()
    return EXIT_FATAL if failed else EXIT_OK


def _why(page: Page | None) -> str:
    """Why a page has no Markdown."""
    if page is None:
        return "not fetched (the crawl stopped before it)"
    if page.error is not None:
        return f"{page.error} ({page.error_kind})" if page.error_kind else page.error
    content_type = page.content_type or "no content type"
    return f"not an HTML page ({content_type}): no Markdown"
