"""Hostile pages: markup that would take the HTML parser minutes (the markup cost scan and the
parser processes' deadline), with real servers and real parser processes."""

from __future__ import annotations

import asyncio
import random
import subprocess
import sys
import time
import zlib

import brotli
import pytest
from aiohttp import web

try:
    from compression import zstd  # type: ignore[import-not-found]
except ImportError:  # Python < 3.14
    from backports import zstd

from conftest import ServeFn
from servers import checkout_env, html
from sitecrawl import crawl_site_async
from sitecrawl.parse import Extraction, Parser
from sitecrawl.parse._markup import BUDGET, markup_cost_py, markup_reason
from speedups import require_speedups


def _compiled_cost(body: bytes, budget: int) -> tuple[int, int, int, int]:
    """The compiled scan's answer (the calling test skips when it was not built, and fails
    under ``SITECRAWL_REQUIRE_SPEEDUPS=1``)."""
    require_speedups("sitecrawl.parse._scan")
    from sitecrawl.parse._scan import markup_cost

    return markup_cost(body, budget)


DEEP = "<div>" * 200_000  # 1.1 MB; Lexbor alone: about two minutes


def _bomb_site(pages: int) -> web.Application:
    async def root(request: web.Request) -> web.Response:
        links = "".join(f'<a href="/p{i}">p{i}</a>' for i in range(pages))
        return html(f'<a href="/bomb">bomb</a>{links}', title="root")

    async def page(request: web.Request) -> web.Response:
        return html(f"<h1>{request.match_info['n']}</h1>", title="page")

    async def bomb(request: web.Request) -> web.Response:
        return html(DEEP, title="bomb")

    app = web.Application()
    app.router.add_get("/", root)
    app.router.add_get("/bomb", bomb)
    app.router.add_get("/p{n}", page)
    return app


@pytest.mark.parametrize("processes", [1, 2])
async def test_a_deeply_nested_page_does_not_stall_the_crawl(
    serve: ServeFn, processes: int
) -> None:
    server = serve(_bomb_site(16))
    started = time.monotonic()
    pages = await crawl_site_async(server.url, max_concurrency=4, processes=processes)
    assert time.monotonic() - started < 20  # the parse alone would take minutes
    bomb = pages[f"127.0.0.1:{server.port}/bomb"]
    assert bomb["status"] == 200 and bomb["title"] is None and bomb["error_kind"] == "parse"
    assert bomb["error"] == "markup too costly to parse: elements nested 14,143+ deep"
    normal = [p for p in pages.values() if p["title"] == "page"]
    assert len(normal) == 16 and all(p["error"] is None for p in normal)


#: Under the budget, made slow by an extraction rule: the deadline's test page. The slowest
#: page under the budget parses in ~0.13 s on a quiet machine, so the markup alone cannot
#: outlast a deadline that a small page's parse on a busy machine never reaches; the rule
#: matches "div div" 6,000 deep (~18 million ancestor checks, about 3 s quiet).
SLOW = "<div>" * 6_000
SLOW_RULES = {"nested": "all:css:div div"}
DEADLINE = 0.5


async def test_a_parser_process_past_its_deadline_is_replaced() -> None:
    assert markup_reason(SLOW.encode()) is None
    extraction = Extraction.from_specs(SLOW_RULES)
    async with Parser(2, deadline=DEADLINE, extraction=extraction) as parser:
        [child] = parser._children
        while not child.ready:
            await asyncio.sleep(0.01)
        slow = asyncio.ensure_future(parser.parse(SLOW.encode(), None, "http://site.test/slow"))
        await asyncio.sleep(0)
        behind = [
            asyncio.ensure_future(parser.parse(b"<h1>ok</h1>", None, f"http://site.test/{i}"))
            for i in range(3)
        ]
        with pytest.raises(Exception, match=r"parse took longer than 0\.5 s") as caught:
            await slow
        assert getattr(caught.value, "url", None) == "http://site.test/slow"
        assert [(await page).h1 for page in behind] == ["ok"] * 3  # by the next child (rules)
        assert await asyncio.wait_for(child.process.wait(), 10) == -9  # killed
        for _ in range(500):  # a new child takes its place
            if parser._children and parser._children[0].ready:
                break
            await asyncio.sleep(0.01)
        [new] = parser._children
        assert new is not child
        data = await parser.parse(b"<h1>again</h1>", None, "http://site.test/again")
        assert data.h1 == "again" and not new.pending


