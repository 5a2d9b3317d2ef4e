"""One politeness suite for every slot backend (see throttle_backends.py): the same scripted
answers on a scripted clock, the same limit, extra delay, backoff-until and waits expected of
the local slot and of its Lua twin in Redis."""

from __future__ import annotations

import random
from contextlib import AbstractAsyncContextManager

import pytest

from sitecrawl import Politeness
from throttle_backends import BACKENDS, Backend, Driver

INF = float("inf")


@pytest.fixture(params=BACKENDS, ids=lambda backend: backend.name)
def backend(request: pytest.FixtureRequest) -> Backend:
    return request.param  # type: ignore[no-any-return]


def opened(
    backend: Backend, limit: int = 8, seed: int = 1, **politeness: float | bool
) -> AbstractAsyncContextManager[Driver]:
    return backend.open(Politeness(**politeness), limit, random.Random(seed))


def state(d: Driver) -> tuple[int, float, float]:
    """(limit, extra delay, backoff-until) as the slot knows them."""
    return d.slot.limit, d.slot.extra_delay, d.slot.backoff_until


def approx(*values: float) -> object:
    return pytest.approx(values, abs=1e-6)


async def go(d: Driver) -> float:
    """Start a request as soon as the slot allows, moving the clock; return the time waited."""
    waited = 0.0
    while (wait := await d.start()) > 0:
        assert wait != INF, "the host is full"
        d.clock.now += wait
        waited += wait
    return waited


async def test_429_with_retry_after_waits_it_and_halves_the_limit(backend: Backend) -> None:
    async with opened(backend) as d:
        await go(d)
        await d.answer(429, retry_after=30.0)
        assert state(d) == approx(4, 0.0, 30.0)
        d.clock.now = 1.0
        assert await d.start() == pytest.approx(29.0)
        assert d.slot.waiting_reason(1.0) == "backing off after 429 for 30 s"
        d.clock.now = 30.0
        assert await d.start() == 0.0
        assert d.slot.waiting_reason(30.0) == "slowed to 4/8 in flight"


async def test_429_without_retry_after_doubles_a_capped_penalty_then_the_delay(
    backend: Backend,
) -> None:
    async with opened(backend, limit=4, backoff=1.0, max_backoff=3.0) as d:
        seen = []
        for episode in range(5):
            d.clock.now = start = 100.0 * episode
            assert await go(d) == 0.0
            await d.answer(429)
            limit, extra, until = state(d)
            seen.append((limit, extra, until - start))
        # The penalty doubles up to its cap; the limit halves to 1, then the delay doubles.
        assert seen == [
            approx(2, 0.0, 1.0),
            approx(1, 0.0, 2.0),
            approx(1, 0.25, 3.0),
            approx(1, 0.5, 3.0),
            approx(1, 1.0, 3.0),
        ]
        assert d.slot.waiting_reason(d.clock.now) == "backing off after 429 for 3.0 s"
        assert await go(d) == pytest.approx(3.0)  # the backoff
        await d.answer(200)
        assert await go(d) == pytest.approx(1.0)  # the extra delay, at limit 1


async def test_answers_inside_a_backoff_window_are_one_episode(backend: Backend) -> None:
    async with opened(backend, backoff=1.0) as d:
        for _ in range(4):
            await go(d)
        for _ in range(4):  # four requests in flight all come back 503 together
            await d.answer(503)
        assert state(d) == approx(4, 0.0, 1.0)  # halved once, not 8 -> 0.5
        assert await go(d) == pytest.approx(1.0)
        await d.answer(503)  # a new episode: the penalty doubled
        assert state(d) == approx(2, 0.0, 3.0)


async def test_retry_after_inside_the_window_extends_it_without_shrinking(
    backend: Backend,
) -> None:
    async with opened(backend, backoff=0.5) as d:
        for _ in range(3):
            await go(d)
        await d.answer(503)
        assert state(d) == approx(4, 0.0, 0.5)
        d.clock.now = 0.2
        await d.answer(503, retry_after=10.0)
        assert state(d) == approx(4, 0.0, 10.2)
        assert d.slot.waiting_reason(0.2) == "backing off after 503 for 10 s"
        await d.answer(429, retry_after=1.0)  # a shorter wait never cuts the window
        assert state(d) == approx(4, 0.0, 10.2)
        assert d.slot.waiting_reason(0.2) == "backing off after 503 for 10 s"


async def test_retry_after_on_another_status_waits_but_keeps_the_limit(
    backend: Backend,
) -> None:
    async with opened(backend) as d:
        await go(d)
        await d.answer(403, retry_after=5.0)
        assert state(d) == approx(8, 0.0, 5.0)
        assert d.slot.waiting_reason(0.0) == "Retry-After after 403"


