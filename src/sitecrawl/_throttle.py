"""Per-host politeness: one small slot per host, no middleware.

A :class:`HostSlot` holds a host's concurrency limit, the minimum interval between request
starts (``delay``, lengthened by the robots.txt Crawl-delay when larger, plus jitter), and a
backoff-until time. :meth:`HostSlot.acquire` waits until a request may start;
:meth:`HostSlot.release` feeds the outcome back:

- 429/503 back the slot off: wait ``Retry-After`` (capped) or a doubling penalty, and halve
  its concurrency, or, already at 1, double an extra delay; answers arriving inside the
  backoff window belong to the same episode and do not shrink the slot again;
- rising latency (moving average above 3x its best) halves the concurrency too;
- every 5 consecutive fast answers give one step back (concurrency +1, extra delay halved).

State changes are plain methods taking ``now``, so they are tested without sleeping.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import deque
from collections.abc import Callable
from email.utils import parsedate_to_datetime

from ._config import Politeness

BACKOFF_STATUSES = frozenset({429, 503})
_RECOVER_AFTER = 5  # consecutive fast answers per recovery step
_LATENCY_FACTOR = 3.0
_MIN_EXTRA = 0.25  # first step of the adaptive extra delay, seconds


def parse_retry_after(value: str | None, *, cap: float, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or an HTTP-date), clamped
    to ``[0, cap]``; None when absent or unreadable. ``now`` is a Unix time (tests)."""
    if not value:
        return None
    text = value.strip()
    if text.isdigit():
        seconds = float(text)
    else:
        try:
            when = parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            return None
        seconds = when.timestamp() - (time.time() if now is None else now)
    return min(max(seconds, 0.0), cap)


