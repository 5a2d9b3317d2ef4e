"""The course's one-call crawl, :func:`crawl_site_async`: an :class:`AsyncCrawler` built from
the same arguments, crawled and closed. Its keywords are :class:`CrawlOptions`, typed, so a
type checker catches a misspelled one."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypedDict, Unpack

from ._crawler import AsyncCrawler

if TYPE_CHECKING:
    from ._config import CrawlConfig, MarkdownScope
    from ._config_requests import Requests
    from ._crawler import PageHook
    from .fetch import Recorder
    from .frontier import Frontier
    from .throttle import Throttle


class CrawlOptions(TypedDict, total=False):
    """:class:`AsyncCrawler`'s keywords (see its docstring), each optional."""

    max_depth: int | None
    subdomains: bool
    user_agent: str | None
    ca_bundle: str | None
    timeout: float | None
    processes: int
    config: CrawlConfig | None
    frontier: Frontier | None
    on_page: PageHook | None
    on_error: PageHook | None
    keep_pages: bool
    state: str | os.PathLike[str] | None
    link_details: bool | None
    throttle: Throttle | None
    requests: Requests | None
    extract: Mapping[str, Any] | None
    markdown: bool
    markdown_scope: MarkdownScope | None
    recorder: Recorder | None


async def crawl_site_async(
    base_url: str,
    max_concurrency: int = 8,
    max_pages: int | None = None,
    **options: Unpack[CrawlOptions],
) -> dict[str, dict[str, Any]]:
    """Crawl a site and return ``page_data``: normalized URL -> page dict.

    The arguments are :class:`AsyncCrawler`'s. Await it; it works inside a running loop.
    """
    crawler = AsyncCrawler(base_url, max_concurrency, max_pages, **options)
    async with crawler:
        return await crawler.crawl()
