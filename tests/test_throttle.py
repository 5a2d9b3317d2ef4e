"""Per-host slots: pure state changes on a fake clock, plus the async acquire path."""

from __future__ import annotations

import asyncio
import random
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from sitecrawl import Politeness
from sitecrawl._pagejob import backoff_delay
from sitecrawl._throttle import HostSlot, Throttle, parse_retry_after

NOW = 1_700_000_000.0


def slot(limit: int = 4, **politeness: float | bool) -> HostSlot:
    return HostSlot("h", Politeness(**politeness), max_limit=limit, clock=lambda: 0.0)


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        (None, None),
        ("", None),
        ("7", 7.0),
        (" 120 ", 60.0),  # capped
        ("0", 0.0),
        ("soon", None),
        ("-3", None),
        (format_datetime(datetime.fromtimestamp(NOW, UTC) + timedelta(seconds=30), True), 30.0),
        (format_datetime(datetime.fromtimestamp(NOW, UTC) - timedelta(hours=1), True), 0.0),
        ("Wed, 21 Oct 2015 07:28:00", None),  # no zone: unreadable
    ],
)
def test_parse_retry_after(value: str | None, seconds: float | None) -> None:
    assert parse_retry_after(value, cap=60.0, now=NOW) == seconds


def test_delay_spaces_starts_and_jitter_only_lengthens() -> None:
    s = slot(delay=1.0, jitter=0.5)
    assert s.try_start(0.0) == 0.0
    wait = s.try_start(0.0)
    assert 1.0 <= wait <= 1.5
    assert s.try_start(wait) == 0.0


def test_crawl_delay_wins_when_larger_and_is_capped() -> None:
    s = slot(delay=0.5, max_crawl_delay=10.0)
    s.set_crawl_delay(3.0)
    assert s.interval == 3.0
    assert s.waiting_reason(0.0) == "Crawl-delay 3.0 s"
    s.set_crawl_delay(45.0)
    assert s.interval == 10.0
    assert s.crawl_delay_capped_from == 45.0
    assert s.waiting_reason(0.0) == "Crawl-delay 10 s (capped from 45 s)"
    s.set_crawl_delay(0.1)
    assert s.interval == 0.5


def test_concurrency_limit() -> None:
    s = slot(limit=2)
    assert s.try_start(0.0) == 0.0
    assert s.try_start(0.0) == 0.0
    assert s.try_start(0.0) == float("inf")
    s.release(status=200, latency=0.01, retry_after=None, now=0.0)
    assert s.try_start(0.0) == 0.0


def test_429_with_retry_after_backs_off_then_halves() -> None:
    s = slot(limit=8)
    s.try_start(0.0)
    s.release(status=429, latency=0.01, retry_after=30.0, now=0.0)
    assert s.limit == 4
    assert s.try_start(1.0) == pytest.approx(29.0)
    assert s.waiting_reason(1.0) == "backing off after 429 for 30 s"
    assert s.try_start(30.0) == 0.0


def test_503_without_retry_after_doubles_a_capped_penalty() -> None:
    s = slot(limit=2, backoff=1.0, max_backoff=3.0)
    waits = []
    for now in (0.0, 100.0, 200.0, 300.0):
        s.try_start(now)
        s.release(status=503, latency=0.01, retry_after=None, now=now)
        waits.append(s.backoff_until - now)
    assert waits == [1.0, 2.0, 3.0, 3.0]
    # concurrency halves to 1, then the extra delay doubles (capped)
    assert s.limit == 1
    assert s.extra_delay == 1.0  # 0.25 -> 0.5 -> 1.0


def test_not_adaptive_still_honours_retry_after_but_keeps_limit() -> None:
    s = slot(limit=4, adaptive=False)
    s.try_start(0.0)
    s.release(status=503, latency=0.01, retry_after=5.0, now=0.0)
    assert s.limit == 4
    assert s.backoff_until == 5.0


def test_rising_latency_halves_and_fast_answers_recover() -> None:
    s = slot(limit=8)
    for _ in range(5):
        s.try_start(0.0)
        s.release(status=200, latency=0.01, retry_after=None, now=0.0)
    assert s.limit == 8
    for _ in range(10):
        s.try_start(0.0)
        s.release(status=200, latency=2.0, retry_after=None, now=0.0)
    assert s.limit < 8
    low = s.limit
    for _ in range(200):
        s.try_start(0.0)
        s.release(status=200, latency=0.01, retry_after=None, now=0.0)
    assert s.limit > low
    assert s.limit == 8  # fully recovered, never above the cap


def test_throttle_caps_per_host_at_concurrency_and_reports() -> None:
    throttle = Throttle(Politeness(per_host=8, delay=0.5), max_concurrency=3)
    a = throttle.slot("a:80")
    assert a.max_limit == 3
    assert throttle.slot("a:80") is a
    assert throttle.reasons() == {"a:80": "delay 0.5 s"}
    a.set_crawl_delay(99.0)
    assert throttle.capped_crawl_delays() == {"a:80": (99.0, 30.0)}


async def test_acquire_holds_concurrency_across_tasks() -> None:
    s = HostSlot("h", Politeness(), max_limit=2)
    running = peak = 0

    async def request() -> None:
        nonlocal running, peak
        await s.acquire()
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.01)
        running -= 1
        s.release(status=200, latency=0.01, retry_after=None, now=0.0)

    await asyncio.gather(*(request() for _ in range(10)))
    assert peak == 2
    assert s.in_flight == 0


async def test_cancelled_waiter_passes_its_wake_up_on() -> None:
    s = HostSlot("h", Politeness(), max_limit=1)
    await s.acquire()
    first = asyncio.create_task(s.acquire())
    second = asyncio.create_task(s.acquire())
    await asyncio.sleep(0)
    s.release(status=200, latency=0.0, retry_after=None, now=0.0)  # wakes `first`
    first.cancel()
    await asyncio.wait_for(second, 1.0)  # `second` must not wait forever
    assert s.in_flight == 1


def test_backoff_delay_is_exponential_with_equal_jitter() -> None:
    rng = random.Random(1)
    for attempt, full in [(0, 0.5), (1, 1.0), (2, 2.0), (8, 10.0)]:
        for _ in range(50):
            assert full / 2 <= backoff_delay(attempt, 0.5, 10.0, rng) <= full


def test_answers_inside_a_backoff_window_are_one_episode() -> None:
    s = slot(limit=8, backoff=1.0)
    for _ in range(4):
        s.try_start(0.0)
    for _ in range(4):  # four requests in flight all come back 503 together
        s.release(status=503, latency=0.01, retry_after=None, now=0.0)
    assert s.limit == 4  # halved once, not 8 -> 0.5
    assert s.backoff_until == 1.0
    s.try_start(0.5 + 0.5)
    s.release(status=503, latency=0.01, retry_after=None, now=1.0)  # a new episode
    assert s.limit == 2 and s.backoff_until == 3.0
