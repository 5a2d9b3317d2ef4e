"""The frontier contract: what the crawler needs from a queue of URLs, and nothing more.

A frontier owns three things: the *seen set* (dedupe on :attr:`Request.key`), the *queue*
(breadth-first: lower depth first) and the *leases* of requests handed out but not yet done.
A lease ends with :meth:`mark_done`: with the page, the request is done (a durable backend
stores the page in the same transaction, so "done" and "recorded" never disagree); without one,
the request goes back to the queue. Leases a dead process left behind are put back in the
queue when a durable backend is opened again.
The crawler only ever calls these methods, so a backend (memory, SQLite, Redis) plugs in by
implementing them; one parametrized test suite holds every backend to the same behaviour.
"""

from __future__ import annotations

import contextlib
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Protocol, Self, runtime_checkable

from .._models import Page, Request


@dataclass(frozen=True, slots=True)
class FrontierStats:
    """``done`` counts pages finished in every run a durable backend remembers."""

    seen: int
    queued: int
    in_flight: int
    done: int = 0


class Frontier(ABC):
    """Abstract frontier. Use as an async context manager: ``async with frontier: ...``."""

    #: How often (seconds) idle workers re-check a frontier that other processes also feed;
    #: None when every change comes through this process (then they wait for a wake-up).
    poll_interval: float | None = None

    #: True when :meth:`mark_done` stores the page, links with anchor text and rel included
    #: (the crawler extracts those only then).
    stores_pages: bool = False

    #: The stored crawl (:func:`sitecrawl.frontier._stored.encode`'s dict) a durable backend
    #: keeps from the crawl's beginning and reads back when opened again (a resume, a worker
    #: joining); None when it keeps none. The crawler takes it or refuses to go on
    #: (:func:`sitecrawl.frontier._stored.take_or_refuse`), whatever the backend.
    config: dict[str, Any] | None = None

    #: What the crawl learnt as it went (start URL redirects), saved by :meth:`save_options`
    #: and read back by a durable backend; None when nothing was.
    options: dict[str, Any] | None = None

    async def __aenter__(self) -> Self:
        await self.open()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def open(self) -> None:  # noqa: B027 - optional hook
        """Acquire resources (files, connections). Default: nothing to do."""

    async def close(self) -> None:  # noqa: B027 - optional hook
        """Release resources. Default: nothing to do."""

    async def finish(self, cut_at: int | None = None) -> None:  # noqa: B027 - optional hook
        """The crawl ran to its end (not stopped), or to ``cut_at`` pages (``max_pages``) with
        URLs left: a durable backend remembers it, so that the next run of the same crawl
        starts a new crawl instead of resuming. Default: nothing."""

    async def previous_page(self, key: str) -> Page | None:
        """The previous crawl's record of ``key`` (a later crawl's conditional request), or
        None. Default: none kept."""
        return None

    async def save_config(self, config: dict[str, Any]) -> None:
        """Store the crawl's :attr:`config` when none was given at creation (the crawler
        does, so that a frontier made without one is resumed by the same policy). Default:
        kept in :attr:`config` only."""
        self.config = config

    async def save_options(self, options: dict[str, Any]) -> None:
        """Replace the crawl's stored :attr:`options` (later runs and other workers read
        them). Default: kept in :attr:`options` only."""
        self.options = options

    @abstractmethod
    async def add(self, requests: Sequence[Request]) -> int:
        """Queue each request whose key was never seen; return how many were queued."""

    @abstractmethod
    async def claim(self, key: str) -> bool:
        """Mark ``key`` seen without queuing it; True only the first time."""

    @abstractmethod
    async def next(self) -> Request | None:
        """Lease the next request (lowest depth first), or None when none is queued now."""

    @abstractmethod
    async def mark_done(self, request: Request, page: Page | None = None) -> None:
        """End the lease of a request handed out by :meth:`next`: done with its ``page``, or,
        with None (its fetch was abandoned), back in the queue ahead of its depth."""

    async def complete(
        self, request: Request, page: Page | None, links: Sequence[Request] = ()
    ) -> int:
        """:meth:`add` the page's ``links``, then :meth:`mark_done` the request; return how
        many links were queued. A backend may do both in one step (the links are never
        queued later than the page is done). Default: the two calls."""
        added = await self.add(links) if links else 0
        await self.mark_done(request, page)
        return added

    def working(self) -> AbstractAsyncContextManager[None]:
        """The lifetime of this process as a worker taking leases: :meth:`next` is called
        inside ``async with frontier.working():`` only. A shared backend registers the worker
        and renews its leases while it lasts, and hands back on leaving the leases it took
        ahead and did not hand out. Default: nothing to do."""
        return contextlib.nullcontext()

    @abstractmethod
    async def is_finished(self) -> bool:
        """True when nothing is queued and nothing is leased."""

    @abstractmethod
    async def stats(self) -> FrontierStats:
        """Counts for progress displays."""


@runtime_checkable
class PageStore(Protocol):
    """A crawl's pages read back: what ``export`` and ``report`` need from a durable frontier
    (:class:`~sitecrawl.frontier.SqliteFrontier`, :class:`~sitecrawl.frontier.RedisFrontier`),
    open. One contract suite holds both to the same answers. The tables the exports write
    (pages, links, redirects, images) are computed from :meth:`read_pages` by
    :mod:`sitecrawl.sinks._tables`, the same way for every store.
    """

    #: The crawl's start URL.
    base_url: str | None

    def read_pages(self) -> AsyncIterator[Page]:
        """Every stored page, once each (links included), streamed: read from the store as
        they are iterated, never all held at once."""
        ...

    async def read_meta(self) -> dict[str, str]:
        """What the store knows of the crawl: ``base_url``, ``created`` (ISO 8601),
        ``sitecrawl`` (the version that created it), and whatever else it keeps."""
        ...

    async def crawl_seconds(self) -> float | None:
        """How long the crawl ran, every run together; None when the store does not know."""
        ...
