"""Path traps: a calendar that links the next month forever, relative links that loop.
Pure tests of the guard on URL lists, and a crawl of a real calendar-trap server."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from aiohttp import web

from conftest import ServeFn
from servers import html
from sitecrawl import CrawlConfig, Limits, crawl_site_async
from sitecrawl._cli import main
from sitecrawl._urls import url_key
from sitecrawl.control._links import PATTERN_DEPTH_SPAN, TrapGuard

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from gen_site import page_path


def _guard(limit: int | None = 100) -> TrapGuard:
    return TrapGuard(max_url_length=2048, max_query_variants=100, max_pattern_pages=limit)


def _allowed(guard: TrapGuard, urls: list[tuple[str, int]]) -> list[str]:
    return [url for url, depth in urls if guard.allows(url, url_key(url), depth)]


def _calendar(months: int) -> list[tuple[str, int]]:
    """A calendar crawled breadth-first: each month one level below the one before."""
    return [
        (f"http://site.test/cal/{2000 + m // 12}/{m % 12 + 1:02d}", m + 1) for m in range(months)
    ]


def test_a_calendar_is_cut_past_the_pattern_cap() -> None:
    guard = _guard(100)
    allowed = _allowed(guard, _calendar(1000))
    assert len(allowed) == 100
    assert guard.trapped == ["site.test/cal/#/#"]


def test_the_guard_can_be_turned_off() -> None:
    assert len(_allowed(_guard(None), _calendar(1000))) == 1000


def test_a_big_flat_pattern_and_a_long_pagination_are_not_cut() -> None:
    guard = _guard(100)
    items = [(f"http://site.test/item/{i}", 2 + i // 5000) for i in range(20_000)]
    pages = [(f"http://site.test/blog/page/{i}", i) for i in range(2, 100)]
    assert len(_allowed(guard, items + pages)) == 20_000 + 98
    assert not guard.trapped


def test_found_deeper_than_the_span_only_past_the_cap() -> None:
    """Past the cap, URLs found more than PATTERN_DEPTH_SPAN levels below the pattern's first
    are cut; those found within the span still are not."""
    guard = _guard(100)
    first = [("http://site.test/a/0", 1)]
    deep = [(f"http://site.test/a/{i}", 2 + PATTERN_DEPTH_SPAN) for i in range(1, 151)]
    shallow = [(f"http://site.test/a/{i}", 1 + PATTERN_DEPTH_SPAN) for i in range(151, 251)]
    assert len(_allowed(guard, first + deep)) == 100
    assert len(_allowed(guard, shallow)) == 100


def test_the_bench_site_and_real_doc_paths_are_not_cut() -> None:
    guard = TrapGuard(max_url_length=2048, max_query_variants=100, max_pattern_pages=10_000)
    bench = [(f"http://127.0.0.1:8088{page_path(i)}", 1 + i % 4) for i in range(5000)]
    docs = [
        (f"http://docs.test/{v}/library/{m}.html", 3)
        for v in ("3.10", "3.11", "3.12", "3.13")
        for m in ("os", "sys", "re", "asyncio-task", "http.client")
    ]
    blog = [(f"http://blog.test/blog/2024/{m:02d}/post-{m}", 2 + m) for m in range(1, 13)]
    every = bench + docs + blog
    assert len(_allowed(guard, every)) == len(every)


def test_a_path_repeating_a_segment_is_a_loop() -> None:
    guard = _guard()
    urls = [("http://site.test/x/foo/foo/foo", 3), ("http://site.test/x/foo/foo/foo/foo", 4)]
    assert _allowed(guard, urls) == ["http://site.test/x/foo/foo/foo"]
    assert _allowed(guard, [("http://site.test/2024/01/01/01/01", 2)])  # digits: not a loop
    assert guard.trapped == ["looping paths such as site.test/x/foo/foo/foo/foo"]


def _calendar_app() -> web.Application:
    async def month(request: web.Request) -> web.Response:
        y, m = int(request.match_info["y"]), int(request.match_info["m"])
        after = (y + m // 12, m % 12 + 1)
        before = (y - (m == 1), (m - 2) % 12 + 1)
        links = "".join(f'<a href="/cal/{a}/{b:02d}">{a}-{b}</a>' for a, b in (before, after))
        return html(f"<h1>{y}-{m:02d}</h1>{links}<a href='../about/'>about</a>", title="cal")

    async def root(request: web.Request) -> web.Response:
        return html('<a href="/cal/2024/01">calendar</a><a href="/about/">about</a>')

    async def about(request: web.Request) -> web.Response:
        return html('<a href="about/">more</a>', title="about")  # /about/about/about/...

    app = web.Application()
    app.router.add_get("/", root)
    app.router.add_get("/cal/{y:\\d+}/{m:\\d+}", month)
    app.router.add_get("/{tail:(about/)+}", about)
    return app


async def test_a_calendar_trap_server_is_crawled_to_an_end(serve: ServeFn) -> None:
    server = serve(_calendar_app())
    config = CrawlConfig(base_url=server.url, limits=Limits(max_pattern_pages=300))
    pages = await crawl_site_async(server.url, config=config)
    months = [p for p in pages.values() if p["title"] == "cal"]
    assert 300 <= len(months) <= 310
    abouts = [p["url"] for p in pages.values() if p["title"] == "about"]
    assert max(url.count("about") for url in abouts) == 3


def test_the_summary_says_what_was_cut(serve: ServeFn, capsys: pytest.CaptureFixture[str]) -> None:
    server = serve(_calendar_app())
    assert main(["crawl", server.url, "--no-state", "--max-pattern-pages", "200"]) == 0
    err = capsys.readouterr().err
    assert (
        f"path trap: links to 127.0.0.1:{server.port}/cal/#/# past 200 pages not followed"
        " (--max-pattern-pages)"
    ) in err
    assert "path trap: links to looping paths such as" in err
