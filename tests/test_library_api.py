"""The library as a user's program meets it: async hooks awaited, the ``sitecrawl`` logger,
crawl_site_async's typed keywords (checked by mypy itself), the course's main.py exit code,
and the package metadata the build declares."""

from __future__ import annotations

import asyncio
import inspect
import logging
import re
import subprocess
import sys
import tomllib
from functools import partial
from pathlib import Path

import pytest
from aiohttp import web

from audit_site import unused_port
from conftest import ServeFn
from servers import ROOT, ServerThread, checkout_env, html
from sitecrawl import AsyncCrawler, CrawlConfig, Page, Politeness, crawl_site_async

# -- hooks ----------------------------------------------------------------------------------


async def test_async_hooks_are_awaited_sync_hooks_still_called(serve: ServeFn) -> None:
    site = serve(small_site(robots=""))
    seen: list[str] = []
    errors: list[str] = []
    finished: list[str] = []

    async def on_page(page: Page) -> None:
        await asyncio.sleep(0.01)  # really asynchronous: the crawl waits for it
        seen.append(page.url)

    class OnError:  # an object with an async __call__ is a hook too
        async def __call__(self, page: Page) -> None:
            await asyncio.sleep(0)
            errors.append(page.url)

    await crawl_site_async(site.url, on_page=on_page, on_error=OnError())
    assert sorted(seen) == [site.url + "/", site.url + "/a", site.url + "/gone"]
    assert errors == [site.url + "/gone"]

    async def record(into: list[str], page: Page) -> None:
        into.append(page.url)

    await crawl_site_async(site.url, on_page=partial(record, finished))  # a partial too
    assert len(finished) == 3
    await crawl_site_async(site.url, on_page=lambda page: finished.append(page.url))
    assert len(finished) == 6


def small_site(robots: str | None = "User-agent: *\nCrawl-delay: 5\n") -> web.Application:
    """``/`` links ``/a`` (fine), ``/gone`` (404) and ``/busy`` (503 every time)."""

    async def home(request: web.Request) -> web.Response:
        return html('<a href="/a">a</a><a href="/gone">gone</a>', title="Home")

    async def page_a(request: web.Request) -> web.Response:
        return html("<p>a</p>", title="A")

    async def busy(request: web.Request) -> web.Response:
        return web.Response(status=503)

    async def robots_txt(request: web.Request) -> web.Response:
        if robots is None:
            return web.Response(status=503)
        return web.Response(text=robots)

    app = web.Application()
    app.router.add_get("/", home)
    app.router.add_get("/a", page_a)
    app.router.add_get("/busy", busy)
    app.router.add_get("/robots.txt", robots_txt)
    return app


# -- logging --------------------------------------------------------------------------------


async def test_the_sitecrawl_logger_warns_and_logs_each_page(
    serve: ServeFn, caplog: pytest.LogCaptureFixture
) -> None:
    site = serve(small_site())
    caplog.set_level(logging.DEBUG, logger="sitecrawl")
    polite = Politeness(max_crawl_delay=0.01, retries=1, backoff=0.01, sitemaps=False)
    config = CrawlConfig(base_url=site.url, politeness=polite)
    async with AsyncCrawler(site.url, config=config) as crawler:
        await crawler.crawl()
        await crawler.crawl_page(site.url + "/busy")
    records = [r for r in caplog.records if r.name == "sitecrawl"]
    warnings = [r.getMessage() for r in records if r.levelno == logging.WARNING]
    host = site.url.removeprefix("http://")
    assert warnings == [
        f"Crawl-delay 5 s of {host} capped to 0.01 s (--max-crawl-delay)",
        f"gave up on {site.url}/busy after 2 attempts: HTTP 503",
    ]
    pages = sorted(r.getMessage() for r in records if r.levelno == logging.DEBUG)
    assert pages == [
        f"page 200 {site.url}/: ok",
        f"page 200 {site.url}/a: ok",
        f"page 404 {site.url}/gone: HTTP 404",
        f"page 503 {site.url}/busy: HTTP 503",
    ]

    caplog.clear()
    down = serve(small_site(robots=None))
    config = CrawlConfig(base_url=down.url, politeness=Politeness(retries=0, sitemaps=False))
    async with AsyncCrawler(down.url, config=config) as crawler:
        await crawler.crawl()
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == [  # no retries, so none given up
        f"{down.url}: robots.txt unreachable (HTTP 503): nothing there is fetched for 30 s"
    ]


