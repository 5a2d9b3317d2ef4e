"""A user's extraction rules cannot hang a crawl (issue 30, items 1, 19, 20): rules run only in
parser processes, under their deadline, whatever ``--processes`` says; a stop signal ends the
crawl promptly while a rule runs; rules of any size reach the parser processes; a JSON-LD block
nested 100,000 deep fails the rule, not the page. Real servers and real processes."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from aiohttp import web

from conftest import ServeFn
from servers import checkout_env, html
from sitecrawl import extract_page_data
from sitecrawl.parse import Extraction, Parser
from sitecrawl.sinks import TEMP_MARK

#: The issue's rule: on a run of 40 word characters not followed by ``;``, Python's ``re``
#: backtracks through 2**40 ways of splitting the run (hours at 100 % CPU).
BACKTRACKING = r"(\w+\s?)+;$"
RUN = "a" * 40
#: A run the rule takes about half a minute on (the tests in this process: were the rule
#: run on the event loop, they would fail, not hang the test run).
SLOW_BODY = f"<p>{'a' * 28}</p>".encode()


def _site(pages: int) -> web.Application:
    async def root(request: web.Request) -> web.Response:
        links = "".join(f'<a href="/p{i}">p{i}</a> ' for i in range(pages))
        return html(links + '<a href="/fine">fine</a>', title="root")

    async def page(request: web.Request) -> web.Response:
        return html(f"<h1>p{request.match_info['n']}</h1><p>{RUN}</p>", title="slow")

    async def fine(request: web.Request) -> web.Response:
        return html("<h1>fine</h1><p>short words;</p>", title="fine")

    app = web.Application()
    app.router.add_get("/", root)
    app.router.add_get("/fine", fine)
    app.router.add_get("/p{n}", page)
    return app


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_ends_a_crawl_whose_rule_backtracks_for_hours(
    serve: ServeFn, tmp_path: Path, signum: int, code: int
) -> None:
    """The issue's command with ``-p 1`` (the event loop used to run the rule itself, and
    then ignored Ctrl-C and SIGTERM): the crawl ends within seconds of the signal, with its
    output whole and the pages whose rule was cut short recorded with ``error_kind`` parse."""
    site = serve(_site(10))
    argv = [sys.executable, "-m", "sitecrawl", "crawl", site.url, "--no-state", "-q"]
    argv += ["-n", "10", "-c", "2", "-p", "1", "-x", f"r=regex:{BACKTRACKING}"]
    argv += ["-o", "redos.jsonl"]
    process = subprocess.Popen(
        argv, cwd=tmp_path, env=checkout_env(), stderr=subprocess.PIPE, text=True
    )
    try:
        started = time.monotonic()
        while len([p for p in site.traffic.pages if p.startswith("/p")]) < 2:
            assert time.monotonic() - started < 30, "no page was fetched"
            assert process.poll() is None, process.stderr and process.stderr.read()
            time.sleep(0.05)
        time.sleep(0.5)  # the rule is running
        process.send_signal(signum)
        signalled = time.monotonic()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            pytest.fail("the crawl did not end after the signal")
        took = time.monotonic() - signalled
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.stderr is not None
    err = process.stderr.read()
    process.stderr.close()
    assert process.returncode == code, err
    assert "Traceback" not in err
    assert took < 8, took  # the stop deadline (1 s), a process start and the outputs
    records = [json.loads(line) for line in (tmp_path / "redos.jsonl").read_text().splitlines()]
    slow = [r for r in records if r["title"] is None and "/p" in r["url"]]
    assert slow and all(r["error_kind"] == "parse" and r["error"] for r in slow), records
    assert [name for name in os.listdir(tmp_path) if TEMP_MARK in name] == []


def _children(pid: int) -> list[int]:
    with open(f"/proc/{pid}/task/{pid}/children") as listing:
        return [int(child) for child in listing.read().split()]


def _gone(pid: int) -> bool:
    """True when ``pid`` has ended (a zombie has ended: it waits for init to reap it)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rpartition(")")[2].split()[0] == "Z"
    except FileNotFoundError:
        return True


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_crawler_killed_outright_takes_its_parser_process_with_it(
    serve: ServeFn, tmp_path: Path
) -> None:
    """``kill -9`` of a crawler whose parser process is running a rule that never ends: the
    parser process used to run on at 100 % CPU for good (nothing reads its closed stdin)."""
    site = serve(_site(4))
    argv = [sys.executable, "-m", "sitecrawl", "crawl", site.url, "--no-state", "-q"]
    argv += ["-c", "1", "-p", "2", "-x", f"r=regex:{BACKTRACKING}", "-o", "out.jsonl"]
    process = subprocess.Popen(argv, cwd=tmp_path, env=checkout_env())
    children: list[int] = []
    try:
        started = time.monotonic()
        while not any(p.startswith("/p") for p in site.traffic.pages):
            assert time.monotonic() - started < 30, "no page was fetched"
            time.sleep(0.05)
        children = _children(process.pid)
        assert children
        time.sleep(0.5)  # the rule is running
        process.kill()
        process.wait()
        deadline = time.monotonic() + 5
        while not all(_gone(child) for child in children) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert all(_gone(child) for child in children)
    finally:
        for pid in [process.pid, *children]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        process.wait()


