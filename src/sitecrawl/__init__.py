"""sitecrawl: a fast, polite, concurrent web crawler built on asyncio.

::

    from sitecrawl import crawl_site_async
    page_data = await crawl_site_async("https://example.com", max_concurrency=8, max_pages=500)

Names are imported lazily, so ``sitecrawl --help`` does not pay for aiohttp and friends.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sitecrawl._lazy import lazy_getattr  # (not a public name: absolute, so not re-exported)

from ._version import __version__ as __version__

if TYPE_CHECKING:  # what type checkers see; at run time, __getattr__ imports on first use
    from ._config import CrawlConfig as CrawlConfig
    from ._config import Politeness as Politeness
    from ._config_limits import Limits as Limits
    from ._config_limits import Timeouts as Timeouts
    from ._config_render import Render as Render
    from ._config_requests import Requests as Requests
    from ._crawl_site import crawl_site_async as crawl_site_async
    from ._crawler import AsyncCrawler as AsyncCrawler
    from ._driver import CrawlRun as CrawlRun
    from ._exceptions import BlockedAddress as BlockedAddress
    from ._exceptions import BlockedByRobots as BlockedByRobots
    from ._exceptions import BodyTooLarge as BodyTooLarge
    from ._exceptions import ConfigError as ConfigError
    from ._exceptions import ConnectError as ConnectError
    from ._exceptions import DNSError as DNSError
    from ._exceptions import FetchError as FetchError
    from ._exceptions import FetchTimeout as FetchTimeout
    from ._exceptions import HTTPStatusError as HTTPStatusError
    from ._exceptions import InvalidURL as InvalidURL
    from ._exceptions import MissingExtra as MissingExtra
    from ._exceptions import NotHTMLError as NotHTMLError
    from ._exceptions import ParseError as ParseError
    from ._exceptions import PdfBroken as PdfBroken
    from ._exceptions import PdfEncrypted as PdfEncrypted
    from ._exceptions import ProtocolError as ProtocolError
    from ._exceptions import RedirectLoop as RedirectLoop
    from ._exceptions import RedirectOutOfScope as RedirectOutOfScope
    from ._exceptions import RenderError as RenderError
    from ._exceptions import RobotsUnreachable as RobotsUnreachable
    from ._exceptions import SitecrawlError as SitecrawlError
    from ._exceptions import StateError as StateError
    from ._exceptions import TLSError as TLSError
    from ._exceptions import TooManyRedirects as TooManyRedirects
    from ._models import CrawlStats as CrawlStats
    from ._models import Page as Page
    from ._models import Request as Request
    from ._terminal import printable as printable
    from ._urls import normalize_url as normalize_url
    from .control._rules import Rules as Rules
    from .parse._content import page_markdown as page_markdown
    from .parse._extract import extract_page_data as extract_page_data
    from .parse._extract import get_first_paragraph_from_html as get_first_paragraph_from_html
    from .parse._extract import get_h1_from_html as get_h1_from_html
    from .parse._extract import get_images_from_html as get_images_from_html
    from .parse._extract import get_urls_from_html as get_urls_from_html

#: Public name -> the private module it lives in, imported on first use (``__getattr__``).
_LAZY = {
    name: module
    for module, names in {
        "._config": ("CrawlConfig", "Politeness"),
        "._config_limits": ("Limits", "Timeouts"),
        "._config_render": ("Render",),
        "._config_requests": ("Requests",),
        "._crawl_site": ("crawl_site_async",),
        "._crawler": ("AsyncCrawler",),
        "._driver": ("CrawlRun",),
        ".control._rules": ("Rules",),
        "._exceptions": (
            "BlockedAddress",
            "BlockedByRobots",
            "BodyTooLarge",
            "ConfigError",
            "ConnectError",
            "DNSError",
            "FetchError",
            "FetchTimeout",
            "HTTPStatusError",
            "InvalidURL",
            "MissingExtra",
            "NotHTMLError",
            "ParseError",
            "PdfBroken",
            "PdfEncrypted",
            "ProtocolError",
            "RedirectLoop",
            "RedirectOutOfScope",
            "RenderError",
            "RobotsUnreachable",
            "SitecrawlError",
            "StateError",
            "TLSError",
            "TooManyRedirects",
        ),
        ".parse._extract": (
            "extract_page_data",
            "get_first_paragraph_from_html",
            "get_h1_from_html",
            "get_images_from_html",
            "get_urls_from_html",
        ),
        ".parse._content": ("page_markdown",),
        "._models": ("CrawlStats", "Page", "Request"),
        "._terminal": ("printable",),
        "._urls": ("normalize_url",),
    }.items()
    for name in names
}

__all__ = sorted([*_LAZY, "__version__"])


__getattr__ = lazy_getattr(__name__, _LAZY)


def __dir__() -> list[str]:
    return __all__
