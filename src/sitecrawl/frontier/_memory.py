"""In-memory frontier: a seen set and one FIFO per depth. The default for library use."""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

from .._models import Page, Request
from ._base import Frontier, FrontierStats


class MemoryFrontier(Frontier):
    """Layout: ``_seen`` (set of keys); ``_queues[d]`` (deque of requests at depth ``d``);
    ``_low`` (lowest depth that may be non-empty); ``_leased`` and ``_done`` (counts).
    Pages are not kept: the crawler's ``page_data`` and the sinks have them."""

    def __init__(self) -> None:
        self._seen: set[str] = set()
        self._queues: list[deque[Request]] = []
        self._low = 0
        self._queued = 0
        self._leased = 0
        self._done = 0

    def _queue(self, depth: int) -> deque[Request]:
        queues = self._queues
        while len(queues) <= depth:
            queues.append(deque())
        self._low = min(self._low, depth)
        return queues[depth]

    async def add(self, requests: Sequence[Request]) -> int:
        seen = self._seen
        added = 0
        for request in requests:
            if request.key in seen:
                continue
            seen.add(request.key)
            self._queue(request.depth).append(request)
            added += 1
        self._queued += added
        return added

    async def claim(self, key: str) -> bool:
        if key in self._seen:
            return False
        self._seen.add(key)
        return True

    async def next(self) -> Request | None:
        if not self._queued:
            return None
        queues = self._queues
        while not queues[self._low]:
            self._low += 1
        self._queued -= 1
        self._leased += 1
        return queues[self._low].popleft()

    async def mark_done(self, request: Request, page: Page | None = None) -> None:
        self._leased -= 1
        if page is None:
            self._queue(request.depth).appendleft(request)
            self._queued += 1
        else:
            self._done += 1

    async def is_finished(self) -> bool:
        return not self._queued and not self._leased

    async def stats(self) -> FrontierStats:
        return FrontierStats(
            seen=len(self._seen), queued=self._queued, in_flight=self._leased, done=self._done
        )
