"""The MCP tools over streamable HTTP, for the server's ``/mcp``: :func:`mcp_asgi_app`
gives an ASGI app (mount it, or give it as a route's endpoint: it answers whatever path it
is given) and the lifespan that runs its sessions::

    mcp = mcp_asgi_app(token=token, root=data_dir)
    app = Starlette(routes=[Mount("/mcp", app=mcp)], lifespan=lambda app: mcp.lifespan())

With a token, every request needs ``Authorization: Bearer <token>`` (compared in constant
time; 401 otherwise). Without one (a server on 127.0.0.1), the SDK's DNS-rebinding
protection holds: only loopback ``Host`` and ``Origin`` headers are served, so that a web
page in the user's browser cannot reach the tools through a name that resolves to 127.0.0.1.
"""

from __future__ import annotations

import hmac
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from .._exceptions import MissingExtra
from ._mcp import mcp_server

if TYPE_CHECKING:
    from ._policy import TargetGuard

try:
    from mcp.server.transport_security import TransportSecuritySettings
    from starlette.responses import JSONResponse
    from starlette.types import Receive, Scope, Send
except ImportError:
    raise MissingExtra(
        "the MCP tools over HTTP need the serve extra: pip install 'sitecrawl[serve]'",
        extra="serve",
    ) from None


#: ``/mcp/`` in the server's OpenAPI document (the SDK's transport serves it, not a route).
MCP_OPENAPI: dict[str, dict[str, Any]] = {
    "/mcp/": {
        "post": {
            "summary": "The MCP tools (crawl, markdown, check, extract, diff) over streamable"
            " HTTP: JSON-RPC messages of the Model Context Protocol; use an MCP client",
            "operationId": "mcp",
            "tags": ["mcp"],
            "parameters": [],
            "responses": {
                "200": {"description": "a JSON-RPC answer, or an event stream of them"},
                "401": {"description": "no token, or a wrong one", "content": {}},
            },
        }
    }
}


def bearer_ok(scope: Scope, token: str) -> bool:
    """Whether the request carries ``Authorization: Bearer <token>`` (constant time)."""
    for name, value in scope.get("headers", ()):
        if name.lower() == b"authorization":
            scheme, _, given = value.partition(b" ")
            if scheme.lower() == b"bearer":
                return hmac.compare_digest(given.strip(), token.encode("utf-8"))
    return False


class McpHttp:
    """An ASGI app serving the MCP tools (:func:`mcp_asgi_app`); :meth:`lifespan` runs its
    session manager (enter it once, in the server's lifespan)."""

    def __init__(
        self,
        token: str | None = None,
        *,
        root: str | None = None,
        url_allowed: Callable[[str], bool] | None = None,
        guard: TargetGuard | None = None,
    ) -> None:
        self.token = token
        self.server = mcp_server(root=root, url_allowed=url_allowed, guard=guard)
        if token is None:
            security = TransportSecuritySettings(
                enable_dns_rebinding_protection=True,
                allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
                allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
            )
        else:  # the token guards it, on any address
            security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
        self.server.streamable_http_app(streamable_http_path="/", transport_security=security)
        self.manager = self.server.session_manager

    @asynccontextmanager
    async def lifespan(self) -> AsyncIterator[None]:
        async with self.manager.run():
            yield

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        if self.token is not None and not bearer_ok(scope, self.token):
            response = JSONResponse(
                {"error": "unauthorized"},
                status_code=401,
                headers={"WWW-Authenticate": "Bearer"},
            )
            await response(scope, receive, send)
            return
        await self.manager.handle_request(scope, receive, send)


def mcp_asgi_app(
    token: str | None = None,
    *,
    root: str | None = None,
    url_allowed: Callable[[str], bool] | None = None,
    guard: TargetGuard | None = None,
) -> McpHttp:
    """The MCP tools over streamable HTTP (see the module's docstring): ``token`` the
    server's bearer token, ``root`` the directory the ``diff`` tool reads state files from
    (the server's data directory), ``url_allowed`` its ``--allow-hosts`` test, ``guard``
    its private targets' (:func:`~sitecrawl.serve._policy.refused_target`)."""
    return McpHttp(token, root=root, url_allowed=url_allowed, guard=guard)
