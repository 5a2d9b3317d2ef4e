"""Checking link targets the crawl did not fetch: each distinct URL once, HEAD first.

:class:`LinkChecker` asks each URL with HEAD and falls back to GET when HEAD is refused
(405, 501) or fails without a timeout (servers that mishandle HEAD drop the connection or send
garbage; a timeout is not waited for twice). Redirects are followed hop by hop to any http(s)
host, at most ``Limits.max_redirects``. Every request goes through the crawl's machinery
(:class:`~sitecrawl._pagejob.PoliteClient`): the host's politeness slot, retries with backoff
on timeouts, connection errors and 408/429/5xx. URLs inside the crawl's scope obey its
robots.txt (a disallowed one is reported ``blocked by robots.txt``, unfetched); other hosts'
robots.txt is not read: a link check asks once per URL, as a visitor following the link would.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from types import TracebackType

from ._config import CrawlConfig
from ._exceptions import (
    BlockedByRobots,
    FetchError,
    FetchTimeout,
    HTTPStatusError,
    RedirectOutOfScope,
    RobotsUnreachable,
    TooManyRedirects,
)
from ._fetcher import FollowPolicy, RedirectTrail, Response
from ._pagejob import BLOCKED
from ._scope import CrawlScope
from ._stack import FetchStack

HEAD_REFUSED = frozenset({405, 501})


@dataclass(frozen=True, slots=True)
class TargetStatus:
    """How one URL answered: ``status`` of the last response (None when none came),
    ``error`` (None when it answered below 400) and its ``error_kind``, the redirect ``hops``
    followed and where they ended, the method that gave the answer and the attempts of its
    last request."""

    url: str
    status: int | None
    error: str | None
    hops: tuple[tuple[str, int], ...] = ()
    final_url: str | None = None
    method: str = "HEAD"
    attempts: int = 0
    error_kind: str | None = None

    @classmethod
    def failed(
        cls,
        url: str,
        exc: FetchError,
        hops: tuple[tuple[str, int], ...],
        final_url: str,
        method: str,
        attempts: int,
    ) -> TargetStatus:
        return cls(url, exc.status, str(exc), hops, final_url, method, attempts, exc.kind)

    @property
    def broken(self) -> bool:
        """4xx/5xx, no answer, or a redirect chain that went nowhere (loop, too long)."""
        return self.error is not None


class LinkChecker:
    """``async with LinkChecker(config, scope) as checker: found = await checker.check(urls)``."""

    def __init__(self, config: CrawlConfig, scope: CrawlScope) -> None:
        self._config = config
        self._scope = scope
        self._stack = FetchStack(config)
        self.throttle = self._stack.throttle
        self._client = self._stack.client
        self._robots = self._stack.robots
        self._policy = FollowPolicy(
            scope=None, max_redirects=config.limits.max_redirects, max_bytes=1
        )

    async def __aenter__(self) -> LinkChecker:
        await self._stack.__aenter__()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self._stack.__aexit__(exc_type, exc, tb)

    @property
    def retries(self) -> int:
        return self._client.retries

    async def check(self, urls: Iterable[str]) -> dict[str, TargetStatus]:
        """Check each distinct URL once, ``Limits.max_concurrency`` at a time (per host: its
        slot's limit); return URL -> :class:`TargetStatus`."""
        queue = deque(dict.fromkeys(urls))
        found: dict[str, TargetStatus] = {}

        async def worker() -> None:
            while queue:
                url = queue.popleft()
                found[url] = await self.check_one(url)

        async with asyncio.TaskGroup() as workers:
            for _ in range(min(len(queue), self._config.limits.max_concurrency)):
                workers.create_task(worker())
        return found

    async def _check_robots(self, url: str) -> None:
        """Raise when robots.txt keeps us from ``url`` (in scope only)."""
        if self._robots is None or not self._scope.contains(url):
            return
        rules = self._robots.cached(url) or await self._robots.rules(url)
        if rules.reason is not None:
            raise RobotsUnreachable(rules.reason, url=url)
        if not rules.allowed(url):
            raise BlockedByRobots(BLOCKED, url=url)

    async def check_one(self, url: str) -> TargetStatus:
        trail = RedirectTrail(url, self._policy)
        method = "HEAD"
        result = await self._client.follow(trail, method=method, check=self._check_robots)
        if _head_refused(result):  # GET from the hop that refused HEAD on
            method = "GET"
            result = await self._client.follow(trail, method=method, check=self._check_robots)
        hops, current, attempts = tuple(trail.hops), trail.current, trail.attempts
        if isinstance(result, FetchError):  # no answer, robots.txt, or a chain gone nowhere
            return TargetStatus.failed(url, result, hops, current, method, attempts)
        status = result.status
        if status >= 400:
            exc = HTTPStatusError(f"HTTP {status}", url=current, status=status)
            return TargetStatus.failed(url, exc, hops, current, method, attempts)
        return TargetStatus(url, status, None, hops, current, method, attempts)


def _head_refused(result: Response | FetchError) -> bool:
    """HEAD answered 405/501, or failed in a way a server mishandling HEAD fails (not a
    timeout, robots.txt, or a redirect chain gone nowhere)."""
    if isinstance(result, FetchError):
        return not isinstance(
            result, FetchTimeout | BlockedByRobots | TooManyRedirects | RedirectOutOfScope
        )
    return result.status in HEAD_REFUSED