async def test_the_deadline_counts_from_when_the_child_began_the_page() -> None:
    """Quick pages one after another for longer than the deadline are never killed (each
    answer moves the deadline on); a slow page behind them still is, from when it began."""
    extraction = Extraction.from_specs(SLOW_RULES)
    async with Parser(2, deadline=DEADLINE, extraction=extraction) as parser:
        [child] = parser._children
        while not child.ready:
            await asyncio.sleep(0.01)
        started = time.monotonic()
        while time.monotonic() - started < 3 * DEADLINE:  # the first timer fires, re-arms
            data = await parser.parse(b"<h1>ok</h1>", None, "http://site.test/quick")
            assert data.h1 == "ok"
            await asyncio.sleep(DEADLINE / 10)
        assert not child.gone and child.process.returncode is None
        slow = asyncio.ensure_future(parser.parse(SLOW.encode(), None, "http://site.test/slow"))
        with pytest.raises(Exception, match=r"parse took longer than 0\.5 s"):
            await asyncio.wait_for(slow, 10 * DEADLINE)
        assert await asyncio.wait_for(child.process.wait(), 10) == -9


_KILLED_WHILE_WRITING = f"""
import asyncio
from sitecrawl.parse._extraction import Extraction
from sitecrawl.parse._pool import Parser

async def main():
    extraction = Extraction.from_specs({SLOW_RULES!r})
    async with Parser(2, deadline={DEADLINE}, extraction=extraction) as parser:
        [child] = parser._children
        while not child.ready:
            await asyncio.sleep(0.01)
        slow = asyncio.ensure_future(parser.parse(b"{SLOW}", None, "http://site.test/s"))
        await asyncio.sleep(0)
        big = b"<h1>big</h1>" + b" " * (8 << 20)  # past the pipe's buffer: drain waits
        behind = asyncio.ensure_future(parser.parse(big, None, "http://site.test/big"))
        try:
            await slow
        except Exception as exc:
            print(exc)
        print((await behind).h1)

asyncio.run(main())
"""


def test_a_page_being_written_to_a_killed_parser_process_leaves_no_unread_error() -> None:
    """A big body still being written to the child when the deadline kills it: the page is
    parsed again (by the next child: there are rules), and no future is left holding an
    error nobody reads (asyncio would print "Future exception was never retrieved")."""
    done = subprocess.run(
        [sys.executable, "-c", _KILLED_WHILE_WRITING],
        env=checkout_env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert done.stdout.split("\n")[:2] == ["parse took longer than 0.5 s", "big"]
    assert "never retrieved" not in done.stderr, done.stderr


BOMBS = {
    "deep divs": "<div>" * 20_000,
    "deep lists": "<ul><li>" * 10_000,
    "attributes": "<div " + " ".join(f"a{i}" for i in range(20_000)) + ">",
    "options": "<select>" + "<option>x</option>" * 10_000,
    "html in svg": "<svg>" + "<div/>" * 20_000,
    "hidden by a bogus quote": '<div a"b>' + "<div>" * 20_000,
    "after a --!> comment": "<!-- --!>" + "<div>" * 20_000,
    "after </body>": "<div>" * 9_000 + "</body>" + "<div></div>" * 9_000,
    "deep a in svg": "<svg>" + "<g a=b/>" * 20_000,
}
FINE = {
    "unclosed paragraphs": "<p>one<b>b</b>" * 20_000,
    "unclosed list items": "<ul>" + "<li>item <a href=x>x</a>" * 20_000 + "</ul>",
    "table without end tags": "<table>" + "<tr><td>a<td>b" * 10_000,
    "svg paths": "<svg>" + "<path d='M0 0'/>" * 20_000 + "</svg>",
    "a long script": "<script>" + "if (a<b) { x = '<div>'; }\n" * 20_000 + "</script>",
    "comments": "<!-- <div> -->" * 20_000,
    "a big select": "<select>" + "<option>x" * 4_000 + "</select>",
    "deep but short": "<div>" * 1_000 + "text" + "</div>" * 1_000,
}


@pytest.mark.parametrize("name", BOMBS)
def test_markup_that_would_cost_minutes_is_refused(name: str) -> None:
    body = f"<html><body>{BOMBS[name]}</body></html>".encode()
    assert markup_reason(body) is not None
    assert markup_cost_py(body) == _compiled_cost(body, BUDGET)


@pytest.mark.parametrize("name", FINE)
def test_big_ordinary_markup_is_parsed(name: str) -> None:
    body = f"<html><body>{FINE[name]}</body></html>".encode()
    found = markup_cost_py(body)
    assert found.cost < BUDGET // 2, found
    assert tuple(found) == _compiled_cost(body, BUDGET)


_ATOM_TEXT = (
    "< > / = ' \" a \t <div> </div> <p> </p> <svg> </svg> <path/> <g\tx=1/> <select> <option> "
    "</option> <!-- --> --!> <![CDATA[ ]]> <script> </script> </SCRIPT\t <title> <td> <tr> "
    "<table> </table> <li> <ul> </ul> <br/> </br> <foreignObject> <math> <mi> <b> </b> <?x> "
    "</\tx> </> <!x> <plaintext> <a\thref=x/> <textarea> <body> </body> <button> <h1> />"
)
ATOMS = _ATOM_TEXT.split(" ")


def test_the_compiled_scan_and_its_python_twin_agree() -> None:
    rng = random.Random(7)
    for _ in range(5000):
        body = "".join(rng.choice(ATOMS) for _ in range(rng.randrange(1, 80))).encode()
        for budget in (BUDGET, 30):
            assert tuple(markup_cost_py(body, budget)) == _compiled_cost(body, budget), body


def _compressed(encoding: str, mib: int, fill: bytes = b" ") -> bytes:
    """``mib`` MiB of ``fill`` after a little HTML, compressed as ``encoding``."""
    chunk = fill * (1 << 20)
    head = b"<!doctype html><title>bomb</title><p>"
    if encoding == "gzip":
        gz = zlib.compressobj(6, zlib.DEFLATED, 31)
        return gz.compress(head) + b"".join(gz.compress(chunk) for _ in range(mib)) + gz.flush()
    if encoding == "br":
        br = brotli.Compressor(quality=1)
        return br.process(head) + b"".join(br.process(chunk) for _ in range(mib)) + br.finish()
    zs = zstd.ZstdCompressor()
    return zs.compress(head) + b"".join(zs.compress(chunk) for _ in range(mib)) + zs.flush()


_PEAK_RSS = (
    "import resource, subprocess, sys; subprocess.run(sys.argv[1:], check=True); "
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)"
)


