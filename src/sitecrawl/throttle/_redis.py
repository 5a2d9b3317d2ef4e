"""Per-host politeness held in Redis, so it holds across every worker of a crawl.

:class:`RedisThrottle` is a :class:`~._throttle.Throttle` whose slots (:class:`RedisSlot`, a
:class:`~._throttle.Slot`) keep their state in Redis: the crawler and
:class:`~sitecrawl.fetch.PoliteClient` use it unchanged (``slot(host)``, ``acquire()``,
``release(...)``), and the in-process :class:`~._throttle.Throttle` stays the default. Its
lifetime is an ``async with``: entering starts the heartbeat that renews this worker's tokens,
leaving waits for the releases still being sent and stops it. Layout, per host::

    sitecrawl:{ID}:host:HOST            hash   limit, next, until, reason, extra, penalty,
                                               streak, lat, best (times in ms)
    sitecrawl:{ID}:host:HOST:tokens     zset   requests in flight, by expiry
    sitecrawl:{ID}:host:HOST:waiting    zset   requests waiting for a token, by arrival

- Concurrency: a request in flight holds a token in ``tokens``, scored by a deadline; the
  heartbeat renews the tokens, so the tokens of a worker that dies expire after the lease time
  and the host gets its capacity back. ``limit`` (adaptive) is shared. Requests that find the
  host full wait in ``waiting``, first come first served across workers: a worker's own release
  must not hand its token straight back to itself while the others poll.
- Delay: ``next`` is when the next request may start, set in the same script that grants the
  token, on Redis's clock (``TIME``): starts are spaced across workers whatever their clocks.
  The interval is ``max(delay, Crawl-delay) + extra``, plus jitter, as in ``HostSlot``.
- Backoff: ``until``, ``reason``, ``penalty``, the latency averages and the adaptive ``extra``
  delay follow :meth:`~._throttle.Adaptive.learn`, in Lua, one script per answer.

A worker's requests waiting for the same host ask together: one task tries to start all of
them in one script call, in their order of arrival, exactly as if each had sent its own call
(:data:`~._redis_lua.ACQUIRE`), and asks again for those left once the host may have room.
Every script (:mod:`._redis_lua`) takes an optional time (ms) that it uses instead of ``TIME``:
a throttle built with a ``clock`` (tests) passes it, so the Lua twins run on a scripted clock.
Calls go through the crawl's pipeline (several in one round trip). A release is sent
in the background (``release`` is synchronous on the hot path): until it lands, the host counts
one request more in flight than it has, never fewer. Its reply refreshes the slot's view of
the shared state, as the reply to each try to start does: no round trip is added for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import random
import time
from collections.abc import Callable, Coroutine
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

from .._config import Politeness
from ._local import Throttle, cap_crawl_delay, describe_wait
from ._redis_lua import ACQUIRE, RELEASE, RENEW

if TYPE_CHECKING:
    from ..frontier import CrawlScript, RedisFrontier, SharedFrontier

_SOURCES = {"acquire": ACQUIRE, "release": RELEASE, "renew": RENEW}

_POLL = 0.025  # seconds between two tries of a full slot (a local release wakes sooner)


class RedisThrottle(Throttle):
    """Slots whose state lives in the crawl's Redis; ``max_limit`` requests in flight per host
    across all workers. Use inside ``async with``, with the frontier open. ``clock`` (tests)
    replaces Redis's clock in the scripts, and ``time.monotonic`` in this process."""

    def __init__(
        self,
        frontier: SharedFrontier,
        politeness: Politeness,
        *,
        max_limit: int,
        clock: Callable[[], float] | None = None,
        rng: random.Random | None = None,
    ) -> None:
        super().__init__(
            politeness, max_concurrency=max_limit, clock=clock or time.monotonic, rng=rng
        )
        self.frontier = frontier
        self.token_ttl = frontier.lease_ttl
        self._scripted = clock is not None
        self._shared: dict[str, RedisSlot] = {}
        self._tokens = (f"{frontier.token}:{n}" for n in itertools.count())
        self._scripts: dict[tuple[int, str], CrawlScript] = {}  # (id of the shard, name)
        self._entered = False
        self._pending: set[asyncio.Task[None]] = set()
        self._heartbeat: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Self:
        self._entered = True
        self._heartbeat = asyncio.create_task(self._renew_forever())
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.flush()
        if self._heartbeat is not None:
            self._heartbeat.cancel()
            await asyncio.gather(self._heartbeat, return_exceptions=True)
            self._heartbeat = None

    def slot(self, host: str) -> RedisSlot:
        slot = self._shared.get(host)
        if slot is None:
            slot = self._shared[host] = RedisSlot(host, self)
            self.slots[host] = slot
        return slot

    def script(self, name: str, crawl: RedisFrontier) -> CrawlScript:
        """Script ``name`` of the shard ``crawl`` (a host's: :meth:`shard_for`)."""
        if not self._entered:
            raise RuntimeError("RedisThrottle used outside its 'async with'")
        script = self._scripts.get((id(crawl), name))
        if script is None:
            script = self._scripts[id(crawl), name] = crawl.script(_SOURCES[name])
        return script

    def script_now(self, now: float) -> str:
        """The time argument of a script: ``now`` (s) in ms on a scripted clock; else empty,
        for Redis's own clock."""
        return f"{now * 1000:.3f}" if self._scripted else ""

    def new_token(self) -> str:
        return next(self._tokens)

    def spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(work)
        self._pending.add(task)
        task.add_done_callback(self._settled)

    def _settled(self, task: asyncio.Task[None]) -> None:
        """A release that failed, failed with the frontier: it is lost, and says so."""
        self._pending.discard(task)
        if not task.cancelled():
            task.exception()

    async def flush(self) -> None:
        """Wait until the releases sent so far have landed."""
        while self._pending:
            await asyncio.gather(*self._pending, return_exceptions=True)

    async def _renew_forever(self) -> None:
        ttl = round(self.token_ttl * 1000)
        while True:
            await asyncio.sleep(self.token_ttl / 3)
            for slot in list(self._shared.values()):
                if slot.tokens:
                    args: list[str | int] = [ttl, self.script_now(self.clock()), *slot.tokens]
                    renew = self.script("renew", slot.crawl)
                    await slot.crawl.call(lambda: renew([slot.k_tokens], args))  # noqa: B023


