"""``sitecrawl check`` in CI: unreachable hosts fail at once (one DNS lookup per host), progress
on stderr, ``--max-time``, Ctrl-C with the results so far printed and written, and a summary
that says what was not checked and why.

Names under ``.invalid`` never resolve (RFC 6761), so they need no network; a refused host is
a loopback port nobody listens on; stalled hosts are real local servers that never answer.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import xmlschema
from aiohttp import web

from audit_site import unused_port
from conftest import ServeFn
from servers import ServerThread, checkout_env, html
from sitecrawl import ConnectError, CrawlConfig, DNSError, Politeness, Requests
from sitecrawl._cli import main
from sitecrawl.audit import LinkChecker
from sitecrawl.control import CrawlScope

SCHEMA = xmlschema.XMLSchema(Path(__file__).parent / "data" / "junit-ant.xsd")
DEAD_NAMES = [f"dead{i}.invalid" for i in range(3)]


@pytest.fixture(autouse=True)
def _in_tmp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.chdir(tmp_path)
    yield


def test_invalid_names_fail_fast_here() -> None:
    """The premise of these tests: this machine's resolver answers ``.invalid`` at once."""
    import socket

    started = time.monotonic()
    with pytest.raises(socket.gaierror):
        socket.getaddrinfo("dead0.invalid", 80)
    assert time.monotonic() - started < 2


def stall_app() -> web.Application:
    """A host that answers ``/ok`` and never answers ``/stall/...`` (until the client goes)."""

    async def ok(request: web.Request) -> web.Response:
        return web.Response(text="ok")

    async def stall(request: web.Request) -> web.Response:
        await asyncio.sleep(120)
        return web.Response(text="late")

    app = web.Application()
    app.router.add_get("/ok", ok)
    app.router.add_get("/stall/{n}", stall)
    return app


async def test_unreachable_hosts_fail_all_their_urls_at_once(
    serve: ServeFn, monkeypatch: pytest.MonkeyPatch
) -> None:
    good = serve(stall_app())
    refused = f"http://127.0.0.1:{unused_port()}"
    dead = [f"http://{name}/page{j}" for name in DEAD_NAMES for j in range(5)]
    urls = [*dead, *(f"{refused}/x{j}" for j in range(6)), good.url + "/ok"]
    lookups: Counter[str] = Counter()
    loop = asyncio.get_running_loop()
    real_getaddrinfo = loop.getaddrinfo

    async def counting(host: Any, *args: Any, **kwargs: Any) -> Any:
        lookups[host] += 1
        return await real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(loop, "getaddrinfo", counting)
    config = CrawlConfig(base_url=good.url, politeness=Politeness(retries=2, backoff=0.01))
    async with LinkChecker(config, CrawlScope([good.url + "/"], "site")) as checker:
        found = await checker.check(urls)

    assert {name: lookups[name] for name in DEAD_NAMES} == dict.fromkeys(DEAD_NAMES, 1)
    assert {found[url].error_kind for url in dead} == {DNSError.kind}
    assert {found[url].attempts for url in dead} == {0}  # never asked over HTTP
    assert found[dead[0]].error is not None
    assert found[dead[0]].error.startswith("DNS lookup failed: ")
    # The refused host: one URL asked (HEAD, with its retries, no GET after it), the rest
    # failed with the same error, unasked.
    refused_found = [found[f"{refused}/x{j}"] for j in range(6)]
    assert {s.error_kind for s in refused_found} == {ConnectError.kind}
    assert sorted(s.attempts for s in refused_found) == [0, 0, 0, 0, 0, 3]
    assert {s.method for s in refused_found} == {"HEAD"}
    assert found[good.url + "/ok"].error is None
    assert set(checker.unreachable) == {
        *(f"{name}" for name in DEAD_NAMES),
        refused.removeprefix("http://"),
    }


