"""A fault-injection site: an aiohttp app whose pages misbehave in every way the web does.

``/`` links to every fault. robots.txt is configurable (a text, a status, or a redirect);
``FaultState`` keeps what the server did (bytes streamed, per-path hit counts) so tests can
assert server-side.
"""

from __future__ import annotations

import asyncio
import gzip
from dataclasses import dataclass, field

import brotli
from aiohttp import web

try:
    from compression import zstd  # type: ignore[import-not-found]
except ImportError:  # Python < 3.14
    from backports import zstd

from servers import html

GIB = 1 << 30
BOMB_SIZE = 256 << 20  # decoded size of the gzip bomb

FRENCH = "Le café est très bon, à bientôt. Voilà où ça va. Naïve élève, déjà prêt."
JAPANESE = "日本語のテキストです。これはシフトJISでエンコードされています。東京は大きな都市です。"

FAULT_LINKS = [
    "/private/secret",
    "/private/ok",
    "/file.pdf",
    "/to-private",
    "/limited",
    "/flaky",
    "/down",
    "/slow",
    "/stall",
    "/never",
    "/trickle",
    "/reset",
    "/huge",
    "/bomb",
    "/br",
    "/zstd",
    "/cp1252",
    "/sjis",
    "/mislabelled-utf8",
    "/mislabelled-latin1",
    "/chain/1",
    "/loop/a",
    "/hops/0",
    "/out",
    "/ftp",
    "/calendar?month=0",
    "/grow?q=a",
    "/meta-nofollow",
    "/xrobots",
    "/relnofollow",
]

DEFAULT_ROBOTS = """\
User-agent: *
Disallow: /

User-agent: SiteCrawl
Disallow: /private
Allow: /private/ok$
Disallow: /*.pdf$
Sitemap: /sitemap_index.xml
"""


@dataclass
class FaultState:
    hits: dict[str, int] = field(default_factory=dict)
    huge_bytes_sent: int = 0
    huge_finished: asyncio.Event | None = None

    def hit(self, request: web.Request) -> int:
        key = request.path
        self.hits[key] = self.hits.get(key, 0) + 1
        return self.hits[key]


