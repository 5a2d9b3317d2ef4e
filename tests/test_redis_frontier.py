"""The Redis frontier's round trips: leases taken several at a time (renewed while held,
handed back when the worker leaves), and calls made together sent together."""

from __future__ import annotations

import asyncio
import json
import signal
from pathlib import Path

import pytest
import redis.asyncio as aioredis

from redis_server import RedisServer, shared_server
from sitecrawl import Page, Request, StateError
from sitecrawl._urls import url_key
from sitecrawl.frontier import RedisFrontier

BASE = "http://site.test/"


def requests(n: int) -> list[Request]:
    return [Request(url=BASE + f"p{i}", key=url_key(BASE + f"p{i}")) for i in range(n)]


async def test_leases_taken_ahead_are_renewed_and_go_back_when_the_worker_leaves() -> None:
    """A worker leases several requests per call: the ones it has not handed out yet are its
    leases too (renewed by its heartbeat, not taken by others), and go back to the queue when
    it stops working. Leasing outside ``working()`` is a programming error."""
    queued = requests(4)
    url = shared_server().url
    frontier = RedisFrontier(url, crawl_id="ahead", base_url=BASE, lease_ttl=0.3, lease_batch=3)
    other = RedisFrontier(url, crawl_id="ahead", lease_ttl=0.3)
    async with frontier, other:
        with pytest.raises(RuntimeError, match="working"):
            await frontier.next()
        await frontier.add(queued)
        async with frontier.working():
            first = await frontier.next()
            assert first is not None and first.key == queued[0].key
            await asyncio.sleep(1.0)  # over three lease times: the heartbeat renewed all three
            async with other.working():
                taken = await other.next()
                assert taken is not None and taken.key == queued[3].key
                assert await other.next() is None
                await other.mark_done(taken, Page(url=taken.url, status=200))
            await frontier.mark_done(first, Page(url=first.url, status=200))
            status = await frontier.status()
            assert (status.queued, status.in_flight, status.reclaimed) == (0, 2, 0)
        status = await frontier.status()
        assert (status.queued, status.in_flight, status.done) == (2, 0, 2)
        async with other.working():
            rest = [await other.next(), await other.next()]
            for request in rest:
                assert request is not None
                await other.mark_done(request, Page(url=request.url, status=200))
        assert [r.key for r in rest if r is not None] == [r.key for r in queued[1:3]]
        assert (await other.status()).finished
        await frontier.drop()


async def test_calls_made_together_go_in_one_round_trip_each_with_its_own_answer() -> None:
    frontier = RedisFrontier(shared_server().url, crawl_id="together", base_url=BASE)
    async with frontier:
        keys = [r.key for r in requests(50)]
        before = frontier.pipeline.batches
        first = await asyncio.gather(*(frontier.claim(key) for key in keys))
        again = await asyncio.gather(*(frontier.claim(key) for key in [*keys[:10], "new"]))
        assert first == [True] * 50
        assert again == [False] * 10 + [True]
        assert frontier.pipeline.batches - before <= 4  # not 61
        assert (await frontier.stats()).seen == 51
        await frontier.drop()


async def test_scripts_flushed_from_redis_are_loaded_again() -> None:
    server = shared_server()
    frontier = RedisFrontier(server.url, crawl_id="flushed", base_url=BASE)
    async with frontier:
        assert await frontier.add(requests(3)) == 3
        client = aioredis.Redis(port=server.port)
        await client.script_flush()
        await client.aclose()
        added = await asyncio.gather(frontier.add(requests(5)), frontier.claim("x"))
        assert added == [2, True]
        await frontier.drop()


async def test_leases_ended_together_go_in_one_script_links_known_are_not_sent_again() -> None:
    """Pages completed while a call is on the wire are stored by one script call; a worker
    does not send the links it already sent (Redis has them), and each completion still
    counts only the links it queued."""
    server = shared_server()
    frontier = RedisFrontier(server.url, crawl_id="ends", base_url=BASE, lease_batch=8)
    async with frontier, frontier.working():
        await frontier.add(requests(8))
        leased = [await frontier.next() for _ in range(8)]
        links = [
            Request(url=BASE + f"l{i}", key=url_key(BASE + f"l{i}"), depth=1) for i in range(3)
        ]
        client = aioredis.Redis(port=server.port, decode_responses=True)
        await client.config_resetstat()
        added = await asyncio.gather(
            *(frontier.complete(r, Page(url=r.url, status=200), links) for r in leased if r)
        )
        assert sorted(added) == [0] * 7 + [3]  # the first to queue them counts them
        stats = await client.info("commandstats")
        assert stats["cmdstat_evalsha"]["calls"] <= 2  # not 8
        assert stats["cmdstat_sadd"]["calls"] == 3  # each link sent once
        again = await frontier.add([*links, *requests(8)])  # all known: nothing sent
        assert again == 0
        assert (await client.info("commandstats"))["cmdstat_evalsha"]["calls"] <= 2
        status = await frontier.status()
        assert (status.done, status.queued, status.in_flight, status.seen) == (8, 3, 0, 11)
        await client.aclose()
        await frontier.drop()


