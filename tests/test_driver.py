"""The crawl driver as a library user meets it, without the command line: ``AsyncCrawler.run``
with the user's own sink over a real local site and a durable SQLite state (resume, time
limit, start page failure); the one robots gate and the sitemaps read through it; an output
sink plugged in by its suffix in the one place (``sinks.SINKS``)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from aiohttp import web

from conftest import ServeFn
from servers import expected_paths, html, site_app
from sitecrawl import (
    AsyncCrawler,
    BlockedByRobots,
    ConfigError,
    CrawlConfig,
    CrawlRun,
    Page,
    Politeness,
)
from sitecrawl.control import CrawlScope
from sitecrawl.fetch import FetchStack
from sitecrawl.frontier import SqliteFrontier
from sitecrawl.sinks import SINKS, Sink, check_sinks, sink_for


class Collect(Sink):
    """A user's sink: the pages it was given, in order; closed once by its owner."""

    def __init__(self, stop_after: int | None = None) -> None:
        self.pages: list[Page] = []
        self.closed = 0
        self.crawler: AsyncCrawler | None = None
        self.stop_after = stop_after

    def write(self, page: Page) -> None:
        self.pages.append(page)
        if self.crawler is not None and len(self.pages) == self.stop_after:
            self.crawler.stop()

    def close(self) -> None:
        self.closed += 1


def path_of(page: Page) -> str:
    return "/" + page.url.split("/", 3)[3]


async def test_a_users_sink_gets_every_page_and_the_state_keeps_the_crawl(
    serve: ServeFn, tmp_path: Path
) -> None:
    site = serve(site_app(30))
    state = tmp_path / "crawl.db"
    sink = Collect()
    async with AsyncCrawler(site.url, state=state, processes=1) as crawler:
        run = await crawler.run([sink])
    assert isinstance(run, CrawlRun)
    assert (run.interrupted, run.start_failure, run.lost) == (False, None, None)
    assert sorted(map(path_of, sink.pages)) == sorted(expected_paths(30))
    assert run.written == len(sink.pages) == run.stats.pages == 30
    assert sink.closed == 0  # the driver writes; the sink's owner closes it
    async with SqliteFrontier(str(state), create=False) as stored:
        assert len([page async for page in stored.read_pages()]) == 30
        seconds = await stored.crawl_seconds()
    assert seconds is not None and seconds > 0  # the run's time, added by the driver


async def test_a_resumed_run_writes_the_earlier_pages_first_each_page_once(
    serve: ServeFn, tmp_path: Path
) -> None:
    site = serve(site_app(30, delay=0.02))
    state = tmp_path / "crawl.db"
    first = Collect(stop_after=5)
    async with AsyncCrawler(site.url, state=state, processes=1, max_concurrency=2) as crawler:
        first.crawler = crawler
        run = await crawler.run([first])
    assert run.interrupted
    assert 5 <= len(first.pages) < 30
    again = Collect()
    async with AsyncCrawler(site.url, state=state, processes=1) as crawler:
        run = await crawler.run([again])
    assert not run.interrupted
    urls = [page.url for page in again.pages]
    assert len(urls) == len(set(urls)) == 30  # the whole crawl, each page once
    assert urls[: len(first.pages)] == [page.url for page in first.pages]  # earlier ones first
    assert run.written == 30 and run.stats.pages == 30 - len(first.pages)


async def test_stop_at_stops_the_crawl_and_says_why(serve: ServeFn) -> None:
    site = serve(site_app(60, delay=0.1))
    sink = Collect()
    async with AsyncCrawler(site.url, processes=1, max_concurrency=2) as crawler:
        run = await crawler.run([sink], stop_at=time.monotonic() + 0.5)
    assert run.interrupted
    assert 0 < len(sink.pages) < 60
    assert "time limit reached: stopped taking new pages" in run.stats.notes