_CRAWL = """
import asyncio, json, sys
from sitecrawl import crawl_site_async

rules = {{"r": {{"spec": "regex:{rule}", "when": "/p"}}, "h": "css:h1"}}
pages = asyncio.run(crawl_site_async(sys.argv[1], processes=1, max_concurrency=2, extract=rules))
print(json.dumps(pages))
"""


def test_a_page_whose_rule_passes_the_deadline_is_a_record_and_the_crawl_goes_on(
    serve: ServeFn,
) -> None:
    """With ``processes=1`` (the library's default) the rules still run in a parser
    process: the page whose rule passes the deadline is a record with ``error_kind`` parse
    and the other pages get their values. (In a subprocess: before, this hung for hours.)"""
    site = serve(_site(1))
    script = _CRAWL.format(rule=BACKTRACKING.replace("\\", "\\\\"))
    done = subprocess.run(
        [sys.executable, "-c", script, site.url],
        env=checkout_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    pages = json.loads(done.stdout)
    host = f"127.0.0.1:{site.port}"
    slow = pages[f"{host}/p0"]
    assert slow["error_kind"] == "parse" and slow["error"] == "parse took longer than 10 s"
    assert pages[f"{host}/fine"]["extracted"] == {"h": "fine"}
    assert pages[host]["extracted"] == {"h": None}
    assert pages[host]["error"] is None and len(pages) == 3


async def test_with_rules_no_page_is_parsed_on_the_event_loop() -> None:
    """``processes=1`` with rules starts a parser process, and pages wait for it rather than
    being parsed on the event loop, where nothing could stop a rule."""
    extraction = Extraction.from_specs({"h": "css:h1"})
    async with Parser(1, extraction=extraction) as parser:
        pages = await asyncio.gather(
            *(parser.parse(b"<h1>x</h1>", None, f"http://site.test/{i}") for i in range(20))
        )
        assert [page.extracted for page in pages] == [{"h": "x"}] * 20
        assert parser.parsed_here == 0 and parser.parsed_by_children == 20
    async with Parser(1) as parser:  # without rules, as before: the loop parses
        assert (await parser.parse(b"<h1>y</h1>", None, "http://site.test/")).h1 == "y"
        assert parser.parsed_here == 1


async def test_a_page_whose_child_is_killed_goes_to_the_next_child() -> None:
    """With rules, the pages a killed child still held are parsed by the child that takes its
    place (not on the event loop); a stop then makes the deadline short."""
    extraction = Extraction.from_specs({"r": f"regex:{BACKTRACKING}"})
    async with Parser(1, extraction=extraction, deadline=0.5) as parser:
        slow = asyncio.ensure_future(parser.parse(SLOW_BODY, None, "http://site.test/slow"))
        behind = [
            asyncio.ensure_future(parser.parse(b"<h1>ok</h1>", None, f"http://site.test/{i}"))
            for i in range(3)
        ]
        with pytest.raises(Exception, match=r"parse took longer than 0\.5 s"):
            await slow
        assert [(await page).h1 for page in behind] == ["ok"] * 3
        assert parser.parsed_here == 0
        parser.stop()
        assert parser.deadline == 0.5  # (already shorter than the stop's deadline)


async def test_a_page_behind_many_slow_ones_is_parsed() -> None:
    """Each slow page kills the child that holds the pages behind it: those are sent to the
    next child as often as that happens (only a child that ends by itself counts against a
    page)."""
    extraction = Extraction.from_specs({"r": f"regex:{BACKTRACKING}"})
    async with Parser(1, extraction=extraction, deadline=0.3) as parser:
        slow = [
            asyncio.ensure_future(parser.parse(SLOW_BODY, None, f"http://site.test/slow{i}"))
            for i in range(4)
        ]
        fine = asyncio.ensure_future(parser.parse(b"<h1>ok</h1>", None, "http://site.test/"))
        for page in slow:
            with pytest.raises(Exception, match=r"parse took longer than 0\.3 s"):
                await page
        assert (await fine).h1 == "ok"


async def test_a_stop_cuts_a_long_deadline_short() -> None:
    """A rule that would run past the 10 s deadline: after ``stop()`` the page is given up
    within about a second, and a page waiting behind it is an error at once."""
    extraction = Extraction.from_specs({"r": f"regex:{BACKTRACKING}"})
    async with Parser(1, extraction=extraction) as parser:
        slow = asyncio.ensure_future(parser.parse(SLOW_BODY, None, "http://site.test/slow"))
        behind = asyncio.ensure_future(parser.parse(SLOW_BODY, None, "http://site.test/behind"))
        while not parser._children or not parser._children[0].pending:
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.3)
        started = time.monotonic()
        parser.stop()
        with pytest.raises(Exception, match=r"parse took longer than 1 s"):
            await asyncio.wait_for(slow, 5)
        with pytest.raises(Exception, match="not parsed: the crawl was stopped"):
            await asyncio.wait_for(behind, 5)
        assert time.monotonic() - started < 3


