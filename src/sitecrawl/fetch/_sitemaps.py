"""Sitemaps: ``Sitemap:`` lines from robots.txt, else ``/sitemap.xml``; urlset, sitemap index
and gzip. :func:`parse_sitemap` is pure (bytes in, URLs out); :func:`discover` is the thin
shell that walks an index with a fetch function supplied by the crawler.
"""

from __future__ import annotations

import zlib
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from xml.etree.ElementTree import Element, ParseError, XMLPullParser

from .._exceptions import FetchError
from .._urls import join
from ..control import CrawlScope
from ._alternates import merge_alternates
from ._fetcher import FollowPolicy
from ._redirects import RedirectTrail

if TYPE_CHECKING:
    from ._gate import RobotsGate
    from ._pagejob import PoliteClient

MAX_SITEMAP_BYTES = 50 * 1024 * 1024  # the sitemaps.org limit, uncompressed
MAX_SITEMAP_FILES = 50
MAX_SITEMAP_URLS = 50_000 * 4
#: The error of a sitemap URL answered with an HTML page (an application's catch-all route).
HTML_PAGE = "is an HTML page, not a sitemap"


@dataclass(slots=True)
class Sitemap:
    """What one sitemap file lists: page URLs (``urlset``) or more sitemaps (index), and
    the hreflang alternates its ``<url>`` entries name (``<xhtml:link rel="alternate"
    hreflang=... href=...>``), page URL -> ``[(hreflang, URL), ...]``."""

    urls: list[str] = field(default_factory=list)
    sitemaps: list[str] = field(default_factory=list)
    error: str | None = None
    alternates: dict[str, list[tuple[str, str]]] = field(default_factory=dict)


def gunzip(body: bytes, cap: int = MAX_SITEMAP_BYTES) -> bytes | None:
    """Decompress a gzip body, at most ``cap`` bytes out; None when it is not valid gzip."""
    inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    try:
        out = inflater.decompress(body, cap)
    except zlib.error:
        return None
    return out


def _is_html(body: bytes) -> bool:
    """The body starts as an HTML page does (``<!doctype html>`` or ``<html``)."""
    start = body[:512].lstrip(b"\xef\xbb\xbf \t\r\n")[:14].lower()
    return start.startswith((b"<!doctype html", b"<html"))


def parse_sitemap(body: bytes, base: str) -> Sitemap:
    """Read a sitemap (gzip or not): ``<url><loc>`` into ``urls``, ``<sitemap><loc>`` into
    ``sitemaps``; ``loc`` values resolved against ``base``. Namespaces are ignored. A
    malformed file keeps what was read before the error and says so in ``error``; an HTML
    page is no sitemap (:data:`HTML_PAGE`)."""
    if body[:2] == b"\x1f\x8b":
        unzipped = gunzip(body)
        if unzipped is None:
            return Sitemap(error="bad gzip")
        body = unzipped
    if _is_html(body):
        return Sitemap(error=HTML_PAGE)
    result = Sitemap()
    parser: XMLPullParser[Element] = XMLPullParser(events=("end",))
    try:
        for start in range(0, min(len(body), MAX_SITEMAP_BYTES), 1 << 16):
            parser.feed(body[start : start + (1 << 16)])
            _collect(parser, result, base)
            if len(result.urls) >= MAX_SITEMAP_URLS:
                break
        parser.close()
        _collect(parser, result, base)
    except ParseError as exc:
        result.error = f"bad XML: {exc}"
    return result


def _collect(parser: XMLPullParser[Element], result: Sitemap, base: str) -> None:
    for event in parser.read_events():
        element = event[-1]
        if not isinstance(element, Element):
            continue
        local = element.tag.rpartition("}")[2]
        if local not in ("url", "sitemap"):
            continue
        url = None
        pairs: list[tuple[str, str]] = []
        for child in element:
            tag = child.tag.rpartition("}")[2]
            if tag == "loc" and child.text:
                url = join(base, child.text.strip())
                if url is not None:
                    (result.urls if local == "url" else result.sitemaps).append(url)
            elif tag == "link" and local == "url":
                attrs = child.attrib
                rels = (attrs.get("rel") or "").lower().split()
                lang, href = attrs.get("hreflang"), attrs.get("href")
                if "alternate" in rels and lang and href and (target := join(base, href.strip())):
                    pairs.append((lang.strip(), target))
        if url is not None and pairs and local == "url":
            result.alternates[url] = merge_alternates(result.alternates.get(url, []), pairs)
        element.clear()


