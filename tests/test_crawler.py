from __future__ import annotations

import asyncio
import marshal
import os
import signal
import subprocess
import sys
from urllib.parse import urlsplit

import pytest
from aiohttp import web

from conftest import ServeFn
from servers import ServerThread, expected_paths, html, site_app
from sitecrawl import (
    AsyncCrawler,
    FetchError,
    NotHTMLError,
    Page,
    Request,
    crawl_site_async,
    normalize_url,
)
from sitecrawl._channels import child_env
from sitecrawl.frontier import MemoryFrontier
from sitecrawl.parse import Extracted
from sitecrawl.parse._child import LENGTH, job_frame, setup_frame


def paths_of(page_data: dict[str, dict[str, object]]) -> set[str]:
    return {urlsplit(str(page["url"])).path or "/" for page in page_data.values()}


async def test_crawl_finds_exactly_the_site(site: ServerThread) -> None:
    page_data = await crawl_site_async(site.url, max_concurrency=8)
    assert paths_of(page_data) == expected_paths(60)
    assert set(page_data) == {normalize_url(site.url + p) for p in expected_paths(60)}
    # each page fetched once, nothing out of scope, fragments never sent
    page_requests = [p for p in site.traffic.pages if not p.startswith("/img/")]
    assert sorted(page_requests) == sorted(expected_paths(60))
    page = page_data[normalize_url(site.url + "/p/5")]
    assert page["status"] == 200
    assert page["title"] == "Title 5"
    assert page["h1"] == "Page 5"
    assert page["first_paragraph"] == "Main text of page 5."
    assert page["meta_description"] == "d5"
    assert page["image_urls"] == [site.url + "/img/5.png"]
    assert site.url + "/p/11" in page["outgoing_links"]
    assert "https://external.invalid/x" in page["outgoing_links"]
    assert page["error"] is None
    assert page["content_type"] == "text/html"
    assert isinstance(page["response_time_ms"], float)
    assert page["size_bytes"] and page["size_bytes"] > 100


async def test_records_have_every_field(site: ServerThread) -> None:
    page_data = await crawl_site_async(site.url, max_pages=3)
    fields = {
        "url",
        "final_url",
        "status",
        "content_type",
        "depth",
        "title",
        "h1",
        "first_paragraph",
        "meta_description",
        "canonical",
        "outgoing_links",
        "image_urls",
        "response_time_ms",
        "size_bytes",
        "error",
    }
    for page in page_data.values():
        assert fields <= set(page)


async def test_depth_is_breadth_first_and_bounded(site: ServerThread) -> None:
    page_data = await crawl_site_async(site.url, max_concurrency=1, max_depth=2)
    depths = {urlsplit(p["url"]).path: p["depth"] for p in page_data.values()}
    # root -> /p/1, /p/2 (and 0) -> their children
    assert depths == {
        "/": 0,
        "/p/1": 1,
        "/p/2": 1,
        "/p/3": 2,
        "/p/4": 2,
        "/p/5": 2,
        "/p/6": 2,
        "/p/7": 2,
        "/p/14": 2,
    }
    # with one worker, requests go out in depth order
    order = [depths[p] for p in site.traffic.pages]
    assert order == sorted(order)


@pytest.mark.parametrize("max_pages", [1, 7, 25])
async def test_max_pages_is_never_exceeded(site: ServerThread, max_pages: int) -> None:
    page_data = await crawl_site_async(site.url, max_concurrency=8, max_pages=max_pages)
    assert len(page_data) == max_pages
    assert len(site.traffic.pages) == max_pages


class _SlowLeases(MemoryFrontier):
    """A frontier whose leases take a moment (as a shared or durable one's may)."""

    async def next(self) -> Request | None:
        await asyncio.sleep(0.005)
        return await super().next()


async def test_max_pages_counts_only_the_leases_given(site: ServerThread) -> None:
    """16 workers ask at once while one URL is queued: the 15 empty answers do not count
    against max_pages (a worker stops at the cap only once every lease asked for is known)."""
    async with AsyncCrawler(
        site.url, frontier=_SlowLeases(), max_concurrency=16, max_pages=5
    ) as crawler:
        page_data = await crawler.crawl()
    assert len(page_data) == 5
    assert len(site.traffic.pages) == 5


@pytest.mark.parametrize("concurrency", [1, 3, 10])
async def test_max_concurrency_bounds_requests_in_flight(serve: ServeFn, concurrency: int) -> None:
    server = serve(site_app(40, delay=0.02))
    page_data = await crawl_site_async(server.url, max_concurrency=concurrency)
    assert len(page_data) == 40
    assert server.traffic.peak_in_flight <= concurrency
    if concurrency > 1:  # the pool is really used
        assert server.traffic.peak_in_flight >= 2


