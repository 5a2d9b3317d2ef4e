"""Issue 33: ``--archive-assets`` also archives what ``srcset`` (``<img>``, ``<picture>``'s
``<source>``) names, and what CSS names: stylesheets' ``url()`` and ``@import`` (fonts,
backgrounds, imported stylesheets, read in turn down to a depth), and the page's own
``<style>`` blocks and ``style=""`` attributes. Each once, as the server sent it; ``data:``
URLs and other sites never asked."""

from __future__ import annotations

from pathlib import Path

import pytest
from aiohttp import web

from conftest import ServeFn
from sitecrawl._cli import main
from sitecrawl.parse import css_urls, srcset_urls
from sitecrawl.parse._extract import parse_html
from test_warc import records, warcio_check


@pytest.mark.parametrize(
    ("srcset", "urls"),
    [
        ("a.png", ["a.png"]),
        ("a.png 1x, b.png 2x", ["a.png", "b.png"]),
        ("a.png 1x,b.png 2x", ["a.png", "b.png"]),
        (" ,, a.png\t2x ,\n", ["a.png"]),
        ("a.png 1x , b.png 2x", ["a.png", "b.png"]),  # a comma after a descriptor's space
        ("a.png, b.png", ["a.png", "b.png"]),  # the URL's trailing comma ends it
        ("/i/a,b.png 2x, c.png 3x", ["/i/a,b.png", "c.png"]),  # a comma inside a URL
        ("data:image/png;base64,AAAA 1x, b.png 2x", ["data:image/png;base64,AAAA", "b.png"]),
        ("w.png 400w, v.png 800w 600h", ["w.png", "v.png"]),
        ("a.png 1.5x, b.png 1e1x, c.png 0x", ["a.png", "b.png", "c.png"]),
        # What a browser drops: two widths or densities, a width and a density, zero width,
        # a negative density, a height alone, a descriptor it does not know.
        ("a.png 1x 2x, b.png 100w 1x, c.png 0w, d.png -1x, e.png 10h, ok.png", ["ok.png"]),
        ("a.png 2x (f, g), b.png", ["b.png"]),  # a parenthesised descriptor: not valid
        ("a.png 2X, b.png 3x", ["b.png"]),  # descriptors are lower case
        ("", []),
    ],
)
def test_srcset_is_read_as_the_html_standard_says(srcset: str, urls: list[str]) -> None:
    assert srcset_urls(srcset) == urls


def test_css_urls_come_from_url_image_set_and_import_not_comments() -> None:
    css = """
        @charset "utf-8";
        @import "a.css" screen;
        @import url(b.css);
        @import url( 'c.css' );
        /* url(commented.png) @import "commented.css"; */
        @font-face { src: url("f.woff2") format("woff2"), local(F), url(f.woff) }
        @media (min-width: 1px) { .x { background: url(  m.png  ) } }
        .y { content: "url(string.png)"; background: image-set("i1.png" 1x, url(i2.png) 2x) }
        .z { background: url(a\\)b.png), url(""), url() }
        .w { background: url(data:image/gif;base64,R0lGOD) }
    """
    assert css_urls(css) == [
        "a.css",
        "b.css",
        "c.css",
        "f.woff2",
        "f.woff",
        "m.png",
        "i1.png",
        "i2.png",
        "a)b.png",
        "data:image/gif;base64,R0lGOD",
    ]


def test_the_parser_gives_requisites_only_when_asked() -> None:
    html = """<html><head><base href="https://s/b/"><style>
        @import "/css/i.css"; .h { background: url('h.png') } .c { clip-path: url(#c) }
        </style></head><body>
        <img src="a.png" srcset="a.png 1x, a2.png 2x, data:image/png;base64,AA 3x">
        <picture><source srcset="w.webp 800w, https://other/x.webp 400w"><img src="f.png">
        </picture><div style="background: url(&quot;d.png&quot;)">t</div>
        <p style="color: red">no URL</p><a href="l">link</a>
        <link rel="preload" as="image" imagesrcset="p1.png 1x, p2.png 2x">
        <video poster=" v.jpg " src="v.mp4"><source src="v.webm"></video>
        <input type="IMAGE" src="go.png"><input type="text" src="no.png"></body></html>"""
    data = parse_html(html, "https://s/page", link_details=True, requisites=True)
    assert data.requisites == [
        "https://s/b/a.png",
        "https://s/b/a2.png",
        "https://s/b/w.webp",
        "https://other/x.webp",  # (out of scope: the crawl's test, not the parser's)
        "https://s/b/p1.png",
        "https://s/b/p2.png",
        "https://s/b/v.jpg",  # the poster, not the media
        "https://s/b/go.png",
        "https://s/css/i.css",
        "https://s/b/h.png",
        "https://s/b/d.png",
    ]
    assert parse_html(html, "https://s/page", link_details=True).requisites == []


def asset(body: bytes, kind: str) -> tuple[bytes, str]:
    return body, kind