class RedisSlot:
    """A :class:`~._throttle.Slot` whose concurrency, start times and backoff are shared in
    Redis. ``limit``, ``extra_delay``, ``backoff_until`` and ``backoff_reason`` are the shared
    state as last seen; ``crawl_delay`` is local (every worker reads robots.txt)."""

    def __init__(self, host: str, throttle: RedisThrottle) -> None:
        self.host = host
        self.max_limit = throttle.max_limit
        self.limit = throttle.max_limit
        self.extra_delay = 0.0
        self.backoff_until = 0.0
        self.backoff_reason: str | None = None
        self.crawl_delay: float | None = None
        self.crawl_delay_capped_from: float | None = None
        self.in_flight = 0
        self.tokens: list[str] = []
        self._p = throttle.politeness
        self._throttle = throttle
        self.crawl = throttle.frontier.shard_for(host)  # the Redis holding this host
        self.k_host = f"{self.crawl.prefix}host:{host}"
        self.k_tokens = self.k_host + ":tokens"
        self.k_waiting = self.k_host + ":waiting"
        # This worker's requests waiting to start, in arrival order: one task asks Redis for
        # all of them at once, one call at a time (_ask).
        self._asking: dict[str, asyncio.Future[None]] = {}
        self._asker: asyncio.Task[None] | None = None
        self._ended: list[str | int | float] = []  # releases not sent yet, 5 values each
        self._releasing = False  # a task is sending them
        self._freed = asyncio.Event()

    def set_crawl_delay(self, seconds: float | None) -> None:
        self.crawl_delay, self.crawl_delay_capped_from = cap_crawl_delay(
            seconds, self._p.max_crawl_delay
        )

    def waiting_reason(self, now: float) -> str | None:
        return describe_wait(self, self._p.delay, now)

    async def try_start(self, token: str) -> float:
        """One try (one round trip) at starting a request holding ``token``: 0.0 when it
        started, else seconds to wait, or ``inf`` when the host is full (``token`` then keeps
        its place in the queue: try again with it)."""
        (wait,) = await self.try_start_many([token])
        if wait == 0:
            self.tokens.append(token)
            self.in_flight += 1
        return wait

    async def try_start_many(self, tokens: list[str]) -> list[float]:
        """One try at starting a request for each of ``tokens``, in order, in one call: per
        token, as :meth:`try_start` (a token that started is not counted here yet)."""
        throttle = self._throttle
        p = self._p
        base_ms = max(p.delay, self.crawl_delay or 0.0) * 1000
        args: list[str | int | float] = [self.max_limit, base_ms, p.jitter]
        args += [round(throttle.token_ttl * 1000), throttle.script_now(throttle.clock())]
        for token in tokens:
            args += [token, throttle.rng.random()]
        keys = [self.k_host, self.k_tokens, self.k_waiting]
        script = throttle.script("acquire", self.crawl)
        reply = await self.crawl.call(lambda: script(keys, args))
        self._see(reply[:4])
        return [float("inf") if w < 0 else w / 1000 for w in map(float, reply[4:])]

    async def acquire(self) -> None:
        token = self._throttle.new_token()
        started: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._asking[token] = started
        if self._asker is None:
            self._asker = asyncio.create_task(self._ask())
        try:
            await started
        except asyncio.CancelledError:
            self._asking.pop(token, None)
            if token in self.tokens:  # started as this task was cancelled
                self.tokens.remove(token)
                self.in_flight -= 1
            self._throttle.spawn(self._leave(token))
            raise

    async def _ask(self) -> None:
        """Try to start every waiting request of this worker, all in one call, until none
        waits: sleep until the host's next start when it must wait, or until a release (or
        ``_POLL``) when it is full."""
        asking = self._asking
        try:
            while asking:
                tokens = list(asking)
                waits = await self.try_start_many(tokens)
                pause = 0.0
                for token, wait in zip(tokens, waits, strict=True):
                    if wait:
                        pause = wait if not pause else min(pause, wait)
                        continue
                    waiter = asking.pop(token, None)
                    if waiter is None or waiter.done():  # cancelled: give the token back
                        self._throttle.spawn(self._leave(token))
                        continue
                    self.tokens.append(token)
                    self.in_flight += 1
                    waiter.set_result(None)
                if not pause or not asking:
                    continue
                if pause == float("inf"):
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._freed.wait(), _POLL)
                else:
                    await asyncio.sleep(pause)
        except Exception as exc:
            for waiter in asking.values():
                if not waiter.done():
                    waiter.set_exception(exc)
            asking.clear()
        except BaseException:
            for waiter in asking.values():
                waiter.cancel()
            asking.clear()
            raise
        finally:
            self._asker = None

    async def _leave(self, token: str) -> None:
        """A cancelled request gives up its place in the queue of waiters (and a token it
        may have been granted as the call was cancelled)."""
        frontier = self.crawl
        client = frontier.client
        await frontier.call(lambda: client.zrem(self.k_waiting, token))
        await frontier.call(lambda: client.zrem(self.k_tokens, token))

    def release(
        self, *, status: int | None, latency: float, retry_after: float | None, now: float
    ) -> None:
        """As :meth:`~._throttle.Slot.release`; ``now`` counts only on a scripted clock (else
        the script reads Redis's)."""
        self.in_flight -= 1
        token = self.tokens.pop()
        self._ended += [
            token,
            -1 if status is None else status,
            latency,
            -1 if retry_after is None else retry_after,
            self._throttle.script_now(now),
        ]
        if not self._releasing:
            self._releasing = True
            self._throttle.spawn(self._release())

    async def _release(self) -> None:
        """Send the releases made so far in one call, again until none is left (those made
        while a call is on the wire go in the next)."""
        p = self._p
        script = self._throttle.script("release", self.crawl)
        keys = [self.k_host, self.k_tokens]
        try:
            while self._ended:
                args = [self.max_limit, int(p.adaptive), p.backoff, p.max_backoff, *self._ended]
                self._ended = []
                self._see(await self.crawl.call(lambda: script(keys, args)))  # noqa: B023
                self._freed.set()
                self._freed = asyncio.Event()
        finally:
            self._releasing = False

    def _see(self, view: list[Any]) -> None:
        limit, extra, left, reason = view
        self.limit = int(limit)
        self.extra_delay = float(extra) / 1000
        self.backoff_until = self._throttle.clock() + float(left) / 1000
        self.backoff_reason = reason or None
