"""The crawler against the fault-injection site: politeness asserted server-side, and every
fault ending up in the records with its error, in bounded time."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any
from urllib.parse import urlsplit

import pytest

from conftest import ServeFn
from faults import FRENCH, JAPANESE, FaultState, fault_app
from servers import ServerThread, Traffic, expected_paths, html, site_app
from sitecrawl import (
    AsyncCrawler,
    CrawlConfig,
    Limits,
    Politeness,
    Timeouts,
)
from sitecrawl._cli import main

TOLERANCE = 0.02  # client-side start vs server-side arrival on loopback, when neither lags
Records = dict[str, dict[str, Any]]


def fast(**overrides: Any) -> Politeness:
    """Politeness with test-sized backoffs."""
    return Politeness(**{"backoff": 0.05, "max_backoff": 2.0, **overrides})


async def crawl(
    server: ServerThread,
    *,
    politeness: Politeness | None = None,
    limits: Limits | None = None,
    timeouts: Timeouts | None = None,
    start: str = "/",
) -> tuple[Records, AsyncCrawler]:
    config = CrawlConfig(
        base_url=server.url + start,
        politeness=politeness or fast(),
        limits=limits or Limits(max_concurrency=8, max_bytes=1 << 20),
        # /stall, /never and /trickle time out; /slow (0.1 s) and the rest must not, even when
        # the machine is busy
        timeouts=timeouts or Timeouts(total=1.0, connect=1.0),
    )
    async with AsyncCrawler(config.base_url, config=config) as crawler:
        records = await crawler.crawl()
    by_path = {}
    for record in records.values():
        parts = urlsplit(record["url"])
        by_path[parts.path + (f"?{parts.query}" if parts.query else "")] = record
    return by_path, crawler


@pytest.fixture
def faults(serve: ServeFn) -> tuple[ServerThread, FaultState]:
    state = FaultState()
    return serve(fault_app(state=state)), state


async def test_every_fault_is_a_record_and_the_crawl_ends(
    faults: tuple[ServerThread, FaultState],
) -> None:
    server, state = faults
    started = time.monotonic()
    rec, crawler = await crawl(
        server,
        # adaptive slowing is asserted on its own below; here it would make the timing of
        # this many deliberate 429/503s depend on their order
        politeness=fast(per_host=4, retries=1, max_backoff=1.0, adaptive=False),
        limits=Limits(max_concurrency=8, max_bytes=1 << 20, max_query_variants=5),
    )
    assert time.monotonic() - started < 60  # stalled answers would hold it for an hour
    seen = server.traffic.paths

    # robots.txt: fetched once, its disallows never requested, blocked URLs recorded
    assert seen.count("/robots.txt") == 1
    for path in ("/private/secret", "/file.pdf", "/private/secret2", "/private/in-sitemap"):
        assert path not in seen
    for path in ("/private/secret", "/file.pdf", "/private/in-sitemap"):
        assert rec[path]["status"] is None
        assert rec[path]["error"] == "blocked by robots.txt"
        assert rec[path]["error_kind"] == "blocked_robots"
        assert rec[path]["attempts"] == 0
    assert rec["/private/ok"]["status"] == 200
    # a redirect to a disallowed URL is checked before the hop is requested
    assert rec["/to-private"]["error"] == "blocked by robots.txt"
    assert rec["/to-private"]["redirects"] == [(server.url + "/to-private", 302)]
    assert crawler.stats.blocked == 4

    # sitemaps: index -> gzip sitemap + plain sitemap; in-scope URLs only; in_sitemap flags
    assert rec["/orphan/1"]["in_sitemap"] and rec["/orphan/3"]["in_sitemap"]
    assert rec["/private/in-sitemap"]["in_sitemap"]
    assert rec["/"]["in_sitemap"] is False and rec["/slow"]["in_sitemap"] is False
    assert {"/sitemap_index.xml", "/sitemap-a.xml.gz", "/sitemap-b.xml"} <= set(seen)
    assert crawler.stats.sitemap_urls == 4

    # retries: 429 then fine after Retry-After; 503 flapping; always down
    assert (rec["/limited"]["status"], rec["/limited"]["attempts"]) == (200, 2)
    assert (rec["/flaky"]["status"], rec["/flaky"]["attempts"]) == (503, 2)
    assert rec["/flaky"]["error"] == "HTTP 503"
    assert rec["/flaky"]["error_kind"] == "http_status"
    assert (rec["/down"]["status"], rec["/down"]["attempts"]) == (503, 2)
    assert state.hits["/down"] == 2

    # slow is fine; stalled, silent, trickling and reset servers time out or fail, retried
    assert rec["/slow"]["status"] == 200 and rec["/slow"]["error"] is None
    assert rec["/slow"]["error_kind"] is None and rec["/slow"]["location"] is None
    for path in ("/stall", "/never", "/trickle"):
        assert rec[path]["error"] == "timeout", path
        assert rec[path]["error_kind"] == "timeout", path
        assert rec[path]["attempts"] == 2
        assert state.hits[path] == 2
    assert rec["/reset"]["status"] is None
    assert "disconnected" in rec["/reset"]["error"] or "connection" in rec["/reset"]["error"]
    assert rec["/reset"]["error_kind"] == "connect"
    assert rec["/reset"]["attempts"] == 2

    # bodies: a 4 GiB stream and a 256 MiB gzip bomb are cut at max_bytes decoded
    for path in ("/huge", "/bomb"):
        assert rec[path]["error"] == f"body cut at {1 << 20} bytes", path
        assert rec[path]["error_kind"] == "too_large", path
        assert rec[path]["size_bytes"] == 1 << 20
    assert state.huge_bytes_sent < 64 << 20
    assert rec["/br"]["title"] == "brotli page" and rec["/br"]["error"] is None
    assert rec["/zstd"]["first_paragraph"] == "decoded from zstd"
    assert all(
        {"gzip", "deflate", "br", "zstd"} <= set(value.replace(" ", "").split(","))
        for value in server.traffic.accept_encodings
    )

    # charsets: undeclared and mislabelled bodies come out as the right Unicode text
    assert rec["/cp1252"]["first_paragraph"] == FRENCH
    assert rec["/sjis"]["first_paragraph"] == JAPANESE
    assert rec["/mislabelled-utf8"]["first_paragraph"] == FRENCH
    assert rec["/mislabelled-latin1"]["first_paragraph"] == FRENCH

    # redirects: chain recorded, loop and too many hops detected, out of scope refused
    assert rec["/chain/1"]["redirects"] == [
        (server.url + "/chain/1", 301),
        (server.url + "/chain/2", 302),
        (server.url + "/chain/3", 307),
    ]
    assert rec["/chain/1"]["final_url"] == server.url + "/final"
    assert rec["/chain/1"]["status"] == 200
    assert "loop" in rec["/loop/a"]["error"]
    assert rec["/loop/a"]["error_kind"] == "redirect_loop"
    assert rec["/hops/0"]["error"] == "more than 10 redirects"
    assert rec["/hops/0"]["error_kind"] == "too_many_redirects"
    assert len(rec["/hops/0"]["redirects"]) == 10
    assert "/hops/11" not in seen
    assert "out of scope" in rec["/out"]["error"]
    assert "out of scope" in rec["/ftp"]["error"]
    assert rec["/out"]["error_kind"] == rec["/ftp"]["error_kind"] == "redirect_out_of_scope"
    assert rec["/out"]["location"] == "http://elsewhere.invalid/"
    assert rec["/ftp"]["location"] is not None and rec["/ftp"]["location"].startswith("ftp:")

    # link traps: at most max_query_variants query strings per path
    assert len([p for p in seen if p.startswith("/calendar?")]) == 5
    assert len([p for p in seen if p.startswith("/grow?")]) == 5
    assert crawler.stats.dropped_links >= 2

    # meta robots / X-Robots-Tag / rel=nofollow: links recorded, not followed
    assert rec["/meta-nofollow"]["indexable"] is False
    assert server.url + "/nf/from-meta" in rec["/meta-nofollow"]["outgoing_links"]
    assert rec["/xrobots"]["indexable"] is False
    assert server.url + "/nf/from-rel" in rec["/relnofollow"]["outgoing_links"]
    assert rec["/relnofollow"]["indexable"] is True
    assert "/nf/from-meta" not in seen and "/nf/from-header" not in seen
    assert "/nf/from-rel" not in seen and "/nf/followed" in seen

    # politeness: never more than per_host requests in flight on the host
    assert max(server.traffic.host_peak.values()) <= 4
    # every URL the crawl touched has a record, failures included
    assert all(link in rec for link in ("/", "/stall", "/reset", "/huge", "/out"))


async def test_huge_body_stream_stops_when_cut(faults: tuple[ServerThread, FaultState]) -> None:
    server, state = faults
    state.huge_finished = asyncio.Event()
    rec, _ = await crawl(
        server,
        politeness=fast(obey_robots=False, sitemaps=False),
        limits=Limits(max_bytes=256 << 10),
        start="/huge",
    )
    assert rec["/huge"]["error"] == f"body cut at {256 << 10} bytes"
    # the server notices the disconnect and stops streaming: it never sends the 4 GiB
    for _ in range(1000):
        if state.huge_finished.is_set():
            break
        await asyncio.sleep(0.01)
    assert state.huge_finished.is_set()
    assert state.huge_bytes_sent < 32 << 20


async def test_follow_nofollow_and_ignore_robots(faults: tuple[ServerThread, FaultState]) -> None:
    server, _ = faults
    rec, _ = await crawl(
        server,
        politeness=fast(obey_robots=False, sitemaps=False, follow_nofollow=True, retries=0),
        limits=Limits(max_bytes=1 << 16, max_depth=2),
    )
    seen = server.traffic.paths
    assert "/robots.txt" not in seen and "/sitemap_index.xml" not in seen
    assert "/private/secret" in seen and "/file.pdf" in seen
    assert "/nf/from-rel" in seen  # rel=nofollow followed on request
    assert "/nf/from-meta" not in seen  # a nofollow *page* still is not
    assert "/orphan/1" not in seen
    assert rec["/private/secret"]["status"] == 200


@pytest.mark.parametrize(
    ("robots", "fetched"),
    [
        (404, True),  # 4xx: allow everything
        (403, True),
        (500, False),  # 5xx: disallow everything for now
        (None, False),  # redirect to a robots.txt that disallows /private
    ],
)
async def test_robots_status_semantics(serve: ServeFn, robots: int | None, fetched: bool) -> None:
    server = serve(fault_app(robots, links=["/private/secret", "/orphan/5"]))
    rec, _ = await crawl(server, politeness=fast(retries=1, sitemaps=False))
    seen = server.traffic.paths
    assert ("/private/secret" in seen) is fetched
    if robots == 500:
        assert seen.count("/robots.txt") == 2  # retried once, then "unreachable"
        assert seen == ["/robots.txt", "/robots.txt"]
        assert rec["/"]["status"] is None
        assert rec["/"]["error"] == "robots.txt unreachable (HTTP 500)"
        assert rec["/"]["error_kind"] == "robots_unreachable"
    if robots is None:
        assert seen[:2] == ["/robots.txt", "/robots-moved.txt"]
        assert rec["/private/secret"]["error"] == "blocked by robots.txt"
        assert rec["/orphan/5"]["status"] == 200


async def test_sitemap_xml_fallback_and_no_sitemaps(serve: ServeFn) -> None:
    server = serve(fault_app("User-agent: *\nAllow: /\n", links=[], sitemap_xml_fallback=True))
    rec, crawler = await crawl(server)
    assert rec["/orphan/9"]["in_sitemap"] is True
    assert crawler.stats.sitemap_urls == 1
    assert rec["/orphan/9"]["depth"] == 1

    other = serve(fault_app("User-agent: *\nAllow: /\n", links=[], sitemap_xml_fallback=True))
    rec, _ = await crawl(other, politeness=fast(sitemaps=False))
    assert set(rec) == {"/"}
    assert "/sitemap.xml" not in other.traffic.paths


async def test_per_host_cap_and_delay_are_held_server_side(serve: ServeFn) -> None:
    server = serve(site_app(30, delay=0.03))
    await crawl(
        server,
        # adaptive slowing (asserted on its own) would halve the cap when a busy machine
        # makes an answer slow; the timeout is long enough that no page is fetched twice
        politeness=fast(per_host=2, sitemaps=False, adaptive=False),
        limits=Limits(max_concurrency=16),
        timeouts=Timeouts(total=30, connect=30),
    )
    assert server.traffic.host_peak[f"127.0.0.1:{server.port}"] == 2  # never more, and reached
    assert sorted(server.traffic.pages) == sorted(expected_paths(30))  # each page once

    spaced = serve(site_app(8))
    await crawl(spaced, politeness=fast(delay=0.1, jitter=0.5))
    assert len(spaced.traffic.starts) == 10  # robots.txt, sitemap.xml, 8 pages
    # every start 0.1 s after the one before, on the server's side; jitter only adds to it
    late, early = spaced.traffic.short_gaps(0.1, tolerance=TOLERANCE)
    assert not early and len(late) <= 2, (early, late)


async def test_crawl_delay_is_honoured_and_capped(serve: ServeFn) -> None:
    server = serve(fault_app("User-agent: *\nCrawl-delay: 0.15\n", links=["/orphan/1"]))
    await crawl(server, politeness=fast(sitemaps=False))
    assert server.traffic.paths == ["/robots.txt", "/", "/orphan/1"]
    # from the first request after robots.txt
    late, early = server.traffic.short_gaps(0.15, tolerance=TOLERANCE, spaced_from=2)
    assert not early, (early, late)

    capped = serve(fault_app("User-agent: *\nCrawl-delay: 60\n", links=["/orphan/1"]))
    started = time.monotonic()
    _, crawler = await crawl(capped, politeness=fast(sitemaps=False, max_crawl_delay=0.2))
    assert time.monotonic() - started < 30  # not the 60 s asked
    late, early = capped.traffic.short_gaps(0.2, tolerance=TOLERANCE, spaced_from=2)
    assert not early, (early, late)
    assert any("capped" in note and "60" in note for note in crawler.stats.notes)


async def test_ever_growing_query_stops_at_max_url_length(
    faults: tuple[ServerThread, FaultState],
) -> None:
    server, _ = faults
    rec, _ = await crawl(
        server,
        politeness=fast(obey_robots=False, sitemaps=False),
        limits=Limits(max_url_length=200),
        start="/grow?q=a",
    )
    grown = [p for p in server.traffic.paths if p.startswith("/grow")]
    assert all(len(server.url + p) <= 200 for p in grown)
    assert len(grown) == 8  # q = a, aa, ..., 128 a's; 256 would pass the limit
    assert len(rec) == 8


async def test_retry_after_spaces_the_retry(faults: tuple[ServerThread, FaultState]) -> None:
    server, _ = faults
    off = fast(obey_robots=False, sitemaps=False)
    rec, _ = await crawl(server, politeness=off, start="/limited")
    assert rec["/limited"]["attempts"] == 2
    assert rec["/limited"]["status"] == 200
    times = [t for t, _, path in server.traffic.starts if path == "/limited"]
    assert times[1] - times[0] >= 1.0 - TOLERANCE  # Retry-After: 1


async def test_flapping_503_succeeds_within_retries(
    faults: tuple[ServerThread, FaultState],
) -> None:
    server, state = faults
    rec, crawler = await crawl(server, politeness=fast(obey_robots=False), start="/flaky")
    assert (rec["/flaky"]["status"], rec["/flaky"]["attempts"]) == (200, 3)
    assert rec["/flaky"]["error"] is None
    assert state.hits["/flaky"] == 3
    assert crawler.stats.retries == 2


async def test_adaptive_backoff_halves_the_slot_on_503(serve: ServeFn) -> None:
    from aiohttp import web

    async def busy(request: web.Request) -> web.Response:
        if request.path == "/":
            return html("".join(f'<a href="/p/{i}">p</a>' for i in range(6)))
        await asyncio.sleep(0.02)
        return web.Response(status=503, text="busy")

    app = web.Application()
    app.router.add_get("/", busy)
    app.router.add_get("/p/{i}", busy)
    server = serve(app)
    rec, crawler = await crawl(
        server,
        politeness=fast(retries=0, sitemaps=False, obey_robots=False, max_backoff=0.1),
        limits=Limits(max_concurrency=8),
    )
    slot = crawler.throttle.slots[f"127.0.0.1:{server.port}"]
    assert slot.limit < 8  # halved (at least once) by the 503s
    assert all(rec[f"/p/{i}"]["status"] == 503 for i in range(6))


def test_cli_flags_reach_the_crawl(
    serve: ServeFn,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)  # the crawl's ./<host>.sitecrawl.db goes there
    server = serve(fault_app("User-agent: *\nCrawl-delay: 9\n", links=["/orphan/1", "/nf/x"]))
    out = tmp_path / "pages.jsonl"
    argv = ["crawl", server.url, "-o", str(out), "--max-crawl-delay", "0.05", "--per-host", "1"]
    argv += ["--retries", "0", "--no-sitemaps", "--max-bytes", "5000", "--jitter", "0.1"]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "capped to 0.05 s" in err
    assert "/sitemap.xml" not in server.traffic.paths
    assert server.traffic.host_peak[f"127.0.0.1:{server.port}"] == 1
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert {(r["attempts"], r["in_sitemap"]) for r in records} == {(1, False)}

    ignoring = serve(fault_app(links=["/private/secret"]))
    argv = ["crawl", ignoring.url, "-q", "--ignore-robots", "--delay", "0.01", "--no-sitemaps"]
    assert main([*argv, "--follow-nofollow", "--max-url-length", "100"]) == 0
    assert "/robots.txt" not in ignoring.traffic.paths
    assert "/private/secret" in ignoring.traffic.paths


@pytest.mark.parametrize(
    "bad",
    [
        ["--per-host", "0"],
        ["--delay", "-1"],
        ["--jitter", "2"],
        ["--retries", "x"],
        ["--max-bytes", "0"],
        ["--max-url-length", "3"],
        ["--max-query-variants", "0"],
        ["--max-crawl-delay", "-2"],
    ],
)
def test_cli_rejects_bad_politeness_values(bad: list[str]) -> None:
    assert main(["crawl", "http://127.0.0.1:9/", *bad]) == 2


async def test_get_html_is_as_polite_as_the_crawl(faults: tuple[ServerThread, FaultState]) -> None:
    """The course's ``get_html`` goes through robots.txt, the host's slot and retries, like
    every request of a crawl: a disallowed URL is not requested, a flapping one is retried."""
    from sitecrawl import BlockedByRobots

    server, state = faults
    config = CrawlConfig(base_url=server.url, politeness=fast())
    async with AsyncCrawler(config.base_url, config=config) as crawler:
        with pytest.raises(BlockedByRobots):
            await crawler.get_html(server.url + "/private/secret")
        assert "<title>/private/ok</title>" in await crawler.get_html(server.url + "/private/ok")
        html_text = await crawler.get_html(server.url + "/flaky")
        with pytest.raises(BlockedByRobots):  # a redirect into a disallowed path
            await crawler.get_html(server.url + "/to-private")
    assert "up again" in html_text
    assert state.hits["/flaky"] == 3  # two 503s, then the page
    paths = server.traffic.paths
    assert paths[0] == "/robots.txt" and paths.count("/robots.txt") == 1
    assert "/private/secret" not in paths and "/private/secret2" not in paths
    assert "/private/ok" in paths and "/to-private" in paths


def test_short_gaps_tell_a_late_read_from_a_skipped_delay() -> None:
    """The server-side spacing check: a request read late (its gap after short, the one
    before long) is excused; a delay skipped or shortened anywhere is not."""

    def traffic(*times: float) -> Traffic:
        return Traffic(starts=[(t, "h", f"/{n}") for n, t in enumerate(times)])

    spaced = traffic(0.0, 0.1, 0.2, 0.3, 0.4)
    assert spaced.short_gaps(0.1, tolerance=0.02) == ([], [])
    late = traffic(0.0, 0.1, 0.29, 0.3, 0.4)  # /2 read 0.09 s late
    assert late.short_gaps(0.1, tolerance=0.02) == (["/3 0.010 s after /2, 0.200 s after /1"], [])
    skipped = traffic(0.0, 0.1, 0.2, 0.2, 0.3)  # no delay before /3
    assert skipped.short_gaps(0.1, tolerance=0.02)[1] == ["/3 0.000 s after /2, 0.100 s after /1"]
    jittered = traffic(0.0, 0.15, 0.3, 0.31, 0.45)  # the same with the most jitter of 0.5
    assert len(jittered.short_gaps(0.1, tolerance=0.02)[1]) == 1
    shortened = traffic(0.0, 0.07, 0.14, 0.21, 0.28)
    assert len(shortened.short_gaps(0.1, tolerance=0.02)[1]) == 3  # and the first, excused
    first = traffic(0.0, 0.01, 0.2)  # nothing before the first gap tells a late read from it
    assert first.short_gaps(0.1, tolerance=0.02) == (["/1 0.010 s after /0"], [])
    # robots.txt's Crawl-delay spaces what follows it: one interval from robots.txt to /2
    robots = traffic(0.0, 0.14, 0.15)
    assert robots.short_gaps(0.1, tolerance=0.02, spaced_from=2) == (
        ["/2 0.010 s after /1, 0.150 s after /0"],
        [],
    )
    assert len(traffic(0.0, 0.05, 0.06).short_gaps(0.1, tolerance=0.02, spaced_from=2)[1]) == 1
