"""Several start URLs, list crawls (a file, stdin, a sitemap) and start URLs that redirect,
on loopback servers whose logs are checked."""

from __future__ import annotations

import gzip
import io
import json
import os
from pathlib import Path

import pytest
from aiohttp import web

from conftest import ServeFn
from servers import ServerThread, html, site_app
from shop_site import book_app
from sitecrawl._cli import main

LISTED = ["/p/9", "/p/3", "/", "/p/41", "/p/3#again", "/p/12?x=1", "/p/7"]


def write_list(tmp_path: Path, server: ServerThread, paths: list[str]) -> Path:
    lines = ["# pages to refetch", ""]
    lines += [server.url + path for path in paths]
    listing = tmp_path / "urls.txt"
    listing.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return listing


def page_requests(server: ServerThread) -> list[str]:
    return server.traffic.pages


def test_list_fetches_exactly_the_listed_urls_once_each_in_order(
    serve: ServeFn, tmp_path: Path
) -> None:
    site = serve(site_app(60))
    listing = write_list(tmp_path, site, LISTED)
    out = tmp_path / "pages.jsonl"
    argv = ["crawl", "--list", str(listing), "--no-state", "-c", "1", "-q", "-o", str(out)]
    assert main(argv) == 0
    expected = ["/p/9", "/p/3", "/", "/p/41", "/p/12?x=1", "/p/7"]
    assert page_requests(site) == expected
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [r["url"].removeprefix(site.url) or "/" for r in records] == expected
    assert {r["depth"] for r in records} == {0}
    # No sitemap is read for a list: nothing but the list is crawled.
    assert "/sitemap.xml" not in site.traffic.paths


