"""The monitors' part of the server's JSON API, as Starlette routes over a
:class:`~sitecrawl.serve.MonitorService`:

- ``POST /api/monitors``: ``{"url", "every" | "cron", "webhook", "secret", "format",
  "notify", "fail_on", crawl options}`` -> 201 and the monitor (400 naming a bad option);
- ``GET /api/monitors`` (newest first), ``GET /api/monitors/{id}`` (with its last
  deliveries, failed ones included), ``DELETE /api/monitors/{id}`` (204);
- ``POST /api/monitors/{id}/run``: a run now (202; 409 when one is going);
- ``GET /api/monitors/{id}/diff?crawl=N``: every change of crawl N (default: the last);
  409 while a run holds the monitor's state file;
- ``GET /api/monitors/{id}/report``: the HTML report of its last crawl, with a "Changes
  since" section (the crawl before it); 409 likewise.

The routes and their part of the OpenAPI document are both made from one table,
:data:`MONITOR_ENDPOINTS`. No answer holds a secret (:meth:`MonitorService._view`).
Authentication is the server's (its token middleware wraps these routes with the rest).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from .._exceptions import ConfigError, MissingExtra, StateError

try:
    from starlette.requests import Request
    from starlette.responses import HTMLResponse, JSONResponse, Response
    from starlette.routing import Route
except ImportError:
    raise MissingExtra(
        "the monitors' API needs starlette: pip install 'sitecrawl[serve]'", extra="serve"
    ) from None

from ._openapi import Endpoint

if TYPE_CHECKING:
    from ._monitor import MonitorService


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


# -- the handlers: each (service, request) -----------------------------------------------------


async def create_monitor(service: MonitorService, request: Request) -> Response:
    try:
        body = json.loads(await request.body())
    except ValueError:
        return _error(400, "the body is not JSON")
    if service.guard is not None and isinstance(body, dict):
        refused = await service.guard(body.get("url"), body)  # the webhook's host too
        if refused is not None:
            return _error(400, str(refused))
    try:
        return JSONResponse(service.create(body), status_code=201)
    except ConfigError as exc:
        return _error(400, str(exc))


async def list_monitors(service: MonitorService, request: Request) -> Response:
    return JSONResponse(service.list())


async def get_monitor(service: MonitorService, request: Request) -> Response:
    found = service.get(request.path_params["id"])
    return _error(404, "no such monitor") if found is None else JSONResponse(found)


async def delete_monitor(service: MonitorService, request: Request) -> Response:
    if not await service.delete(request.path_params["id"]):
        return _error(404, "no such monitor")
    return Response(status_code=204)


async def run_monitor(service: MonitorService, request: Request) -> Response:
    monitor = request.path_params["id"]
    if service.get(monitor) is None:
        return _error(404, "no such monitor")
    if not service.run_now(monitor):
        return _error(409, "a run of this monitor is going")
    return JSONResponse({"id": monitor, "running": True}, status_code=202)


async def monitor_diff(service: MonitorService, request: Request) -> Response:
    text = request.query_params.get("crawl")
    if text is not None and not text.isdigit():
        return _error(400, "crawl: a crawl number")
    try:
        found = await service.diff(request.path_params["id"], None if text is None else int(text))
    except StateError as exc:
        return _error(409, f"the monitor's crawl is running: {exc}")
    return _error(404, "no such monitor or crawl") if found is None else JSONResponse(found)


async def monitor_report(service: MonitorService, request: Request) -> Response:
    try:
        html = await service.report(request.path_params["id"])
    except StateError as exc:
        return _error(409, f"the monitor's crawl is running: {exc}")
    return _error(404, "no such monitor, or no crawl yet") if html is None else HTMLResponse(html)


# -- the table (routes and the OpenAPI document both made from it) -----------------------------

_ONE = "/api/monitors/{id}"
_TAGS = ("monitors",)
_STRING = {"type": "string"}
MONITOR_ENDPOINTS: tuple[Endpoint, ...] = (
    Endpoint(
        "POST",
        "/api/monitors",
        create_monitor,
        "Create a monitor: {url, every | cron, webhook, secret, format, notify, fail_on,"
        " crawl options}",
        {"201": "the monitor (no secret in it)", "400": "a bad field or option (named)"},
        body={
            "url": {"type": "string", "format": "uri"},
            "every": {
                "type": ["number", "string"],
                "description": "seconds, or '30s', '15m', '1h', '1d' (or give cron)",
            },
            "cron": {**_STRING, "description": "a cron expression, UTC ('0 6 * * *')"},
            "webhook": {**_STRING, "format": "uri"},
            "secret": {**_STRING, "description": "signs each body (X-Sitecrawl-Signature)"},
            "format": {"type": "string", "enum": ["json", "slack"]},
            "notify": {"type": "string", "enum": ["changes", "fail_on"]},
            "fail_on": {"type": "array", "items": _STRING},
        },
        tags=_TAGS,
    ),
    Endpoint(
        "GET",
        "/api/monitors",
        list_monitors,
        "Every monitor, newest first",
        {"200": "a list"},
        tags=_TAGS,
    ),
    Endpoint(
        "GET",
        _ONE,
        get_monitor,
        "One monitor, with its last webhook deliveries (failed ones included)",
        {"200": "the monitor", "404": "no such monitor"},
        tags=_TAGS,
    ),
    Endpoint(
        "DELETE",
        _ONE,
        delete_monitor,
        "Remove a monitor: its run stopped, its state file deleted",
        {"204": "removed", "404": "no such monitor"},
        tags=_TAGS,
    ),
    Endpoint(
        "POST",
        _ONE + "/run",
        run_monitor,
        "Run a monitor now",
        {"202": "a run started", "404": "no such monitor", "409": "a run is going"},
        tags=_TAGS,
    ),
    Endpoint(
        "GET",
        _ONE + "/diff",
        monitor_diff,
        "Every change of one crawl of the monitor since the crawl before it",
        {"200": "the changes", "404": "no such monitor or crawl", "409": "a run holds it"},
        query=(("crawl", "the crawl's number (default: the last)"),),
        tags=_TAGS,
    ),
    Endpoint(
        "GET",
        _ONE + "/report",
        monitor_report,
        "The HTML report of the monitor's last crawl, with its changes since the one before",
        {"200": "the report", "404": "no such monitor, or no crawl yet", "409": "a run holds it"},
        tags=_TAGS,
    ),
)


def monitor_routes(service: MonitorService) -> list[Route]:
    """The routes of :data:`MONITOR_ENDPOINTS` (the module's docstring), served by
    ``service`` (entered by the server's lifespan)."""
    return [
        Route(endpoint.path, _bound(service, endpoint), methods=[endpoint.method])
        for endpoint in MONITOR_ENDPOINTS
    ]


def _bound(service: MonitorService, endpoint: Endpoint) -> Callable[[Request], Awaitable[Response]]:
    async def handle(request: Request) -> Response:
        return await endpoint.handler(service, request)

    return handle