# (status, body) of one GET, or None when nothing usable came back.
SitemapFetch = Callable[[str], Awaitable["tuple[int, bytes] | None"]]


@dataclass(slots=True)
class Discovery:
    """The in-scope page URLs found, in sitemap order, and the sitemap files read; the
    hreflang alternates the sitemaps name for those pages (:attr:`Sitemap.alternates`)."""

    urls: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    alternates: dict[str, list[tuple[str, str]]] = field(default_factory=dict)


async def discover(
    fetch: SitemapFetch, declared: Iterable[str], base: str, scope: CrawlScope
) -> Discovery:
    """Walk sitemaps breadth-first from the robots.txt ``Sitemap:`` lines (else
    ``/sitemap.xml``), at most :data:`MAX_SITEMAP_FILES` files; keep in-scope page URLs."""
    listed = (join(base, url) for url in declared)
    queue = [url for url in listed if url is not None and scope.contains(url)]
    queue = queue or [join(base, "/sitemap.xml") or base]
    seen: set[str] = set()
    found: set[str] = set()
    out = Discovery()
    while queue and len(out.files) < MAX_SITEMAP_FILES and len(found) < MAX_SITEMAP_URLS:
        url = queue.pop(0)
        if url in seen:
            continue
        seen.add(url)
        answer = await fetch(url)
        if answer is None or not 200 <= answer[0] < 300:
            if answer is not None and answer[0] != 404:
                out.errors.append(f"{url}: HTTP {answer[0]}")
            continue
        out.files.append(url)
        sitemap = parse_sitemap(answer[1], url)
        if sitemap.error == HTML_PAGE:
            html = [error for error in out.errors if error.endswith(HTML_PAGE)]
            if not html:  # a catch-all answers every sitemap URL so: said once
                out.errors.append(f"{url} {HTML_PAGE}")
        elif sitemap.error:
            out.errors.append(f"{url}: {sitemap.error}")
        queue += [child for child in sitemap.sitemaps if scope.contains(child)]
        for page in sitemap.urls:
            if page not in found and scope.contains(page):
                found.add(page)
                out.urls.append(page)
        for page, pairs in sitemap.alternates.items():
            if page in found:
                out.alternates[page] = merge_alternates(out.alternates.get(page, []), pairs)
    return out


async def sitemap_urls(
    origin: str,
    *,
    client: PoliteClient,
    gate: RobotsGate,
    scope: CrawlScope,
    max_redirects: int,
    declared: Iterable[str] | None = None,
) -> Discovery:
    """The URLs of ``origin``'s sitemaps in ``scope``: the ``declared`` sitemap URLs (a
    ``--list`` sitemap), by default its robots.txt ``Sitemap:`` lines, else
    ``/sitemap.xml``; indexes and gzip followed. Fetched as the crawl fetches pages: through
    ``client``, each hop through the robots ``gate``, redirects in scope, bodies capped at
    :data:`MAX_SITEMAP_BYTES`. The crawl's seeding and ``--list`` both read them here."""
    if declared is None:
        robots = gate.robots
        declared = (await robots.rules(origin)).sitemaps if robots is not None else ()
    policy = FollowPolicy(scope=scope, max_redirects=max_redirects, max_bytes=MAX_SITEMAP_BYTES)

    async def fetch(url: str) -> tuple[int, bytes] | None:
        result = await client.follow(RedirectTrail(url, policy), check=gate.check)
        if isinstance(result, FetchError):
            return None  # not there, or robots.txt keeps us out
        return result.status, result.body or b""

    return await discover(fetch, declared, origin, scope)
