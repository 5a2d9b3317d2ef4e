"""The slot backends the politeness suite (test_throttle_contract.py) runs against: one entry
per backend, each on a scripted clock.

A :class:`Driver` starts and answers requests on one host's slot at ``clock.now``: the local
slot takes the time as an argument, the Redis slot's Lua scripts take it instead of Redis's
clock (a throttle built with ``clock``). A new backend joins the suite by adding one row.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import Protocol

from redis_server import shared_server
from sitecrawl import Politeness
from sitecrawl.frontier import RedisFrontier
from sitecrawl.throttle._local import HostSlot, Slot, Throttle
from sitecrawl.throttle._redis import RedisSlot, RedisThrottle

HOST = "site.test:80"


class Clock:
    """A scripted clock: seconds, moved by the test."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Driver(Protocol):
    clock: Clock

    @property
    def slot(self) -> Slot: ...

    async def start(self) -> float:
        """Try to start a request at ``clock.now``: 0.0 when it started, else seconds to
        wait (``inf``: the host is full)."""

    async def answer(
        self, status: int | None, *, latency: float = 0.01, retry_after: float | None = None
    ) -> None:
        """End a request at ``clock.now`` with this answer; return once the slot learnt it."""


class LocalDriver:
    def __init__(self, throttle: Throttle, clock: Clock) -> None:
        slot = throttle.slot(HOST)
        assert isinstance(slot, HostSlot)
        self.slot = slot
        self.clock = clock

    async def start(self) -> float:
        return self.slot.try_start(self.clock.now)

    async def answer(
        self, status: int | None, *, latency: float = 0.01, retry_after: float | None = None
    ) -> None:
        now = self.clock.now
        self.slot.release(status=status, latency=latency, retry_after=retry_after, now=now)


class RedisDriver:
    def __init__(self, throttle: RedisThrottle, clock: Clock) -> None:
        self.throttle = throttle
        self.slot: RedisSlot = throttle.slot(HOST)
        self.clock = clock
        self._token: str | None = None  # kept until it starts, as acquire() does

    async def start(self) -> float:
        token = self._token or self.throttle.new_token()
        wait = await self.slot.try_start(token)
        self._token = None if wait == 0 else token
        return wait

    async def answer(
        self, status: int | None, *, latency: float = 0.01, retry_after: float | None = None
    ) -> None:
        now = self.clock.now
        self.slot.release(status=status, latency=latency, retry_after=retry_after, now=now)
        await self.throttle.flush()


@asynccontextmanager
async def local(politeness: Politeness, limit: int, rng: random.Random) -> AsyncIterator[Driver]:
    clock = Clock()
    yield LocalDriver(Throttle(politeness, max_concurrency=limit, clock=clock, rng=rng), clock)


@asynccontextmanager
async def redis(politeness: Politeness, limit: int, rng: random.Random) -> AsyncIterator[Driver]:
    clock = Clock()
    # Leases far longer than any test: on the scripted clock, the heartbeat never runs.
    frontier = RedisFrontier(
        shared_server().url, crawl_id=uuid.uuid4().hex, base_url="http://site.test/", lease_ttl=3600
    )
    async with frontier:
        throttle = RedisThrottle(frontier, politeness, max_limit=limit, clock=clock, rng=rng)
        async with throttle:
            yield RedisDriver(throttle, clock)
        await frontier.drop()


@dataclass(frozen=True)
class Backend:
    name: str
    open: Callable[[Politeness, int, random.Random], AbstractAsyncContextManager[Driver]]


BACKENDS: tuple[Backend, ...] = (Backend("local", local), Backend("redis", redis))
