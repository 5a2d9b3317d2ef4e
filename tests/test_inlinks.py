"""Inlinks (``inlinks``, ``unique_inlinks``) counted once a crawl has ended, and the default
output names of ``export`` and ``report``."""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from aiohttp import web

from conftest import ServeFn
from servers import html
from sitecrawl import Page
from sitecrawl._cli import main
from sitecrawl.audit import fill_inlinks

LINKS = {
    "/": ["/a", "/a", "/b", "/"],  # twice to /a; a link to itself does not count
    "/a": ["/b", "/"],
    "/b": ["/b", "/old"],
    "/c": [],  # reached by a redirect only
}
#: path -> (inlinks, unique_inlinks)
EXPECTED = {"/": (1, 1), "/a": (2, 1), "/b": (2, 2), "/old": (1, 1)}  # /old: /c, empty


def app() -> web.Application:
    async def page(request: web.Request) -> web.Response:
        links = "".join(f'<a href="{href}">x</a>' for href in LINKS[request.path])
        return html(links, title=request.path)

    async def old(request: web.Request) -> web.Response:
        raise web.HTTPMovedPermanently("/c")

    application = web.Application()
    for path in LINKS:
        application.router.add_get(path, page)
    application.router.add_get("/old", old)
    return application


@pytest.fixture(autouse=True)
def _in_tmp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.chdir(tmp_path)
    yield


def test_export_counts_inlinks_and_names_its_file(serve: ServeFn, tmp_path: Path) -> None:
    site = serve(app())
    assert main(["crawl", site.url, "--state", "shop.sitecrawl.db", "-q"]) == 0
    assert main(["export", "shop.sitecrawl.db", "-q"]) == 0  # no -o: shop.pages.csv
    with (tmp_path / "shop.pages.csv").open(encoding="utf-8-sig", newline="") as handle:
        rows = {row["page_url"].removeprefix(site.url): row for row in csv.DictReader(handle)}
    got = {path: (int(row["inlinks"]), int(row["unique_inlinks"])) for path, row in rows.items()}
    assert got == EXPECTED
    assert main(["export", "shop.sitecrawl.db", "-t", "links", "-q"]) == 0
    assert (tmp_path / "shop.links.csv").exists()


def test_report_names_its_file_and_shows_inlinks(serve: ServeFn, tmp_path: Path) -> None:
    site = serve(app())
    assert main(["crawl", site.url, "--state", "shop.db", "-q"]) == 0
    assert main(["report", "shop.db", "-q"]) == 0  # no -o: shop.report.html
    for report in (tmp_path / "shop.report.html", _crawl_report(site.url, tmp_path)):
        pages = _table(report, "pages")
        columns = [column["label"] for column in pages["columns"]]
        at = columns.index("Inlinks")
        assert columns[at + 1] == "Unique inlinks"
        got = {row[0].removeprefix(site.url): (row[at], row[at + 1]) for row in pages["rows"]}
        assert got == EXPECTED


def _crawl_report(url: str, tmp_path: Path) -> Path:
    """The report of a crawl without a state file, from its records in memory."""
    assert main(["crawl", url, "--no-state", "--report", "mem.html", "-q"]) == 0
    return tmp_path / "mem.html"


def _table(report: Path, name: str) -> dict[str, object]:
    block = re.search(r'id="report-data">(.*?)</script>', report.read_text(encoding="utf-8"))
    assert block is not None
    tables = {table["id"]: table for table in json.loads(block.group(1))["tables"]}
    return tables[name]  # type: ignore[no-any-return]


def test_fill_inlinks_counts_a_links_from_other_pages_once_per_document() -> None:
    s = "http://x.test"
    pages = [
        Page(s + "/", links=[(s + "/a", "A", None, "a"), (s + "/a#top", "A", None, "a")]),
        Page(s + "/a", links=[(s + "/", "home", None, "a"), (s + "/pic.png", None, None, "img")]),
        # /start redirected to /a, crawled in its own right: its links are /a's, not again
        Page(
            s + "/start",
            final_url=s + "/a",
            redirects=[(s + "/start", 301)],
            links=[(s + "/", "home", None, "a")],
        ),
        Page(s + "/pic.png"),
    ]
    fill_inlinks(pages)
    assert [(p.inlinks, p.unique_inlinks) for p in pages] == [(1, 1), (2, 1), (0, 0), (0, 0)]