def failure_app() -> web.Application:
    async def root(_: web.Request) -> web.Response:
        links = [
            "/missing",
            "/boom",
            "/slow",
            "/redirect",
            "/loop1",
            "/away",
            "/file.pdf",
            "http://127.0.0.1:1/refused",
        ]
        return html("".join(f'<a href="{link}">x</a>' for link in links))

    async def boom(_: web.Request) -> web.Response:
        return html("<h1>oops</h1>", status=500)

    async def slow(_: web.Request) -> web.Response:
        await asyncio.sleep(5)
        return html("late")

    async def redirect(_: web.Request) -> web.Response:
        raise web.HTTPFound("/target")

    async def target(_: web.Request) -> web.Response:
        return html("<h1>Target</h1>", title="T")

    async def loop1(_: web.Request) -> web.Response:
        raise web.HTTPFound("/loop2")

    async def loop2(_: web.Request) -> web.Response:
        raise web.HTTPMovedPermanently("/loop1")

    async def away(_: web.Request) -> web.Response:
        raise web.HTTPFound("https://elsewhere.invalid/")

    async def pdf(_: web.Request) -> web.Response:
        return web.Response(body=b"%PDF-1.4", content_type="application/pdf")

    app = web.Application()
    for path, handler in [
        ("/", root),
        ("/boom", boom),
        ("/slow", slow),
        ("/redirect", redirect),
        ("/target", target),
        ("/loop1", loop1),
        ("/loop2", loop2),
        ("/away", away),
        ("/file.pdf", pdf),
    ]:
        app.router.add_get(path, handler)
    return app


async def test_failures_are_recorded_never_raised(serve: ServeFn) -> None:
    server = serve(failure_app())
    errors: list[Page] = []
    page_data = await crawl_site_async(server.url, timeout=1.0, on_error=errors.append)

    def rec(path: str) -> dict[str, object]:
        return page_data[normalize_url(server.url + path)]

    assert rec("/missing")["status"] == 404
    assert rec("/missing")["error"] == "HTTP 404"
    assert rec("/boom")["status"] == 500
    assert rec("/boom")["error"] == "HTTP 500"
    assert rec("/slow")["status"] is None
    assert rec("/slow")["error"] == "timeout"
    assert rec("/redirect")["status"] == 200
    assert rec("/redirect")["final_url"] == server.url + "/target"
    assert rec("/redirect")["title"] == "T"
    assert "loop" in str(rec("/loop1")["error"])
    assert rec("/away")["status"] == 302
    assert "out of scope" in str(rec("/away")["error"])
    assert rec("/file.pdf")["status"] == 200
    assert rec("/file.pdf")["content_type"] == "application/pdf"
    assert rec("/file.pdf")["error_kind"] == "pdf_broken"  # "%PDF-1.4" and nothing more
    # out-of-scope links stay in outgoing_links but are never fetched
    assert "http://127.0.0.1:1/refused" in rec("/")["outgoing_links"]
    assert normalize_url("http://127.0.0.1:1/refused") not in page_data
    assert "/target" not in server.traffic.paths or server.traffic.count("/target") == 1
    assert {p.url.rsplit("/", 1)[1] for p in errors} == {
        "missing",
        "boom",
        "slow",
        "loop1",
        "away",
        "file.pdf",
    }


async def test_unreachable_base_url_is_a_record(unused_tcp_port: int) -> None:
    page_data = await crawl_site_async(f"http://127.0.0.1:{unused_tcp_port}/")
    (page,) = page_data.values()
    assert page["status"] is None
    # robots.txt could not be fetched either: per RFC 9309 the page is then not requested
    assert "connection refused" in str(page["error"])


async def test_get_html_rejects_non_html(serve: ServeFn) -> None:
    server = serve(failure_app())
    async with AsyncCrawler(server.url) as crawler:
        with pytest.raises(NotHTMLError) as info:
            await crawler.get_html(server.url + "/file.pdf")
        assert info.value.content_type == "application/pdf"
        assert isinstance(info.value, FetchError)


async def test_user_agent_is_sent(site: ServerThread) -> None:
    await crawl_site_async(site.url, max_pages=2, user_agent="TestBot/1.0")
    assert site.traffic.user_agents == {"TestBot/1.0"}
    site.traffic.user_agents.clear()
    await crawl_site_async(site.url, max_pages=1)
    (agent,) = site.traffic.user_agents
    assert agent.startswith("sitecrawl/")


async def test_stop_ends_the_crawl_early_and_keeps_pages(serve: ServeFn) -> None:
    server = serve(site_app(200, delay=0.01))
    crawlers: list[AsyncCrawler] = []

    def on_page(page: Page) -> None:
        if len(crawlers[0].page_data) == 10:
            crawlers[0].stop()

    async with AsyncCrawler(server.url, max_concurrency=4, on_page=on_page) as crawler:
        crawlers.append(crawler)
        page_data = await crawler.crawl()
    assert crawler.interrupted
    assert 10 <= len(page_data) <= 14
    assert len(server.traffic.pages) == len(page_data)


