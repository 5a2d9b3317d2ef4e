"""The shared per-host slot, in-process: two throttles on two connections to one redis-server
stand for two workers. Concurrency, start spacing and backoff hold across them; the tokens of a
worker that stops renewing them expire."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from dataclasses import dataclass

import pytest

from redis_server import shared_server
from sitecrawl import Politeness
from sitecrawl.frontier import RedisFrontier
from sitecrawl.throttle._redis import RedisSlot, RedisThrottle

HOST = "site.test"


@dataclass
class Worker:
    throttle: RedisThrottle
    lifetime: AsyncExitStack

    def slot(self) -> RedisSlot:
        return self.throttle.slot(HOST)

    async def stop(self) -> None:
        """Leave the throttle's ``async with``: its heartbeat stops, its tokens are held."""
        await self.lifetime.aclose()


@pytest.fixture
async def workers() -> AsyncIterator[tuple[Worker, Worker]]:
    crawl_id = uuid.uuid4().hex
    url = shared_server().url
    politeness = Politeness(delay=0.0, adaptive=True, backoff=0.2)
    pair = []
    async with AsyncExitStack() as stack:
        for _ in range(2):
            frontier = RedisFrontier(
                url, crawl_id=crawl_id, base_url="http://site.test/", lease_ttl=0.6
            )
            await stack.enter_async_context(frontier)
            lifetime = await stack.enter_async_context(AsyncExitStack())
            throttle = RedisThrottle(frontier, politeness, max_limit=2)
            pair.append(Worker(await lifetime.enter_async_context(throttle), lifetime))
        yield pair[0], pair[1]


async def test_the_per_host_limit_holds_across_workers(
    workers: tuple[Worker, Worker],
) -> None:
    a, b = (w.slot() for w in workers)
    await a.acquire()
    await b.acquire()
    third = asyncio.create_task(a.acquire())
    await asyncio.sleep(0.15)
    assert not third.done()  # two in flight on the host, one from each worker
    b.release(status=200, latency=0.01, retry_after=None, now=time.monotonic())
    await asyncio.wait_for(third, 1)
    a.release(status=200, latency=0.01, retry_after=None, now=time.monotonic())
    a.release(status=200, latency=0.01, retry_after=None, now=time.monotonic())


async def test_retry_after_from_one_worker_holds_the_other(
    workers: tuple[Worker, Worker],
) -> None:
    a, b = (w.slot() for w in workers)
    await a.acquire()
    a.release(status=429, latency=0.01, retry_after=0.4, now=time.monotonic())
    await workers[0].throttle.flush()  # the release has landed
    started = time.monotonic()
    await b.acquire()
    assert time.monotonic() - started >= 0.35
    assert b.limit == 1  # the 429 halved the host's shared limit
    b.release(status=200, latency=0.01, retry_after=None, now=time.monotonic())


async def test_tokens_of_a_worker_that_stops_renewing_expire(
    workers: tuple[Worker, Worker],
) -> None:
    a, b = (w.slot() for w in workers)
    await a.acquire()
    await a.acquire()
    await workers[0].stop()  # worker a "dies": its heartbeat stops, its tokens are held
    started = time.monotonic()
    await asyncio.wait_for(b.acquire(), 3)
    waited = time.monotonic() - started
    assert 0.5 <= waited <= 1.5  # the 0.6 s token lifetime
    b.release(status=200, latency=0.01, retry_after=None, now=time.monotonic())


async def test_a_live_worker_keeps_its_tokens_past_their_lifetime(
    workers: tuple[Worker, Worker],
) -> None:
    a, b = (w.slot() for w in workers)
    await a.acquire()
    await a.acquire()
    blocked = asyncio.create_task(b.acquire())
    await asyncio.sleep(1.2)  # twice the token lifetime: the heartbeat renews them
    assert not blocked.done()
    a.release(status=200, latency=0.01, retry_after=None, now=time.monotonic())
    await asyncio.wait_for(blocked, 1)
    a.release(status=200, latency=0.01, retry_after=None, now=time.monotonic())
    b.release(status=200, latency=0.01, retry_after=None, now=time.monotonic())


async def test_a_throttle_used_outside_its_async_with_says_so() -> None:
    frontier = RedisFrontier(
        shared_server().url, crawl_id=uuid.uuid4().hex, base_url=f"http://{HOST}/"
    )
    async with frontier:
        throttle = RedisThrottle(frontier, Politeness(), max_limit=2)
        with pytest.raises(RuntimeError, match="outside its 'async with'"):
            await throttle.slot(HOST).acquire()
        await frontier.drop()


async def test_requests_asking_and_ending_together_share_calls_with_the_same_outcome() -> None:
    """A worker's requests waiting for one host ask in one call, and its releases go together:
    the shared state ends as it does when each sends its own call (another host's, one call
    at a time)."""
    frontier = RedisFrontier(
        shared_server().url, crawl_id=uuid.uuid4().hex, base_url="http://site.test/"
    )
    politeness = Politeness(delay=0.0, adaptive=True, backoff=0.2)
    async with frontier, RedisThrottle(frontier, politeness, max_limit=2) as throttle:
        together, alone = throttle.slot("together.test"), throttle.slot("alone.test")
        before = frontier.pipeline.calls
        await asyncio.gather(together.acquire(), together.acquire())
        assert frontier.pipeline.calls - before == 1  # both started in one call
        answers = [(200, 0.01), (429, 0.01)]
        for status, latency in answers:
            await alone.acquire()
            alone.release(status=status, latency=latency, retry_after=None, now=0.0)
            await throttle.flush()
        before = frontier.pipeline.calls
        for status, latency in answers:
            together.release(status=status, latency=latency, retry_after=None, now=0.0)
        await throttle.flush()
        assert frontier.pipeline.calls - before == 1  # both releases in one call
        client = frontier.client
        shared = [await client.hgetall(slot.k_host) for slot in (together, alone)]
        for state in shared:
            assert float(state.pop("until")) > float(state.pop("next", 0))  # backing off
        assert shared[0] == shared[1]
        assert together.limit == alone.limit == 1 and together.backoff_reason is not None
        assert await client.zcard(together.k_tokens) == 0
        await frontier.drop()
