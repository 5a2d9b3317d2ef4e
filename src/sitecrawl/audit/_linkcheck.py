"""Checking link targets the crawl did not fetch: each distinct URL once, HEAD first.

:class:`LinkChecker` asks each URL with HEAD and falls back to GET when HEAD is refused
(405, 501) or fails without a timeout (servers that mishandle HEAD drop the connection or send
garbage; a timeout is not waited for twice). Redirects are followed hop by hop to any http(s)
host, at most ``Limits.max_redirects``. Every request goes through the crawl's machinery
(:class:`~sitecrawl.fetch.PoliteClient`): the host's politeness slot, retries with backoff
on timeouts, connection errors and 408/429/5xx. URLs inside the crawl's scope obey its
robots.txt (a disallowed one is reported ``blocked by robots.txt``, unfetched); other hosts'
robots.txt is not read: a link check asks once per URL, as a visitor following the link would.

URLs are checked host by host. A host's name is looked up once (unless a proxy carries the
requests: then it is the proxy's to resolve), before anything is asked of it:
when it does not resolve (or the lookup takes longer than the connect timeout), every URL on it
fails at once with that :class:`DNSError`, unasked. Then one URL of the host is checked alone;
when the host refuses the connection (or has no route), the host's other URLs fail at once with
the same error. :attr:`LinkChecker.results` fills as each check ends, so a check that is
stopped (a time limit, Ctrl-C: cancel it) keeps what it found.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import ipaddress
import socket
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from types import TracebackType
from typing import Literal
from urllib.parse import urlsplit

from .._config import CrawlConfig
from .._exceptions import (
    BlockedByRobots,
    ConnectError,
    DNSError,
    FetchError,
    FetchTimeout,
    HTTPStatusError,
    RedirectOutOfScope,
    TooManyRedirects,
)
from .._urls import split_host
from ..control import CrawlScope
from ..fetch import FetchStack, FollowPolicy, RedirectTrail, Response

HEAD_REFUSED = frozenset({405, 501})
#: A connection that failed with one of these failed for the host, not for one URL.
_HOST_ERRNOS = frozenset({errno.ECONNREFUSED, errno.EHOSTUNREACH, errno.ENETUNREACH})


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
        self._stack = FetchStack(config, scope=scope)
        self.throttle = self._stack.throttle
        self._client = self._stack.client
        # robots.txt is asked for the crawl's scope only (a visitor follows the rest).
        self._gate = self._stack.gate.only(scope.contains)
        self._policy = FollowPolicy(
            scope=None, max_redirects=config.limits.max_redirects, max_bytes=1
        )
        #: URL -> how it answered, filled as each check ends.
        self.results: dict[str, TargetStatus] = {}
        #: ``host:port`` -> the error that failed every URL on it at once.
        self.unreachable: dict[str, FetchError] = {}
        # Behind a proxy, names are the proxy's to resolve: no lookup here.
        requests = config.requests
        self._lookup = not (requests.proxy or requests.http_proxy or requests.https_proxy)

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
        """Check each distinct URL once, host by host, ``Limits.max_concurrency`` requests at
        a time (per host: ``Politeness.per_host`` and its slot's limit); return
        :attr:`results`, URL -> :class:`TargetStatus`."""
        by_host: dict[str, list[str]] = {}
        for url in dict.fromkeys(urls):
            if url not in self.results:
                by_host.setdefault(split_host(url), []).append(url)
        slots = asyncio.Semaphore(self._config.limits.max_concurrency)
        async with asyncio.TaskGroup() as hosts:
            for host, group in by_host.items():
                hosts.create_task(self._check_host(host, group, slots))
        return self.results

    async def check_until(
        self, urls: Iterable[str], *, deadline: float | None = None, stop: asyncio.Event
    ) -> Literal["deadline", "stopped"] | None:
        """:meth:`check` until every URL is checked (None), ``deadline`` (a
        :func:`time.monotonic` time: ``"deadline"``) or ``stop`` is set (``"stopped"``); the
        checks in flight are then dropped, and :attr:`results` holds what was found."""
        work = asyncio.create_task(self.check(urls))
        stopped = asyncio.create_task(stop.wait())
        timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
        await asyncio.wait({work, stopped}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        stopped.cancel()
        if work.done():
            work.result()  # (its error, if any)
            return None
        work.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await work
        return "stopped" if stop.is_set() else "deadline"

    async def _check_host(self, host: str, urls: list[str], slots: asyncio.Semaphore) -> None:
        """One DNS lookup, one URL alone, then the rest: or all at once when the host is
        unreachable."""
        async with slots:
            down: FetchError | None = None
            if self._lookup:
                down = await _resolve(urls[0], self._config.timeouts.connect)
            if down is None:
                first, error = await self._check(urls[0])
                self.results[urls[0]] = first
                if error is not None and not first.hops and _unreachable(error):
                    down = error
                urls = urls[1:]
        if down is not None:
            self.unreachable[host] = down
            for url in urls:
                self.results[url] = TargetStatus.failed(url, down, (), url, "HEAD", 0)
            return
        rest = deque(urls)

        async def worker() -> None:
            while rest:
                url = rest.popleft()
                async with slots:
                    self.results[url] = await self.check_one(url)

        async with asyncio.TaskGroup() as workers:
            for _ in range(min(len(rest), self._config.politeness.per_host)):
                workers.create_task(worker())

    async def check_one(self, url: str) -> TargetStatus:
        return (await self._check(url))[0]

    async def _check(self, url: str) -> tuple[TargetStatus, FetchError | None]:
        """How ``url`` answered, and the error that ended its check (None when it answered)."""
        trail = RedirectTrail(url, self._policy)
        method = "HEAD"
        result = await self._client.follow(trail, method=method, check=self._gate.check)
        if _head_refused(result):  # GET from the hop that refused HEAD on
            method = "GET"
            result = await self._client.follow(trail, method=method, check=self._gate.check)
        hops, current, attempts = tuple(trail.hops), trail.current, trail.attempts
        if isinstance(result, FetchError):  # no answer, robots.txt, or a chain gone nowhere
            return TargetStatus.failed(url, result, hops, current, method, attempts), result
        status = result.status
        if status >= 400:
            exc = HTTPStatusError(f"HTTP {status}", url=current, status=status)
            return TargetStatus.failed(url, exc, hops, current, method, attempts), exc
        return TargetStatus(url, status, None, hops, current, method, attempts), None


def _head_refused(result: Response | FetchError) -> bool:
    """HEAD answered 405/501, or failed in a way a server mishandling HEAD fails (not a
    timeout, robots.txt, a redirect chain gone nowhere, or a host that cannot be reached)."""
    if isinstance(result, FetchError):
        return not isinstance(
            result, FetchTimeout | BlockedByRobots | TooManyRedirects | RedirectOutOfScope
        ) and not _unreachable(result)
    return result.status in HEAD_REFUSED


def _unreachable(error: FetchError) -> bool:
    """The host cannot be reached at all: its name does not resolve, or connecting to it is
    refused or has no route (told by the OS error under the connection error)."""
    if isinstance(error, DNSError):
        return True
    if not isinstance(error, ConnectError):
        return False
    cause = error.__cause__
    while cause is not None:
        if isinstance(cause, OSError) and cause.errno in _HOST_ERRNOS:
            return True
        cause = cause.__cause__
    return False


async def _resolve(url: str, timeout: float) -> DNSError | None:
    """Look the host of ``url`` up once; the :class:`DNSError` when its name does not resolve
    within ``timeout`` seconds, else None (an IP address needs no lookup)."""
    parts = urlsplit(url)
    host = parts.hostname
    if host is None:
        return None
    try:
        ipaddress.ip_address(host)
        return None
    except ValueError:
        pass
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        async with asyncio.timeout(timeout):
            await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except TimeoutError:
        return DNSError(f"DNS lookup failed: no answer within {timeout:g} s", url=url)
    except OSError as exc:  # socket.gaierror
        return DNSError(f"DNS lookup failed: {exc.strerror or exc}", url=url)
    return None
