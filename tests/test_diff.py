"""``sitecrawl diff``: a site crawled, changed (pages removed and added, a title edited, a link
broken, a noindex added, a redirect moved, 5 % of bodies edited), crawled again with the same
command: the diff reports exactly the planted changes, and nothing on an unchanged run."""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from conftest import ServeFn
from servers import ServerThread
from sitecrawl._cli import main
from sitecrawl._diff import COLUMNS, DiffRow, compare

PAGES = 40


@dataclass
class Site:
    changed: bool = False
    edited: set[int] = field(default_factory=lambda: {7, 8})  # 5 % of the 40 pages

    def numbers(self) -> list[int]:
        return [n for n in range(PAGES) if not (self.changed and n == 1)]

    def app(self) -> web.Application:
        async def index(request: web.Request) -> web.Response:
            links = [f"/p/{n}" for n in self.numbers()] + ["/old"]
            if self.changed:
                links.append("/p/new")
            html = "".join(f'<a href="{link}">{link}</a>' for link in links)
            return web.Response(text=f"<title>Home</title>{html}", content_type="text/html")

        async def page(request: web.Request) -> web.Response:
            name = request.match_info["n"]
            if name == "new" and self.changed:
                return web.Response(text="<title>New</title><p>new</p>", content_type="text/html")
            if not name.isdigit() or int(name) not in self.numbers():
                raise web.HTTPNotFound()
            n = int(name)
            title = f"Page {n}" + (" edited" if self.changed and n == 2 else "")
            head = f"<title>{title}</title>"
            if self.changed and n == 4:
                head += '<meta name="robots" content="noindex">'
            words = "alpha beta gamma " * 20
            if self.changed and n in self.edited:
                words = words.replace("beta", "delta", 1)
            body = f"<h1>Heading {n}</h1><p>{words}</p>"
            if self.changed and n == 3:
                body += '<a href="/missing">gone</a>'
            return web.Response(text=head + body, content_type="text/html")

        async def old(request: web.Request) -> web.Response:
            raise web.HTTPMovedPermanently("/p/6" if self.changed else "/p/5")

        app = web.Application()
        app.router.add_get("/", index)
        app.router.add_get("/old", old)
        app.router.add_get("/p/{n}", page)
        return app


@pytest.fixture
def changing() -> tuple[Site, ServerThread]:
    site = Site()
    server = ServerThread(site.app()).start()
    yield site, server
    server.stop()


