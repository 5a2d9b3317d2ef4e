"""Per-host politeness held in Redis, so it holds across every worker of a crawl.

:class:`RedisThrottle` is a :class:`~._throttle.Throttle` whose slots keep their state in Redis
(``sitecrawl:{ID}:host:HOST``, a hash, and ``...:tokens``, a sorted set): the crawler and
:class:`~._pagejob.PoliteClient` use it unchanged (``slot(host)``, ``acquire()``,
``release(...)``), and the in-process :class:`~._throttle.Throttle` stays the default.

- Concurrency: a request in flight holds a token in ``tokens``, scored by a deadline; the
  throttle's heartbeat renews its tokens, so the tokens of a worker that dies expire after the
  lease time and the host gets its capacity back. ``limit`` (adaptive) is shared. Requests
  that find the host full wait in ``...:waiting`` (a sorted set by arrival), first come first
  served across workers: a worker's own release must not hand its token straight back to
  itself while the others poll.
- Delay: ``next`` is when the next request may start, set in the same script that grants the
  token, on Redis's clock (``TIME``): starts are spaced across workers whatever their clocks.
  The interval is ``max(delay, Crawl-delay) + extra``, plus jitter, as in :class:`HostSlot`.
- Backoff: ``until``, ``reason``, ``penalty``, the latency averages and the adaptive ``extra``
  delay follow :meth:`HostSlot.release`, in Lua, one script per answer.

A release is sent in the background (``release`` is synchronous on the hot path): until it
lands, the host counts one request more in flight than it has, never fewer.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from typing import TYPE_CHECKING, Any

from ._config import Politeness
from ._throttle import HostSlot, Throttle

if TYPE_CHECKING:
    from redis.commands.core import AsyncScript

    from .frontier._redis import RedisFrontier

_POLL = 0.025  # seconds between two tries of a full slot (a local release wakes sooner)
_NOW = "local t = redis.call('TIME') local now = t[1] * 1000 + t[2] / 1000"
_F = "string.format('%.3f', {})"

# KEYS: host, tokens, waiting. ARGV: token, max limit, interval ms before jitter, jitter,
# random, token ms. Returns {wait ms (0: started, -1: full), limit, extra ms, backoff ms left,
# reason}. Requests that found the host full queue in ``waiting`` (first come, first served
# across workers; an entry older than a token's lifetime is a dead worker's and is dropped).
_ACQUIRE = f"""
{_NOW}
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now - tonumber(ARGV[6]))
local h = redis.call('HMGET', KEYS[1], 'limit', 'next', 'until', 'extra', 'reason')
local limit = tonumber(h[1]) or tonumber(ARGV[2])
local nxt = tonumber(h[2]) or 0
local untl = tonumber(h[3]) or 0
local extra = tonumber(h[4]) or 0
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
return {{tostring(wait), limit, tostring(extra), tostring(math.max(untl - now, 0)), h[5] or ''}}
"""
# KEYS: host, tokens. ARGV: token, status (-1: none), latency s, Retry-After s (-1: none),
# max limit, adaptive (1/0), backoff s, max backoff s. HostSlot.release, on shared state.
_RELEASE = f"""
{_NOW}
redis.call('ZREM', KEYS[2], ARGV[1])
local status, latency, ra = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local maxl, adaptive = tonumber(ARGV[5]), ARGV[6] == '1'
local backoff, cap = tonumber(ARGV[7]) * 1000, tonumber(ARGV[8]) * 1000
local h = redis.call('HMGET', KEYS[1], 'limit', 'until', 'extra', 'penalty', 'streak',
  'lat', 'best')
local limit = tonumber(h[1]) or maxl
local untl = tonumber(h[2]) or 0
local extra = tonumber(h[3]) or 0
local penalty = tonumber(h[4]) or 0
local streak = tonumber(h[5]) or 0
local lat, best = tonumber(h[6]), tonumber(h[7])
local reason = nil
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
  'extra', {_F.format("extra")}, 'penalty', {_F.format("penalty")}, 'streak', streak)
if reason then redis.call('HSET', KEYS[1], 'reason', reason) end
return 1
"""
# KEYS: tokens. ARGV: token ms, tokens held.
_RENEW = f"""
{_NOW}
for i = 2, #ARGV do
  redis.call('ZADD', KEYS[1], 'XX', {_F.format("now + tonumber(ARGV[1])")}, ARGV[i])
