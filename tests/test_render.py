"""Rendering in real headless Chromium (``/usr/bin/chromium``) on the generated SPA site
(:mod:`spa_site`): ``auto`` finds every page Chromium's DOM links to and renders only the
application pages; ``always`` records what JavaScript changed; the browser's requests keep the
per-host cap and robots.txt; the state file keeps rendered pages."""

from __future__ import annotations

import asyncio
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.async_api import async_playwright

from browser import CHROMIUM_ARGS, chromium_path
from conftest import ServeFn
from sitecrawl import AsyncCrawler, CrawlConfig, Limits, Page, Politeness, Render
from sitecrawl._cli import main
from sitecrawl._progress import summary
from sitecrawl.frontier import SqliteFrontier
from spa_site import expected_paths, kind_of, links_of, path_of, spa_app

pytestmark = pytest.mark.timeout(120)


def _config(url: str, mode: str, **render: object) -> CrawlConfig:
    return CrawlConfig(
        base_url=url,
        render=Render(mode=mode, browser=chromium_path(), **render),  # type: ignore[arg-type]
        processes=1,
    )


async def _crawl(config: CrawlConfig, **keywords: object) -> tuple[AsyncCrawler, list[Page]]:
    pages: list[Page] = []
    crawler = AsyncCrawler(config.base_url, config=config, on_page=pages.append, **keywords)  # type: ignore[arg-type]
    async with crawler:
        await crawler.crawl()
    return crawler, pages


async def _chromium_reachable(start: str) -> set[str]:
    """The paths reachable from ``start`` through the links Chromium's DOM shows after network
    idle (``document.querySelectorAll('a[href]')``), the browser fetching by itself."""
    origin = "{0.scheme}://{0.netloc}".format(urlsplit(start))
    seen = {urlsplit(start).path}
    todo = [start]
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=chromium_path(), args=CHROMIUM_ARGS
        )
        context = await browser.new_context()

        async def visit(url: str) -> list[str]:
            page = await context.new_page()
            try:
                await page.goto(url, wait_until="networkidle")
                hrefs: list[str] = await page.evaluate(
                    "[...document.querySelectorAll('a[href]')].map(a => a.href)"
                )
                return hrefs
            finally:
                await page.close()

        while todo:
            batch, todo = todo[:8], todo[8:]
            for hrefs in await asyncio.gather(*map(visit, batch)):
                for href in hrefs:
                    parts = urlsplit(href)
                    if f"{parts.scheme}://{parts.netloc}" == origin and parts.path not in seen:
                        seen.add(parts.path)
                        todo.append(origin + parts.path)
        await browser.close()
    return seen


async def test_auto_finds_every_page_chromium_shows_and_renders_only_app_pages(
    serve: ServeFn,
) -> None:
    pages_n = 28
    server = serve(spa_app(pages_n))
    crawler, pages = await _crawl(_config(server.url + "/", "auto"))
    found = {urlsplit(page.url).path for page in pages}
    reference = serve(spa_app(pages_n))  # Chromium browses a twin on its own
    assert found == expected_paths(pages_n)
    assert await _chromium_reachable(reference.url + "/") == found
    by_path = {urlsplit(page.url).path: page for page in pages}
    for i in range(pages_n):
        page = by_path[path_of(i)]
        assert page.error is None, page
        assert page.rendered is (kind_of(i) in ("app", "item")), page.url
    app = by_path[path_of(5)]
    assert app.title == "App 5" and app.h1 == "Heading 5"
    assert app.js_links_added == len(links_of(5, pages_n)) and "links" in app.js_changed
    assert app.html_values["title"] == "Loading"
    # Static pages and full articles are not rendered: the blog's title stays the HTML's.
    assert by_path[path_of(3)].title == "Blog 3" and not by_path[path_of(3)].rendered
    rendered = crawler.stats.rendered
    assert rendered.total() == sum(kind_of(i) in ("app", "item") for i in range(pages_n))
    assert set(rendered) <= {"empty root", "template"} and rendered["template"] > 0
    assert f"rendered in Chromium: {rendered.total()} of {pages_n} pages" in summary(crawler.stats)
    traffic = server.traffic
    assert traffic.count("/api/page/app/5") == 1  # the browser's XHR, through sitecrawl
    assert traffic.count("/" + "app/5") == 1  # the document: fetched once, not again
    assert traffic.count("/api/secret") == 0  # robots.txt disallows it
    assert f"localhost:{server.port}" not in traffic.host_peak  # third party: blocked


