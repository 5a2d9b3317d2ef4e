"""One host's politeness shared by every crawl the server runs on it.

Each crawl gets its own :class:`CrawlThrottle` (a :class:`~sitecrawl.throttle.Throttle`,
passed to the crawler as ``throttle=``: nothing in the engine changes), whose slot for a host
is the server's one slot for that host (:class:`SharedSlots`): two crawls of one site share
its requests in flight, its delay, its robots.txt Crawl-delay and its backoff, as one crawl
would. A slot is made by the first crawl that asks for its host, with that crawl's
politeness, and kept while a crawl uses it; the next crawl of the host after every crawl of it
ended makes a new one with its own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from .._config import Politeness
from ..throttle import Throttle

if TYPE_CHECKING:
    from ..throttle._local import Slot


class SharedSlots:
    """The server's per-host slots: host -> (slot, crawls using it)."""

    def __init__(self) -> None:
        self._slots: dict[str, Slot] = {}
        self._users: dict[str, int] = {}

    def take(self, host: str, make: Callable[[], Slot]) -> Slot:
        """The host's slot, made by ``make()`` when no crawl holds one; one more user."""
        slot = self._slots.get(host)
        if slot is None:
            slot = self._slots[host] = make()
        self._users[host] = self._users.get(host, 0) + 1
        return slot

    def leave(self, hosts: list[str]) -> None:
        """A crawl that used ``hosts`` ended: a slot no crawl uses any more is dropped."""
        for host in hosts:
            if host not in self._users:
                continue
            self._users[host] -= 1
            if self._users[host] <= 0:
                del self._users[host], self._slots[host]

    def __len__(self) -> int:
        return len(self._slots)


class CrawlThrottle(Throttle):
    """One crawl's throttle, whose slots are the server's (:class:`SharedSlots`)."""

    def __init__(self, politeness: Politeness, *, max_concurrency: int, shared: SharedSlots):
        super().__init__(politeness, max_concurrency=max_concurrency)
        self._shared = shared

    def slot(self, host: str) -> Slot:
        slot = self.slots.get(host)
        if slot is None:
            own = super().slot
            slot = self.slots[host] = self._shared.take(host, lambda: own(host))
        return slot

    def leave(self) -> None:
        """The crawl ended: give its hosts' slots back."""
        self._shared.leave(list(self.slots))
