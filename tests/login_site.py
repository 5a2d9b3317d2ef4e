"""Sites for the request options: a private site behind HTTP Basic auth and a session cookie
set by its login page, an "external" site that records every header it receives, a small
forward proxy that records what it carried, and a site of large binaries that counts the
bytes it actually sent."""

from __future__ import annotations

import asyncio
import base64
from dataclasses import dataclass, field

import aiohttp
from aiohttp import web

from servers import html

USER, PASSWORD = "alice", "pw-7f3a9e"
TOKEN = "tok-41c2b8"  # an X-Token header's value
SESSION = "sess-90d1f4"  # the session cookie the login page sets
PREF = "pref-5e11aa"  # a cookie given with --cookie
SECRETS = (PASSWORD, TOKEN, SESSION, PREF, base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode())
CREDENTIAL_HEADERS = ("Authorization", "X-Token", "Cookie")
PRIVATE_PAGES = ("/", "/a", "/b", "/c")


@dataclass
class Seen:
    """Every request a server received: ``(method, path, headers)``."""

    requests: list[tuple[str, str, dict[str, str]]] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)

    def leaks(self) -> list[tuple[str, str]]:
        """``(path, header)`` of every credential header received."""
        return [
            (path, name)
            for _, path, headers in self.requests
            for name in CREDENTIAL_HEADERS
            if name in headers
        ]

    def paths(self) -> list[str]:
        return [path for _, path, _ in self.requests]


def _recording(seen: Seen) -> web.Application:
    @web.middleware
    async def record(request: web.Request, handler: object) -> web.StreamResponse:
        seen.requests.append((request.method, request.path_qs, dict(request.headers)))
        return await handler(request)  # type: ignore[operator,no-any-return]

    return web.Application(middlewares=[record])


def external_app(seen: Seen) -> web.Application:
    """Another site (another port): robots.txt, pages, an image; it records every header."""
    app = _recording(seen)

    async def robots(request: web.Request) -> web.Response:
        return web.Response(text="User-agent: *\nAllow: /\n")

    async def page(request: web.Request) -> web.Response:
        return html(f'<a href="/more">more</a> {request.path}', title="external")

    async def image(request: web.Request) -> web.Response:
        return web.Response(body=b"\x89PNG....", content_type="image/png")

    app.router.add_get("/robots.txt", robots)
    app.router.add_get("/img.png", image)
    app.router.add_get("/{name}", page)
    return app


def private_app(seen: Seen, external: str) -> web.Application:
    """Every request needs Basic auth and the X-Token header (else 401); the pages also need
    the session cookie, set by ``/login``, and the ``pref`` cookie given on the command line
    (else 403). Pages link to the external site, and ``/moved`` and ``/away`` redirect there."""
    app = _recording(seen)
    expected = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()

    @web.middleware
    async def guard(request: web.Request, handler: object) -> web.StreamResponse:
        if request.headers.get("Authorization") != expected or (
            request.headers.get("X-Token") != TOKEN
        ):
            seen.refused.append(request.path)
            return web.Response(status=401, headers={"WWW-Authenticate": 'Basic realm="x"'})
        return await handler(request)  # type: ignore[operator,no-any-return]

    app.middlewares.append(guard)
    links = {
        "/": ["/a", "/b", "/moved", f"{external}/page"],
        "/a": ["/b", "/c", f"{external}/page"],
        "/b": ["/c", "/"],
        "/c": ["/"],
    }

    async def robots(request: web.Request) -> web.Response:
        return web.Response(text="User-agent: *\nAllow: /\n")

    async def login(request: web.Request) -> web.Response:
        response = web.HTTPFound("/")
        response.set_cookie("session", SESSION, path="/", httponly=True)
        raise response

    async def page(request: web.Request) -> web.Response:
        if request.cookies.get("session") != SESSION or request.cookies.get("pref") != PREF:
            seen.refused.append(request.path)
            return html("log in first", status=403)
        anchors = "".join(f'<a href="{href}">{href}</a>' for href in links[request.path])
        return html(anchors + f'<img src="{external}/img.png">', title=request.path)

    async def moved(request: web.Request) -> web.Response:
        raise web.HTTPFound(f"{external}/landing")

    app.router.add_get("/robots.txt", robots)
    app.router.add_get("/login", login)
    app.router.add_get("/moved", moved)
    app.router.add_get("/away", moved)
    for path in links:
        app.router.add_get(path, page)
    return app


