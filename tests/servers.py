"""Real HTTP servers for the tests: aiohttp apps on 127.0.0.1, each in its own thread and loop,
so that both async tests and the CLI's own ``asyncio.Runner`` can crawl them."""

from __future__ import annotations

import asyncio
import itertools
import os
import ssl
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def checkout_env(**extra: str) -> dict[str, str]:
    """Environment for subprocesses: they import this checkout's sitecrawl, warnings are errors."""
    path = os.pathsep.join(filter(None, [os.path.join(ROOT, "src"), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONWARNINGS": "error", "PYTHONPATH": path, **extra}


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


#: Requests a polite crawler makes besides pages: robots.txt and the default sitemap.
HOUSEKEEPING = frozenset({"/robots.txt", "/sitemap.xml"})


@dataclass
class Traffic:
    """What the server saw: every request path, in arrival order, when each started (per
    Host header), peak concurrency (overall and per host), and request headers seen."""

    paths: list[str] = field(default_factory=list)
    in_flight: int = 0
    peak_in_flight: int = 0
    user_agents: set[str] = field(default_factory=set)
    starts: list[tuple[float, str, str]] = field(default_factory=list)  # (monotonic, host, path)
    host_in_flight: dict[str, int] = field(default_factory=dict)
    host_peak: dict[str, int] = field(default_factory=dict)
    accept_encodings: set[str] = field(default_factory=set)

    def count(self, path: str) -> int:
        return self.paths.count(path)

    @property
    def pages(self) -> list[str]:
        """Request paths other than robots.txt and /sitemap.xml."""
        return [path for path in self.paths if path not in HOUSEKEEPING]

    def gaps(self, host: str | None = None) -> list[float]:
        """Seconds between consecutive request starts (on one host, if given)."""
        times = [t for t, h, _ in self.starts if host is None or h == host]
        return [b - a for a, b in itertools.pairwise(times)]

    def short_gaps(
        self, interval: float, *, tolerance: float, spaced_from: int = 1, host: str | None = None
    ) -> tuple[list[str], list[str]]:
        """Starts that arrived sooner than ``interval`` after the one before, as
        ``(excused, unexcused)`` descriptions for assertion messages. Starts before the
        ``spaced_from``-th one (robots.txt, when a Crawl-delay in it spaces what follows)
        need not be spaced from the one before them.

        The server notes a start when its thread reads the request; on a loaded machine that
        can be late by more than the interval, and a request read late shortens the gap after
        it by as much as it lengthened the gap before. So a short gap is excused when the
        start after it still came as many intervals after the start before it as the two
        gaps need (two; one when the first is not spaced): how late the middle one was read
        does not change that span, and a crawler that skipped or shortened the delay there
        falls short of it (by an interval, less its jitter). A short first gap has no span to
        tell: it is excused (callers bound how many are)."""
        started = [(t, path) for t, h, path in self.starts if host is None or h == host]
        excused: list[str] = []
        unexcused: list[str] = []
        for k in range(max(spaced_from, 1), len(started)):
            gap = started[k][0] - started[k - 1][0]
            if gap >= interval - tolerance:
                continue
            what = f"{started[k][1]} {gap:.3f} s after {started[k - 1][1]}"
            if k < 2:  # nothing before it: its start may have been read late
                excused.append(what)
                continue
            span = started[k][0] - started[k - 2][0]
            need = interval * (2 if k - 1 >= spaced_from else 1)
            what += f", {span:.3f} s after {started[k - 2][1]}"
            (excused if span >= need - tolerance else unexcused).append(what)
        return excused, unexcused


class ServerThread:
    """Run an aiohttp app on a free 127.0.0.1 port in a background thread."""

    def __init__(self, app: web.Application, ssl_context: ssl.SSLContext | None = None) -> None:
        self.app = app
        self.ssl_context = ssl_context  # https:// when given
        self.traffic = Traffic()
        app.middlewares.append(self._count)
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._runner: web.AppRunner | None = None
        self._transports: list[asyncio.BaseTransport] = []
        self.port = 0

    @web.middleware
    async def _count(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        traffic = self.traffic
        host = request.host
        traffic.paths.append(request.path_qs)
        traffic.starts.append((time.monotonic(), host, request.path_qs))
        traffic.user_agents.add(request.headers.get("User-Agent", ""))
        traffic.accept_encodings.add(request.headers.get("Accept-Encoding", ""))
        traffic.in_flight += 1
        traffic.peak_in_flight = max(traffic.peak_in_flight, traffic.in_flight)
        now_in_flight = traffic.host_in_flight.get(host, 0) + 1
        traffic.host_in_flight[host] = now_in_flight
        traffic.host_peak[host] = max(traffic.host_peak.get(host, 0), now_in_flight)
        try:
            return await handler(request)
        finally:
            traffic.in_flight -= 1
            traffic.host_in_flight[host] -= 1

    @property
    def url(self) -> str:
        scheme = "https" if self.ssl_context is not None else "http"
        return f"{scheme}://127.0.0.1:{self.port}"

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._runner = web.AppRunner(self.app, access_log=None, handler_cancellation=True)
        self._loop.run_until_complete(self._runner.setup())
        # Every connection's transport, to close any that cleanup() leaves open: one accepted
        # as it shuts down is dropped from its list, one closed with an answer its peer never
        # read (a killed or stalled browser) waits for the write forever.
        web_server = self._runner.server
        assert web_server is not None
        made = web_server.connection_made

        def connection_made(handler: Any, transport: asyncio.Transport) -> None:
            self._transports.append(transport)
            made(handler, transport)

        web_server.connection_made = connection_made  # type: ignore[method-assign]
        site = web.TCPSite(self._runner, "127.0.0.1", 0, ssl_context=self.ssl_context)
        self._loop.run_until_complete(site.start())
        server = site._server
        assert server is not None and server.sockets
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        self._loop.run_forever()

    def start(self) -> ServerThread:
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("test server did not start")
        return self

    def stop(self) -> None:
        async def shutdown() -> None:
            assert self._runner is not None
            await self._runner.cleanup()
            # A connection accepted during the cleanup is made a loop turn or more later (a
            # browser opens speculative ones as it likes): two passes, so that none is left
            # to be collected, unclosed, in a later test.
            for _ in range(2):
                await asyncio.sleep(0.01)
                for transport in [*self._transports, *_open_transports(self._loop)]:
                    transport.abort()  # closed or not (its unsent answer to a gone peer dropped)
                await asyncio.sleep(0)  # their sockets close

        asyncio.run_coroutine_threadsafe(shutdown(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()


def _open_transports(loop: asyncio.AbstractEventLoop) -> list[asyncio.BaseTransport]:
    """Every socket transport ``loop`` still holds open, whether or not the app's protocol
    heard of it: one accepted whose ``connection_made`` had not run yet (a TLS handshake
    not finished, a task not yet run when the server closed) is in no list of aiohttp's or
    ours, and was collected, unclosed, during a later test (CI on dc48fcf). The selector
    loop keeps them by file descriptor (``_transports``, private: read when present)."""
    held: Any = getattr(loop, "_transports", None)
    return list(held.values()) if held is not None else []


def html(body: str, *, title: str = "", head: str = "", status: int = 200) -> web.Response:
    doc = f"<!doctype html><html><head><title>{title}</title>{head}</head>"
    doc += f"<body>{body}</body></html>"
    return web.Response(text=doc, content_type="text/html", status=status)


def link_graph(pages: int) -> dict[int, list[int]]:
    """A deterministic graph where every page is reachable from page 0: i links to its two
    children in a binary tree, back to 0, and to (7*i) % pages."""
    return {
        i: [j for j in (2 * i + 1, 2 * i + 2) if j < pages] + [0, (7 * i) % pages]
        for i in range(pages)
    }


def site_app(
    pages: int = 60,
    *,
    delay: float = 0.0,
    until: threading.Event | None = None,
    gate: threading.Event | None = None,
) -> web.Application:
    """A generated site: ``/`` is page 0, ``/p/{i}`` the others. Each page mixes relative,
    root-relative, absolute, fragment, mailto and external links, plus one image. Each answer
    takes ``delay`` seconds (until the test sets ``until``, if given), and waits while the
    test holds ``gate`` closed (cleared)."""
    graph = link_graph(pages)

    def path(i: int) -> str:
        return "/" if i == 0 else f"/p/{i}"

    async def page(request: web.Request) -> web.Response:
        i = int(request.match_info.get("i", 0))
        if not 0 <= i < pages:
            raise web.HTTPNotFound()
        while gate is not None and not gate.is_set():
            await asyncio.sleep(0.01)
        if delay and not (until and until.is_set()):
            await asyncio.sleep(delay)
        host = request.host
        links = []
        for n, j in enumerate(graph[i]):
            target = path(j)
            if n % 3 == 1:
                target = f"http://{host}{target}"  # absolute
            elif n % 3 == 2 and j != 0:
                target = f"{j}"  # relative to /p/
                if i == 0:
                    target = f"p/{j}"
            links.append(f'<a href="{target}#frag">to {j}</a>')
        links.append('<a href="mailto:someone@example.com">mail</a>')
        links.append('<a href="https://external.invalid/x">external</a>')
        body = (
            f"<h1>Page {i}</h1><p>intro {i}</p><main><p>Main text of page {i}.</p></main>"
            f"<img src='/img/{i}.png' alt='image {i}'>" + "".join(links)
        )
        return html(body, title=f"Title {i}", head=f'<meta name="description" content="d{i}">')

    app = web.Application()
    app.router.add_get("/", page)
    app.router.add_get("/p/{i}", page)
    return app


def expected_paths(pages: int) -> set[str]:
    return {"/"} | {f"/p/{i}" for i in range(1, pages)}