def test_list_from_stdin_with_more_concurrency(
    serve: ServeFn, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    site = serve(site_app(60))
    text = "\n".join(site.url + path for path in LISTED)
    monkeypatch.setattr("sys.stdin", io.StringIO(text))
    assert main(["crawl", "--list", "-", "--no-state"]) == 0
    assert "(depth 0: nothing followed)" in capsys.readouterr().err
    assert sorted(page_requests(site)) == sorted(
        ["/p/9", "/p/3", "/", "/p/41", "/p/12?x=1", "/p/7"]
    )


def test_list_with_follow_also_crawls_from_the_listed_urls(serve: ServeFn, tmp_path: Path) -> None:
    site = serve(book_app())
    listing = write_list(tmp_path, site, ["/book/"])
    argv = ["crawl", "--list", str(listing), "--follow", "--no-state", "-q"]
    assert main(argv) == 0
    assert sorted(page_requests(site)) == sorted(
        ["/book/"] + [f"/book/ch{n}.html" for n in range(1, 21)]
    )


def test_list_state_is_named_from_the_list_and_resumes(
    serve: ServeFn, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    site = serve(site_app(60))
    listing = write_list(tmp_path, site, LISTED)
    os.chdir(tmp_path)
    assert main(["crawl", "--list", str(listing), "-q", "-n", "3", "-c", "1"]) == 0
    (state,) = tmp_path.glob("*.sitecrawl.db")
    assert state.name.startswith("127.0.0.1_") and "-list-" in state.name
    assert main(["crawl", "--list", str(listing), "-c", "1"]) == 0
    err = capsys.readouterr().err
    assert f"state: {state.name} (resuming crawl 1: 3 pages done" in err
    assert page_requests(site) == ["/p/9", "/p/3", "/", "/p/41", "/p/12?x=1", "/p/7"]
    out = tmp_path / "all.jsonl"
    assert main(["export", state.name, "-o", str(out), "-q"]) == 0
    assert len(out.read_text(encoding="utf-8").splitlines()) == 6


def sitemap_site() -> web.Application:
    async def index(request: web.Request) -> web.Response:
        body = (
            '<?xml version="1.0"?><sitemapindex>'
            "<sitemap><loc>/sitemap-a.xml.gz</loc></sitemap>"
            "<sitemap><loc>/sitemap-b.xml</loc></sitemap></sitemapindex>"
        )
        return web.Response(text=body, content_type="application/xml")

    def urlset(paths: list[str]) -> bytes:
        locs = "".join(f"<url><loc>{path}</loc></url>" for path in paths)
        return f'<?xml version="1.0"?><urlset>{locs}</urlset>'.encode()

    async def part_a(request: web.Request) -> web.Response:
        body = gzip.compress(urlset(["/a/1", "/a/2"]))
        return web.Response(body=body, content_type="application/gzip")

    async def part_b(request: web.Request) -> web.Response:
        return web.Response(body=urlset(["/b/1", "/a/1"]), content_type="application/xml")

    async def page(request: web.Request) -> web.Response:
        return html('<a href="/elsewhere">not followed</a>')

    app = web.Application()
    app.router.add_get("/sitemap_index.xml", index)
    app.router.add_get("/sitemap-a.xml.gz", part_a)
    app.router.add_get("/sitemap-b.xml", part_b)
    app.router.add_get("/{tail:.*}", page)
    return app


def test_list_from_a_sitemap_index_with_gzip(serve: ServeFn) -> None:
    site = serve(sitemap_site())
    argv = ["crawl", "--list", site.url + "/sitemap_index.xml", "--no-state", "-q", "-c", "1"]
    assert main(argv) == 0
    assert page_requests(site) == [
        "/sitemap_index.xml",
        "/sitemap-a.xml.gz",
        "/sitemap-b.xml",
        "/a/1",
        "/a/2",
        "/b/1",
    ]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--list", "missing.txt"], "cannot read --list missing.txt"),
        (["--follow", "http://127.0.0.1:9/"], "--follow goes with --list"),
        (["http://127.0.0.1:9/", "--list", "-"], "give start URLs or --list, not both"),
        ([], "a start URL is required"),
        (["http://127.0.0.1:9/", "ftp://127.0.0.1:9/"], "unsupported URL scheme"),
    ],
)
def test_list_usage_errors(
    argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    os.chdir(tmp_path)
    assert main(["crawl", "--no-state", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_bad_line_in_a_list_names_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    listing = tmp_path / "urls.txt"
    listing.write_text("http://a.test/\nftp://nope/\n", encoding="utf-8")
    assert main(["crawl", "--list", str(listing), "--no-state"]) == 2
    assert f"--list {listing}, line 2: unsupported URL scheme" in capsys.readouterr().err


def test_several_start_urls_crawl_the_union_of_their_scopes(serve: ServeFn) -> None:
    book = serve(book_app())
    other = serve(site_app(10))
    argv = ["crawl", book.url + "/book/", other.url + "/", "--no-state", "-q"]
    assert main(argv) == 0
    assert sorted(page_requests(book)) == sorted(
        ["/book/"] + [f"/book/ch{n}.html" for n in range(1, 21)]
    )
    assert sorted(page_requests(other)) == sorted(["/"] + [f"/p/{i}" for i in range(1, 10)])


def redirecting_start(target: str) -> web.Application:
    async def moved(request: web.Request) -> web.Response:
        raise web.HTTPMovedPermanently(target)

    app = web.Application()
    app.router.add_get("/", moved)  # robots.txt and sitemap.xml: 404
    return app


def test_a_start_url_that_redirects_to_another_host_moves_the_scope(
    serve: ServeFn, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    site = serve(site_app(20))
    old = serve(redirecting_start(site.url + "/"))
    out = tmp_path / "pages.jsonl"
    assert main(["crawl", old.url + "/", "--no-state", "-o", str(out)]) == 0
    assert sorted(page_requests(site)) == sorted(["/"] + [f"/p/{i}" for i in range(1, 20)])
    assert page_requests(old) == ["/"]
    err = capsys.readouterr().err
    assert f"start URL {old.url}/ redirected to {site.url}/: the scope is now site" in err
    assert f"scope: site {site.url.removeprefix('http://')}" in err
    first = json.loads(out.read_text(encoding="utf-8").splitlines()[0])
    assert first["url"] == old.url + "/" and first["final_url"] == site.url + "/"


def test_a_start_url_redirecting_into_a_folder_crawls_the_folder(
    serve: ServeFn, capsys: pytest.CaptureFixture[str]
) -> None:
    site = serve(book_app())
    start = serve(redirecting_start(site.url + "/book/"))
    assert main(["crawl", start.url + "/", "--no-state"]) == 0
    assert sorted(page_requests(site)) == sorted(
        ["/book/"] + [f"/book/ch{n}.html" for n in range(1, 21)]
    )
    assert "scope: prefix" in capsys.readouterr().err


def test_a_resumed_crawl_keeps_the_scope_its_start_url_redirected_to(
    serve: ServeFn, tmp_path: Path
) -> None:
    site = serve(site_app(30))
    old = serve(redirecting_start(site.url + "/"))
    state = str(tmp_path / "moved.db")
    assert main(["crawl", old.url + "/", "--state", state, "-q", "-n", "3", "-c", "1"]) == 0
    assert main(["crawl", old.url + "/", "--state", state, "-q"]) == 0
    assert sorted(page_requests(site)) == sorted(["/"] + [f"/p/{i}" for i in range(1, 30)])


def linking_app() -> web.Application:
    async def page(request: web.Request) -> web.Response:
        return html('<a href="/b">b</a> <a href="/missing">gone</a>')

    app = web.Application()
    app.router.add_get("/a", page)
    app.router.add_get("/b", page)
    return app


def test_check_a_list_checks_the_links_of_the_listed_pages(
    serve: ServeFn, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    site = serve(linking_app())
    listing = write_list(tmp_path, site, ["/a"])
    assert main(["check", "--list", str(listing), "-q"]) == 1  # a broken link
    out = capsys.readouterr().out
    assert f"BROKEN {site.url}/missing" in out
    assert f"{site.url}/b " not in out.replace("BROKEN", "")  # /b answered 200
    paths = site.traffic.paths
    assert paths.count("/a") == 1  # crawled (GET); its links checked, not crawled
    assert "/missing" in paths and "/b" in paths
