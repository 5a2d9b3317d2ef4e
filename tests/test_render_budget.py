"""Rendering under hostile or changing pages, in real headless Chromium: the render budget
holds whatever a page's scripts do (a script that never yields, a page that never goes idle),
a cut-off render says so, ``render_ms`` is the render's own time, a re-crawl renders again
and hashes the rendered DOM, and requests robots.txt blocked are listed per page."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from aiohttp import web

from browser import chromium_path
from conftest import ServeFn
from servers import ServerThread, checkout_env
from sitecrawl import AsyncCrawler, CrawlConfig, Limits, Page, Render
from sitecrawl._cli import main
from spa_site import spa_app

pytestmark = pytest.mark.timeout(120)

#: A page whose script never yields once the page has loaded.
LOOP = (
    "<title>Loop</title><p>a page that hangs</p>"
    "<script>addEventListener('load', () => setTimeout(() => { while (true) {} }, 0));</script>"
)
#: A page that polls for ever (never network-idle) and writes its link once data came.
POLL = """<title>Poll</title><div id="root"></div><script>
setInterval(() => fetch('/api/poll').then(r => r.text()).then(t => {
  document.getElementById('root').innerHTML = '<a href="/' + t + '">' + t + '</a>';
}), 50);
</script>"""
#: A shell whose content comes from ``/api/data`` (title and links).
SHELL = """<title>Loading</title><div id="root"></div><script>
fetch('/api/data' + location.pathname).then(r => r.json()).then(d => {
  document.title = d.title;
  document.getElementById('root').innerHTML =
    d.links.map(l => '<a href="' + l + '">' + l + '</a>').join(' ');
});
</script>"""


def _html(text: str, **headers: str) -> web.Response:
    return web.Response(text=text, content_type="text/html", headers=headers)


def _app(pages: dict[str, str], data: dict[str, object] | None = None) -> web.Application:
    """``path -> HTML``; ``/api/data/<path>`` answers ``data[path]`` as JSON; ``/api/poll``
    answers ``polled``. Every page has an ETag and answers ``304`` to it."""

    async def page(request: web.Request) -> web.Response:
        text = pages.get(request.path)
        if text is None:
            raise web.HTTPNotFound()
        etag = f'"{hash(text) & 0xFFFFFFFF:x}"'
        if request.headers.get("If-None-Match") == etag:
            return web.Response(status=304, headers={"ETag": etag})
        return _html(text, ETag=etag)

    async def api(request: web.Request) -> web.Response:
        return web.json_response((data or {})["/" + request.match_info["path"]])

    async def poll(request: web.Request) -> web.Response:
        return web.Response(text="polled")

    app = web.Application()
    app.router.add_get("/api/data/{path:.*}", api)
    app.router.add_get("/api/poll", poll)
    app.router.add_get("/{path:.*}", page)
    return app


def _config(url: str, **render: object) -> CrawlConfig:
    return CrawlConfig(
        base_url=url,
        render=Render(mode="always", browser=chromium_path(), **render),  # type: ignore[arg-type]
        processes=1,
        limits=Limits(max_concurrency=8),
    )


async def _crawl(config: CrawlConfig) -> tuple[AsyncCrawler, dict[str, Page]]:
    pages: list[Page] = []
    crawler = AsyncCrawler(config.base_url, config=config, on_page=pages.append)
    async with crawler:
        async with asyncio.timeout(60):  # before the fix: for ever
            await crawler.crawl()
    return crawler, {urlsplit(page.url).path: page for page in pages}


async def test_a_page_whose_script_never_yields_fails_its_render_and_the_crawl_goes_on(
    serve: ServeFn,
) -> None:
    """After its load event or before it (no load event ever comes): the render fails in
    its budget, the page keeps its raw HTML's fields, the next render on the tab works."""
    home = '<title>Home</title><a href="/loop">loop</a> <a href="/early">early</a>'
    early = "<title>Early</title><script>while (true) {}</script>"
    after = '<title>After</title><a href="/">home</a>'
    site = {"/": home + ' <a href="/after">after</a>', "/loop": LOOP, "/early": early}
    server = serve(_app({**site, "/after": after}))
    _, pages = await _crawl(_config(server.url + "/", timeout=2.0, tabs=1))
    assert set(pages) == {"/", "/loop", "/early", "/after"}
    loop = pages["/loop"]
    assert loop.error_kind == "render" and "kept the browser busy" in (loop.error or "")
    assert loop.title == "Loop" and not loop.rendered  # the raw HTML's fields
    early_page = pages["/early"]
    assert early_page.error_kind == "render" and "no load event" in (early_page.error or "")
    assert early_page.title == "Early"
    assert pages["/after"].rendered and pages["/after"].error is None  # the tab works