def test_the_logger_prints_nothing_unless_the_application_configures_logging() -> None:
    code = (
        "import logging, sitecrawl._log as l;"
        "l.logger.warning('must not be printed'); print(l.logger.name)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=checkout_env()
    )
    assert (result.stdout, result.stderr) == ("sitecrawl\n", "")


# -- typed keywords -------------------------------------------------------------------------


def test_crawl_site_async_takes_exactly_the_crawlers_keywords() -> None:
    """The course's three positional parameters, then every other keyword of AsyncCrawler,
    typed through ``**options: Unpack[CrawlOptions]`` (one declaration, no copy of the
    signature)."""
    from sitecrawl._crawl_site import CrawlOptions

    ours = dict(inspect.signature(crawl_site_async).parameters)
    theirs = dict(inspect.signature(AsyncCrawler.__init__).parameters)
    del theirs["self"]
    options = ours.pop("options")
    assert options.kind is options.VAR_KEYWORD
    positional = [(p.name, p.kind, p.default, p.annotation) for p in ours.values()]
    assert positional == [(p.name, p.kind, p.default, p.annotation) for p in theirs.values()][:3]
    rest = {name: p.annotation for name, p in theirs.items() if name not in ours}
    typed = {name: kind.__forward_arg__ for name, kind in CrawlOptions.__annotations__.items()}
    assert typed == rest


def test_mypy_catches_a_misspelled_option(tmp_path: Path) -> None:
    from mypy import api

    script = tmp_path / "user_code.py"
    script.write_text(
        "from sitecrawl import crawl_site_async\n\n\n"
        "async def go() -> None:\n"
        '    await crawl_site_async("https://a.test/", max_depht=2)\n'
        '    await crawl_site_async("https://a.test/", 4, max_depth=2, subdomains=True)\n',
        encoding="utf-8",
    )
    out, err, status = api.run(
        ["--strict", "--no-incremental", "--cache-dir", str(tmp_path / "cache"), str(script)]
    )
    assert status == 1, out + err
    assert [line.split(": error: ")[1] for line in out.splitlines() if ": error: " in line] == [
        'Unexpected keyword argument "max_depht" for "crawl_site_async";'
        ' did you mean "max_depth"?  [call-arg]'
    ]
    assert f"{script.name}:5: error" in out


# -- main.py --------------------------------------------------------------------------------


def test_main_py_exits_1_when_the_start_page_fails(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, str(Path(ROOT) / "main.py"), f"http://127.0.0.1:{unused_port()}/"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env=checkout_env(),
    )
    assert result.returncode == 1, result.stderr
    assert result.stderr.startswith("error: could not crawl http://127.0.0.1:")
    assert "connection refused" in result.stderr
    assert "Traceback" not in result.stderr


def test_main_py_exits_1_when_the_start_page_is_an_error(
    site: ServerThread, tmp_path: Path
) -> None:
    result = subprocess.run(
        [sys.executable, str(Path(ROOT) / "main.py"), site.url + "/p/1000", "2", "5"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env=checkout_env(),
    )
    assert result.returncode == 1, result.stderr
    assert "could not crawl" in result.stderr and "HTTP 404" in result.stderr


# -- packaging ------------------------------------------------------------------------------


def test_license_file_and_a_setuptools_floor_that_reads_the_license_field() -> None:
    root = Path(ROOT)
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["license"] == "MIT"
    assert project["project"]["license-files"] == ["LICENSE"]
    assert (root / "LICENSE").read_text(encoding="utf-8").startswith("MIT License\n")
    # A license given as an SPDX string (PEP 639) needs setuptools 77 or later: a floor below
    # that fails the build ("project.license must be valid exactly by one definition").
    (floor,) = [
        re.fullmatch(r"setuptools>=(\d+)", req) for req in project["build-system"]["requires"]
    ]
    assert floor is not None and int(floor.group(1)) >= 77
    classifiers = project["project"]["classifiers"]
    assert "Typing :: Typed" in classifiers
    assert not any(c.startswith("License ::") for c in classifiers)  # PEP 639: the expression
