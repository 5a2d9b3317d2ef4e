"""Rendered pages' screenshots (``--screenshot``) and accessibility (``--a11y``: axe-core, shipped
in the package) in real headless Chromium: a PNG of the expected size per rendered page and its
thumbnail, written whole; axe finds a planted violation and a clean page gives none; both reach
the issues table and the report."""

from __future__ import annotations

import json
import struct
from collections.abc import Iterator
from pathlib import Path

import pytest
from aiohttp import web

from browser import chromium_path
from conftest import ServeFn
from sitecrawl import AsyncCrawler, CrawlConfig, Limits, Page, Render
from sitecrawl._cli import main

pytestmark = pytest.mark.timeout(180)

#: A clean page: a language, a title, a landmark, text on a background with contrast.
CLEAN = (
    '<!doctype html><html lang="en"><head><title>Clean</title></head><body><main>'
    "<h1>Clean page</h1><p>Readable text.</p>"
    '<a href="/bad">The page with problems</a></main></body></html>'
)
#: A page with planted violations: an image without alt, a button without a name.
BAD = (
    '<!doctype html><html lang="en"><head><title>Bad</title></head><body><main>'
    '<h1>Bad page</h1><img src="/pic.png"><button id="empty"></button>'
    '<div style="height: 3000px">tall</div></main></body></html>'
)


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def a11y_app() -> web.Application:
    async def clean(request: web.Request) -> web.Response:
        return web.Response(text=CLEAN, content_type="text/html")

    async def bad(request: web.Request) -> web.Response:
        return web.Response(text=BAD, content_type="text/html")

    async def pic(request: web.Request) -> web.Response:
        return web.Response(body=b"\x89PNG\r\n\x1a\n", content_type="image/png")

    app = web.Application()
    app.router.add_get("/", clean)
    app.router.add_get("/bad", bad)
    app.router.add_get("/pic.png", pic)
    return app


@pytest.fixture(autouse=True)
def _in_tmp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.chdir(tmp_path)
    yield


async def test_axe_finds_the_planted_violations_and_none_on_a_clean_page(
    serve: ServeFn, tmp_path: Path
) -> None:
    site = serve(a11y_app())
    render = Render(
        mode="always",
        browser=chromium_path(),
        screenshot="viewport",
        screenshot_dir=str(tmp_path / "shots"),
        a11y=True,
    )
    pages: list[Page] = []
    config = CrawlConfig(base_url=site.url, render=render, limits=Limits(max_pages=5))
    async with AsyncCrawler(site.url, config=config, on_page=pages.append) as crawler:
        await crawler.crawl()
    by = {page.url.removeprefix(site.url.rstrip("/")): page for page in pages}
    assert by["/"].rendered and by["/"].a11y == []
    rules = {v["rule"]: v for v in by["/bad"].a11y}
    assert {"image-alt", "button-name"} <= set(rules)
    assert rules["image-alt"]["impact"] == "critical"
    assert rules["image-alt"]["selectors"] == ["img"]
    assert rules["button-name"]["selectors"] == ["#empty"]
    # A PNG of the viewport per rendered page, its thumbnail beside it; no temporary left.
    for page in by.values():
        assert page.screenshot is not None
        shot = Path(page.screenshot)
        assert png_size(shot) == (1280, 720)
        thumb = shot.with_name(shot.name.removesuffix(".png") + ".thumb.jpg")
        assert thumb.read_bytes()[:3] == b"\xff\xd8\xff"
    assert sorted(p.suffix for p in (tmp_path / "shots").iterdir()) == [".jpg"] * 2 + [".png"] * 2


async def test_a_full_page_screenshot_is_as_tall_as_the_page(
    serve: ServeFn, tmp_path: Path
) -> None:
    site = serve(a11y_app())
    render = Render(
        mode="always",
        browser=chromium_path(),
        screenshot="full",
        screenshot_dir=str(tmp_path / "full"),
    )
    pages: list[Page] = []
    start = site.url.rstrip("/") + "/bad"
    config = CrawlConfig(base_url=start, render=render, limits=Limits(max_pages=1))
    async with AsyncCrawler(start, config=config, on_page=pages.append) as crawler:
        await crawler.crawl()
    (page,) = pages
    assert page.screenshot is not None and page.a11y == []  # --a11y not asked for
    width, height = png_size(Path(page.screenshot))
    assert width == 1280 and height > 3000


def test_the_cli_writes_issues_rows_and_the_report_tabs(serve: ServeFn) -> None:
    site = serve(a11y_app())
    argv = ["crawl", site.url, "--render", "always", "--browser", chromium_path()]
    assert main([*argv, "--screenshot", "--a11y", "--state", "a.db", "-q"]) == 0
    shots = sorted(Path("a.screenshots").glob("*.png"))
    assert len(shots) == 2 and all(png_size(shot) == (1280, 720) for shot in shots)
    assert main(["export", "a.db", "-t", "issues", "-q", "-o", "i.jsonl"]) == 0
    rows = [json.loads(line) for line in Path("i.jsonl").read_text().splitlines()]
    a11y = {(r["check"], r["url"].removeprefix(site.url.rstrip("/"))): r for r in rows}
    found = {key for key in a11y if key[0].startswith("a11y.")}
    assert ("a11y.image-alt", "/bad") in found and ("a11y.button-name", "/bad") in found
    assert not [key for key in found if key[1] == "/"]
    image_alt = a11y[("a11y.image-alt", "/bad")]
    assert image_alt["severity"] == "error" and image_alt["detail"]["impact"] == "critical"
    assert image_alt["detail"]["selectors"] == ["img"]
    check = ["check", site.url, "--render", "always", "--browser", chromium_path(), "--a11y"]
    assert main([*check, "--fail-on", "a11y", "-q"]) == 1
    assert main([*check, "--fail-on", "a11y.image-alt", "-q"]) == 1
    assert main([*check, "--fail-on", "a11y", "-q", "-n", "1"]) == 0  # the clean page alone
    assert main(["report", "a.db", "-o", "r.html", "-q"]) == 0
    report = Path("r.html").read_text(encoding="utf-8")
    assert "Accessibility" in report and "image-alt" in report
    assert "Screenshots" in report and "data:image/jpeg;base64," in report


def test_screenshot_and_a11y_need_render(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["crawl", "http://127.0.0.1:9/", "--screenshot", "--no-state"]) == 2
    err = capsys.readouterr().err
    assert "--render" in err and len(err.strip().splitlines()) == 1


def test_sitecrawl_screenshot_writes_one_png(serve: ServeFn) -> None:
    site = serve(a11y_app())
    argv = ["screenshot", site.url.rstrip("/") + "/bad", "-o", "shot.png"]
    assert main([*argv, "--browser", chromium_path(), "--full"]) == 0
    width, height = png_size(Path("shot.png"))
    assert width == 1280 and height > 3000
    assert main(["screenshot", site.url, "-o", "v.png", "--browser", chromium_path()]) == 0
    assert png_size(Path("v.png")) == (1280, 720)