ASSETS = {
    # srcset and <picture>
    "/img/small.png": asset(b"\x89PNG small" * 20, "image/png"),
    "/img/a,comma.png": asset(b"\x89PNG comma" * 20, "image/png"),
    "/img/wide.webp": asset(b"RIFFwide" * 30, "image/webp"),
    "/img/narrow.webp": asset(b"RIFFnarrow" * 30, "image/webp"),
    "/img/fallback.png": asset(b"\x89PNG fallback" * 20, "image/png"),
    # the page's own CSS: a <style> block's @import and url(), a style attribute's url()
    "/css/inline.css": asset(b'.e { background: url("/img/inline-bg.png") }\n', "text/css"),
    "/img/inline-bg.png": asset(b"\x89PNG inline-bg" * 20, "image/png"),
    "/img/hero.png": asset(b"\x89PNG hero" * 20, "image/png"),
    "/img/div.png": asset(b"\x89PNG div" * 20, "image/png"),
    # a stylesheet: an @import, a font, a background twice; relative to its own URL
    "/css/main.css": asset(
        b"/* url(/img/commented.png) */\n"
        b'@import url("second.css");\n'
        b'@font-face { font-family: F; src: url(../fonts/f.woff2) format("woff2") }\n'
        b"@font-face { font-family: G; src: url(../fonts/f.woff2#iefix), url(/fonts/f.woff2#x) }\n"
        b"body { background: url(/img/bg.png) }\n"
        b".a { background: url(data:image/gif;base64,R0lGODlhAQABAAAAACw=) }\n"
        b".b { background: url(http://OTHER/img/bg.png) }\n"
        b".c { background: url('/img/bg.png') }\n",
        "text/css",
    ),
    "/fonts/f.woff2": asset(b"wOF2" + bytes(range(256)) * 2, "font/woff2"),
    "/img/bg.png": asset(b"\x89PNG bg" * 20, "image/png"),
    # imports of imports: read down to three stylesheets deep, the fourth fetched, not read
    "/css/second.css": asset(
        b'@import "third.css";\n.d { background: url(img/second.png) }\n', "text/css"
    ),
    "/css/img/second.png": asset(b"\x89PNG second" * 20, "image/png"),
    "/css/third.css": asset(b'@import "fourth.css";\n.t { color: red }\n', "text/css"),
    "/css/fourth.css": asset(b'@import "fifth.css";\n', "text/css"),
}
NEVER = {"/img/commented.png", "/css/fifth.css"}


def css_app(seen: list[str]) -> web.Application:
    async def handle(request: web.Request) -> web.StreamResponse:
        seen.append(request.path)
        other = request.host.replace("127.0.0.1", "localhost")  # another site: out of scope
        if request.path == "/":
            return web.Response(
                text=f"""<html><head><title>home</title>
                <link rel="stylesheet" href="/css/main.css">
                <style>@import "/css/inline.css"; .h {{ background: url('/img/hero.png') }}
                .x {{ background: url(data:image/png;base64,iVBORw0KGgo=) }}</style></head>
                <body><a href="/b">b</a>
                <img src="/img/small.png" srcset="/img/small.png 1x, /img/a,comma.png 2x">
                <picture>
                <source srcset="/img/wide.webp 800w, /img/narrow.webp 400w" type="image/webp">
                <source srcset="data:image/png;base64,iVBORw0KGgo= 1x, http://{other}/x.png 2x">
                <img src="/img/fallback.png"></picture>
                <div style="background-image: url(&quot;/img/div.png&quot;)">x</div>
                </body></html>""",
                content_type="text/html",
            )
        if request.path == "/b":  # the same stylesheet and images again
            return web.Response(
                text='<html><head><title>b</title><link rel="stylesheet" href="/css/main.css">'
                '</head><body><img srcset="/img/wide.webp 800w, /img/small.png 400w">'
                '<div style="background: url(/img/bg.png)"></div></body></html>',
                content_type="text/html",
            )
        if request.path in ASSETS:
            body, kind = ASSETS[request.path]
            body = body.replace(b"OTHER", other.encode())
            return web.Response(body=body, content_type=kind)
        raise web.HTTPNotFound()

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handle)
    return app


def test_srcset_and_css_requisites_are_archived_once_as_sent(
    serve: ServeFn, tmp_path: Path
) -> None:
    seen: list[str] = []
    site = serve(css_app(seen))
    archive = tmp_path / "site.warc.gz"
    argv = ["crawl", site.url + "/", "-q", "--no-state", "-o", str(archive), "--archive-assets"]
    assert main(argv) == 0
    warcio_check(archive)
    responses = [
        (record.rec_headers.get_header("WARC-Target-URI"), payload)
        for record, payload in records(archive)
        if record.rec_type == "response"
    ]
    payloads = dict(responses)
    host = site.url.split("//")[1]
    for path, (body, _kind) in ASSETS.items():
        sent = body.replace(b"OTHER", host.replace("127.0.0.1", "localhost").encode())
        assert payloads.get(site.url + path) == sent, path  # archived as the server sent it
        assert seen.count(path) == 1, (path, seen.count(path))  # once, though named twice
    assert len(responses) == len(payloads)  # no URL archived twice
    assert not NEVER & set(seen)  # a comment's url(), a stylesheet too deep to read
    assert not any("localhost" in url for url in payloads)  # another site: not asked
    assert not any(url.startswith("data:") for url in payloads)
    assert set(seen) <= {*ASSETS, "/", "/b", "/robots.txt", "/sitemap.xml"}


def test_without_the_flag_neither_srcset_nor_css_is_asked(serve: ServeFn, tmp_path: Path) -> None:
    seen: list[str] = []
    site = serve(css_app(seen))
    argv = ["crawl", site.url + "/", "-q", "--no-state", "-o", str(tmp_path / "a.warc.gz")]
    assert main(argv) == 0
    assert sorted(set(seen)) == ["/", "/b", "/robots.txt", "/sitemap.xml"]