async def test_always_records_what_javascript_changed(serve: ServeFn, tmp_path: Path) -> None:
    server = serve(spa_app(12))
    state = tmp_path / "spa.db"
    crawler, pages = await _crawl(_config(server.url + "/", "always"), state=state)
    by_path = {urlsplit(page.url).path: page for page in pages}
    assert len(by_path) == 12 and all(page.rendered for page in pages)
    assert all(page.render_ms and page.render_ms > 0 for page in pages)
    blog = by_path[path_of(3)]
    assert blog.title == "Blog 3 (by JavaScript)" and blog.js_changed == ["title"]
    assert blog.html_values == {"title": "Blog 3"} and blog.js_links_added == 0
    static = by_path[path_of(4)]
    assert static.js_changed == [] and static.js_links_added == 0
    item = by_path[path_of(6)]
    assert item.js_links == [server.url + path_of(j) for j in links_of(6, 12) if j != 0]
    assert item.js_changed == ["title", "h1", "links"]
    assert crawler.stats.rendered == {"always": 12}
    async with SqliteFrontier(state, create=False) as stored:
        back = {urlsplit(page.url).path: page async for page in stored.read_pages()}
    assert back[path_of(3)].js_changed == ["title"]
    assert back[path_of(3)].html_values == {"title": "Blog 3"}
    assert back[path_of(6)].js_links == item.js_links and back[path_of(6)].rendered
    assert back[path_of(6)].render_ms == item.render_ms


async def test_browser_requests_keep_the_per_host_cap_and_robots(serve: ServeFn) -> None:
    server = serve(spa_app(24))
    config = _config(server.url + "/", "always", tabs=4)
    config = CrawlConfig(
        base_url=config.base_url,
        render=config.render,
        processes=1,
        limits=Limits(max_concurrency=8),
        politeness=Politeness(per_host=2),
    )
    _, pages = await _crawl(config)
    assert len(pages) == 24 and all(page.rendered and page.error is None for page in pages)
    traffic = server.traffic
    api = [path for path in traffic.paths if path.startswith("/api/")]
    assert len(api) >= 4 * 12  # each app page asks four at once
    assert traffic.host_peak[f"127.0.0.1:{server.port}"] <= 2
    assert traffic.count("/api/secret") == 0
    assert f"localhost:{server.port}" not in traffic.host_peak


_SENDS_JS = """
(async () => {
  const found = await fetch('/api/search', {
    method: 'POST', headers: {'content-type': 'application/json'}, body: '{"q": "items"}',
  }).then(r => r.json());
  await fetch('/api/state', {method: 'PUT', body: 'seen'});
  const xhr = new XMLHttpRequest();
  xhr.open('POST', '/api/flaky');
  xhr.send('once');
  fetch('/api/private', {method: 'POST', body: 'x'}).catch(() => null);
  fetch('/api/state', {method: 'DELETE'}).catch(() => null);
  fetch('http://localhost:' + location.port + '/api/search', {method: 'POST', body: '{}'})
    .catch(() => null);
  navigator.sendBeacon('/api/beacon', 'b');
  document.getElementById('root').innerHTML =
    found.links.map(l => '<a href="' + l + '">' + l + '</a>').join(' ');
})();
"""