def _bomb() -> bytes:
    """256 MiB of zeros as 1 + 16 concatenated gzip members (~260 KB on the wire)."""
    head = gzip.compress(b"<!doctype html><html><head><title>bomb</title></head><body><p>")
    zeros = gzip.compress(bytes(BOMB_SIZE // 16), compresslevel=9)
    return head + zeros * 16


_BOMB: bytes | None = None


def _doc(title: str, body: str = "", head: str = "") -> bytes:
    return (
        f"<!doctype html><html><head><title>{title}</title>{head}</head><body>{body}</body></html>"
    ).encode()


def _raw(body: bytes, content_type: str = "text/html", **headers: str) -> web.Response:
    return web.Response(body=body, headers={"Content-Type": content_type, **headers})


def sitemap_xml(urls: list[str], *, index: bool = False) -> bytes:
    tag, inner = ("sitemapindex", "sitemap") if index else ("urlset", "url")
    items = "".join(f"<{inner}><loc>{url}</loc></{inner}>" for url in urls)
    return (
        f'<?xml version="1.0" encoding="UTF-8"?>'
        f'<{tag} xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{items}</{tag}>'
    ).encode()


def fault_app(
    robots: str | int | None = DEFAULT_ROBOTS,
    *,
    links: list[str] | None = None,
    state: FaultState | None = None,
    sitemap_xml_fallback: bool = False,
) -> web.Application:
    """``robots``: robots.txt text, an HTTP status to answer it with, or None for a redirect
    to ``/robots-moved.txt`` (which serves :data:`DEFAULT_ROBOTS`)."""
    st = state if state is not None else FaultState()
    app = web.Application()
    routes = web.RouteTableDef()
    links = FAULT_LINKS if links is None else links

    @routes.get("/")
    async def index(request: web.Request) -> web.Response:
        anchors = "".join(f'<a href="{link}">{link}</a>' for link in links)
        return html(f"<h1>Faults</h1>{anchors}", title="index")

    @routes.get("/robots.txt")
    async def robots_txt(request: web.Request) -> web.StreamResponse:
        if robots is None:
            raise web.HTTPMovedPermanently("/robots-moved.txt")
        if isinstance(robots, int):
            return web.Response(status=robots, text="no")
        return web.Response(text=robots, content_type="text/plain")

    @routes.get("/robots-moved.txt")
    async def robots_moved(request: web.Request) -> web.Response:
        return web.Response(text=DEFAULT_ROBOTS, content_type="text/plain")

    @routes.get("/sitemap_index.xml")
    async def sitemap_index(request: web.Request) -> web.Response:
        base = f"http://{request.host}"
        body = sitemap_xml(
            [f"{base}/sitemap-a.xml.gz", f"{base}/sitemap-b.xml", "http://elsewhere.invalid/s.xml"],
            index=True,
        )
        return _raw(body, "application/xml")

    @routes.get("/sitemap-a.xml.gz")
    async def sitemap_a(request: web.Request) -> web.Response:
        base = f"http://{request.host}"
        body = sitemap_xml([f"{base}/orphan/1", f"{base}/orphan/2", "http://elsewhere.invalid/x"])
        return _raw(gzip.compress(body), "application/gzip")

    @routes.get("/sitemap-b.xml")
    async def sitemap_b(request: web.Request) -> web.Response:
        base = f"http://{request.host}"
        return _raw(sitemap_xml([f"{base}/orphan/3", f"{base}/private/in-sitemap"]), "text/xml")

    @routes.get("/sitemap.xml")
    async def sitemap_default(request: web.Request) -> web.Response:
        if not sitemap_xml_fallback:
            raise web.HTTPNotFound()
        return _raw(sitemap_xml([f"http://{request.host}/orphan/9"]), "application/xml")

    @routes.get("/orphan/{n}")
    @routes.get("/private/{name}")
    @routes.get("/nf/{name}")
    @routes.get("/final")
    async def plain(request: web.Request) -> web.Response:
        return html(f"<p>{request.path}</p>", title=request.path)

    @routes.get("/file.pdf")
    async def pdf(request: web.Request) -> web.Response:
        return _raw(b"%PDF-1.4", "application/pdf")

    @routes.get("/to-private")
    async def to_private(request: web.Request) -> web.Response:
        raise web.HTTPFound("/private/secret2")

    @routes.get("/limited")
    async def limited(request: web.Request) -> web.Response:
        if st.hit(request) == 1:
            return web.Response(status=429, headers={"Retry-After": "1"}, text="slow down")
        return html("<p>ok now</p>", title="limited")

    @routes.get("/flaky")
    async def flaky(request: web.Request) -> web.Response:
        if st.hit(request) <= 2:
            return web.Response(status=503, text="flapping")
        return html("<p>up again</p>", title="flaky")

    @routes.get("/down")
    async def down(request: web.Request) -> web.Response:
        st.hit(request)
        return web.Response(status=503, text="down")

    @routes.get("/slow")
    async def slow(request: web.Request) -> web.Response:
        await asyncio.sleep(0.1)
        return html("<p>slow but fine</p>", title="slow")

    @routes.get("/stall")
    async def stall(request: web.Request) -> web.StreamResponse:
        st.hit(request)
        resp = web.StreamResponse(headers={"Content-Type": "text/html", "Content-Length": "1000"})
        await resp.prepare(request)
        await resp.write(b"<html><head><title>stall")
        await asyncio.sleep(3600)
        return resp

    @routes.get("/never")
    async def never(request: web.Request) -> web.Response:
        st.hit(request)
        await asyncio.sleep(3600)
        raise AssertionError("unreachable")

    @routes.get("/trickle")
    async def trickle(request: web.Request) -> web.StreamResponse:
        st.hit(request)
        resp = web.StreamResponse(headers={"Content-Type": "text/html"})
        await resp.prepare(request)
        for _ in range(36000):
            await resp.write(b" ")
            await asyncio.sleep(0.05)
        return resp

    @routes.get("/reset")
    async def reset(request: web.Request) -> web.StreamResponse:
        st.hit(request)
        assert request.transport is not None
        request.transport.abort()  # RST-like: the connection dies before any response
        await asyncio.sleep(3600)
        raise AssertionError("unreachable")

    @routes.get("/huge")
    async def huge(request: web.Request) -> web.StreamResponse:
        size = 4 * GIB
        resp = web.StreamResponse(
            headers={"Content-Type": "text/html", "Content-Length": str(size)}
        )
        await resp.prepare(request)
        chunk = b"<p>" + b"x" * ((1 << 16) - 3)
        try:
            while st.huge_bytes_sent < size:
                await resp.write(chunk)
                st.huge_bytes_sent += len(chunk)
        finally:
            if st.huge_finished is not None:
                st.huge_finished.set()
        return resp

    @routes.get("/bomb")
    async def bomb(request: web.Request) -> web.Response:
        global _BOMB
        if _BOMB is None:
            _BOMB = _bomb()
        return _raw(_BOMB, "text/html", **{"Content-Encoding": "gzip"})

    @routes.get("/br")
    async def br(request: web.Request) -> web.Response:
        if "br" not in request.headers.get("Accept-Encoding", ""):
            return web.Response(status=406, text="br not accepted")
        body = brotli.compress(_doc("brotli page", "<p>decoded from br</p>"))
        return _raw(body, "text/html", **{"Content-Encoding": "br"})

    @routes.get("/zstd")
    async def zstd_page(request: web.Request) -> web.Response:
        if "zstd" not in request.headers.get("Accept-Encoding", ""):
            return web.Response(status=406, text="zstd not accepted")
        body = zstd.compress(_doc("zstd page", "<p>decoded from zstd</p>"))
        return _raw(body, "text/html", **{"Content-Encoding": "zstd"})

    @routes.get("/cp1252")
    async def cp1252(request: web.Request) -> web.Response:
        return _raw(_doc("cp1252", f"<p>{FRENCH}</p>").decode().encode("cp1252"))

    @routes.get("/sjis")
    async def sjis(request: web.Request) -> web.Response:
        return _raw(_doc("sjis", f"<p>{JAPANESE}</p>").decode().encode("shift_jis"))

    @routes.get("/mislabelled-utf8")
    async def mislabelled_utf8(request: web.Request) -> web.Response:
        body = _doc("mislabelled", f"<p>{FRENCH}</p>").decode().encode("cp1252")
        return _raw(body, "text/html; charset=utf-8")

    @routes.get("/mislabelled-latin1")
    async def mislabelled_latin1(request: web.Request) -> web.Response:
        return _raw(_doc("mislabelled", f"<p>{FRENCH}</p>"), "text/html; charset=iso-8859-1")

    @routes.get("/chain/{n}")
    async def chain(request: web.Request) -> web.Response:
        n = int(request.match_info["n"])
        if n == 1:
            raise web.HTTPMovedPermanently("/chain/2")
        if n == 2:
            raise web.HTTPFound("/chain/3")
        raise web.HTTPTemporaryRedirect("/final")

    @routes.get("/loop/{name}")
    async def loop(request: web.Request) -> web.Response:
        raise web.HTTPFound("/loop/b" if request.match_info["name"] == "a" else "/loop/a")

    @routes.get("/hops/{n}")
    async def hops(request: web.Request) -> web.Response:
        raise web.HTTPFound(f"/hops/{int(request.match_info['n']) + 1}")

    @routes.get("/out")
    async def out(request: web.Request) -> web.Response:
        raise web.HTTPFound("http://elsewhere.invalid/")

    @routes.get("/ftp")
    async def ftp(request: web.Request) -> web.Response:
        raise web.HTTPFound("ftp://127.0.0.1/file")

    @routes.get("/calendar")
    async def calendar(request: web.Request) -> web.Response:
        month = int(request.query.get("month", "0"))
        nav = f'<a href="?month={month - 1}">prev</a><a href="?month={month + 1}">next</a>'
        return html(nav, title=f"month {month}")

    @routes.get("/grow")
    async def grow(request: web.Request) -> web.Response:
        q = request.query.get("q", "a")
        return html(f'<a href="?q={q}{q}">more</a>', title=f"grow {len(q)}")

    @routes.get("/meta-nofollow")
    async def meta_nofollow(request: web.Request) -> web.Response:
        head = '<meta name="ROBOTS" content="noindex, nofollow">'
        return html('<a href="/nf/from-meta">x</a>', title="meta", head=head)

    @routes.get("/xrobots")
    async def xrobots(request: web.Request) -> web.Response:
        resp = html('<a href="/nf/from-header">x</a>', title="xrobots")
        resp.headers.add("X-Robots-Tag", "otherbot: noindex")
        resp.headers.add("X-Robots-Tag", "sitecrawl: nofollow, noindex")
        return resp

    @routes.get("/relnofollow")
    async def relnofollow(request: web.Request) -> web.Response:
        body = '<a rel="nofollow ugc" href="/nf/from-rel">x</a><a href="/nf/followed">y</a>'
        return html(body, title="rel")

    app.add_routes(routes)
    return app
