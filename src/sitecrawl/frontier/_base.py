"""The frontier contract: what the crawler needs from a queue of URLs, and nothing more.

A frontier owns three things: the *seen set* (dedupe on :attr:`Request.key`), the *queue*
(breadth-first: lower depth first) and the *leases* of requests handed out but not yet done.
The crawler only ever calls these methods, so a backend (memory, SQLite, Redis) plugs in by
implementing them; one parametrized test suite holds every backend to the same behaviour.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from types import TracebackType

from .._models import Request


@dataclass(frozen=True, slots=True)
class FrontierStats:
    seen: int
    queued: int
    in_flight: int


class Frontier(ABC):
    """Abstract frontier. Use as an async context manager: ``async with frontier: ...``."""

    #: How often (seconds) idle workers re-check a frontier that other processes also feed;
    #: None when every change comes through this process (then they wait for a wake-up).
    poll_interval: float | None = None

    async def __aenter__(self) -> Frontier:
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
    async def mark_done(self, request: Request) -> None:
        """End the lease of a request handed out by :meth:`next`."""

    @abstractmethod
    async def is_finished(self) -> bool:
        """True when nothing is queued and nothing is leased."""

    @abstractmethod
    async def stats(self) -> FrontierStats:
        """Counts for progress displays."""
