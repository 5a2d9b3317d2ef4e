"""The local slot's async acquire path and the throttle around it; the rules themselves are
held by the suite over every slot backend (test_throttle_contract.py)."""

from __future__ import annotations

import asyncio
import random
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from sitecrawl import Politeness
from sitecrawl.fetch._pagejob import backoff_delay
from sitecrawl.throttle._local import HostSlot, Throttle, parse_retry_after

NOW = 1_700_000_000.0


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


def test_throttle_caps_per_host_at_concurrency_and_reports() -> None:
    throttle = Throttle(Politeness(per_host=8, delay=0.5), max_concurrency=3)
    a = throttle.slot("a:80")
    assert a.max_limit == 3
    assert throttle.slot("a:80") is a
    assert throttle.reasons() == {"a:80": "delay 0.5 s"}
    fast = Throttle(Politeness(delay=0.02), max_concurrency=3)
    fast.slot("b:80")
    assert fast.reasons() == {"b:80": "delay 0.02 s"}  # not "delay 0.0 s"
    a.set_crawl_delay(99.0)
    assert (a.crawl_delay_capped_from, a.crawl_delay) == (99.0, 30.0)


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
