"""The bearer token: with a token set, every request needs ``Authorization: Bearer TOKEN``
(compared in constant time, :func:`hmac.compare_digest`), or it is answered 401.

An ASGI middleware around the whole app, so that it covers every route mounted in it (the
API, the monitors' routes, ``/mcp``), whatever their framework. The one exception is the
web UI's own page and its static files (``GET /``, ``GET /ui/...``): a browser cannot send a
header when it opens a page, and they hold no data; the page asks for the token once, keeps
it in the tab's ``sessionStorage`` and sends it with every API request it makes.
"""

from __future__ import annotations

import hmac
from typing import Any

from starlette.types import ASGIApp, Receive, Scope, Send

#: The paths a browser opens without a header: the UI's page and files (no data in them).
OPEN_PATHS = frozenset({"/", "/favicon.ico"})
OPEN_PREFIX = "/ui/"


def bearer(headers: list[tuple[bytes, bytes]]) -> bytes | None:
    """The token of an ``Authorization: Bearer`` header, else None."""
    for name, value in headers:
        if name.lower() == b"authorization":
            scheme, _, token = value.partition(b" ")
            if scheme.lower() == b"bearer" and token.strip():
                return token.strip()
    return None


class BearerAuth:
    """401 for any request without the token (see the module docstring)."""

    def __init__(self, app: ASGIApp, token: str | None) -> None:
        self.app = app
        self.token = token.encode() if token is not None else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.token is None or scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        if self._open(scope) or self._valid(bearer(list(scope.get("headers") or []))):
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        body = b'{"error": "unauthorized: send Authorization: Bearer TOKEN"}'
        headers: list[Any] = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            (b"www-authenticate", b'Bearer realm="sitecrawl"'),
        ]
        await send({"type": "http.response.start", "status": 401, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    def _valid(self, given: bytes | None) -> bool:
        assert self.token is not None
        return given is not None and hmac.compare_digest(given, self.token)

    @staticmethod
    def _open(scope: Scope) -> bool:
        if scope["type"] != "http" or scope.get("method") not in ("GET", "HEAD"):
            return False
        path: str = scope.get("path", "")
        return path in OPEN_PATHS or path.startswith(OPEN_PREFIX)