def test_charset_from_http_header_and_meta(serve: ServeFn) -> None:
    async def latin(_: web.Request) -> web.Response:
        body = "<title>Café</title><a href='/meta'>m</a>".encode("latin-1")
        return web.Response(body=body, headers={"Content-Type": "text/html; charset=iso-8859-1"})

    async def meta(_: web.Request) -> web.Response:
        body = '<meta charset="windows-1252"><title>Crème</title>'.encode("cp1252")
        return web.Response(body=body, headers={"Content-Type": "text/html"})

    app = web.Application()
    app.router.add_get("/", latin)
    app.router.add_get("/meta", meta)
    server = serve(app)
    page_data = asyncio.run(crawl_site_async(server.url))
    titles = {urlsplit(p["url"]).path: p["title"] for p in page_data.values()}
    assert titles == {"/": "Café", "/meta": "Crème"}


async def test_parser_processes_give_the_same_records(site: ServerThread) -> None:
    inline = await crawl_site_async(site.url, max_concurrency=4)
    pooled = await crawl_site_async(site.url, max_concurrency=4, processes=3)

    def content(pages: dict[str, dict[str, object]]) -> dict[str, tuple[object, ...]]:
        return {
            key: (p["title"], p["h1"], p["first_paragraph"], p["outgoing_links"], p["image_urls"])
            for key, p in pages.items()
        }

    assert content(pooled) == content(inline)
    assert len(pooled) == 60


def _parser_children() -> list[int]:
    """PIDs of this process's sitecrawl parser processes, read from /proc."""
    me = os.getpid()
    found = []
    for task in os.listdir(f"/proc/{me}/task"):
        with open(f"/proc/{me}/task/{task}/children", encoding="ascii") as children:
            for pid in children.read().split():
                with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
                    if b"sitecrawl.parse._child" in cmdline.read():
                        found.append(int(pid))
    return found


async def test_a_parser_process_that_dies_loses_no_page(serve: ServeFn) -> None:
    server = serve(site_app(80, delay=0.01))
    killed: list[int] = []

    def on_page(page: Page) -> None:
        if not killed and len(server.traffic.pages) >= 20:
            for pid in _parser_children():
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)

    page_data = await crawl_site_async(server.url, max_concurrency=4, processes=2, on_page=on_page)
    assert killed, "the parser process was never seen"
    assert paths_of(page_data) == expected_paths(80)
    assert all(p["error"] is None and p["title"] for p in page_data.values())


def test_a_parser_process_says_ready_then_answers_in_order() -> None:
    """The child's side of the pipe protocol, over real pipes: its setup in, a ready frame
    out (until then the event loop parses pages itself), then one answer per page, in order."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "sitecrawl.parse._child", str(os.getpid())],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=child_env(),
    )
    stdin, stdout = proc.stdin, proc.stdout
    assert stdin is not None and stdout is not None

    def frame() -> object:
        (size,) = LENGTH.unpack(stdout.read(LENGTH.size))
        return marshal.loads(stdout.read(size))

    stdin.write(setup_frame(False, None))
    stdin.flush()
    assert frame() is None  # ready
    pages = [(f"<title>Page {i}</title><a href='p{i + 1}'>next</a>", i) for i in range(3)]
    for doc, i in pages:
        stdin.writelines(job_frame(doc.encode(), None, f"http://site.test/d/p{i}"))
    stdin.close()
    answers = [Extracted.from_wire(frame()) for _ in pages]  # type: ignore[arg-type]
    assert [(a.title, a.outgoing_links) for a in answers] == [
        (f"Page {i}", [f"http://site.test/d/p{i + 1}"]) for i in range(3)
    ]
    stdout.close()
    assert proc.wait(timeout=30) == 0


async def test_the_url_requested_is_the_url_recorded(serve: ServeFn) -> None:
    """Percent-escapes go out as the page wrote them (and as the record says): ``%2F`` in a
    query and ``%7E`` stay escaped, as a browser sends them. (aiohttp would otherwise
    re-quote the URL: ``?x=%2F`` becomes ``?x=/``, another URL to many servers.)"""
    targets = ["/q?x=%2F&y=%7E", "/a%2Fb/c", "/%7Euser/p?z=a%26b"]
    seen: list[str] = []

    async def page(request: web.Request) -> web.Response:
        seen.append(request.raw_path)
        links = "".join(f'<a href="{target}">x</a>' for target in targets)
        return html(links, title=request.raw_path)

    async def absent(request: web.Request) -> web.Response:
        return web.Response(status=404)

    app = web.Application()
    app.router.add_get("/robots.txt", absent)
    app.router.add_get("/sitemap.xml", absent)
    app.router.add_route("GET", "/{tail:.*}", page)
    server = serve(app)
    page_data = await crawl_site_async(server.url + "/")
    assert sorted(seen) == sorted(["/", *targets])
    recorded = {urlsplit(str(p["url"])) for p in page_data.values()}
    assert sorted(f"{u.path}?{u.query}" if u.query else u.path for u in recorded) == sorted(seen)