async def test_an_expired_lease_of_an_older_sitecrawl_goes_back_to_the_queue() -> None:
    """Leases written before they named their worker (the bare member) are reclaimed too."""
    server = shared_server()
    frontier = RedisFrontier(server.url, crawl_id="older", base_url=BASE, lease_ttl=0.2)
    async with frontier, frontier.working():
        client = aioredis.Redis(port=server.port, decode_responses=True)
        member = f"0\n{url_key(BASE + 'old')}\n{BASE}old"
        await client.zadd("sitecrawl:{older}:leases", {member: 0})
        request = await frontier.next()
        assert request is not None and request.url == BASE + "old"
        await frontier.mark_done(request, Page(url=request.url, status=200))
        status = await frontier.status()
        assert (status.done, status.reclaimed, status.in_flight) == (1, 1, 0)
        await client.aclose()
        await frontier.drop()


async def test_a_page_is_stored_once_its_record_beside_the_script_and_read_back() -> None:
    """A page's record goes to Redis beside the DONE script (never through Lua): the record of
    a lease that expired and was taken by another worker is deleted, not stored; a record that
    did not arrive sends the request back to the queue; records kept in ``pages`` itself by an
    earlier sitecrawl are read back in their place."""
    server = shared_server()
    url = server.url
    first = RedisFrontier(url, crawl_id="records", base_url=BASE, lease_batch=1)
    second = RedisFrontier(url, crawl_id="records", lease_batch=1)
    client = aioredis.Redis(port=server.port, decode_responses=True)
    keys = {k: f"sitecrawl:{{records}}:{k}" for k in ("leases", "pages", "records", "queue")}
    async with first, second, first.working(), second.working():
        await first.add(requests(2))
        taken = await first.next()
        assert taken is not None
        held = f"{first.token}\n0\n{taken.key}\n{taken.url}"
        assert await client.zadd(keys["leases"], {held: 0}, xx=True, ch=True) == 1  # expired
        again = await second.next()  # reclaimed, leased to the second worker
        assert again is not None and again.key == taken.key
        await first.mark_done(taken, Page(url=taken.url, status=200, title="first"))
        assert await client.hlen(keys["records"]) == 0  # not stored: deleted
        await second.mark_done(again, Page(url=again.url, status=200, title="second"))
        # A record announced ('+') that is not in Redis: the request goes back to the queue.
        lost = await first.next()
        assert lost is not None
        member = first._leases[lost.key]
        done = first._scripts["done"]
        script_keys = [f"sitecrawl:{{records}}:{k}" for k in ("counts", "queue", "leases")]
        await done(
            [*script_keys, keys["pages"], keys["records"]],
            [first.token, member, f"{first.token}:lost", 0, 0],
        )
        assert await client.zscore(keys["queue"], member) is not None
        status = await first.status()
        assert (status.done, status.queued, status.in_flight) == (1, 1, 0)
        # A record of an earlier sitecrawl, kept in the list itself, then one of this one.
        older = Page(url=BASE + "older", status=200, title="older")
        record = {"url": older.url, "status": 200, "title": "older"}
        await client.rpush(keys["pages"], json.dumps(record))
        first._leases.pop(lost.key)
        again = await first.next()
        assert again is not None and again.key == lost.key
        await first.mark_done(again, Page(url=again.url, status=404, title="last"))
        assert await client.hlen(keys["records"]) == 2
        titles = [(page.url, page.title, page.status) async for page in first.pages()]
        assert titles == [
            (BASE + "p0", "second", 200),
            (older.url, "older", 200),
            (BASE + "p1", "last", 404),
        ]
        await client.aclose()
        await first.drop()


async def test_a_redis_that_stops_answering_times_out_then_is_waited_for_or_lost(
    tmp_path: Path,
) -> None:
    """The pipeline reads a batch's replies within the socket timeout: a Redis that stops
    answering (SIGSTOP) is retried until it answers again, with the call's answer intact;
    past ``reconnect_timeout`` the crawl is lost with a clear error, never a hang."""
    server = RedisServer(tmp_path).start()
    assert server.process is not None
    url = server.url + "?socket_timeout=0.2"
    try:
        frontier = RedisFrontier(url, crawl_id="hung", base_url=BASE, reconnect_timeout=10)
        async with frontier:
            server.process.send_signal(signal.SIGSTOP)
            adding = asyncio.create_task(frontier.add(requests(3)))
            await asyncio.sleep(1.0)  # five socket timeouts, each retried
            assert not adding.done()
            server.process.send_signal(signal.SIGCONT)
            assert await asyncio.wait_for(adding, 10) == 3
            assert (await frontier.status()).queued == 3
        brief = RedisFrontier(url, crawl_id="hung", reconnect_timeout=0.5)
        async with brief:
            server.process.send_signal(signal.SIGSTOP)
            with pytest.raises(StateError, match=r"unreachable for 0\.5 s"):
                await asyncio.wait_for(brief.add(requests(5)), 10)
            server.process.send_signal(signal.SIGCONT)
    finally:
        server.process.send_signal(signal.SIGCONT)
        server.stop()