end
return 1
"""


class RedisThrottle(Throttle):
    """Slots whose state lives in the crawl's Redis; ``max_limit`` requests in flight per host
    across all workers. Use with the frontier open; :meth:`aclose` before closing it."""

    def __init__(self, frontier: RedisFrontier, politeness: Politeness, *, max_limit: int) -> None:
        super().__init__(politeness, max_concurrency=max_limit)
        self.frontier = frontier
        self.token_ttl = frontier.lease_ttl
        self._tokens = (f"{frontier.token}:{n}" for n in itertools.count())
        self._scripts: dict[str, AsyncScript] = {}
        self._pending: set[asyncio.Task[None]] = set()
        self._heartbeat: asyncio.Task[None] | None = None

    def slot(self, host: str) -> HostSlot:
        slot = self.slots.get(host)
        if slot is None:
            slot = self.slots[host] = RedisSlot(host, self)
        return slot

    def script(self, name: str) -> AsyncScript:
        scripts = self._scripts
        if not scripts:
            for key, source in (("acquire", _ACQUIRE), ("release", _RELEASE), ("renew", _RENEW)):
                scripts[key] = self.frontier.script(source)
            self._heartbeat = asyncio.create_task(self._renew_forever())
        return scripts[name]

    def new_token(self) -> str:
        return next(self._tokens)

    def spawn(self, work: Any) -> None:
        task = asyncio.create_task(work)
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def aclose(self) -> None:
        """Wait for the releases still being sent; stop renewing tokens."""
        if self._pending:
            await asyncio.gather(*self._pending, return_exceptions=True)
        if self._heartbeat is not None:
            self._heartbeat.cancel()
            await asyncio.gather(self._heartbeat, return_exceptions=True)
            self._heartbeat = None

    async def _renew_forever(self) -> None:
        ttl = round(self.token_ttl * 1000)
        while True:
            await asyncio.sleep(self.token_ttl / 3)
            for slot in list(self.slots.values()):
                assert isinstance(slot, RedisSlot)
                if slot.tokens:
                    args: list[str | int] = [ttl, *slot.tokens]
                    renew = self.script("renew")
                    await self.frontier.call(lambda: renew([slot.k_tokens], args))  # noqa: B023


class RedisSlot(HostSlot):
    """A :class:`HostSlot` whose concurrency, start times and backoff are shared in Redis.
    ``limit``, ``extra_delay`` and ``backoff_until`` mirror Redis as last seen (for
    :meth:`waiting_reason`); ``crawl_delay`` is local (every worker reads robots.txt)."""

    def __init__(self, host: str, throttle: RedisThrottle) -> None:
        super().__init__(host, throttle.politeness, max_limit=throttle._max_limit)
        self._throttle = throttle
        prefix = throttle.frontier.prefix
        self.k_host = f"{prefix}host:{host}"
        self.k_tokens = self.k_host + ":tokens"
        self.k_waiting = self.k_host + ":waiting"
        self.tokens: list[str] = []
        self._turn = asyncio.Lock()  # one task per worker asks Redis for this host at a time
        self._freed = asyncio.Event()

    def try_start(self, now: float) -> float:
        raise NotImplementedError("a shared slot starts requests in acquire()")

    async def acquire(self) -> None:
        throttle = self._throttle
        frontier = throttle.frontier
        token = throttle.new_token()
        script = throttle.script("acquire")
        p = self._p
        async with self._turn:
            while True:
                base_ms = max(p.delay, self.crawl_delay or 0.0) * 1000
                args: list[str | int | float] = [token, self.max_limit, base_ms, p.jitter]
                args += [self._rng.random(), round(throttle.token_ttl * 1000)]
                keys = [self.k_host, self.k_tokens, self.k_waiting]
                try:
                    reply = await frontier.call(lambda: script(keys, args))  # noqa: B023
                except asyncio.CancelledError:
                    self._throttle.spawn(self._leave(token))
                    raise
                wait, limit, extra, left, reason = reply
                self.limit = int(limit)
                self.extra_delay = float(extra) / 1000
                self.backoff_until = self._clock() + float(left) / 1000
                self.backoff_reason = reason or None
                wait = float(wait)
                if wait == 0:
                    self.tokens.append(token)
                    self.in_flight += 1
                    return
                try:
                    if wait < 0:
                        freed = self._freed
                        with contextlib.suppress(TimeoutError):
                            await asyncio.wait_for(freed.wait(), _POLL)
                    else:
                        await asyncio.sleep(wait / 1000)
                except asyncio.CancelledError:
                    self._throttle.spawn(self._leave(token))
                    raise

    async def _leave(self, token: str) -> None:
        """A cancelled request gives up its place in the queue of waiters (and a token it
        may have been granted as the call was cancelled)."""
        client = self._throttle.frontier.client
        await self._throttle.frontier.call(lambda: client.zrem(self.k_waiting, token))
        await self._throttle.frontier.call(lambda: client.zrem(self.k_tokens, token))

    def release(
        self, *, status: int | None, latency: float, retry_after: float | None, now: float
    ) -> None:
        self.in_flight -= 1
        token = self.tokens.pop()
        self._throttle.spawn(self._release(token, status, latency, retry_after))

    async def _release(
        self, token: str, status: int | None, latency: float, retry_after: float | None
    ) -> None:
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
        ]
        script = self._throttle.script("release")
        keys = [self.k_host, self.k_tokens]
        await self._throttle.frontier.call(lambda: script(keys, args))
        self._freed.set()
        self._freed = asyncio.Event()