async def test_rules_over_128_kib_reach_the_parser_processes() -> None:
    """The rules used to travel on the child's command line, where one argument may not pass
    128 KiB (``OSError: Argument list too long`` at the start); now on its channel."""
    words = "|".join(f"never{i}" for i in range(20_000))  # ~200 KB
    extraction = Extraction.from_specs({"t": f"regex:<title>(?:{words}|([^<]*))</title>"})
    assert len(extraction.to_json()) > 200_000
    async with Parser(2, extraction=extraction) as parser:
        data = await parser.parse(b"<title>Hello</title>", None, "http://site.test/")
        assert data.extracted == {"t": "Hello"} and parser.parsed_by_children == 1


DEEP_JSONLD = "[" * 100_000 + "]" * 100_000
PAGE_WITH_DEEP_JSONLD = textwrap.dedent(f"""
    <title>t</title><h1>h</h1>
    <script type="application/ld+json">{DEEP_JSONLD}</script>
    <script type="application/ld+json">{{"@type": "Product", "name": "Shoe"}}</script>
    <script type="application/ld+json">{"[" * 150 + "1" + "]" * 150}</script>
""")


def test_a_jsonld_block_100000_levels_deep_fails_the_rule_not_the_page() -> None:
    """The deep block (and one of 150 levels, past what a record can hold) is skipped, as a
    block that is not JSON is: the page keeps its fields and the other block's values."""
    got = extract_page_data(
        PAGE_WITH_DEEP_JSONLD,
        "http://site.test/",
        extract={"name": "jsonld:[0].name", "n": "count:jsonld:[*]", "h": "css:h1"},
    )
    assert got["h1"] == "h"
    assert got["extracted"] == {"name": "Shoe", "n": 1, "h": "h"}


async def test_a_deep_jsonld_block_in_a_parser_process_is_no_parse_error() -> None:
    extraction = Extraction.from_specs({"name": "jsonld:[0].name"})
    async with Parser(2, extraction=extraction) as parser:
        data = await parser.parse(PAGE_WITH_DEEP_JSONLD.encode(), None, "http://site.test/")
        assert data.title == "t" and data.extracted == {"name": "Shoe"}