def test_one_sigint_ends_a_crawl_whose_page_script_never_yields(tmp_path: Path) -> None:
    site = ServerThread(_app({"/": LOOP})).start()
    try:
        argv = [sys.executable, "-m", "sitecrawl", "crawl", site.url + "/", "--no-state"]
        argv += ["--render", "always", "--browser", chromium_path(), "--render-timeout", "30"]
        process = subprocess.Popen(
            [*argv, "-o", "pages.jsonl"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=checkout_env(),
            cwd=tmp_path,
        )
        try:
            for _ in range(600):  # the page was fetched: its render is starting
                if site.traffic.count("/") or process.poll() is not None:
                    break
                time.sleep(0.05)
            time.sleep(3)  # the script loops
            assert process.poll() is None
            process.send_signal(signal.SIGINT)
            sent = time.monotonic()
            _, err = process.communicate(timeout=60)
            took = time.monotonic() - sent
        finally:
            process.kill()
            process.wait()
        assert process.returncode == 130, err
        assert took < 15, took  # not the 30 s render budget: one signal ends the crawl
        assert "Traceback" not in err
        (record,) = _read(tmp_path / "pages.jsonl")
        assert record["error_kind"] == "render" and record["title"] == "Loop"
    finally:
        site.stop()


async def test_a_stop_cuts_renders_in_flight_short_and_begins_none(serve: ServeFn) -> None:
    """Four pages that never go idle wait for one tab (budget 30 s); stopped once the first
    render has begun, the crawl ends at once: that render read as it is, the others not
    made."""
    links = " ".join(f'<a href="/p/{n}">{n}</a>' for n in range(4))
    site = {"/": f"<title>Home</title>{links}", **{f"/p/{n}": POLL for n in range(4)}}
    server = serve(_app(site))
    config = _config(server.url + "/", tabs=1, timeout=30.0)
    pages: list[Page] = []
    crawler = AsyncCrawler(config.base_url, config=config, on_page=pages.append)
    async with crawler:
        crawl = asyncio.create_task(crawler.crawl())
        while server.traffic.count("/api/poll") == 0:  # the first page's render has begun
            await asyncio.sleep(0.02)
        crawler.stop()
        stopped = time.monotonic()
        async with asyncio.timeout(60):
            await crawl
        took = time.monotonic() - stopped
    assert took < 10, took  # not the 30 s budget of each render
    polls = [page for page in pages if "/p/" in page.url]
    cut = [page for page in polls if page.rendered]
    assert len(cut) == 1 and cut[0].render_complete is False and cut[0].error is None
    assert len(polls) == 4 and all(
        page.error == "not rendered: the crawl was stopped" and page.error_kind == "render"
        for page in polls
        if not page.rendered
    )


def test_a_render_cut_off_at_the_timeout_is_marked_counted_and_reported(
    serve: ServeFn, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = '<title>Home</title><a href="/poll">poll</a>'
    server = serve(_app({"/": home, "/poll": POLL, "/polled": "<title>Polled</title>"}))
    url = server.url + "/"
    state = str(tmp_path / "s.db")
    argv = ["crawl", url, "--render", "always", "--browser", chromium_path()]
    out = tmp_path / "pages.jsonl"
    assert main([*argv, "--render-timeout", "1.5", "--state", state, "-o", str(out)]) == 0
    assert "cut off at the render timeout (maybe partial): 1" in capsys.readouterr().err
    pages = {urlsplit(r["url"]).path: r for r in _read(out)}
    poll = pages["/poll"]
    assert poll["rendered"] and poll["error"] is None and poll["render_complete"] is False
    assert poll["js_links"] == [url + "polled"]  # what was there at the deadline
    assert pages["/"]["render_complete"] is True and pages["/polled"]["render_complete"]
    report = tmp_path / "r.html"
    assert main(["report", state, "-o", str(report), "-q"]) == 0
    text = report.read_text(encoding="utf-8")
    assert "Render cut off or blocked" in text and url + "poll" in text


async def test_render_ms_is_the_render_alone_not_the_wait_for_a_tab(serve: ServeFn) -> None:
    """Eight pages wait for one tab: their renders run one after another, so their own
    times add up to less than the crawl took (with the wait counted, to several times it);
    the wait is apart."""
    slow = (
        "<title>Slow</title><script>setTimeout(() => { document.title = 'Done'; }, 400);</script>"
    )
    links = " ".join(f'<a href="/p/{n}">{n}</a>' for n in range(8))
    site = {"/": f"<title>Home</title>{links}", **{f"/p/{n}": slow for n in range(8)}}
    server = serve(_app(site))
    started = time.monotonic()
    _, pages = await _crawl(_config(server.url + "/", tabs=1))
    elapsed_ms = (time.monotonic() - started) * 1000
    assert len(pages) == 9 and all(page.rendered for page in pages.values())
    assert all(page.title == "Done" for path, page in pages.items() if path != "/")
    total = sum(page.render_ms or 0 for page in pages.values())
    assert 9 * 400 < total < elapsed_ms
    waits = sorted(page.render_wait_ms or 0 for page in pages.values())
    assert waits[-1] > 5 * 400  # the last page waited for the others' renders


def test_a_recrawl_renders_again_and_hashes_the_rendered_dom(
    serve: ServeFn, tmp_path: Path
) -> None:
    """The shell answers 304 to the second crawl's validators: the pages are rendered again
    all the same, the edited page's hash changes and the new page is found."""
    data: dict[str, object] = {
        "/": {"title": "Home", "links": ["/a"]},
        "/a": {"title": "A", "links": ["/"]},
        "/new": {"title": "New", "links": []},
    }
    server = serve(_app({"/": SHELL, "/a": SHELL, "/new": SHELL}, data))
    state = tmp_path / "s.db"
    argv = ["crawl", server.url + "/", "--render", "always", "--browser", chromium_path()]
    argv += ["--state", str(state), "-q"]
    assert main([*argv, "-o", str(tmp_path / "one.jsonl")]) == 0
    one = {urlsplit(r["url"]).path: r for r in _read(tmp_path / "one.jsonl")}
    assert set(one) == {"/", "/a"} and one["/a"]["title"] == "A"
    assert one["/"]["html_hash"] == one["/a"]["html_hash"]  # one shell ...
    assert one["/"]["body_hash"] != one["/a"]["body_hash"]  # ... two rendered pages
    assert one["/a"]["dom_bytes"] > one["/a"]["size_bytes"] == len(SHELL)
    data["/a"] = {"title": "A edited", "links": ["/", "/new"]}
    assert main([*argv, "-o", str(tmp_path / "two.jsonl")]) == 0
    two = {urlsplit(r["url"]).path: r for r in _read(tmp_path / "two.jsonl")}
    assert set(two) == {"/", "/a", "/new"}
    assert not any(r["revalidated"] for r in two.values())
    assert two["/a"]["title"] == "A edited" and two["/a"]["html_hash"] == one["/a"]["html_hash"]
    assert two["/a"]["body_hash"] != one["/a"]["body_hash"]
    assert two["/"]["body_hash"] == one["/"]["body_hash"]
    changes = tmp_path / "changes.jsonl"
    assert main(["diff", str(state), "-o", str(changes), "-q"]) == 0
    rows = {(urlsplit(r["url"]).path, r["kind"]) for r in _read(changes)}
    assert ("/a", "body") in rows and ("/new", "added") in rows
    assert not any(path == "/" for path, _ in rows)


def _read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


async def test_requests_robots_txt_blocked_while_rendering_are_listed_per_page(
    serve: ServeFn,
) -> None:
    server = serve(spa_app(4))
    _, pages = await _crawl(_config(server.url + "/"))
    assert len(pages) == 4  # every page's script asks /api/secret, disallowed
    assert all(p.blocked_resources == [server.url + "/api/secret"] for p in pages.values())
    assert server.traffic.count("/api/secret") == 0


def test_kill_tree_kills_the_marked_process_and_its_descendants() -> None:
    """The last resort for a browser that does not close: its process (found by the switch
    on its command line) and every process under it (renderers), nothing else."""
    from sitecrawl.render._procs import kill_tree

    child = (
        "import subprocess, time; print(subprocess.Popen(['sleep', '60']).pid, flush=True);"
        " time.sleep(60)"
    )
    marker = f"--sitecrawl-pool=test-{time.monotonic_ns()}"
    parent = subprocess.Popen(
        [sys.executable, "-c", child, marker], stdout=subprocess.PIPE, text=True
    )
    bystander = subprocess.Popen(["sleep", "60"])
    try:
        assert parent.stdout is not None
        grandchild = int(parent.stdout.readline())
        assert kill_tree(marker) == 2
        assert parent.wait(10) == -signal.SIGKILL
        for _ in range(200):  # the grandchild, reparented, is reaped by init
            if not Path(f"/proc/{grandchild}").exists() or "Z" in _state(grandchild):
                break
            time.sleep(0.05)
        else:
            raise AssertionError("the grandchild lives")
        assert bystander.poll() is None
    finally:
        for process in (parent, bystander):
            process.kill()
            process.wait()
        if parent.stdout is not None:
            parent.stdout.close()


def _state(pid: int) -> str:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return "Z"
    return text[text.rfind(")") + 2]
