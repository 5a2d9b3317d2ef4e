"""The JSON API: one table of endpoints (:data:`ENDPOINTS`), from which both the Starlette
routes and the OpenAPI 3.1 document (``/openapi.json``, :mod:`._openapi`) are made, so the
document cannot drift from what is served.

A crawl's tables come from its state file through the export code (``sitecrawl export``'s):
``/pages`` streams the pages table as JSON Lines (``?format=csv`` or ``parquet``,
``?fields=url,status``), ``/issues`` the issues table (docs/checks.md) the same way,
``/report`` the one-file HTML report, ``/markdown/{page}`` one page's Markdown (a crawl with
``markdown: true``), ``/events`` its progress as Server-Sent Events.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response, StreamingResponse

from .._exceptions import ConfigError
from .._json import dumps
from ._crawls import Crawl, CrawlConflict, CrawlManager, CrawlNotFound
from ._openapi import Endpoint
from ._options import OptionError, config_from_options
from ._policy import HostNotAllowed, refused_target
from ._store import ENDED
from ._tables import FORMATS, BadRequest, csv_text, jsonl, parquet, rows_of, table_of

Handler = Callable[[Request], Awaitable[Response]]
#: Seconds between two progress events of ``/events`` (sent when something changed).
EVENT_EVERY = 0.5


def _json(value: Any, status: int = 200) -> Response:
    return Response(dumps(value), status_code=status, media_type="application/json")


def error(message: str, status: int, **more: Any) -> Response:
    return _json({"error": message, **more}, status)


async def _body(request: Request) -> dict[str, Any]:
    raw = await request.body()
    if not raw.strip():
        return {}
    try:
        from .._json import loads

        value = loads(raw)
    except ValueError:
        raise BadRequest("the body is not JSON") from None
    if not isinstance(value, dict):
        raise BadRequest("the body is a JSON object")
    return value


def _crawl(manager: CrawlManager, request: Request) -> Crawl:
    return manager.get(request.path_params["id"])


# -- the handlers -----------------------------------------------------------------------------


async def create_crawl(manager: CrawlManager, request: Request) -> Response:
    body = await _body(request)
    url = body.pop("url", None)
    if not manager.config.private_targets:
        refused = await refused_target(url, body)
        if refused is not None:
            raise refused
    crawl = manager.create(url, body)
    return _json(manager.view(crawl), 201)


async def list_crawls(manager: CrawlManager, request: Request) -> Response:
    return _json([manager.view(crawl) for crawl in manager.newest_first()])


async def get_crawl(manager: CrawlManager, request: Request) -> Response:
    return _json(manager.view(_crawl(manager, request)))


async def pause_crawl(manager: CrawlManager, request: Request) -> Response:
    return _json(manager.view(manager.pause(request.path_params["id"])))


async def resume_crawl(manager: CrawlManager, request: Request) -> Response:
    secrets = await _body(request)
    return _json(manager.view(manager.resume(request.path_params["id"], secrets)))


async def delete_crawl(manager: CrawlManager, request: Request) -> Response:
    crawl_id = request.path_params["id"]
    if request.query_params.get("purge") in ("1", "true"):
        await manager.purge(crawl_id)
        return Response(status_code=204)
    return _json(manager.view(await manager.cancel(crawl_id)))


async def _stream_table(manager: CrawlManager, request: Request, name: str) -> Response:
    crawl = _crawl(manager, request)
    form = request.query_params.get("format", "jsonl")
    if form not in FORMATS:
        raise BadRequest(f"format is one of {', '.join(FORMATS)}, not {form!r}")
    table = table_of(crawl, name, request.query_params.get("fields"))
    names = table.names if request.query_params.get("fields") else None
    filename = f"{crawl.id}.{name}.{form}"
    headers = {"Content-Disposition": f'attachment; filename="{filename}"'}

    async def rows() -> AsyncIterator[dict[str, Any]]:
        async with manager.open_store(crawl) as store:
            if store is None:
                return
            async for row in rows_of(table, store):
                yield row

    if form == "jsonl":
        return StreamingResponse(jsonl(rows(), names), media_type=FORMATS[form], headers=headers)
    if form == "csv":
        return StreamingResponse(
            csv_text(rows(), table, names), media_type=FORMATS[form], headers=headers
        )
    return StreamingResponse(parquet(rows(), table), media_type=FORMATS[form], headers=headers)


async def crawl_pages(manager: CrawlManager, request: Request) -> Response:
    return await _stream_table(manager, request, "pages")


async def crawl_issues(manager: CrawlManager, request: Request) -> Response:
    return await _stream_table(manager, request, "issues")


async def crawl_report(manager: CrawlManager, request: Request) -> Response:
    from ..report import render_report, store_report_data

    crawl = _crawl(manager, request)
    async with manager.open_store(crawl) as store:
        if store is None:
            raise CrawlConflict(f"crawl {crawl.id} has no pages yet")
        data = await store_report_data(store)
    html = render_report(data, export_source=f"{crawl.id}.sitecrawl.db")
    return HTMLResponse(html)


async def crawl_markdown(manager: CrawlManager, request: Request) -> Response:
    crawl = _crawl(manager, request)
    wanted = request.path_params["page"]
    if not config_from_options(crawl.record.url, crawl.record.options).markdown:
        raise CrawlConflict('this crawl makes no Markdown: start it with "markdown": true')
    async with manager.open_store(crawl) as store:
        if store is not None:
            async for page in store.read_pages():
                if wanted in (page.url, page.final_url):
                    text = page.markdown or ""
                    return Response(text, media_type="text/markdown; charset=utf-8")
    return error(f"no page {wanted} in crawl {crawl.id}", 404)


async def crawl_events(manager: CrawlManager, request: Request) -> Response:
    crawl = _crawl(manager, request)

    async def events() -> AsyncIterator[str]:
        last = None
        quiet = 0.0
        while True:
            text = dumps(manager.view(crawl))
            if text != last:
                last, quiet = text, 0.0
                yield f"event: progress\ndata: {text}\n\n"
            elif quiet >= 15:
                quiet = 0.0
                yield ": still here\n\n"
            if crawl.status in ENDED and crawl.task is None:
                yield f"event: end\ndata: {text}\n\n"
                return
            await asyncio.sleep(EVENT_EVERY)
            quiet += EVENT_EVERY

    headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    return StreamingResponse(events(), media_type="text/event-stream", headers=headers)


# -- the table --------------------------------------------------------------------------------

_ONE = "/api/crawls/{id}"
_TABLE_QUERY = (
    ("format", "jsonl (default), csv or parquet"),
    ("fields", "the columns to give, comma-separated (default: all)"),
)
ENDPOINTS: tuple[Endpoint, ...] = (
    Endpoint(
        "POST",
        "/api/crawls",
        create_crawl,
        "Start a crawl: {url, crawl options by their config names}",
        {
            "201": "the crawl, queued or running",
            "400": "a bad option (named)",
            "403": "host not allowed",
        },
        body={"url": {"type": "string", "format": "uri"}},
    ),
    Endpoint("GET", "/api/crawls", list_crawls, "Every crawl, newest first", {"200": "a list"}),
    Endpoint(
        "GET",
        _ONE,
        get_crawl,
        "One crawl's status and counts",
        {"200": "the crawl", "404": "no such crawl"},
    ),
    Endpoint(
        "POST",
        _ONE + "/pause",
        pause_crawl,
        "Pause a queued or running crawl",
        {"200": "the crawl"},
    ),
    Endpoint(
        "POST",
        _ONE + "/resume",
        resume_crawl,
        "Queue a paused (failed, cancelled) crawl again; the body may give its credentials again",
        {"200": "the crawl", "409": "finished, or its credentials are needed"},
        body={},
    ),
    Endpoint(
        "DELETE",
        _ONE,
        delete_crawl,
        "Cancel a crawl (its pages stay readable); ?purge=true also removes it and its state",
        {"200": "the crawl, cancelled", "204": "purged"},
        query=(("purge", "true: remove the crawl and its state file"),),
    ),
    Endpoint(
        "GET",
        _ONE + "/pages",
        crawl_pages,
        "The pages table, streamed",
        {"200": "the rows"},
        query=_TABLE_QUERY,
        produces=tuple(FORMATS.values()),
    ),
    Endpoint(
        "GET",
        _ONE + "/issues",
        crawl_issues,
        "The issues table (every finding: docs/checks.md), streamed",
        {"200": "the rows"},
        query=_TABLE_QUERY,
        produces=tuple(FORMATS.values()),
    ),
    Endpoint(
        "GET",
        _ONE + "/report",
        crawl_report,
        "The HTML report",
        {"200": "one HTML file"},
        produces=("text/html",),
    ),
    Endpoint(
        "GET",
        _ONE + "/markdown/{page:path}",
        crawl_markdown,
        "One page's content as Markdown (a crawl with markdown: true); page: its URL, encoded",
        {"200": "Markdown", "404": "no such page"},
        produces=("text/markdown",),
    ),
    Endpoint(
        "GET",
        _ONE + "/events",
        crawl_events,
        "Progress as Server-Sent Events (progress: the crawl; end: it ended)",
        {"200": "an event stream"},
        produces=("text/event-stream",),
    ),
)


def guarded(manager: CrawlManager, endpoint: Endpoint) -> Handler:
    """The endpoint's handler, its errors answered as JSON with their status."""

    async def handle(request: Request) -> Response:
        try:
            return await endpoint.handler(manager, request)
        except OptionError as exc:
            return error(str(exc), 400, option=exc.option)
        except HostNotAllowed as exc:
            return error(str(exc), 403)
        except (BadRequest, ConfigError) as exc:
            return error(str(exc), 400)
        except CrawlNotFound as exc:
            return error(str(exc), 404)
        except CrawlConflict as exc:
            return error(str(exc), 409)

    return handle
