"""A crawl in Redis that loses its Redis mid-crawl: restarted empty or flushed (the crawl's
epoch is gone), or unreachable for longer than the reconnect window. Every process stops with
exit 1 and one line; the seed keeps in ``-o`` the pages it wrote so far; nothing is crawled
into an empty Redis; a frontier whose heartbeat failed takes no more work."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from redis_server import RedisServer
from servers import ServerThread, site_app
from sitecrawl import Page, Request, StateError
from sitecrawl._urls import url_key
from sitecrawl.frontier import RedisFrontier
from test_redis import baseline, done, page_fetches, records, start_workers, wait_until


@pytest.fixture
def slow_site() -> Iterator[ServerThread]:
    server = ServerThread(site_app(40, delay=0.2)).start()
    yield server
    server.stop()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RedisServer]:
    """A redis-server of this test's own (it is stopped and restarted)."""
    directory = tmp_path / "redis"
    directory.mkdir()
    started = RedisServer(directory).start()
    yield started
    started.stop()


def stopped(process: subprocess.Popen[str], timeout: float = 30) -> tuple[int, str]:
    _, err = process.communicate(timeout=timeout)
    return process.returncode, err


def one_error_line(err: str, message: str) -> None:
    assert err.count("\n") == 1, err
    assert err.startswith(f"sitecrawl: error: {message}"), err
    assert "Traceback" not in err and "never retrieved" not in err


@pytest.mark.parametrize("how", ["shutdown nosave", "flushall"])
def test_redis_emptied_mid_crawl_every_process_stops_exit_1(
    how: str, server: RedisServer, slow_site: ServerThread, tmp_path: Path
) -> None:
    expected = baseline(slow_site, tmp_path)
    out = tmp_path / "pages.jsonl"
    options = ("--per-host", "2", "-c", "2", "-q")
    processes = start_workers(server, slow_site, "emptied", 2, "-o", str(out), *options)
    wait_until(lambda: done(server, "emptied") >= 8, 20, "8 pages")
    time.sleep(1.0)  # the seed streams pages to -o as they are stored
    client = redis.Redis(port=server.port)
    if how == "flushall":
        client.flushall()
    else:
        assert server.process is not None
        with contextlib.suppress(redis.ConnectionError):
            client.shutdown(nosave=True)
        server.process.wait(10)
        server.start()  # the same port, empty
    fetched_before = len(page_fetches(slow_site))
    errors = []
    for process in processes:
        code, err = stopped(process)
        assert code == 1, err
        one_error_line(err, "crawl 'emptied' is gone from Redis at")
        errors.append(err)
    assert "partial crawl" in errors[0]  # the seed's line says what its -o holds
    # Nothing crawled into the empty Redis, nothing fetched twice, little fetched after.
    assert client.keys("sitecrawl:*") == []
    fetched = page_fetches(slow_site)
    assert len(fetched) == len(set(fetched))
    assert len(fetched) <= fetched_before + 4  # what was in flight (-c 2, two processes)
    # The seed's -o: the pages it had written, each once, each a real page of the site.
    written = records(out)
    assert written and len(written) < len(expected)
    assert all(written[url] == expected[url] for url in written)


def test_redis_down_past_the_reconnect_window_exit_1_pages_so_far_kept(
    server: RedisServer, slow_site: ServerThread, tmp_path: Path
) -> None:
    expected = baseline(slow_site, tmp_path)
    out = tmp_path / "pages.jsonl"
    options = ("--per-host", "2", "-c", "2", "--redis-timeout", "1", "-q")
    processes = start_workers(server, slow_site, "down", 2, "-o", str(out), *options)
    wait_until(lambda: done(server, "down") >= 8, 20, "8 pages")
    time.sleep(1.0)  # the seed streams pages to -o as they are stored
    stored = done(server, "down")
    server.stop()
    errors = []
    for process in processes:
        code, err = stopped(process)
        assert code == 1, err
        one_error_line(err, f"lost Redis at {server.url}")
        errors.append(err)
    assert "pages written to -o" in errors[0]
    written = records(out)
    assert stored - 4 <= len(written) < len(expected)
    assert all(written[url] == expected[url] for url in written)


async def test_a_frontier_whose_heartbeat_failed_takes_no_more_work(
    server: RedisServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Redis gone past the reconnect window and back (persistent): the heartbeat failed, so
    this worker's leases went to others; it must not go on crawling unregistered."""
    server.persistent = True
    await asyncio.to_thread(server.restart)
    base = "http://site.test/"
    requests = [Request(url=base + f"p{i}", key=url_key(base + f"p{i}")) for i in range(3)]
    frontier = RedisFrontier(
        server.url, crawl_id="beat", base_url=base, lease_ttl=0.3, reconnect_timeout=0.5
    )
    with caplog.at_level(logging.ERROR):
        async with frontier, frontier.working():
            await frontier.add(requests)
            first = await frontier.next()
            assert first is not None
            await asyncio.to_thread(server.stop)
            await asyncio.sleep(2.5)  # heartbeats every 0.1 s; they give up after 0.5 s
            await asyncio.to_thread(server.start)
            with pytest.raises(StateError, match="lost Redis"):
                await frontier.next()
            with pytest.raises(StateError, match="lost Redis"):
                await frontier.mark_done(first, Page(url=first.url, status=200))
        assert "never retrieved" not in caplog.text
    # Its lease went back to the queue: another worker crawls all three pages.
    other = RedisFrontier(server.url, crawl_id="beat", lease_ttl=0.3)
    async with other, other.working():
        got = set()
        for _ in range(100):
            request = await other.next()
            if request is None:
                if await other.is_finished():
                    break
                await asyncio.sleep(0.1)
                continue
            got.add(request.key)
            await other.mark_done(request, Page(url=request.url, status=200))
        assert got == {r.key for r in requests}
        assert (await other.status()).workers == 1