def test_diff_reports_exactly_the_planted_changes(
    changing: tuple[Site, ServerThread], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    site, server = changing
    state = str(tmp_path / "s.db")
    crawl = ["crawl", server.url, "--state", state, "-q"]
    assert main(crawl) == 0
    site.changed = True
    assert main([*crawl, "--diff"]) == 0  # the same command; --diff prints the changes
    printed = capsys.readouterr()
    assert "crawl 1 -> crawl 2: new-broken: 1" in printed.err
    assert printed.out.splitlines()[0].split()[:3] == [
        "error",
        "new-broken",
        server.url + "/missing",
    ]
    out = tmp_path / "diff.jsonl"
    junit = tmp_path / "diff.xml"
    assert (
        main(
            ["diff", state, "-o", str(out), "-o", str(tmp_path / "diff.csv"), "--junit", str(junit)]
        )
        == 1
    )
    printed = capsys.readouterr()
    assert "crawl 1 -> crawl 2" in printed.err
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    base = server.url
    got = {(row["url"].removeprefix(base), row["kind"]) for row in rows}
    assert got == {
        ("/missing", "new-broken"),
        ("/p/1", "removed"),
        ("/p/4", "noindex"),
        ("/old", "redirect"),
        ("/p/new", "added"),
        ("/p/2", "title"),
        ("/p/2", "body"),
        ("/p/3", "body"),
        ("/p/4", "body"),
        ("/p/7", "body"),
        ("/p/8", "body"),
        ("/", "body"),  # the index lists other pages
    }
    assert len(rows) == len(got)
    assert rows[0]["kind"] == "new-broken" and rows[0]["severity"] == "error"
    assert (rows[0]["field"], rows[0]["old"], rows[0]["new"]) == ("status", None, 404)  # new URL
    assert (rows[0]["linking_pages"], rows[0]["linking_links"]) == (1, 1)
    assert rows[0]["linked_from"] == [base + "/p/3"]
    by = {(row["url"].removeprefix(base), row["kind"]): row for row in rows}
    assert (by["/p/2", "title"]["old"], by["/p/2", "title"]["new"]) == ("Page 2", "Page 2 edited")
    assert (by["/p/4", "noindex"]["old"], by["/p/4", "noindex"]["new"]) == (True, False)
    assert by["/old", "redirect"]["new"] == base + "/p/6"
    with (tmp_path / "diff.csv").open(encoding="utf-8", newline="") as handle:
        assert len(list(csv.DictReader(handle))) == len(rows)
    assert b'failures="1"' in junit.read_bytes()
    # Only what is asked to fail: no removal in these kinds.
    assert main(["diff", state, "-q", "--fail-on", "removed"]) == 1
    assert main(["diff", state, "-q", "--fail-on", "canonical,h1"]) == 0
    # The same command again, nothing changed: crawl 3, no changes, exit 0.
    assert main(crawl) == 0
    capsys.readouterr()
    assert main(["diff", state]) == 0
    assert "crawl 2 -> crawl 3: no changes" in capsys.readouterr().err
    assert main(["diff", state, "--from", "1", "--to", "3", "-q", "-o", str(out)]) == 1
    assert len(out.read_text(encoding="utf-8").splitlines()) == len(rows)


def test_diff_of_two_files_and_bad_input(
    changing: tuple[Site, ServerThread], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    site, server = changing
    one, two = str(tmp_path / "one.db"), str(tmp_path / "two.db")
    assert main(["crawl", server.url, "--state", one, "-q"]) == 0
    site.changed = True
    assert main(["crawl", server.url, "--state", two, "-q"]) == 0
    assert main(["diff", one, two, "-q", "--fail-on", "title"]) == 1
    capsys.readouterr()
    assert main(["diff", one]) == 2  # one crawl only
    assert main(["diff", one, "--fail-on", "nonsense"]) == 2
    assert main(["diff", str(tmp_path / "none.db")]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 3


def _row(url: str, **values: Any) -> DiffRow:
    base = {"status": 200, "final_url": url, "indexable": 1, "redirects": 0}
    return DiffRow(url, url, *({**base, **values}.get(name) for name in COLUMNS))


def test_changed_extracted_values_are_changes_one_per_rule() -> None:
    old = _row("x.test/p", extracted='{"price": "9.99", "sku": "A1", "tags": ["a"]}')
    new = _row("x.test/p", extracted='{"price": "12.50", "sku": "A1", "stock": 3}')
    changes = [(c.kind, c.field, c.old, c.new, c.severity) for c in compare(old, new)]
    assert changes == [
        ("extracted", "x:price", "9.99", "12.50", "info"),
        ("extracted", "x:stock", None, 3, "info"),
        ("extracted", "x:tags", ["a"], None, "info"),
    ]
    assert (
        list(
            compare(
                old, _row("x.test/p", extracted='{"tags": ["a"], "sku": "A1", "price": "9.99"}')
            )
        )
        == []
    )


def flipping_app(version: dict[str, int]) -> web.Application:
    """30 pages linking twice to /flaky (200, then 500 when ``version`` is 2) and to /data.tag, a
    file that is not HTML whose ETag says its version."""

    async def index(request: web.Request) -> web.Response:
        links = "".join(f'<a href="/p/{n}">{n}</a>' for n in range(30))
        return web.Response(text=f"<title>Home</title>{links}", content_type="text/html")

    async def page(request: web.Request) -> web.Response:
        body = '<title>P</title><a href="/flaky">flaky</a><a href="/flaky">again</a>'
        body += '<a href="/data.tag">tags</a>'
        return web.Response(text=body, content_type="text/html")

    async def flaky(request: web.Request) -> web.Response:
        if version["v"] == 2:
            raise web.HTTPInternalServerError()
        return web.Response(text="<title>Flaky</title>", content_type="text/html")

    async def tag(request: web.Request) -> web.Response:
        v = version["v"]
        return web.Response(
            body=f"tags v{v}".encode(),
            content_type="application/octet-stream",
            headers={"ETag": f'"v{v}"'},
        )

    app = web.Application()
    app.router.add_get("/", index)
    app.router.add_get("/p/{n}", page)
    app.router.add_get("/flaky", flaky)
    app.router.add_get("/data.tag", tag)
    return app


def test_new_broken_keeps_both_answers_counts_its_pages_and_files_change(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    version = {"v": 1}
    server = ServerThread(flipping_app(version)).start()
    try:
        state = str(tmp_path / "s.db")
        crawl = ["crawl", server.url, "--state", state, "-q", "--retries", "0"]
        assert main(crawl) == 0
        version["v"] = 2
        assert main(crawl) == 0
    finally:
        server.stop()
    out = tmp_path / "diff.jsonl"
    capsys.readouterr()
    assert main(["diff", state, "-o", str(out)]) == 1
    printed = capsys.readouterr().out
    rows = {
        (row["url"].removeprefix(server.url), row["kind"]): row
        for row in map(json.loads, out.read_text(encoding="utf-8").splitlines())
    }
    broken = rows["/flaky", "new-broken"]
    # The answer before and now; every linking page counted, the first 20 named.
    assert (broken["field"], broken["old"], broken["new"]) == ("status", 200, 500)
    assert (broken["linking_pages"], broken["linking_links"]) == (30, 60)
    assert len(broken["linked_from"]) == 20
    line = f"new-broken       {server.url}/flaky (200 -> 500), linked from 30 pages (60 links): "
    assert line in printed
    assert printed.splitlines()[0].endswith(" and 25 more")
    # A file whose body was not read changed: its validator says so.
    tag = rows["/data.tag", "body"]
    assert (tag["field"], tag["old"], tag["new"]) == ("etag", '"v1"', '"v2"')
    assert ("/p/0", "body") not in rows  # the same HTML both times


def test_diff_of_two_different_sites_is_refused_unless_forced(
    serve: ServeFn, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    one, two = str(tmp_path / "one.db"), str(tmp_path / "two.db")
    assert main(["crawl", serve(flipping_app({"v": 1})).url, "--state", one, "-q"]) == 0
    assert main(["crawl", serve(flipping_app({"v": 1})).url, "--state", two, "-q"]) == 0
    capsys.readouterr()
    assert main(["diff", one, two]) == 2
    err = capsys.readouterr().err
    assert "two different sites (--force compares them anyway)" in err
    assert len(err.strip().splitlines()) == 1
    assert main(["diff", one, two, "--force", "-q", "--fail-on", "none"]) == 0
