"""The monitors' part of the server's JSON API, as Starlette routes over a
:class:`~sitecrawl.serve.MonitorService`:

- ``POST /api/monitors``: ``{"url", "every" | "cron", "webhook", "secret", "format",
  "notify", "fail_on", crawl options}`` -> 201 and the monitor (400 naming a bad option);
- ``GET /api/monitors`` (newest first), ``GET /api/monitors/{id}`` (with its last
  deliveries, failed ones included), ``DELETE /api/monitors/{id}`` (204);
- ``POST /api/monitors/{id}/run``: a run now (202; 409 when one is going);
- ``GET /api/monitors/{id}/diff?crawl=N``: every change of crawl N (default: the last);
  409 while a run holds the monitor's state file.

No answer holds a secret (:meth:`MonitorService._view`). Authentication is the server's
(its token middleware wraps these routes with the rest).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from .._exceptions import ConfigError, MissingExtra, StateError

try:
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route
except ImportError:
    raise MissingExtra(
        "the monitors' API needs starlette: pip install 'sitecrawl[serve]'", extra="serve"
    ) from None

if TYPE_CHECKING:
    from ._monitor import MonitorService


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def monitor_routes(service: MonitorService) -> list[Route]:
    """The routes of the module's docstring, served by ``service`` (entered by the
    server's lifespan)."""

    async def create(request: Request) -> Response:
        try:
            body = json.loads(await request.body())
        except ValueError:
            return _error(400, "the body is not JSON")
        try:
            return JSONResponse(service.create(body), status_code=201)
        except ConfigError as exc:
            return _error(400, str(exc))

    async def listing(request: Request) -> Response:
        return JSONResponse(service.list())

    async def one(request: Request) -> Response:
        found = service.get(request.path_params["id"])
        return _error(404, "no such monitor") if found is None else JSONResponse(found)

    async def delete(request: Request) -> Response:
        if not await service.delete(request.path_params["id"]):
            return _error(404, "no such monitor")
        return Response(status_code=204)

    async def run(request: Request) -> Response:
        monitor = request.path_params["id"]
        if service.get(monitor) is None:
            return _error(404, "no such monitor")
        if not service.run_now(monitor):
            return _error(409, "a run of this monitor is going")
        return JSONResponse({"id": monitor, "running": True}, status_code=202)

    async def diff(request: Request) -> Response:
        text = request.query_params.get("crawl")
        if text is not None and not text.isdigit():
            return _error(400, "crawl: a crawl number")
        try:
            found = await service.diff(
                request.path_params["id"], None if text is None else int(text)
            )
        except StateError as exc:
            return _error(409, f"the monitor's crawl is running: {exc}")
        return _error(404, "no such monitor or crawl") if found is None else JSONResponse(found)

    return [
        Route("/api/monitors", create, methods=["POST"]),
        Route("/api/monitors", listing, methods=["GET"]),
        Route("/api/monitors/{id}", one, methods=["GET"]),
        Route("/api/monitors/{id}", delete, methods=["DELETE"]),
        Route("/api/monitors/{id}/run", run, methods=["POST"]),
        Route("/api/monitors/{id}/diff", diff, methods=["GET"]),
    ]