def _crawl_peak_mib(url: str, *options: str) -> int:
    """Peak RSS (MiB) of a ``sitecrawl crawl`` in a process of its own."""
    crawl = [sys.executable, "-m", "sitecrawl", "crawl", url, "--no-state", "-q", *options]
    done = subprocess.run(
        [sys.executable, "-c", _PEAK_RSS, *crawl],
        env=checkout_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return int(done.stdout.split()[-1])


@pytest.mark.parametrize("fill", [b" ", b"\0"], ids=["spaces", "nul-bytes"])
def test_compression_bombs_cost_no_more_than_the_body_cap(serve: ServeFn, fill: bytes) -> None:
    """24 bodies of 48 MiB each (gzip, br and zstd, 6-200 KB on the wire), 8 at a time, cut
    at 4 MiB: the crawl's peak is what it holds, about concurrency x cap, never the
    decoded sizes (8 x 48 MiB). NUL bytes too (Lexbor spends ~18 bytes on each)."""
    bombs = {encoding: _compressed(encoding, 48, fill) for encoding in ("gzip", "br", "zstd")}
    links = "".join(f'<a href="/{e}/{i}">x</a>' for e in bombs for i in range(8))

    async def root(request: web.Request) -> web.Response:
        return html(links)

    async def bomb(request: web.Request) -> web.Response:
        encoding = request.match_info["encoding"]
        headers = {"Content-Type": "text/html", "Content-Encoding": encoding}
        return web.Response(body=bombs[encoding], headers=headers)

    async def quiet(request: web.Request) -> web.Response:
        return html("<p>nothing</p>")

    app = web.Application()
    app.router.add_get("/", root)
    app.router.add_get("/{encoding}/{n}", bomb)
    server = serve(app)
    options = ("-c", "8", "-p", "1", "--no-sitemaps", "--max-bytes", str(4 << 20))
    quiet_app = web.Application()
    quiet_app.router.add_get("/", quiet)
    baseline = _crawl_peak_mib(serve(quiet_app).url, *options)
    peak = _crawl_peak_mib(server.url, *options)
    assert server.traffic.pages.count("/gzip/0") == 1
    assert peak - baseline < 8 * 4 * 2 + 24, (baseline, peak)
