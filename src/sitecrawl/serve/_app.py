"""The server's ASGI app (Starlette): the JSON API (:mod:`._api`), its OpenAPI document, the
web UI (:mod:`._ui`), all behind the bearer token (:mod:`._auth`); the crawl manager
(:mod:`._crawls`) lives as long as the app (its lifespan)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from .._version import __version__
from ._api import ENDPOINTS, guarded
from ._auth import BearerAuth
from ._config import ServeConfig
from ._crawls import CrawlManager
from ._openapi import openapi
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

        return Response(
            dumps(openapi(TITLE, __version__, ENDPOINTS)), media_type="application/json"
        )

    routes.append(Route("/openapi.json", document, methods=["GET"]))
    routes += UI_ROUTES
    # -- mount points for the monitors and MCP (issue 34) ---------------------------------
    # The monitors' routes go here: routes += monitor_routes(manager) (/api/monitors...);
    # their Endpoint rows join the OpenAPI document: openapi(..., [*ENDPOINTS, *theirs]).
    # The MCP server mounts here: routes.append(Mount("/mcp", app=mcp_asgi_app)), its session
    # manager entered in lifespan() below. BearerAuth wraps the whole app: both are covered.
    # ---------------------------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await manager.start()
        try:
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
