"""sitecrawl: a fast, polite, concurrent web crawler built on asyncio.

::

    from sitecrawl import crawl_site_async
    page_data = await crawl_site_async("https://example.com", max_concurrency=8, max_pages=500)

Names are imported lazily, so ``sitecrawl --help`` does not pay for aiohttp and friends.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from ._version import __version__

if TYPE_CHECKING:
    from ._config import CrawlConfig, Limits, Politeness, Timeouts
    from ._crawler import AsyncCrawler, CrawlStats, crawl_site_async
    from ._exceptions import (
        BlockedByRobots,
        BodyTooLarge,
        ConfigError,
        ConnectError,
        DNSError,
        FetchError,
        FetchTimeout,
        HTTPStatusError,
        InvalidURL,
        NotHTMLError,
        ParseError,
        ProtocolError,
        RedirectLoop,
        RedirectOutOfScope,
        RobotsUnreachable,
        SitecrawlError,
        StateError,
        TooManyRedirects,
    )
    from ._extract import (
        extract_page_data,
        get_first_paragraph_from_html,
        get_h1_from_html,
        get_images_from_html,
        get_urls_from_html,
    )
    from ._models import Page, Request
    from ._urls import normalize_url

_LAZY = {
    "AsyncCrawler": "._crawler",
    "BlockedByRobots": "._exceptions",
    "BodyTooLarge": "._exceptions",
    "ConfigError": "._exceptions",
    "ConnectError": "._exceptions",
    "CrawlConfig": "._config",
    "CrawlStats": "._crawler",
    "DNSError": "._exceptions",
    "FetchError": "._exceptions",
    "FetchTimeout": "._exceptions",
    "HTTPStatusError": "._exceptions",
    "InvalidURL": "._exceptions",
    "Limits": "._config",
    "NotHTMLError": "._exceptions",
    "ParseError": "._exceptions",
    "Page": "._models",
    "Politeness": "._config",
    "ProtocolError": "._exceptions",
    "RedirectLoop": "._exceptions",
    "RedirectOutOfScope": "._exceptions",
    "Request": "._models",
    "RobotsUnreachable": "._exceptions",
    "SitecrawlError": "._exceptions",
    "StateError": "._exceptions",
    "Timeouts": "._config",
    "TooManyRedirects": "._exceptions",
    "crawl_site_async": "._crawler",
    "extract_page_data": "._extract",
    "get_first_paragraph_from_html": "._extract",
    "get_h1_from_html": "._extract",
    "get_images_from_html": "._extract",
    "get_urls_from_html": "._extract",
    "normalize_url": "._urls",
}

__all__ = [
    "AsyncCrawler",
    "BlockedByRobots",
    "BodyTooLarge",
    "ConfigError",
    "ConnectError",
    "CrawlConfig",
    "CrawlStats",
    "DNSError",
    "FetchError",
    "FetchTimeout",
    "HTTPStatusError",
    "InvalidURL",
    "Limits",
    "NotHTMLError",
    "Page",
    "ParseError",
    "Politeness",
    "ProtocolError",
    "RedirectLoop",
    "RedirectOutOfScope",
    "Request",
    "RobotsUnreachable",
    "SitecrawlError",
    "StateError",
    "Timeouts",
    "TooManyRedirects",
    "__version__",
    "crawl_site_async",
    "extract_page_data",
    "get_first_paragraph_from_html",
    "get_h1_from_html",
    "get_images_from_html",
    "get_urls_from_html",
    "normalize_url",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'sitecrawl' has no attribute {name!r}")
    value = getattr(import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