def ci_site(good: ServerThread, stalls: int = 4) -> web.Application:
    """A page linking to a good external URL, stalling ones, dead hosts and a refused one."""
    refused = f"http://127.0.0.1:{unused_port()}"
    links = [f"{good.url}/ok"]
    links += [f"{good.url}/stall/{n}" for n in range(stalls)]
    links += [f"http://{name}/page{j}" for name in DEAD_NAMES for j in range(5)]
    links += [f"{refused}/x{j}" for j in range(3)]

    async def home(request: web.Request) -> web.Response:
        anchors = "".join(f'<a href="{url}">link {n}</a>' for n, url in enumerate(links))
        return html(f'{anchors}<a href="/about">About</a>', title="Home")

    async def about(request: web.Request) -> web.Response:
        return html("<p>About</p>", title="About")

    app = web.Application()
    app.router.add_get("/", home)
    app.router.add_get("/about", about)
    return app


def test_max_time_cuts_the_check_and_the_summary_says_what_was_not_checked(
    serve: ServeFn, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    good = serve(stall_app())
    site = serve(ci_site(good))
    started = time.monotonic()
    argv = ["check", site.url, "--external", "--max-time", "2", "--junit", "junit.xml"]
    code = main([*argv, "--timeout", "60", "--retries", "0"])
    took = time.monotonic() - started
    out, err = capsys.readouterr()
    assert code == 1
    assert took < 30  # not the 60 s a stalled request may take
    # /about crawled; 1 good, 15 dead, 3 refused external targets checked; 4 stalled.
    assert out.endswith(
        "20 link targets checked: 18 broken, 0 redirected; 4 not checked: 4 cut by --max-time\n"
    )
    assert "checking 23 link targets on 5 hosts" in err
    assert "hosts unreachable" in err
    assert err.endswith("sitecrawl: time limit reached (--max-time 2)\n")
    SCHEMA.validate(str(tmp_path / "junit.xml"))
    suite = ET.parse(tmp_path / "junit.xml").getroot()
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("24", "18", "4")
    skipped = [case for case in suite.iter("testcase") if case.find("skipped") is not None]
    assert sorted(str(case.get("name")) for case in skipped) == [
        f"{good.url}/stall/{n}" for n in range(4)
    ]


def test_max_time_during_the_crawl_stops_it_and_checks_nothing_more(
    serve: ServeFn, capsys: pytest.CaptureFixture[str]
) -> None:
    async def slow_page(request: web.Request) -> web.Response:
        await asyncio.sleep(0.4)
        n = int(request.match_info.get("n", "0"))
        return html(f'<a href="/p/{n + 1}">next</a><img src="/img/{n}.png">', title=f"P{n}")

    app = web.Application()
    app.router.add_get("/", slow_page)
    app.router.add_get("/p/{n}", slow_page)
    site = serve(app)
    assert main(["check", site.url, "--max-time", "1", "--no-sitemaps"]) == 1
    out, err = capsys.readouterr()
    assert "time limit reached: stopped taking new pages" in err
    # The pages crawled so far are reported; the rest of the chain and the images (all 404)
    # are not checked.
    summary = out.splitlines()[-1]
    assert re.fullmatch(
        r"\d link targets? checked: 0 broken, 0 redirected; (\d) not checked: \1 cut by --max-time",
        summary,
    ), summary


def test_progress_lines_during_the_check_in_a_ci_log(
    serve: ServeFn, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sitecrawl._progress.CHECK_LINE_EVERY", 0.3)
    good = serve(stall_app())
    site = serve(ci_site(good, stalls=2))
    main(["check", site.url, "--external", "--max-time", "2.5", "--retries", "0", "-p", "1"])
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("checked ")]
    assert len(lines) >= 3, err
    assert lines[0].startswith("checked ")
    assert " of 21 link targets · " in lines[0] and " broken" in lines[0]
    assert lines[-1].startswith("checked 19 of 21 link targets · 18 broken · 4 hosts unreachable")


@pytest.mark.parametrize(
    ("signum", "code", "label"),
    [(signal.SIGINT, 130, "Ctrl-C"), (signal.SIGTERM, 143, "SIGTERM")],
)
def test_ctrl_c_during_the_check_prints_and_writes_the_results_so_far(
    serve: ServeFn, tmp_path: Path, signum: int, code: int, label: str
) -> None:
    good = serve(stall_app())
    site = serve(ci_site(good))
    junit = tmp_path / "junit.xml"
    flags = ["--junit", str(junit), "--timeout", "60", "--retries", "0", "-p", "1"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "sitecrawl", "check", site.url, "--external", *flags],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=checkout_env(),
        start_new_session=True,
    )
    assert proc.stderr is not None
    seen = ""
    # The dead and refused hosts fail at once, the stalled URLs hang (60 s): the progress line
    # (every 5 s in a CI log) says when all but them are checked.
    while "checked 19 of 23 link targets" not in seen:
        line = proc.stderr.readline()  # progress arrives while the check runs
        assert line, seen
        seen += line
    assert proc.poll() is None, seen
    os.killpg(proc.pid, signum)
    out, err = proc.communicate(timeout=30)
    err = seen + err
    assert proc.returncode == code, err
    assert "Traceback" not in err
    assert f"{label}: stopped, the results so far follow" in err
    assert out.endswith(
        f"20 link targets checked: 18 broken, 0 redirected; 4 not checked: 4 cut by {label}\n"
    )
    assert f"BROKEN http://{DEAD_NAMES[0]}/page0  DNS lookup failed: " in out
    SCHEMA.validate(str(junit))
    suite = ET.parse(junit).getroot()
    assert (suite.get("tests"), suite.get("skipped")) == ("24", "4")
    assert not list(tmp_path.glob(".*sitecrawl-tmp*"))


