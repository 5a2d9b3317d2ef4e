"""Sitemap parsing (pure) and discovery over a fetch function (no server needed)."""

from __future__ import annotations

import gzip

from faults import sitemap_xml
from sitecrawl.control import CrawlScope
from sitecrawl.fetch._sitemaps import MAX_SITEMAP_BYTES, discover, gunzip, parse_sitemap

BASE = "https://x.test/sitemap.xml"


def test_urlset_and_index() -> None:
    urls = parse_sitemap(sitemap_xml(["https://x.test/a", " /b "]), BASE)
    assert urls.urls == ["https://x.test/a", "https://x.test/b"]
    assert urls.sitemaps == [] and urls.error is None
    index = parse_sitemap(sitemap_xml(["https://x.test/s1.xml.gz"], index=True), BASE)
    assert index.sitemaps == ["https://x.test/s1.xml.gz"] and index.urls == []


def test_gzip_and_no_namespace() -> None:
    body = b"<urlset><url><loc>https://x.test/z</loc><lastmod>2024</lastmod></url></urlset>"
    assert parse_sitemap(gzip.compress(body), BASE).urls == ["https://x.test/z"]
    assert parse_sitemap(b"\x1f\x8bnot gzip", BASE).error == "bad gzip"


def test_malformed_xml_keeps_what_was_read() -> None:
    body = b"<urlset><url><loc>https://x.test/1</loc></url><url><loc>https://x.test/2</lo"
    result = parse_sitemap(body + b"c></url><oops", BASE)
    assert result.urls == ["https://x.test/1", "https://x.test/2"]
    assert result.error is not None and result.error.startswith("bad XML")


def test_gzip_bomb_is_capped() -> None:
    bomb = gzip.compress(bytes(MAX_SITEMAP_BYTES + (1 << 20)))
    out = gunzip(bomb)
    assert out is not None and len(out) == MAX_SITEMAP_BYTES


async def test_discover_walks_index_in_scope_only() -> None:
    files = {
        "https://x.test/index.xml": sitemap_xml(
            ["https://x.test/a.xml.gz", "https://other.test/b.xml", "https://x.test/index.xml"],
            index=True,
        ),
        "https://x.test/a.xml.gz": gzip.compress(
            sitemap_xml(["https://x.test/p1", "https://other.test/p", "https://x.test/p1"])
        ),
    }
    asked: list[str] = []

    async def fetch(url: str) -> tuple[int, bytes] | None:
        asked.append(url)
        return (200, files[url]) if url in files else (404, b"")

    scope = CrawlScope(["https://x.test/"], "site")
    found = await discover(fetch, ["/index.xml"], "https://x.test/", scope)
    assert found.urls == ["https://x.test/p1"]
    assert asked == ["https://x.test/index.xml", "https://x.test/a.xml.gz"]
    assert found.errors == []

    asked.clear()
    fallback = await discover(fetch, [], "https://x.test/", scope)
    assert asked == ["https://x.test/sitemap.xml"] and fallback.urls == []


async def test_a_sitemap_answered_with_an_html_page_is_said_once_not_bad_xml() -> None:
    """An application's catch-all answers every sitemap URL with its HTML shell."""
    shell = b"\xef\xbb\xbf\n<!DOCTYPE html><html><head><title>App</title></head></html>"
    assert parse_sitemap(shell, BASE).error == "is an HTML page, not a sitemap"
    assert (
        parse_sitemap(b"  <html lang='en'><body>x</body></html>", BASE).error
        == "is an HTML page, not a sitemap"
    )
    index = sitemap_xml(["https://x.test/a.xml", "https://x.test/b.xml"], index=True)

    async def fetch(url: str) -> tuple[int, bytes] | None:
        return 200, index if url.endswith("/index.xml") else shell

    scope = CrawlScope(["https://x.test/"], "site")
    found = await discover(fetch, ["/index.xml"], "https://x.test/", scope)
    assert found.errors == ["https://x.test/a.xml is an HTML page, not a sitemap"]
    fallback = await discover(fetch, [], "https://x.test/", scope)
    assert fallback.errors == ["https://x.test/sitemap.xml is an HTML page, not a sitemap"]
