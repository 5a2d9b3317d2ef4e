"""hreflang from HTTP ``Link`` headers and from sitemaps' ``<xhtml:link>`` entries, feeding the
same checks as the ``<link>`` tags: a loopback site whose annotations come from each source
(and from two at once), right and wrong."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from aiohttp import web

from conftest import ServeFn
from servers import html
from sitecrawl._cli import main
from sitecrawl.fetch import link_alternates, merge_alternates
from sitecrawl.fetch._sitemaps import parse_sitemap

XHTML = "http://www.w3.org/1999/xhtml"


@pytest.fixture(autouse=True)
def _in_tmp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.chdir(tmp_path)
    yield


def test_link_headers_are_read_by_their_parameters() -> None:
    header = (
        '<https://e.com/de/>; rel="alternate"; hreflang="de", </fr/?a=1,2>; rel=alternate;'
        ' hreflang=fr, <https://e.com/s.css>; rel=preload; as=style, </x>; rel="canonical",'
        ' </es/>; hreflang="es"; rel="nofollow alternate"\n</it/>; rel="alternate"'
    )
    assert link_alternates(header, "https://e.com/en/") == [
        ("de", "https://e.com/de/"),
        ("fr", "https://e.com/fr/?a=1,2"),
        ("es", "https://e.com/es/"),
    ]
    assert link_alternates(None, "https://e.com/") == []
    assert link_alternates("</a>; rel=preload", "https://e.com/") == []


def test_sources_merge_without_repeating_a_pair() -> None:
    own = [("en", "https://e.com/en/")]
    more = [("EN", "https://e.com/en/"), ("de", "https://e.com/de/")]
    assert merge_alternates(own, more) == [*own, ("de", "https://e.com/de/")]


def test_a_sitemap_s_xhtml_links_are_each_url_s_alternates() -> None:
    body = (
        '<?xml version="1.0" encoding="UTF-8"?>'
        f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:xhtml="{XHTML}">'
        "<url><loc>https://e.com/en/</loc>"
        '<xhtml:link rel="alternate" hreflang="en" href="https://e.com/en/"/>'
        '<xhtml:link rel="alternate" hreflang="de" href="/de/"/>'
        '<xhtml:link rel="stylesheet" hreflang="fr" href="/fr.css"/>'
        "</url><url><loc>https://e.com/plain/</loc></url></urlset>"
    ).encode()
    sitemap = parse_sitemap(body, "https://e.com/sitemap.xml")
    assert sitemap.urls == ["https://e.com/en/", "https://e.com/plain/"]
    assert sitemap.alternates == {
        "https://e.com/en/": [("en", "https://e.com/en/"), ("de", "https://e.com/de/")]
    }


def _links(origin: str, pairs: list[tuple[str, str]]) -> str:
    return ", ".join(
        f'<{origin}{path}>; rel="alternate"; hreflang="{lang}"' for lang, path in pairs
    )


def _tags(origin: str, pairs: list[tuple[str, str]]) -> str:
    return "".join(
        f'<link rel="alternate" hreflang="{lang}" href="{origin}{path}">' for lang, path in pairs
    )


def _xhtml(origin: str, pairs: list[tuple[str, str]]) -> str:
    return "".join(
        f'<xhtml:link rel="alternate" hreflang="{lang}" href="{origin}{path}"/>'
        for lang, path in pairs
    )


EN_DE = [("en", "/en/"), ("de", "/de/"), ("x-default", "/en/")]
FR_ES = [("fr", "/fr/"), ("es", "/es/"), ("x-default", "/fr/")]
IT_PT = [("it", "/it/"), ("pt", "/pt/"), ("x-default", "/it/")]
NL = [("nl", "/nl/"), ("sv-XX", "/sv/")]  # XX is no region; no x-default
PAGES = ("/en/", "/de/", "/fr/", "/es/", "/it/", "/pt/", "/nl/", "/sv/")


def sources_app() -> web.Application:
    """/en/ says its alternates in a Link header, /de/ in <link> tags (right, across two
    sources); /fr/'s Link header names /es/, which names nobody back; the sitemap gives /it/
    and /pt/ their (right) alternates and /nl/ a wrong code and no x-default."""

    async def page(request: web.Request) -> web.Response:
        path = request.path
        origin = f"http://{request.host}"
        name = path.strip("/")
        head = f'<meta name="description" content="{name}">'
        if path == "/de/":
            head += _tags(origin, EN_DE)
        response = html(f"<h1>{name}</h1><p>Page {name}.</p>", title=name, head=head)
        if path == "/en/":
            response.headers["Link"] = _links(origin, EN_DE)
        if path == "/fr/":
            response.headers["Link"] = _links(origin, FR_ES)
        return response

    async def home(request: web.Request) -> web.Response:
        links = "".join(f'<a href="{path}">{path}</a>' for path in PAGES)
        return html(f"<h1>Home</h1>{links}", title="Home", head='<meta name="description" c="">')

    async def robots(request: web.Request) -> web.Response:
        return web.Response(text=f"User-agent: *\nSitemap: http://{request.host}/sitemap.xml\n")

    async def sitemap(request: web.Request) -> web.Response:
        origin = f"http://{request.host}"
        entries = {"/it/": IT_PT, "/pt/": IT_PT, "/nl/": NL}
        urls = "".join(
            f"<url><loc>{origin}{path}</loc>{_xhtml(origin, entries.get(path, []))}</url>"
            for path in ("/", *PAGES)
        )
        return web.Response(
            text='<?xml version="1.0" encoding="UTF-8"?>'
            '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
            f' xmlns:xhtml="{XHTML}">{urls}</urlset>',
            content_type="application/xml",
        )

    app = web.Application()
    app.router.add_get("/", home)
    app.router.add_get("/robots.txt", robots)
    app.router.add_get("/sitemap.xml", sitemap)
    for path in PAGES:
        app.router.add_get(path, page)
    return app


@pytest.mark.parametrize("store", ["sqlite", "memory"])
def test_header_and_sitemap_annotations_feed_the_hreflang_checks(
    serve: ServeFn, store: str
) -> None:
    site = serve(sources_app())
    if store == "sqlite":
        assert main(["crawl", site.url, "--state", "h.db", "-q"]) == 0
        assert main(["export", "h.db", "-t", "issues", "-q", "-o", "i.jsonl"]) == 0
        assert main(["export", "h.db", "-q", "-o", "p.jsonl"]) == 0
    else:
        assert main(["crawl", site.url, "--no-state", "-q", "-o", "p.jsonl"]) == 0
    pages = {
        r["url"].removeprefix(site.url): r
        for r in map(json.loads, Path("p.jsonl").read_text().splitlines())
    }
    origin = site.url.rstrip("/")
    assert pages["/en/"]["hreflang"] == [[lang, origin + path] for lang, path in EN_DE]
    assert pages["/it/"]["hreflang"] == [[lang, origin + path] for lang, path in IT_PT]
    assert pages["/es/"]["hreflang"] == []
    if store != "sqlite":
        return
    rows = [json.loads(line) for line in Path("i.jsonl").read_text().splitlines()]
    found = {
        (r["check"], r["url"].removeprefix(site.url))
        for r in rows
        if r["check"].startswith("hreflang.")
    }
    assert found == {
        ("hreflang.no_return", "/fr/"),  # its Link header names /es/, which names nobody
        ("hreflang.invalid_code", "/nl/"),  # the sitemap's sv-XX
        ("hreflang.no_x_default", "/nl/"),
        ("hreflang.no_return", "/nl/"),  # /sv/ names nobody
    }