def test_ctrl_c_during_the_crawl_still_reports_and_writes(serve: ServeFn, tmp_path: Path) -> None:
    async def slow_page(request: web.Request) -> web.Response:
        await asyncio.sleep(0.2)
        n = int(request.match_info.get("n", "0"))
        return html(f'<a href="/p/{n + 1}">next</a><a href="/p/{n + 2}">skip</a>', title="P")

    app = web.Application()
    app.router.add_get("/", slow_page)
    app.router.add_get("/p/{n}", slow_page)
    site = serve(app)
    junit = tmp_path / "junit.xml"
    proc = subprocess.Popen(
        [sys.executable, "-m", "sitecrawl", "check", site.url, "--junit", str(junit), "-c", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=checkout_env(),
        start_new_session=True,
    )
    deadline = time.monotonic() + 30
    while len(site.traffic.pages) < 4 and time.monotonic() < deadline:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    assert " not checked: " in out and " cut by Ctrl-C" in out.splitlines()[-1]
    SCHEMA.validate(str(junit))
    assert junit.stat().st_size > 0


def test_a_refused_check_leaves_no_junit_file(tmp_path: Path) -> None:
    junit = tmp_path / "junit.xml"
    start = f"http://127.0.0.1:{unused_port()}/"
    assert main(["check", start, "--junit", str(junit), "-q"]) == 1
    assert junit.exists()  # the run finished: a report saying the start page failed
    SCHEMA.validate(str(junit))
    junit.unlink()
    (tmp_path / "bad.db").write_bytes(b"not a state file")
    assert main(["check", start, "--state", "bad.db", "--junit", str(junit)]) == 2
    assert not junit.exists()  # refused: nothing written, not even an empty file
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.db"]


async def test_behind_a_proxy_names_are_the_proxys_to_resolve(serve: ServeFn) -> None:
    """No lookup here: a proxy that knows ``dead0.invalid`` answers for it."""
    asked: list[str] = []

    async def answer(request: web.Request) -> web.Response:
        asked.append(request.raw_path)
        return web.Response(text="via the proxy")

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", answer)
    proxy = serve(app)
    config = CrawlConfig(
        base_url=proxy.url, requests=Requests(proxy=proxy.url), politeness=Politeness(retries=0)
    )
    async with LinkChecker(config, CrawlScope([proxy.url + "/"], "site")) as checker:
        found = await checker.check(["http://dead0.invalid/a", "http://dead0.invalid/b"])
    assert {url: status.status for url, status in found.items()} == {
        "http://dead0.invalid/a": 200,
        "http://dead0.invalid/b": 200,
    }
    assert sorted(asked) == ["http://dead0.invalid/a", "http://dead0.invalid/b"]
    assert checker.unreachable == {}
