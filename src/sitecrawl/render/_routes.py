"""What the browser may ask for while rendering, and how: politeness survives the browser.

Every request of a render comes here (Playwright route interception) and the browser itself
connects to no crawled host:

- the page's document is fulfilled with the response sitecrawl already fetched (no second
  request for it);
- images, media and fonts are aborted (they change no link nor text of the DOM); so are
  requests other than GET and HEAD, but a ``fetch`` or XHR POST or PUT to a crawled host (an
  application may ask for its content that way: a GraphQL query, a search): that one is
  sent, with its body and content type, like a GET below (a POST is never retried);
  forms, beacons and other methods are not;
- a request to a host outside the crawl's scope (third party) is aborted, unless
  ``allow_third_party``: then the browser makes it itself;
- a request to a crawled host is checked against robots.txt (disallowed or unreachable:
  aborted, and listed in the render's ``blocked``: the page's ``blocked_resources``) and
  made by sitecrawl's polite client, through the host's slot (``--per-host``, delay,
  Crawl-delay, backoff, retries), its answer fulfilled to the browser. Scripts and
  stylesheets that answered 200 are kept in a small cache shared by every render (as a
  browser's cache would), so the renders of one site fetch its bundle once.

Each render's handler counts its requests in flight: the pool's network idle.
"""

from __future__ import annotations

import contextlib
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .._exceptions import FetchError

if TYPE_CHECKING:
    from playwright.async_api import Request as BrowserRequest
    from playwright.async_api import Route

    from ..fetch import PoliteClient, Response

#: Resource types never loaded.
BLOCKED_TYPES = frozenset({"image", "media", "font"})
#: Resource types kept in the shared cache.
CACHED_TYPES = frozenset({"script", "stylesheet"})
#: Methods sent for the page's own code (``fetch``, XHR) to a crawled host, besides GET.
SENT_METHODS = frozenset({"POST", "PUT"})
_SCRIPT_TYPES = frozenset({"fetch", "xhr"})
_CACHE_ENTRIES = 256
_CACHE_ENTRY_BYTES = 2 * 1024 * 1024


def _headers(response: Response) -> dict[str, str]:
    headers: dict[str, str] = {}
    if response.content_type:
        charset = f"; charset={response.charset}" if response.charset else ""
        headers["content-type"] = response.content_type + charset
    if response.location is not None:
        headers["location"] = response.location
    return headers


@dataclass
class RouteRules:
    """What every render of a crawl shares: the polite client, the robots.txt check
    (``allowed(url)``; raises :class:`FetchError` when robots.txt is unreachable), which
    hosts are crawled (``crawled(url)``), and the cache."""

    client: PoliteClient
    allowed: Callable[[str], Awaitable[bool]]
    crawled: Callable[[str], bool]
    allow_third_party: bool = False
    max_bytes: int = 10 * 1024 * 1024
    #: URL -> (status, headers, body) of scripts and stylesheets.
    cache: OrderedDict[str, tuple[int, dict[str, str], bytes]] = field(default_factory=OrderedDict)
    #: Requests made through the client, over every render.
    fetched: int = 0


class Routes:
    """One render's request handler: its document is ``document``."""

    def __init__(self, rules: RouteRules, document: Response) -> None:
        self._rules = rules
        self._document = document
        self._served = False
        self.in_flight = 0
        self.last_change = time.monotonic()
        #: The render's requests robots.txt blocked (disallowed or unreachable), in order.
        self.blocked: list[str] = []

    async def handle(self, route: Route) -> None:
        from playwright.async_api import Error

        self.in_flight += 1
        self.last_change = time.monotonic()
        try:
            await self._handle(route, route.request)
        except Error:
            pass  # the render ended (its context closed) while this request was answered
        finally:
            self.in_flight -= 1
            self.last_change = time.monotonic()

    async def _handle(self, route: Route, request: BrowserRequest) -> None:
        rules = self._rules
        url = request.url
        if not self._served and request.is_navigation_request():
            self._served = True
            document = self._document
            await route.fulfill(
                status=document.status, headers=_headers(document), body=document.body or b""
            )
            return
        kind = request.resource_type
        method = request.method
        sends = method in SENT_METHODS and kind in _SCRIPT_TYPES
        if kind in BLOCKED_TYPES or not (method in ("GET", "HEAD") or sends):
            await route.abort("blockedbyclient")
            return
        if not url.startswith(("http://", "https://")):
            await route.continue_()
            return
        if not rules.crawled(url):
            if rules.allow_third_party and not sends:  # another site's POST: never
                await route.continue_()
            else:
                await route.abort("blockedbyclient")
            return
        cached = rules.cache.get(url) if not sends else None
        if cached is not None:
            rules.cache.move_to_end(url)
            status, headers, body = cached
            await route.fulfill(status=status, headers=headers, body=body)
            return
        try:
            allowed = await rules.allowed(url)
        except FetchError:
            allowed = False
        if not allowed:
            if url not in self.blocked:
                self.blocked.append(url)
            await route.abort("blockedbyclient")
            return
        data: bytes | None = None
        sent: dict[str, str] | None = None
        if sends:
            data = request.post_data_buffer
            content_type = request.headers.get("content-type")
            sent = {"content-type": content_type} if content_type else None
        result, _ = await rules.client.get(
            url,
            read_any=True,
            max_bytes=rules.max_bytes,
            method=method,
            extra_headers=sent,
            data=data,
        )
        rules.fetched += 1
        if isinstance(result, FetchError):
            await route.abort("failed")
            return
        headers = _headers(result)
        body = result.body or b""
        if kind in CACHED_TYPES and result.status == 200 and len(body) <= _CACHE_ENTRY_BYTES:
            rules.cache[url] = (result.status, headers, body)
            if len(rules.cache) > _CACHE_ENTRIES:
                with contextlib.suppress(KeyError):
                    rules.cache.popitem(last=False)
        await route.fulfill(status=result.status, headers=headers, body=body)