async def test_a_pages_own_post_and_put_go_through_robots_and_the_hosts_slot(
    serve: ServeFn,
) -> None:
    """A script's POST and PUT to its own host are sent by sitecrawl (robots.txt checked,
    through the host's slot, a POST never retried) with their bodies, and their answers
    reach the page; other methods, beacons and another host's POST are not sent."""
    from aiohttp import web

    sent: list[tuple[str, str, str | None, bytes, bool]] = []

    async def record(request: web.Request) -> None:
        body = await request.read()
        browser = "Sec-Fetch-Mode" in request.headers  # only Chromium sends it
        sent.append((request.method, request.path, request.content_type, body, browser))

    async def shell(request: web.Request) -> web.Response:
        text = f"<title>Shell</title><div id='root'></div><script>{_SENDS_JS}</script>"
        return web.Response(text=text, content_type="text/html")

    async def search(request: web.Request) -> web.Response:
        await record(request)
        return web.json_response({"links": ["/found/1", "/found/2"]})

    async def state(request: web.Request) -> web.Response:
        await record(request)
        return web.Response(text="ok")

    async def flaky(request: web.Request) -> web.Response:
        await record(request)
        return web.Response(status=503, text="busy")  # a GET would be retried

    async def found(request: web.Request) -> web.Response:
        return web.Response(text="<title>Found</title>", content_type="text/html")

    async def robots(request: web.Request) -> web.Response:
        return web.Response(text="User-agent: *\nDisallow: /api/private\n")

    app = web.Application()
    app.router.add_get("/", shell)
    app.router.add_get("/found/{n}", found)
    app.router.add_post("/api/search", search)
    app.router.add_route("*", "/api/state", state)
    app.router.add_post("/api/flaky", flaky)
    app.router.add_route("*", "/api/private", state)
    app.router.add_route("*", "/api/beacon", state)
    app.router.add_get("/robots.txt", robots)
    server = serve(app)
    config = _config(server.url + "/", "always")
    config = CrawlConfig(
        base_url=config.base_url,
        render=config.render,
        processes=1,
        politeness=Politeness(per_host=1, backoff=0.05),
    )
    _, pages = await _crawl(config)
    by_path = {urlsplit(page.url).path: page for page in pages}
    assert set(by_path) == {"/", "/found/1", "/found/2"}  # the POST's answer reached the page
    home = by_path["/"]
    assert home.error is None and home.js_links == [
        server.url + "/found/1",
        server.url + "/found/2",
    ]
    assert sorted(sent) == [
        ("POST", "/api/flaky", "text/plain", b"once", False),  # once: no retry
        ("POST", "/api/search", "application/json", b'{"q": "items"}', False),
        ("PUT", "/api/state", "text/plain", b"seen", False),
    ]
    traffic = server.traffic
    assert traffic.count("/api/private") == 0  # robots.txt disallows it
    assert f"localhost:{server.port}" not in traffic.host_peak  # another host's POST
    assert traffic.host_peak[f"127.0.0.1:{server.port}"] == 1


async def test_the_browser_restarts_every_n_renders(serve: ServeFn) -> None:
    server = serve(spa_app(6))
    crawler, pages = await _crawl(_config(server.url + "/", "always", restart_every=4))
    assert len(pages) == 6 and all(page.rendered and page.error is None for page in pages)
    renderer = crawler._renderer
    assert renderer is not None
    assert renderer.pool.starts == 2  # type: ignore[attr-defined]


async def test_a_render_that_times_out_keeps_the_raw_fields(serve: ServeFn) -> None:
    from aiohttp import web

    async def page(request: web.Request) -> web.Response:
        text = "<title>Raw</title><script src='/slow.js'></script><a href='/x'>x</a>"
        return web.Response(text=text, content_type="text/html")

    async def slow(request: web.Request) -> web.Response:
        await asyncio.sleep(2)
        return web.Response(text="", content_type="application/javascript")

    app = web.Application()
    app.router.add_get("/", page)
    app.router.add_get("/slow.js", slow)
    server = serve(app)
    config = _config(server.url + "/", "always", timeout=1.0)
    config = CrawlConfig(base_url=config.base_url, render=config.render, limits=Limits(max_depth=0))
    _, pages = await _crawl(config)
    (page,) = pages
    assert page.error_kind == "render" and "timed out" in (page.error or "")
    assert page.title == "Raw" and not page.rendered
    for _ in range(250):  # the script's request ends before the server stops (no open socket)
        if server.traffic.in_flight == 0:
            break
        await asyncio.sleep(0.02)


