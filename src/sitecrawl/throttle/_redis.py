"""Per-host politeness held in Redis, so it holds across every worker of a crawl.

:class:`RedisThrottle` is a :class:`~._throttle.Throttle` whose slots (:class:`RedisSlot`, a
:class:`~._throttle.Slot`) keep their state in Redis: the crawler and
:class:`~._pagejob.PoliteClient` use it unchanged (``slot(host)``, ``acquire()``,
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

Every script takes an optional time (ms) that it uses instead of ``TIME``: a throttle built
with a ``clock`` (tests) passes it, so the Lua twins run on a scripted clock. A release is sent
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

if TYPE_CHECKING:
    from ..frontier._redis import RedisFrontier
    from ..frontier._redis_crawl import CrawlScript

_POLL = 0.025  # seconds between two tries of a full slot (a local release wakes sooner)
_F = "string.format('%.3f', {})"


def _now(arg: int) -> str:
    """Lua: ``now`` in ms, from ``ARGV[arg]`` when given, else Redis's clock."""
    return (
        f"local now = tonumber(ARGV[{arg}])\n"
        "if not now then local t = redis.call('TIME') now = t[1] * 1000 + t[2] / 1000 end"
    )


# What the slot sees of the shared state: {limit, extra ms, backoff ms left, reason}.
_VIEW = "limit, tostring(extra), tostring(math.max(untl - now, 0)), reason or ''"

# KEYS: host, tokens, waiting. ARGV: token, max limit, interval ms before jitter, jitter,
# random, token ms, now ms (optional). Returns {wait ms (0: started, -1: full), view...}.
# An entry of ``waiting`` older than a token's lifetime is a dead worker's and is dropped.
_ACQUIRE = f"""
{_now(7)}
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now - tonumber(ARGV[6]))
local h = redis.call('HMGET', KEYS[1], 'limit', 'next', 'until', 'extra', 'reason')
local limit = tonumber(h[1]) or tonumber(ARGV[2])
local nxt = tonumber(h[2]) or 0
local untl = tonumber(h[3]) or 0
local extra = tonumber(h[4]) or 0
local reason = h[5]
local free = limit - redis.call('ZCARD', KEYS[2])
local ahead = redis.call('ZRANK', KEYS[3], ARGV[1]) or redis.call('ZCARD', KEYS[3])
local wait = 0
if ahead >= free then
  redis.call('ZADD', KEYS[3], 'NX', {_F.format("now")}, ARGV[1])
  wait = -1
elseif math.max(nxt, untl) > now then
  wait = math.max(nxt, untl) - now
else
  local interval = tonumber(ARGV[3]) + extra
  if interval > 0 then interval = interval * (1 + tonumber(ARGV[4]) * tonumber(ARGV[5])) end
  redis.call('HSET', KEYS[1], 'next', {_F.format("now + interval")})
  redis.call('ZADD', KEYS[2], {_F.format("now + tonumber(ARGV[6])")}, ARGV[1])
  redis.call('ZREM', KEYS[3], ARGV[1])
end
return {{tostring(wait), {_VIEW}}}
"""
# KEYS: host, tokens. ARGV: token, status (-1: none), latency s, Retry-After s (-1: none),
# max limit, adaptive (1/0), backoff s, max backoff s, now ms (optional). Adaptive.learn, on
# the shared state. Returns the view, as _ACQUIRE does.
_RELEASE = f"""
{_now(9)}
redis.call('ZREM', KEYS[2], ARGV[1])
local status, latency, ra = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local maxl, adaptive = tonumber(ARGV[5]), ARGV[6] == '1'
local backoff, cap = tonumber(ARGV[7]) * 1000, tonumber(ARGV[8]) * 1000
local h = redis.call('HMGET', KEYS[1], 'limit', 'until', 'extra', 'penalty', 'streak',
  'lat', 'best', 'reason')
local limit = tonumber(h[1]) or maxl
local untl = tonumber(h[2]) or 0
local extra = tonumber(h[3]) or 0
local penalty = tonumber(h[4]) or 0
local streak = tonumber(h[5]) or 0
local lat, best = tonumber(h[6]), tonumber(h[7])
local reason = h[8]
local function fmt(ms)
  if ms >= 10000 then return string.format('%.0f s', ms / 1000) end
  return string.format('%.1f s', ms / 1000)
end
local function wait_until(u, why)
  if u > untl then untl = u reason = why end
end
local function shrink()
  streak = 0
  if limit > 1 then limit = math.max(1, math.floor(limit / 2))
  else extra = math.min(cap, math.max(250, extra * 2)) end
end
if status == 429 or status == 503 then
  local episode = now >= untl
  local wait = nil
  if ra >= 0 then
    wait = math.min(ra * 1000, cap)
  elseif episode then
    penalty = math.min(cap, math.max(backoff, penalty * 2))
    wait = penalty
  end
  if wait then
    wait_until(now + wait, 'backing off after ' .. status .. ' for ' .. fmt(wait))
    if adaptive and episode then shrink() end
  end
elseif ra >= 0 and status >= 400 then
  wait_until(now + ra * 1000, 'Retry-After after ' .. status)
elseif status >= 0 and status < 500 and adaptive then
  if lat then lat = 0.8 * lat + 0.2 * latency else lat = latency end
  if best then best = math.min(best, lat) else best = lat end
  if lat > 3 * best + 0.05 then
    shrink()
    best = lat
  else
    streak = streak + 1
    if streak >= 5 then
      streak = 0
      penalty = penalty / 2
      if extra > 0 then
        if extra <= 250 then extra = 0 else extra = extra / 2 end
      elseif limit < maxl then
        limit = limit + 1
      end
    end
  end
  redis.call('HSET', KEYS[1], 'lat', lat, 'best', best)
end
redis.call('HSET', KEYS[1], 'limit', limit, 'until', {_F.format("untl")},
  'extra', {_F.format("extra")}, 'penalty', {_F.format("penalty")}, 'streak', streak,
  'reason', reason or '')
return {{{_VIEW}}}
"""
# KEYS: tokens. ARGV: token ms, now ms ('': Redis's clock), tokens held.
_RENEW = f"""
{_now(2)}
for i = 3, #ARGV do
  redis.call('ZADD', KEYS[1], 'XX', {_F.format("now + tonumber(ARGV[1])")}, ARGV[i])
end
return 1
"""


