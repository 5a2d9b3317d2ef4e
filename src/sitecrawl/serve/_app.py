"""The server's ASGI app (Starlette): the JSON API (:mod:`._api`), its OpenAPI document, the
web UI (:mod:`._ui`), the monitors (:mod:`._monitor_routes`) and the MCP tools at ``/mcp``
(:mod:`._mcp_http`), all behind the bearer token (:mod:`._auth`); the crawl manager
(:mod:`._crawls`), the monitor service and the MCP sessions live as long as the app (its
lifespan). ``--allow-hosts`` holds for all three, and so does the refusal of private
targets (``--allow-private-targets``, :func:`._policy.refused_target`)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Mount, Route

from .._version import __version__
from ._api import ENDPOINTS, guarded
from ._auth import BearerAuth
from ._config import ServeConfig
from ._crawls import CrawlManager
from ._mcp_http import MCP_OPENAPI, mcp_asgi_app
from ._monitor import MonitorService
from ._monitor_routes import MONITOR_ENDPOINTS, monitor_routes
from ._openapi import openapi
from ._policy import host_allowed, refused_target
from ._ui import ROUTES as UI_ROUTES

TITLE = "sitecrawl server"


def build_app(config: ServeConfig) -> Starlette:
    """The server's app for ``config``: its crawls start with the app's lifespan (uvicorn
    runs it) and stop with it (left ``running``, to run on at the next start)."""
    manager = CrawlManager(config)
    routes: list[BaseRoute] = [
        Route(endpoint.path, guarded(manager, endpoint), methods=[endpoint.method])
        for endpoint in ENDPOINTS
    ]

    async def document(request: Request) -> Response:
        from .._json import dumps

        text = dumps(openapi(TITLE, __version__, [*ENDPOINTS, *MONITOR_ENDPOINTS], MCP_OPENAPI))
        return Response(text, media_type="application/json")

    routes.append(Route("/openapi.json", document, methods=["GET"]))
    routes += UI_ROUTES

    def url_allowed(url: str) -> bool:
        return host_allowed(url, config.allow_hosts) is None

    # The monitors and the MCP tools: BearerAuth wraps the whole app, so both are covered
    # (the MCP app checks the same token itself too: without one it serves loopback names).
    # Private targets refused (--allow-private-targets): the same guard on every road in.
    guard = None if config.private_targets else refused_target
    monitors = MonitorService(config.data, url_allowed=url_allowed, guard=guard)
    routes += monitor_routes(monitors)
    mcp = mcp_asgi_app(config.token, root=config.data, url_allowed=url_allowed, guard=guard)
    routes.append(Mount("/mcp", app=mcp))

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await manager.start()
        try:
            async with monitors, mcp.lifespan():
                yield
        finally:
            await manager.close()

    app = Starlette(
        routes=routes,
        lifespan=lifespan,
        middleware=[Middleware(BearerAuth, token=config.token)],
    )
    app.state.manager = manager
    return app
