"""Issue 33: ``--archive-assets`` archives each page's requisites in scope (images, stylesheets,
scripts, icons) as the server sent them, each once, politely (robots.txt obeyed), without
making them page rows; without the flag none is asked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from aiohttp import web

from conftest import ServeFn
from sitecrawl._cli import main
from sitecrawl.fetch import requisites
from test_warc import records, warcio_check

ASSETS = {
    "/img/a.png": (b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4, "image/png"),
    "/css/s.css": (b"body { color: #123; }\n" * 50, "text/css"),
    "/js/app.js": (b"document.title = 'x';\n" * 40, "application/javascript"),
    "/favicon.ico": (b"\x00\x00\x01\x00icon" * 10, "image/x-icon"),
    "/private/x.png": (b"never", "image/png"),
}


def assets_app(seen: list[str]) -> web.Application:
    async def handle(request: web.Request) -> web.StreamResponse:
        seen.append(request.path)
        host = request.host.replace("127.0.0.1", "localhost")  # another site: out of scope
        if request.path == "/robots.txt":
            return web.Response(text="User-agent: *\nDisallow: /private/\n")
        if request.path == "/":
            return web.Response(
                text='<html><head><title>home</title><link rel="stylesheet" href="/css/s.css">'
                '<link rel="icon" href="/favicon.ico"><link rel="canonical" href="/">'
                '<script src="/js/app.js"></script></head><body><a href="/b">b</a>'
                '<img src="/img/a.png" alt="a">'
                f'<img src="/private/x.png"><img src="http://{host}/img/a.png"></body></html>',
                content_type="text/html",
            )
        if request.path == "/b":
            return web.Response(
                text='<html><head><title>b</title></head><body><img src="/img/a.png"></body>'
                "</html>",
                content_type="text/html",
            )
        if request.path in ASSETS:
            body, kind = ASSETS[request.path]
            return web.Response(body=body, content_type=kind)
        raise web.HTTPNotFound()

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handle)
    return app


def test_requisites_are_the_links_a_browser_loads_with_the_page() -> None:
    links = [
        ("http://h/a", "a", None, "a"),
        ("http://h/i.png", None, None, "img"),
        ("http://h/s.css", None, "stylesheet", "link"),
        ("http://h/i.ico", None, "shortcut icon", "link"),
        ("http://h/next", None, "next", "link"),
        ("http://h/c", None, "canonical", "link"),
        ("http://h/app.js", None, None, "script"),
        ("http://h/i.png", None, None, "img"),
        ("data:image/png;base64,AA", None, None, "img"),
        ("http://h/frame", None, None, "iframe"),
    ]
    assert requisites(links) == [
        "http://h/i.png",
        "http://h/s.css",
        "http://h/i.ico",
        "http://h/app.js",
    ]


def test_archive_assets_archives_the_requisites_in_scope_once(
    serve: ServeFn, tmp_path: Path
) -> None:
    seen: list[str] = []
    site = serve(assets_app(seen))
    archive, pages = tmp_path / "site.warc.gz", tmp_path / "pages.jsonl"
    argv = ["crawl", site.url + "/", "-q", "--no-state", "-o", str(archive), "-o", str(pages)]
    assert main([*argv, "--archive-assets"]) == 0
    warcio_check(archive)
    payloads = {
        record.rec_headers.get_header("WARC-Target-URI"): payload
        for record, payload in records(archive)
        if record.rec_type == "response"
    }
    wanted = {path for path in ASSETS if not path.startswith("/private/")}
    for path in wanted:
        assert payloads[site.url + path] == ASSETS[path][0], path  # as the server sent it
        assert seen.count(path) == 1, path  # once, though two pages show /img/a.png
    assert "/private/x.png" not in seen  # robots.txt disallows it
    assert not any("localhost" in url for url in payloads)  # another site: not asked
    rows = [json.loads(line)["url"] for line in pages.read_text().splitlines()]
    assert sorted(rows) == [site.url + "/", site.url + "/b"]  # requisites are not page rows


def test_without_the_flag_no_requisite_is_asked(serve: ServeFn, tmp_path: Path) -> None:
    seen: list[str] = []
    site = serve(assets_app(seen))
    archive = tmp_path / "site.warc.gz"
    assert main(["crawl", site.url + "/", "-q", "--no-state", "-o", str(archive)]) == 0
    assert not set(seen) & set(ASSETS)
    seen.clear()  # the flag without an archive: refused before any request
    argv = ["crawl", site.url + "/", "-q", "--no-state", "-o", str(tmp_path / "p.jsonl")]
    assert main([*argv, "--archive-assets"]) == 2
    assert not seen


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["crawl", "{url}", "-q", "--no-state", "-o", "{tmp}/p.jsonl"], "add -o FILE.warc.gz"),
        (["check", "{url}", "-q"], "check writes none"),
        (["extract", "{url}", "-x", "t=css:title"], "extract writes none"),
    ],
    ids=["crawl-without-archive", "check", "extract"],
)
def test_archive_assets_without_an_archive_is_refused(
    argv: list[str], said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The requisites are fetched for an archive only: the option alone would be ignored
    silently, so it is a usage error (exit 2, one line), before any request."""
    url = "http://127.0.0.1:9/"  # (nothing listens: a request made would fail otherwise)
    args = [arg.format(url=url, tmp=tmp_path) for arg in argv]
    assert (
        main(
            [*args, "--archive-assets", "-q"]
            if argv[0] != "extract"
            else [*args, "--archive-assets"]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--archive-assets" in err and said in err
    assert not list(tmp_path.iterdir())  # no output, no state file