def test_cli_render_without_a_browser_is_a_one_line_error_before_any_request(
    serve: ServeFn,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server = serve(spa_app(4))
    monkeypatch.chdir(tmp_path)
    for missing in ("/nonexistent", str(tmp_path)):  # nothing there; not an executable
        code = main(["crawl", server.url + "/", "--render", "auto", "--browser", missing])
        captured = capsys.readouterr()
        assert code == 2
        err = captured.err
        assert err.count("\n") == 1 and "apt-get install chromium" in err and missing in err
        assert captured.out == ""
    assert server.traffic.paths == []  # not even robots.txt
    assert list(tmp_path.iterdir()) == []  # nor a state file


# The CLI in a Python where the render extra is not installed: ``import playwright`` fails as
# it does there (a None in sys.modules is how Python marks a module that cannot be imported).
_WITHOUT_PLAYWRIGHT = """
import sys
sys.modules["playwright"] = None
from sitecrawl._cli import main
code = main(sys.argv[1:])
try:
    import playwright
except ImportError:
    raise SystemExit(code)
raise SystemExit(99)  # playwright was importable after all: the test proves nothing
"""


def test_cli_render_without_playwright_is_a_one_line_error_before_any_request(
    serve: ServeFn, tmp_path: Path
) -> None:
    import subprocess
    import sys

    server = serve(spa_app(4))
    for mode in ("auto", "always"):
        result = subprocess.run(
            [
                sys.executable,
                "-c",
                _WITHOUT_PLAYWRIGHT,
                "crawl",
                server.url + "/",
                "--render",
                mode,
            ],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.returncode == 2, result
        err = result.stderr
        assert err.count("\n") == 1 and "pip install 'sitecrawl[render]'" in err, err
        assert result.stdout == ""
    assert server.traffic.paths == []  # not even robots.txt
    assert list(tmp_path.iterdir()) == []  # nor a state file


def test_a_resumed_crawl_renders_as_it_began_and_its_report_shows_js_changes(
    serve: ServeFn, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import json
    import sqlite3

    server = serve(spa_app(12))
    monkeypatch.chdir(tmp_path)
    url = server.url + "/"
    browser = chromium_path()
    first = ["crawl", url, "--render", "always", "--browser", browser, "--state", "s.db"]
    assert main([*first, "-n", "4", "-q"]) == 0
    # Resumed without --render: the crawl renders as it began to.
    assert main(["crawl", url, "--state", "s.db", "-n", "12", "-q"]) == 0
    assert main(["export", "s.db", "-o", "pages.jsonl", "-q"]) == 0
    pages = [json.loads(line) for line in Path("pages.jsonl").read_text().splitlines()]
    assert len(pages) == 12 and all(page["rendered"] for page in pages)
    assert main(["export", "s.db", "-t", "links", "-o", "links.jsonl", "-q"]) == 0
    links = [json.loads(line) for line in Path("links.jsonl").read_text().splitlines()]
    item = [
        (r["target_url"], r["source"])
        for r in links
        if r["source_url"] == url + "item/6" and r["kind"] == "a"
    ]
    assert item == [
        (url, "html"),  # the header's link home
        (url + "blog/7", "js"),
        (url + "app/9", "js"),
        (url, "html"),  # JavaScript's link home: the HTML had it
    ]
    conn = sqlite3.connect("s.db")  # the state file's links view says the same
    view = conn.execute(
        "SELECT l.target, l.origin FROM links AS l JOIN urls AS u ON u.id = l.source"
        " WHERE u.url = ? AND l.kind = 'a' ORDER BY l.position",
        (url + "item/6",),
    ).fetchall()
    conn.close()
    assert view == item
    assert main(["report", "s.db", "-o", "report.html", "-q"]) == 0
    report = Path("report.html").read_text(encoding="utf-8")
    assert "Changed by JavaScript" in report and "Blog 3 (by JavaScript)" in report


def test_a_redis_worker_renders_as_the_crawl_asks(tmp_path: Path) -> None:
    import json

    from redis_server import shared_server
    from servers import ServerThread
    from test_redis import finish, sitecrawl, wait_until

    site = ServerThread(spa_app(12)).start()
    try:
        server = shared_server()
        argv = ("--redis", server.url, "--crawl-id", "spa", "-q")
        seed = sitecrawl(
            "crawl", site.url, *argv, "--render", "always", "--render-tabs", "1", "-c", "1"
        )
        import redis

        client = redis.Redis(port=server.port)
        wait_until(lambda: bool(client.exists("sitecrawl:{spa}:config")), 20, "the seed")
        # The worker is given no --render: it renders because the crawl asks for it.
        joined = sitecrawl("worker", *argv, "-c", "2")
        finish([seed, joined], timeout=90)
        out = tmp_path / "pages.jsonl"
        assert main(["export", "--redis", server.url, "--crawl-id", "spa", "-o", str(out)]) == 0
        pages = [json.loads(line) for line in out.read_text().splitlines()]
        assert len(pages) == 12 and all(page["rendered"] for page in pages)
        assert site.traffic.count("/api/secret") == 0
        out = tmp_path / "links.jsonl"
        export = ["export", "--redis", server.url, "--crawl-id", "spa", "-t", "links"]
        assert main([*export, "-o", str(out), "-q"]) == 0
        links = [json.loads(line) for line in out.read_text().splitlines()]
        home = site.url + "/"
        item = [
            (r["target_url"], r["source"])
            for r in links
            if r["source_url"] == home + "item/6" and r["kind"] == "a"
        ]
        assert item == [
            (home, "html"),
            (home + "blog/7", "js"),
            (home + "app/9", "js"),
            (home, "html"),
        ]
    finally:
        site.stop()


def _kill_chromium() -> int:
    """SIGKILL every Chromium process under this one; how many there were."""
    import os
    import signal

    parents: dict[int, int] = {}
    names: dict[int, str] = {}
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            text = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        close = text.rfind(")")
        parents[int(entry)] = int(text[close + 2 :].split()[1])
        names[int(entry)] = text[text.find("(") + 1 : close]

    def under_us(pid: int) -> bool:
        while pid > 1:
            pid = parents.get(pid, 0)
            if pid == os.getpid():
                return True
        return False

    killed = [pid for pid, name in names.items() if "chrom" in name and under_us(pid)]
    for pid in killed:
        os.kill(pid, signal.SIGKILL)
    return len(killed)


async def test_a_crashed_browser_is_restarted_and_its_pages_rendered(serve: ServeFn) -> None:
    server = serve(spa_app(10))
    killed: list[int] = []

    def crash(page: Page) -> None:
        if len(killed) == 0 and page.rendered:
            killed.append(_kill_chromium())

    config = _config(server.url + "/", "always")
    pages: list[Page] = []

    def on_page(page: Page) -> None:
        pages.append(page)
        crash(page)

    crawler = AsyncCrawler(config.base_url, config=config, on_page=on_page)
    async with crawler:
        await crawler.crawl()
    assert killed and killed[0] > 0
    assert len(pages) == 10
    assert all(page.rendered and page.error is None for page in pages), [
        (page.url, page.error) for page in pages if page.error
    ]
    renderer = crawler._renderer
    assert renderer is not None and renderer.pool.starts == 2  # type: ignore[attr-defined]


async def test_a_remote_browser_over_cdp_renders(serve: ServeFn, tmp_path: Path) -> None:
    import re
    import subprocess
    import threading

    server = serve(spa_app(6))
    browser = subprocess.Popen(
        [
            chromium_path(),
            "--headless=new",
            "--remote-debugging-port=0",
            f"--user-data-dir={tmp_path / 'profile'}",
            *CHROMIUM_ARGS,
            "about:blank",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert browser.stderr is not None
    reader = threading.Thread(target=browser.stderr.read, daemon=True)
    try:
        endpoint = None
        while endpoint is None:
            line = await asyncio.to_thread(browser.stderr.readline)
            assert line, "Chromium ended before it listened"
            if found := re.search(r"DevTools listening on (ws://\S+)", line):
                endpoint = found[1]
        reader.start()  # Chromium never blocks on a full stderr pipe
        config = CrawlConfig(
            base_url=server.url + "/", render=Render(mode="always", browser=endpoint, tabs=2)
        )
        _, pages = await _crawl(config)
        assert len(pages) == 6 and all(page.rendered and page.error is None for page in pages)
        assert {page.title for page in pages} >= {"App 1", "Blog 3 (by JavaScript)"}
    finally:
        browser.kill()
        browser.wait()
        if reader.is_alive():
            reader.join(10)
        browser.stderr.close()