def proxy_app(carried: list[str], auths: list[str] | None = None) -> web.Application:
    """A forward proxy for http:// URLs: it records each absolute URL it is asked for (and
    each Proxy-Authorization in ``auths``) and fetches it."""
    app = web.Application()

    async def forward(request: web.Request) -> web.Response:
        target = request.raw_path
        if not target.startswith("http://"):
            return web.Response(status=400, text="not a proxy request")
        carried.append(target)
        if auths is not None:
            auths.append(request.headers.get("Proxy-Authorization", ""))
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP}
        async with (
            aiohttp.ClientSession(auto_decompress=False) as session,
            session.request(
                request.method, target, headers=headers, allow_redirects=False
            ) as upstream,
        ):
            body = await upstream.read()
            kept = {k: v for k, v in upstream.headers.items() if k.lower() not in _HOP}
            return web.Response(status=upstream.status, body=body, headers=kept)

    app.router.add_route("*", "/{tail:.*}", forward)
    return app


_HOP = {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "content-length"}
_HOP |= {"host", "proxy-authorization"}

BIG = 64 * 1024 * 1024


@dataclass
class Sent:
    """Bytes each big-body route wrote before the client went away."""

    bytes: dict[str, int] = field(default_factory=dict)


def binary_app(sent: Sent) -> web.Application:
    """``/`` links to ``/big.zip`` and ``/film.mp4`` (64 MiB each, declared in
    Content-Length, streamed slowly) and shows ``/photo.jpg`` (the same, GET only: a HEAD is
    refused, so a link check falls back to GET)."""

    async def index(request: web.Request) -> web.Response:
        return html(
            '<a href="/big.zip">zip</a><a href="/film.mp4">film</a><img src="/photo.jpg">',
            title="files",
        )

    async def big(request: web.Request) -> web.StreamResponse:
        kind = {"zip": "application/zip", "mp4": "video/mp4", "jpg": "image/jpeg"}
        response = web.StreamResponse(headers={"Content-Type": kind[request.path[-3:]]})
        response.content_length = BIG
        await response.prepare(request)
        chunk = b"\0" * 65536
        sent.bytes[request.path] = 0
        try:
            while sent.bytes[request.path] < BIG:
                await response.write(chunk)
                sent.bytes[request.path] += len(chunk)
                await asyncio.sleep(0.002)
        except ConnectionError:
            pass  # the client went away: what it cost is counted
        return response

    app = web.Application()
    app.router.add_get("/", index)
    app.router.add_get("/big.zip", big)
    app.router.add_get("/film.mp4", big)
    app.router.add_route("GET", "/photo.jpg", big)
    return app


def consent_app() -> web.Application:
    """A consent wall: without the ``consent`` cookie every page redirects to ``/consent``,
    which sets it and redirects back where the visitor came from."""

    async def page(request: web.Request) -> web.Response:
        if request.cookies.get("consent") != "yes":
            raise web.HTTPFound(f"/consent?next={request.path}")
        return html('<a href="/x">x</a><a href="/y">y</a>', title=request.path)

    async def consent(request: web.Request) -> web.Response:
        response = web.HTTPFound(request.query.get("next", "/"))
        response.set_cookie("consent", "yes", path="/")
        raise response

    app = web.Application()
    app.router.add_get("/consent", consent)
    for path in ("/", "/x", "/y"):
        app.router.add_get(path, page)
    return app