def _fmt(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds >= 10 else f"{seconds:.1f} s"


class HostSlot:
    """One host's politeness state. ``limit`` may shrink below ``max_limit`` (adaptive)."""

    def __init__(
        self,
        host: str,
        politeness: Politeness,
        *,
        max_limit: int,
        clock: Callable[[], float] = time.monotonic,
        rng: random.Random | None = None,
    ) -> None:
        self.host = host
        self._p = politeness
        self.max_limit = max_limit
        self.limit = max_limit
        self.crawl_delay: float | None = None  # as applied (capped)
        self.crawl_delay_capped_from: float | None = None
        self.extra_delay = 0.0
        self.in_flight = 0
        self.next_start = 0.0
        self.backoff_until = 0.0
        self.backoff_reason: str | None = None
        self._penalty = 0.0
        self._streak = 0
        self._latency: float | None = None
        self._best_latency: float | None = None
        self._clock = clock
        self._rng = rng or random.Random()
        self._waiters: deque[asyncio.Future[None]] = deque()

    # -- configuration ------------------------------------------------------------------------

    def set_crawl_delay(self, seconds: float | None) -> None:
        """Apply a robots.txt Crawl-delay, capped at ``max_crawl_delay``."""
        if seconds is None:
            self.crawl_delay = self.crawl_delay_capped_from = None
            return
        cap = self._p.max_crawl_delay
        self.crawl_delay = min(seconds, cap)
        self.crawl_delay_capped_from = seconds if seconds > cap else None

    @property
    def interval(self) -> float:
        """Minimum seconds between two request starts, before jitter."""
        return max(self._p.delay, self.crawl_delay or 0.0) + self.extra_delay

    # -- the request cycle --------------------------------------------------------------------

    def try_start(self, now: float) -> float:
        """Start a request if allowed now (return 0.0), else return seconds to wait
        (``inf`` when the slot is full: wait for a release)."""
        if self.in_flight >= self.limit:
            return float("inf")
        start = max(self.next_start, self.backoff_until)
        if start > now:
            return start - now
        self.in_flight += 1
        interval = self.interval
        if interval and self._p.jitter:
            interval *= 1.0 + self._rng.uniform(0.0, self._p.jitter)
        self.next_start = now + interval
        return 0.0

    async def acquire(self) -> None:
        while (wait := self.try_start(self._clock())) > 0:
            if wait == float("inf"):
                future = asyncio.get_running_loop().create_future()
                self._waiters.append(future)
                try:
                    await future
                except asyncio.CancelledError:
                    if future in self._waiters:
                        self._waiters.remove(future)
                    elif future.done() and not future.cancelled():
                        self._wake_one()  # pass on the wake-up this task will not use
                    raise
            else:
                await asyncio.sleep(wait)

    def release(
        self, *, status: int | None, latency: float, retry_after: float | None, now: float
    ) -> None:
        """End a request started by :meth:`try_start`/:meth:`acquire`, learning from it.

        ``status`` None means no response (timeout, connection error)."""
        self.in_flight -= 1
        self._wake_one()
        if status in BACKOFF_STATUSES:
            self._back_off(status, retry_after, now)
        elif retry_after is not None and status is not None and status >= 400:
            self._wait_until(now + retry_after, f"Retry-After after {status}")
        elif status is not None and status < 500 and self._p.adaptive:
            self._learn_latency(latency)

    def _wake_one(self) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return

    def _back_off(self, status: int, retry_after: float | None, now: float) -> None:
        # Answers to requests that were already in flight when the host first pushed back
        # are one signal, not many: inside a backoff window only Retry-After can extend it.
        episode = now >= self.backoff_until
        cap = self._p.max_backoff
        if retry_after is not None:
            wait = min(retry_after, cap)
        elif episode:
            self._penalty = min(cap, max(self._p.backoff, self._penalty * 2))
            wait = self._penalty
        else:
            return
        self._wait_until(now + wait, f"backing off after {status} for {_fmt(wait)}")
        if self._p.adaptive and episode:
            self._shrink()

    def _wait_until(self, until: float, reason: str) -> None:
        if until > self.backoff_until:
            self.backoff_until = until
            self.backoff_reason = reason

    def _shrink(self) -> None:
        self._streak = 0
        if self.limit > 1:
            self.limit = max(1, self.limit // 2)
        else:
            self.extra_delay = min(self._p.max_backoff, max(_MIN_EXTRA, self.extra_delay * 2))

    def _learn_latency(self, latency: float) -> None:
        ewma = latency if self._latency is None else 0.8 * self._latency + 0.2 * latency
        self._latency = ewma
        best = self._best_latency = (
            ewma if self._best_latency is None else min(self._best_latency, ewma)
        )
        if ewma > _LATENCY_FACTOR * best + 0.05:
            self._shrink()
            self._best_latency = ewma  # the new normal, until it improves again
            return
        self._streak += 1
        if self._streak >= _RECOVER_AFTER:
            self._streak = 0
            self._penalty /= 2
            if self.extra_delay:
                self.extra_delay = 0.0 if self.extra_delay <= _MIN_EXTRA else self.extra_delay / 2
            elif self.limit < self.max_limit:
                self.limit += 1
                self._wake_one()

    # -- reporting ----------------------------------------------------------------------------

    def waiting_reason(self, now: float) -> str | None:
        """Why requests to this host are held back right now, for the progress line."""
        if self.backoff_until > now and self.backoff_reason:
            return self.backoff_reason
        if self.crawl_delay and self.crawl_delay >= self._p.delay:
            asked = self.crawl_delay_capped_from
            capped = f" (capped from {_fmt(asked)})" if asked is not None else ""
            return f"Crawl-delay {_fmt(self.crawl_delay)}{capped}"
        if self.limit < self.max_limit:
            return f"slowed to {self.limit}/{self.max_limit} in flight"
        if self.extra_delay:
            return f"slowed: +{_fmt(self.extra_delay)} between requests"
        if self._p.delay:
            return f"delay {_fmt(self._p.delay)}"
        return None


class Throttle:
    """The slots of every host seen, created on first use."""

    def __init__(
        self,
        politeness: Politeness,
        *,
        max_concurrency: int,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.politeness = politeness
        self._max_limit = min(politeness.per_host, max_concurrency)
        self._clock = clock
        self._rng = random.Random()
        self.slots: dict[str, HostSlot] = {}

    def slot(self, host: str) -> HostSlot:
        slot = self.slots.get(host)
        if slot is None:
            slot = self.slots[host] = HostSlot(
                host, self.politeness, max_limit=self._max_limit, clock=self._clock, rng=self._rng
            )
        return slot

    def now(self) -> float:
        return self._clock()

    def reasons(self) -> dict[str, str]:
        """Host -> why it waits, for hosts that are held back now."""
        now = self._clock()
        return {
            host: reason
            for host, slot in self.slots.items()
            if (reason := slot.waiting_reason(now)) is not None
        }

    def capped_crawl_delays(self) -> dict[str, tuple[float, float]]:
        """Host -> (asked, applied) for every Crawl-delay cut to ``max_crawl_delay``."""
        return {
            host: (slot.crawl_delay_capped_from, slot.crawl_delay or 0.0)
            for host, slot in self.slots.items()
            if slot.crawl_delay_capped_from is not None
        }
