"""Per-host politeness: one small slot per host, no middleware.

A slot (the :class:`Slot` protocol) holds a host's concurrency limit, the minimum interval
between request starts (``delay``, lengthened by the robots.txt Crawl-delay when larger, plus
jitter), and a backoff-until time. ``acquire()`` waits until a request may start; ``release()``
feeds the outcome back, and :meth:`Adaptive.learn` applies the rules:

- 429/503 back the slot off: wait ``Retry-After`` (capped) or a doubling penalty, and halve
  its concurrency, or, already at 1, double an extra delay; answers arriving inside the
  backoff window belong to the same episode and do not shrink the slot again;
- rising latency (moving average above 3x its best) halves the concurrency too;
- every 5 consecutive fast answers give one step back (concurrency +1, extra delay halved).

:class:`HostSlot` keeps that state in this process. ``_throttle_redis.RedisSlot`` keeps it in
Redis, where Lua twins of :meth:`HostSlot.try_start` and :meth:`Adaptive.learn` apply the same
rules; one suite (``tests/throttle_backends.py``) holds both to the same answers. State changes
take ``now`` as an argument, so the rules are tested on a scripted clock.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import deque
from collections.abc import Callable
from email.utils import parsedate_to_datetime
from typing import Protocol

from .._config import Politeness

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
    """``45 s``, ``3.0 s``, ``0.25 s``, ``0.02 s``: two significant digits below a second, so a
    short delay never shows as 0.0."""
    if seconds >= 10:
        return f"{seconds:.0f} s"
    return f"{seconds:.1f} s" if seconds >= 1 else f"{seconds:.2g} s"


class Slot(Protocol):
    """One host's politeness, kept in this process (:class:`HostSlot`) or shared by every
    worker of a crawl (``RedisSlot``). ``limit``, ``extra_delay`` and ``backoff_until`` (on
    the throttle's clock) are what the host's answers taught it, as last seen."""

    @property
    def host(self) -> str: ...
    @property
    def max_limit(self) -> int: ...
    @property
    def limit(self) -> int: ...
    @property
    def extra_delay(self) -> float: ...
    @property
    def backoff_until(self) -> float: ...
    @property
    def backoff_reason(self) -> str | None: ...
    @property
    def crawl_delay(self) -> float | None: ...
    @property
    def crawl_delay_capped_from(self) -> float | None: ...

    def set_crawl_delay(self, seconds: float | None) -> None:
        """Apply a robots.txt Crawl-delay, capped at ``max_crawl_delay``."""

    async def acquire(self) -> None:
        """Wait until a request to the host may start; it is in flight from then on."""

    def release(
        self, *, status: int | None, latency: float, retry_after: float | None, now: float
    ) -> None:
        """End a request started by :meth:`acquire`, learning from its answer (``status``
        None: no response) at ``now`` on the throttle's clock."""

    def waiting_reason(self, now: float) -> str | None:
        """Why requests to this host are held back at ``now``, for the progress line."""


def cap_crawl_delay(seconds: float | None, cap: float) -> tuple[float | None, float | None]:
    """A robots.txt Crawl-delay as applied, and as asked when the cap cut it (else None)."""
    if seconds is None:
        return None, None
    return min(seconds, cap), (seconds if seconds > cap else None)


def describe_wait(slot: Slot, delay: float, now: float) -> str | None:
    """Why ``slot`` holds requests back at ``now`` (``delay``: the configured one); None when
    it does not."""
    if slot.backoff_until > now and slot.backoff_reason:
        return slot.backoff_reason
    crawl_delay = slot.crawl_delay
    if crawl_delay and crawl_delay >= delay:
        asked = slot.crawl_delay_capped_from
        capped = f" (capped from {_fmt(asked)})" if asked is not None else ""
        return f"Crawl-delay {_fmt(crawl_delay)}{capped}"
    if slot.limit < slot.max_limit:
        return f"slowed to {slot.limit}/{slot.max_limit} in flight"
    if slot.extra_delay:
        return f"slowed: +{_fmt(slot.extra_delay)} between requests"
    if delay:
        return f"delay {_fmt(delay)}"
    return None


class Adaptive:
    """What a host's answers taught its slot, and the pure rules that teach it (the module
    docstring lists them). Times are seconds on the caller's clock."""

    __slots__ = (
        "_p",
        "backoff_reason",
        "backoff_until",
        "best_latency",
        "extra_delay",
        "latency",
        "limit",
        "max_limit",
        "penalty",
        "streak",
    )

    def __init__(self, politeness: Politeness, max_limit: int) -> None:
        self._p = politeness
        self.max_limit = max_limit
        self.limit = max_limit
        self.extra_delay = 0.0
        self.backoff_until = 0.0
        self.backoff_reason: str | None = None
        self.penalty = 0.0
        self.streak = 0
        self.latency: float | None = None
        self.best_latency: float | None = None

    def learn(
        self, *, status: int | None, latency: float, retry_after: float | None, now: float
    ) -> bool:
        """Learn from one answer (``status`` None: no response) arriving at ``now``; True
        when the limit grew (a waiting request may start)."""
        if status in BACKOFF_STATUSES:
            self._back_off(status, retry_after, now)
        elif retry_after is not None and status is not None and status >= 400:
            self._wait_until(now + retry_after, f"Retry-After after {status}")
        elif status is not None and status < 500 and self._p.adaptive:
            return self._learn_latency(latency)
        return False

    def _back_off(self, status: int, retry_after: float | None, now: float) -> None:
        # Answers to requests that were already in flight when the host first pushed back
        # are one signal, not many: inside a backoff window only Retry-After can extend it.
        episode = now >= self.backoff_until
        cap = self._p.max_backoff
        if retry_after is not None:
            wait = min(retry_after, cap)
        elif episode:
            self.penalty = min(cap, max(self._p.backoff, self.penalty * 2))
            wait = self.penalty
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
        self.streak = 0
        if self.limit > 1:
            self.limit = max(1, self.limit // 2)
        else:
            self.extra_delay = min(self._p.max_backoff, max(_MIN_EXTRA, self.extra_delay * 2))

    def _learn_latency(self, latency: float) -> bool:
        ewma = latency if self.latency is None else 0.8 * self.latency + 0.2 * latency
        self.latency = ewma
        best = ewma if self.best_latency is None else min(self.best_latency, ewma)
        self.best_latency = best
        if ewma > _LATENCY_FACTOR * best + 0.05:
            self._shrink()
            self.best_latency = ewma  # the new normal, until it improves again
            return False
        self.streak += 1
        if self.streak < _RECOVER_AFTER:
            return False
        self.streak = 0
        self.penalty /= 2
        if self.extra_delay:
            self.extra_delay = 0.0 if self.extra_delay <= _MIN_EXTRA else self.extra_delay / 2
        elif self.limit < self.max_limit:
            self.limit += 1
            return True
        return False


class HostSlot:
    """One host's politeness, in this process. ``limit`` may shrink below ``max_limit``."""

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
        self.adaptive = Adaptive(politeness, max_limit)
        self.crawl_delay: float | None = None  # as applied (capped)
        self.crawl_delay_capped_from: float | None = None
        self.in_flight = 0
        self.next_start = 0.0
        self._clock = clock
        self._rng = rng or random.Random()
        self._waiters: deque[asyncio.Future[None]] = deque()

    @property
    def limit(self) -> int:
        return self.adaptive.limit

    @property
    def extra_delay(self) -> float:
        return self.adaptive.extra_delay

    @property
    def backoff_until(self) -> float:
        return self.adaptive.backoff_until

    @property
    def backoff_reason(self) -> str | None:
        return self.adaptive.backoff_reason

    def set_crawl_delay(self, seconds: float | None) -> None:
        self.crawl_delay, self.crawl_delay_capped_from = cap_crawl_delay(
            seconds, self._p.max_crawl_delay
        )

    @property
    def interval(self) -> float:
        """Minimum seconds between two request starts, before jitter."""
        return max(self._p.delay, self.crawl_delay or 0.0) + self.adaptive.extra_delay

    # -- the request cycle --------------------------------------------------------------------

    def try_start(self, now: float) -> float:
        """Start a request if allowed now (return 0.0), else return seconds to wait
        (``inf`` when the slot is full: wait for a release)."""
        adaptive = self.adaptive
        if self.in_flight >= adaptive.limit:
            return float("inf")
        start = max(self.next_start, adaptive.backoff_until)
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
        self.in_flight -= 1
        self._wake_one()
        if self.adaptive.learn(status=status, latency=latency, retry_after=retry_after, now=now):
            self._wake_one()

    def _wake_one(self) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return

    def waiting_reason(self, now: float) -> str | None:
        return describe_wait(self, self._p.delay, now)


class Throttle:
    """The slots of every host seen, created on first use; ``max_limit`` requests in flight
    per host at most."""

    def __init__(
        self,
        politeness: Politeness,
        *,
        max_concurrency: int,
        clock: Callable[[], float] = time.monotonic,
        rng: random.Random | None = None,
    ) -> None:
        self.politeness = politeness
        self.max_limit = min(politeness.per_host, max_concurrency)
        self.clock = clock
        self.rng = rng or random.Random()
        self.slots: dict[str, Slot] = {}

    def slot(self, host: str) -> Slot:
        slot = self.slots.get(host)
        if slot is None:
            slot = self.slots[host] = HostSlot(
                host, self.politeness, max_limit=self.max_limit, clock=self.clock, rng=self.rng
            )
        return slot

    def reasons(self) -> dict[str, str]:
        """Host -> why it waits, for hosts that are held back now."""
        now = self.clock()
        return {
            host: reason
            for host, slot in self.slots.items()
            if (reason := slot.waiting_reason(now)) is not None
        }
