"""The polite fetch stack, wired once for the crawler and the link checker alike.

::

    RobotsCache ──fetches robots.txt through──┐
                                              v
    caller ──> PoliteClient (retries, follow) ──> Throttle (per-host slot) ──> Fetcher (HTTP)

Each part is given the limits it needs by whoever knows them: robots.txt is fetched under
:data:`ROBOTS_POLICY` (RFC 9309's size and redirect limits) and a robots.txt's
``Crawl-delay`` is applied to its host's slot. The crawl's scope tells the fetcher which hosts
its credentials (headers, cookies, auth) may go to, request by request.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from types import TracebackType

from .._config import CrawlConfig
from .._exceptions import BlockedAddress, FetchError, RedirectOutOfScope, TooManyRedirects
from .._urls import split_host
from ..control import CrawlScope
from ..throttle import Throttle
from ._fetcher import Fetcher, FollowPolicy
from ._gate import RobotsGate
from ._pagejob import PoliteClient
from ._redirects import RedirectTrail
from ._robots import ROBOTS_MAX_BYTES, ROBOTS_MAX_REDIRECTS, RobotsCache, RobotsRules, product_token
from ._sitemaps import Discovery, sitemap_urls

#: robots.txt: redirects to any http(s) host, at most five; the first 512 KiB of any body.
ROBOTS_POLICY = FollowPolicy(
    scope=None, max_redirects=ROBOTS_MAX_REDIRECTS, max_bytes=ROBOTS_MAX_BYTES
)
RulesHook = Callable[[str, RobotsRules], None]


class FetchStack:
    """Fetcher, throttle, polite client, robots.txt cache (None when robots.txt is not
    obeyed) and the robots gate every request of the crawl passes (:class:`RobotsGate`),
    wired together. ``async with`` opens and closes the HTTP session.

    ``throttle`` replaces the in-process per-host slots; ``on_rules(origin, rules)`` is
    called after a robots.txt was read and its ``Crawl-delay`` applied to the host's slot.
    ``scope`` (default: the config's start URLs and scope kind) is where the crawl's
    credentials may go: the hosts it holds (:meth:`CrawlScope.holds_host`), as it is at each
    request."""

    def __init__(
        self,
        config: CrawlConfig,
        *,
        throttle: Throttle | None = None,
        on_rules: RulesHook | None = None,
        scope: CrawlScope | None = None,
    ) -> None:
        if scope is None:
            scope = CrawlScope(list(config.starts), config.scope_kind)
        self.fetcher = Fetcher(config, trusted=scope.holds_host)
        if throttle is None:
            throttle = Throttle(config.politeness, max_concurrency=config.limits.max_concurrency)
        self.throttle = throttle
        self.client = PoliteClient(self.fetcher, throttle, config)
        self._on_rules = on_rules
        self.robots: RobotsCache | None = None
        if config.politeness.obey_robots:
            self.robots = RobotsCache(
                self._fetch_robots, product_token(config.user_agent), on_rules=self._rules_read
            )
        self.gate = RobotsGate(self.robots)
        self._max_redirects = config.limits.max_redirects

    async def __aenter__(self) -> FetchStack:
        await self.fetcher.__aenter__()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.fetcher.__aexit__(exc_type, exc, tb)

    async def _fetch_robots(self, url: str) -> tuple[int | None, bytes | None, FetchError | None]:
        """``(status, body, error)`` of a robots.txt, as :meth:`RobotsRules.from_fetch` wants
        them; a redirect chain that goes nowhere (too long, out of http(s), or to an address
        not connected to) is its last status without a body."""
        trail = RedirectTrail(url, ROBOTS_POLICY)
        result = await self.client.follow(trail)
        if isinstance(result, TooManyRedirects | RedirectOutOfScope):
            return result.status, None, None
        if isinstance(result, BlockedAddress) and trail.hops:
            return trail.hops[-1][1], None, None
        if isinstance(result, FetchError):
            return None, None, result
        return result.status, result.body, None

    async def sitemap_urls(
        self, origin: str, scope: CrawlScope, *, declared: Iterable[str] | None = None
    ) -> Discovery:
        """The page URLs of ``origin``'s sitemaps (or of the ``declared`` ones) in ``scope``,
        fetched through this stack (:func:`~sitecrawl.fetch._sitemaps.sitemap_urls`)."""
        return await sitemap_urls(
            origin,
            client=self.client,
            gate=self.gate,
            scope=scope,
            max_redirects=self._max_redirects,
            declared=declared,
        )

    def _rules_read(self, origin: str, rules: RobotsRules) -> None:
        self.throttle.slot(split_host(origin)).set_crawl_delay(rules.crawl_delay)
        if self._on_rules is not None:
            self._on_rules(origin, rules)