async def test_a_failed_start_page_is_the_runs_start_failure(serve: ServeFn) -> None:
    async def gone(request: web.Request) -> web.Response:
        return html("gone", status=404)

    app = web.Application()
    app.router.add_get("/", gone)
    site = serve(app)
    sink = Collect()
    async with AsyncCrawler(site.url, processes=1) as crawler:
        run = await crawler.run([sink])
    assert run.start_failure is not None and run.start_failure.status == 404
    assert run.start_failure is sink.pages[0] and run.written == 1


async def test_the_watch_is_entered_around_the_crawl(serve: ServeFn) -> None:
    site = serve(site_app(5))
    seen: list[str] = []

    class Watch:
        async def __aenter__(self) -> None:
            seen.append("enter")

        async def __aexit__(self, *exc: object) -> None:
            seen.append(f"exit after {crawler.stats.pages} pages")

    async with AsyncCrawler(site.url, processes=1) as crawler:
        await crawler.run(watch=Watch)
    assert seen == ["enter", "exit after 5 pages"]


# -- the robots gate and the sitemaps read through it ----------------------------------------


def robots_site() -> web.Application:
    robots = "User-agent: *\nDisallow: /private\nSitemap: /private/sitemap.xml\n"
    sitemap = (
        '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        "<url><loc>/a</loc></url></urlset>"
    )

    async def robots_txt(request: web.Request) -> web.Response:
        return web.Response(text=robots)

    async def sitemap_xml(request: web.Request) -> web.Response:
        return web.Response(text=sitemap, content_type="application/xml")

    app = web.Application()
    app.router.add_get("/robots.txt", robots_txt)
    for path in ("/private/sitemap.xml", "/open/sitemap.xml"):
        app.router.add_get(path, sitemap_xml)
    return app


async def test_one_robots_gate_for_requests_and_sitemaps(serve: ServeFn) -> None:
    site = serve(robots_site())
    root = site.url.rstrip("/") + "/"
    config = CrawlConfig(base_url=root)
    scope = CrawlScope([root], "domain")
    async with FetchStack(config) as stack:
        assert await stack.gate.allowed(root + "open/x")
        assert not await stack.gate.allowed(root + "private/x")
        with pytest.raises(BlockedByRobots):
            await stack.gate.check(root + "private/x")
        assert await stack.gate.only(lambda url: False).allowed(root + "private/x")
        # robots.txt's Sitemap: line is read through the same gate: disallowed, not fetched
        declared = await stack.sitemap_urls(root, scope)
        listed = await stack.sitemap_urls(root, scope, declared=[root + "open/sitemap.xml"])
    assert (declared.files, declared.urls) == ([], [])
    assert listed.urls == [root + "a"]
    ignored = CrawlConfig(base_url=root, politeness=Politeness(obey_robots=False))
    async with FetchStack(ignored) as stack:
        assert stack.gate.robots is None
        assert await stack.gate.allowed(root + "private/x")


# -- sinks by suffix: the one place ----------------------------------------------------------


class Lines(Sink):
    """An output of one URL a line, put in place when closed (a new format's sink)."""

    def __init__(self, path: str, **options: object) -> None:  # (extract=, csv_markdown=)
        self.path = path
        self.urls: list[str] = []

    def write(self, page: Page) -> None:
        self.urls.append(page.url)

    def close(self) -> None:
        Path(self.path).write_text("".join(url + "\n" for url in self.urls))


def test_a_new_output_plugs_in_by_its_suffix(
    serve: ServeFn, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sitecrawl._cli import main

    with pytest.raises(ConfigError, match="unknown output format"):
        check_sinks(["out.urls"])
    monkeypatch.setitem(SINKS, ".urls", Lines)
    check_sinks(["out.urls"])
    assert isinstance(sink_for(str(tmp_path / "x.urls")), Lines)
    site = serve(site_app(5))
    out = tmp_path / "out.urls"
    assert main(["crawl", site.url, "--no-state", "-q", "-p", "1", "-o", str(out)]) == 0
    assert sorted(out.read_text().split()) == sorted(
        site.url.rstrip("/") + p for p in expected_paths(5)
    )