class RedisThrottle(Throttle):
    """Slots whose state lives in the crawl's Redis; ``max_limit`` requests in flight per host
    across all workers. Use inside ``async with``, with the frontier open. ``clock`` (tests)
    replaces Redis's clock in the scripts, and ``time.monotonic`` in this process."""

    def __init__(
        self,
        frontier: RedisFrontier,
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
        self._scripts: dict[str, CrawlScript] = {}
        self._pending: set[asyncio.Task[None]] = set()
        self._heartbeat: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Self:
        for name, source in (("acquire", _ACQUIRE), ("release", _RELEASE), ("renew", _RENEW)):
            self._scripts[name] = self.frontier.script(source)
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

    def script(self, name: str) -> CrawlScript:
        try:
            return self._scripts[name]
        except KeyError:
            raise RuntimeError("RedisThrottle used outside its 'async with'") from None

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
                    renew = self.script("renew")
                    await self.frontier.call(lambda: renew([slot.k_tokens], args))  # noqa: B023


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
        self.k_host = f"{throttle.frontier.prefix}host:{host}"
        self.k_tokens = self.k_host + ":tokens"
        self.k_waiting = self.k_host + ":waiting"
        self._turn = asyncio.Lock()  # one task per worker asks Redis for this host at a time
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
        throttle = self._throttle
        p = self._p
        base_ms = max(p.delay, self.crawl_delay or 0.0) * 1000
        args: list[str | int | float] = [token, self.max_limit, base_ms, p.jitter]
        args += [throttle.rng.random(), round(throttle.token_ttl * 1000)]
        args.append(throttle.script_now(throttle.clock()))
        keys = [self.k_host, self.k_tokens, self.k_waiting]
        script = throttle.script("acquire")
        wait, *view = await throttle.frontier.call(lambda: script(keys, args))
        self._see(view)
        wait = float(wait)
        if wait == 0:
            self.tokens.append(token)
            self.in_flight += 1
            return 0.0
        return float("inf") if wait < 0 else wait / 1000

    async def acquire(self) -> None:
        token = self._throttle.new_token()
        async with self._turn:
            while True:
                try:
                    wait = await self.try_start(token)
                    if not wait:
                        return
                    if wait == float("inf"):
                        with contextlib.suppress(TimeoutError):
                            await asyncio.wait_for(self._freed.wait(), _POLL)
                    else:
                        await asyncio.sleep(wait)
                except asyncio.CancelledError:
                    self._throttle.spawn(self._leave(token))
                    raise

    async def _leave(self, token: str) -> None:
        """A cancelled request gives up its place in the queue of waiters (and a token it
        may have been granted as the call was cancelled)."""
        frontier = self._throttle.frontier
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
        p = self._p
        args: list[str | int | float] = [
            token,
            -1 if status is None else status,
            latency,
            -1 if retry_after is None else retry_after,
            self.max_limit,
            int(p.adaptive),
            p.backoff,
            p.max_backoff,
            self._throttle.script_now(now),
        ]
        self._throttle.spawn(self._release(args))

    async def _release(self, args: list[str | int | float]) -> None:
        script = self._throttle.script("release")
        keys = [self.k_host, self.k_tokens]
        self._see(await self._throttle.frontier.call(lambda: script(keys, args)))
        self._freed.set()
        self._freed = asyncio.Event()

    def _see(self, view: list[Any]) -> None:
        limit, extra, left, reason = view
        self.limit = int(limit)
        self.extra_delay = float(extra) / 1000
        self.backoff_until = self._throttle.clock() + float(left) / 1000
        self.backoff_reason = reason or None