async def test_not_adaptive_backs_off_but_keeps_limit_and_delay(backend: Backend) -> None:
    async with opened(backend, adaptive=False, backoff=1.0) as d:
        await go(d)
        await d.answer(503, retry_after=5.0)
        assert state(d) == approx(8, 0.0, 5.0)
        await go(d)
        await d.answer(503)  # a new episode, after the window
        assert state(d) == approx(8, 0.0, 6.0)
        for _ in range(10):
            await go(d)
            await d.answer(200, latency=5.0)
        assert state(d) == approx(8, 0.0, 6.0)


async def test_rising_latency_backs_off_then_fast_answers_recover(backend: Backend) -> None:
    async with opened(backend) as d:
        limits = []
        for latency in [0.01] * 5 + [2.0] * 10 + [0.01] * 30:
            await go(d)
            await d.answer(200, latency=latency)
            limits.append(d.slot.limit)
        assert limits == (
            [8] * 5  # fast: the baseline
            + [4, 4, 4, 4, 2, 2, 2, 2, 2]  # slower and slower: halved twice
            + [3] * 5  # steady at the new normal (and faster): one step back per 5 answers
            + [4] * 5
            + [5] * 5
            + [6] * 5
            + [7] * 5
            + [8] * 6  # recovered, never above the cap
        )
        assert state(d) == approx(8, 0.0, 0.0)


async def test_the_extra_delay_at_limit_1_grows_then_recovers(backend: Backend) -> None:
    async with opened(backend, limit=1, backoff=1.0) as d:
        for episode in range(3):
            d.clock.now = 100.0 * episode
            await go(d)
            await d.answer(503)
        assert state(d) == approx(1, 1.0, 204.0)
        d.clock.now = 300.0
        seen = []
        for _ in range(20):
            waited = await go(d)
            await d.answer(200)
            seen.append((waited, d.slot.extra_delay))
        # Starts are spaced by the extra delay, halved every 5 fast answers, then dropped.
        assert seen == [
            approx(0.0, 1.0),
            *[approx(1.0, 1.0)] * 3,
            approx(1.0, 0.5),
            approx(1.0, 0.5),
            *[approx(0.5, 0.5)] * 3,
            *[approx(0.5, 0.25)] * 2,
            *[approx(0.25, 0.25)] * 3,
            *[approx(0.25, 0.0)] * 2,
            *[approx(0.0, 0.0)] * 4,
        ]


async def test_no_answer_and_server_errors_teach_nothing(backend: Backend) -> None:
    async with opened(backend) as d:
        for _ in range(5):
            await go(d)
            await d.answer(200, latency=0.01)
        for status in (None, 500, 502):
            await go(d)
            await d.answer(status, latency=30.0)
        assert state(d) == approx(8, 0.0, 0.0)
        await go(d)
        await d.answer(200, latency=0.01)
        assert d.slot.limit == 8


async def test_the_limit_caps_requests_in_flight(backend: Backend) -> None:
    async with opened(backend, limit=2) as d:
        assert await d.start() == 0.0
        assert await d.start() == 0.0
        assert await d.start() == INF
        assert await d.start() == INF
        await d.answer(200)
        assert await d.start() == 0.0
        assert await d.start() == INF


async def test_delay_and_crawl_delay_space_starts(backend: Backend) -> None:
    async with opened(backend, delay=0.5, max_crawl_delay=10.0) as d:
        assert d.slot.waiting_reason(0.0) == "delay 0.5 s"
        assert await go(d) == 0.0
        assert await go(d) == pytest.approx(0.5)
        d.slot.set_crawl_delay(3.0)
        assert d.slot.waiting_reason(d.clock.now) == "Crawl-delay 3.0 s"
        await d.answer(200)
        assert await go(d) == pytest.approx(0.5)  # the start before was spaced by 0.5
        assert await go(d) == pytest.approx(3.0)
        d.slot.set_crawl_delay(45.0)
        assert d.slot.crawl_delay_capped_from == 45.0
        assert d.slot.waiting_reason(d.clock.now) == "Crawl-delay 10 s (capped from 45 s)"
        await d.answer(200)
        assert await go(d) == pytest.approx(3.0)
        assert await go(d) == pytest.approx(10.0)
        d.slot.set_crawl_delay(0.1)  # shorter than the delay: the delay holds
        await d.answer(200)
        await d.answer(200)
        await go(d)
        assert await go(d) == pytest.approx(0.5)


async def test_jitter_only_lengthens_the_delay(backend: Backend) -> None:
    async with opened(backend, delay=1.0, jitter=0.5) as d:
        waits = []
        for _ in range(10):
            waits.append(await go(d))
            await d.answer(200)
        assert waits[0] == 0.0
        assert all(1.0 <= wait <= 1.5 + 1e-6 for wait in waits[1:])
        assert len({round(wait, 3) for wait in waits[1:]}) > 1
