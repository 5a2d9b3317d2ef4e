"""The site the audit tests crawl: known broken links, redirects, images, a robots-blocked page,
and "external" links to other loopback servers (healthy, broken, and a port nobody listens on).
"""

from __future__ import annotations

import socket
from dataclasses import dataclass

from aiohttp import web

from servers import ServerThread, html

HOSTILE_TITLE = '=HYPERLINK("http://evil.test","click")'


def unused_port() -> int:
    """A loopback port with nothing listening: connecting to it is refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def healthy_app() -> web.Application:
    """An external host that works: 200s, a redirect, a HEAD-refusing page, a flaky page."""
    calls = {"flaky": 0}

    async def ok(request: web.Request) -> web.Response:
        return web.Response(text="ok")

    async def moved(request: web.Request) -> web.Response:
        raise web.HTTPMovedPermanently("/ok")

    async def head_refused(request: web.Request) -> web.Response:
        return web.Response(status=405, headers={"Allow": "GET"})

    async def flaky(request: web.Request) -> web.Response:
        calls["flaky"] += 1
        return web.Response(status=503 if calls["flaky"] == 1 else 200, text="flaky")

    app = web.Application()
    app.router.add_get("/ok", ok)
    app.router.add_get("/moved", moved)
    app.router.add_route("HEAD", "/head-refused", head_refused)
    app.router.add_get("/head-refused", ok, allow_head=False)
    app.router.add_get("/flaky", flaky)
    return app


def broken_app() -> web.Application:
    """An external host whose pages fail: /gone is 404, /error 500."""

    async def error(request: web.Request) -> web.Response:
        return web.Response(status=500, text="boom")

    app = web.Application()
    app.router.add_get("/error", error)
    return app  # everything else: aiohttp's 404


@dataclass
class Externals:
    healthy: str
    broken: str
    refused: str


def audit_app(ext: Externals | None, *, clean: bool = False) -> web.Application:
    """The site. ``clean``: only working links and one redirect."""

    async def home(request: web.Request) -> web.Response:
        links = ['<a href="/about">About us</a>', '<a href="/old">Old page</a>']
        if not clean:
            links += [
                '<a href="/missing">Missing page</a>',
                '<a href="/private/secret">Secret</a>',
                '<img src="/img/logo.png" alt="Logo"><img src="/img/missing.png">',
                '<link rel="stylesheet" href="/style.css">',
            ]
        if ext is not None:
            links += [
                f'<a href="{ext.healthy}/ok">Healthy</a>',
                f'<a href="{ext.healthy}/moved">Moved away</a>',
                f'<a href="{ext.healthy}/head-refused">No HEAD</a>',
                f'<a href="{ext.healthy}/flaky">Flaky</a>',
                f'<a href="{ext.broken}/gone">Gone elsewhere</a>',
                f'<a href="{ext.broken}/error">Erroring</a>',
                f'<a href="{ext.refused}/x">Dead host</a>',
            ]
        return html(
            "<h1>Home</h1><h2>Links</h2><p>Welcome to the site.</p>" + "".join(links),
            title="Home",
            head='<meta name="description" content="home">',
        )

    async def about(request: web.Request) -> web.Response:
        body = '<h1>About</h1><p>About text here.</p><a href="/">Home</a>'
        if not clean:
            body += (
                '<a href="/missing">gone again</a><a href="/boom">Crash</a>'
                '<a href="/tricky">+SUM(1)</a>'
                '<img src="/img/logo.png" alt="Logo again">'
            )
        return html(body, title="About")

    async def tricky(request: web.Request) -> web.Response:
        return html('<h1>@cmd</h1><p>-2+3</p><img src="/img/logo.png">', title=HOSTILE_TITLE)

    async def boom(request: web.Request) -> web.Response:
        return web.Response(status=500, text="boom")

    async def old(request: web.Request) -> web.Response:
        raise web.HTTPMovedPermanently("/older")

    async def older(request: web.Request) -> web.Response:
        raise web.HTTPFound("/about")

    async def secret(request: web.Request) -> web.Response:
        return html("<h1>Secret</h1>", title="Secret")

    async def robots(request: web.Request) -> web.Response:
        return web.Response(text="User-agent: *\nDisallow: /private/\n")

    async def png(request: web.Request) -> web.Response:
        return web.Response(body=b"\x89PNG\r\n\x1a\n", content_type="image/png")

    async def css(request: web.Request) -> web.Response:
        return web.Response(text="p{}", content_type="text/css")

    app = web.Application()
    app.router.add_get("/", home)
    app.router.add_get("/about", about)
    app.router.add_get("/tricky", tricky)
    app.router.add_get("/boom", boom)
    app.router.add_get("/old", old)
    app.router.add_get("/older", older)
    app.router.add_get("/private/secret", secret)
    app.router.add_get("/robots.txt", robots)
    app.router.add_get("/img/logo.png", png)
    app.router.add_get("/style.css", css)
    return app


@dataclass
class AuditSites:
    site: ServerThread
    healthy: ServerThread
    broken: ServerThread
    ext: Externals
