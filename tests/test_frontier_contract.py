"""One contract suite for every frontier backend (see frontier_backends.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from frontier_backends import BACKENDS, BASE_URL, DURABLE, Backend
from sitecrawl import Page, Request
from sitecrawl._urls import parse_base_url, url_key
from sitecrawl.frontier import Frontier, FrontierStats


def req(path: str, depth: int = 0) -> Request:
    url = parse_base_url("http://site.test" + path)
    return Request(url=url, key=url_key(url), depth=depth)


def page_for(request: Request) -> Page:
    return Page(url=request.url, depth=request.depth, status=200, title=request.key)


async def drain(frontier: Frontier) -> list[Request]:
    """Lease and finish everything queued; return the requests in the order handed out."""
    out = []
    while (request := await frontier.next()) is not None:
        out.append(request)
        await frontier.mark_done(request, page_for(request))
    return out


@pytest.fixture(params=BACKENDS, ids=lambda backend: backend.name)
def backend(request: pytest.FixtureRequest) -> Backend:
    return request.param  # type: ignore[no-any-return]


@pytest.fixture
async def frontier(backend: Backend, tmp_path: Path) -> AsyncIterator[Frontier]:
    async with backend.make(tmp_path) as opened, opened.working():
        yield opened


async def test_dedupe_is_on_the_canonical_key(frontier: Frontier) -> None:
    same = [req("/a"), req("/a/"), req("/a#top"), req("/A/../a")]
    assert len({r.key for r in same}) == 1
    https = parse_base_url("https://site.test/a")
    same.append(Request(url=https, key=url_key(https), depth=3))
    assert await frontier.add(same) == 1
    assert await frontier.add([req("/a"), req("/b")]) == 1
    assert await frontier.add([req("/a?x=1"), req("/a?x=1")]) == 1  # the query counts
    assert [r.key for r in await drain(frontier)] == [
        "site.test/a",
        "site.test/b",
        "site.test/a?x=1",
    ]
    assert await frontier.add([req("/a"), req("/b/")]) == 0  # done keys stay seen


async def test_lower_depth_first_then_first_in_first_out(frontier: Frontier) -> None:
    await frontier.add([req("/d2a", 2), req("/d1a", 1), req("/d0", 0), req("/d1b", 1)])
    first = await frontier.next()
    assert first is not None and first.key == "site.test/d0"
    await frontier.add([req("/d1c", 1), req("/d2b", 2)])  # found while /d0 is leased
    await frontier.mark_done(first, page_for(first))
    order = [(r.key.removeprefix("site.test/"), r.depth) for r in await drain(frontier)]
    assert order == [("d1a", 1), ("d1b", 1), ("d1c", 1), ("d2a", 2), ("d2b", 2)]


async def test_is_finished_only_when_nothing_is_queued_or_leased(frontier: Frontier) -> None:
    assert await frontier.is_finished()
    assert await frontier.next() is None
    await frontier.add([req("/a"), req("/b")])
    assert not await frontier.is_finished()
    a, b = await frontier.next(), await frontier.next()
    assert a is not None and b is not None
    assert await frontier.next() is None
    assert not await frontier.is_finished()  # queue empty, two leases open
    await frontier.mark_done(a, page_for(a))
    assert not await frontier.is_finished()
    await frontier.mark_done(b, page_for(b))
    assert await frontier.is_finished()


async def test_a_released_lease_goes_back_ahead_of_its_depth(frontier: Frontier) -> None:
    await frontier.add([req("/a", 1), req("/b", 1), req("/c", 2)])
    a = await frontier.next()
    assert a is not None and a.key == "site.test/a"
    await frontier.mark_done(a)  # abandoned: no page
    assert not await frontier.is_finished()
    assert (await frontier.stats()).queued == 3
    assert [r.key for r in await drain(frontier)] == ["site.test/a", "site.test/b", "site.test/c"]
    assert (await frontier.stats()).done == 3


async def test_claim_marks_seen_without_queuing(frontier: Frontier) -> None:
    assert await frontier.claim("site.test/x")
    assert not await frontier.claim("site.test/x")
    assert await frontier.add([req("/x")]) == 0
    await frontier.add([req("/y")])
    assert not await frontier.claim("site.test/y")
    assert [r.key for r in await drain(frontier)] == ["site.test/y"]


async def test_complete_queues_the_links_and_ends_the_lease(frontier: Frontier) -> None:
    await frontier.add([req("/a"), req("/b")])
    a = await frontier.next()
    assert a is not None and a.key == "site.test/a"
    links = [req("/b", 1), req("/c", 1), req("/c/", 1), req("/d", 1)]
    assert await frontier.complete(a, page_for(a), links) == 2  # /b was seen, /c twice
    order = [r.key.removeprefix("site.test/") for r in await drain(frontier)]
    assert order == ["b", "c", "d"]
    assert (await frontier.stats()).done == 4


async def test_an_abandoned_lease_goes_back_its_links_queued(frontier: Frontier) -> None:
    await frontier.add([req("/a", 1), req("/b", 1)])
    a = await frontier.next()
    assert a is not None and a.key == "site.test/a"
    assert await frontier.complete(a, None, [req("/c", 2)]) == 1
    assert [r.key for r in await drain(frontier)] == ["site.test/a", "site.test/b", "site.test/c"]


async def test_leaving_working_hands_back_what_was_not_handed_out(
    backend: Backend, tmp_path: Path
) -> None:
    async with backend.make(tmp_path) as frontier:
        await frontier.add([req("/a"), req("/b"), req("/c")])
        async with frontier.working():
            a = await frontier.next()
            assert a is not None
            assert (await frontier.stats()).queued == 2
            await frontier.complete(a, page_for(a))
        assert await frontier.stats() == FrontierStats(seen=3, queued=2, in_flight=0, done=1)
        async with frontier.working():
            assert [r.key for r in await drain(frontier)] == ["site.test/b", "site.test/c"]


async def test_stats_count_seen_queued_leased_done(frontier: Frontier) -> None:
    assert await frontier.stats() == FrontierStats(seen=0, queued=0, in_flight=0, done=0)
    await frontier.add([req("/a"), req("/b"), req("/c"), req("/a")])
    await frontier.claim("site.test/z")
    a = await frontier.next()
    assert a is not None
    assert await frontier.stats() == FrontierStats(seen=4, queued=2, in_flight=1, done=0)
    await frontier.mark_done(a, page_for(a))
    assert await frontier.stats() == FrontierStats(seen=4, queued=2, in_flight=0, done=1)


# -- durable backends only ------------------------------------------------------------------


@pytest.mark.parametrize("durable", DURABLE, ids=lambda backend: backend.name)
async def test_state_survives_close_and_reopen(durable: Backend, tmp_path: Path) -> None:
    async with durable.make(tmp_path) as frontier, frontier.working():
        await frontier.add([req("/a", 0), req("/b", 1), req("/c", 1), req("/d", 2)])
        a = await frontier.next()
        b = await frontier.next()
        assert a is not None and b is not None
        await frontier.mark_done(a, page_for(a))
        # b is still leased when the frontier closes: its lease must not be lost
    async with durable.make(tmp_path) as frontier, frontier.working():
        assert await frontier.stats() == FrontierStats(seen=4, queued=3, in_flight=0, done=1)
        assert await frontier.add([req("/a"), req("/b", 1), req("/e", 3)]) == 1
        assert not await frontier.claim("site.test/c")
        order = [r.key.removeprefix("site.test/") for r in await drain(frontier)]
        assert order == ["b", "c", "d", "e"]
        assert await frontier.is_finished()
    async with durable.make(tmp_path) as frontier, frontier.working():
        assert await frontier.is_finished()
        assert await frontier.next() is None
        assert (await frontier.stats()).done == 5


async def test_saved_options_are_the_frontiers_options(frontier: Frontier) -> None:
    options = {"rules": {"exclude": ["x"]}, "start_redirects": {"http://a/": "http://b/"}}
    await frontier.save_options(options)
    assert frontier.options == options


@pytest.mark.parametrize("durable", DURABLE, ids=lambda backend: backend.name)
async def test_saved_options_survive_close_and_reopen(durable: Backend, tmp_path: Path) -> None:
    async with durable.make(tmp_path) as frontier:
        assert frontier.options is None  # none given at creation
        await frontier.add([req("/a")])
        await frontier.save_options({"start_redirects": {"http://a/": "http://b/"}})
        await frontier.save_options({"start_redirects": {"http://c/": "http://d/"}})
    async with durable.make(tmp_path) as frontier:
        assert frontier.options == {"start_redirects": {"http://c/": "http://d/"}}
        assert (await frontier.stats()).queued == 1


@pytest.mark.parametrize("durable", DURABLE, ids=lambda backend: backend.name)
async def test_a_resumed_or_joined_crawl_takes_or_refuses_the_stored_aim(
    durable: Backend, tmp_path: Path
) -> None:
    """One policy for every durable backend, applied by the crawler: the same exception and
    message whichever stores the crawl."""
    from sitecrawl import AsyncCrawler, CrawlConfig, Render, Requests, Rules
    from sitecrawl._exceptions import ResumeRefused
    from sitecrawl.parse import Extraction

    extract = Extraction.from_specs({"h": "css:h1"}).rules
    token = Requests(headers=(("X-Token", "secret"),))
    began = CrawlConfig(
        base_url=BASE_URL, rules=Rules(exclude=("x",)), extract=extract, requests=token
    )
    async with AsyncCrawler(BASE_URL, config=began, frontier=durable.make(tmp_path)):
        pass  # a new crawl: the crawler stores its config
    assert "secret" not in str(durable.make(tmp_path).config)
    none = CrawlConfig(base_url=BASE_URL, requests=token)
    refusals = [
        (
            CrawlConfig(base_url=BASE_URL),
            "this crawl began with credentials that are not stored: give them again with"
            " -H 'x-token: ...'",
        ),
        (
            CrawlConfig(base_url=BASE_URL, rules=Rules(exclude=("y",)), requests=token),
            "this crawl began with --exclude x, not --exclude y: run it with the same rules (or"
            " none, to take them), or start over with --fresh",
        ),
        (
            CrawlConfig(
                base_url=BASE_URL,
                extract=Extraction.from_specs({"t": "css:title"}).rules,
                requests=token,
            ),
            "this crawl began with -x h=css:h1, not -x t=css:title: run it with the same"
            " extraction rules (or none, to take them), or start over with --fresh",
        ),
        (
            CrawlConfig(base_url=BASE_URL, render=Render(mode="auto"), requests=token),
            "this crawl began with --render never, not --render auto: run it with the same"
            " rendering (or none, to take it), or start over with --fresh",
        ),
    ]
    for config, message in refusals:
        with pytest.raises(ResumeRefused) as refused:
            async with AsyncCrawler(BASE_URL, config=config, frontier=durable.make(tmp_path)):
                pass
        assert str(refused.value) == message
    async with AsyncCrawler(BASE_URL, config=none, frontier=durable.make(tmp_path)) as crawler:
        assert crawler.config.rules == began.rules and crawler.config.extract == extract
        assert crawler.stats.notes == [
            "resumed with the rules this crawl began with: --exclude x",
            "resumed with the extraction rules this crawl began with: -x h=css:h1",
        ]
