"""The OpenAPI 3.1 document of the API, made from its route tables (:class:`Endpoint` rows:
the crawls' :data:`sitecrawl.serve._api.ENDPOINTS`, the monitors'
:data:`sitecrawl.serve._monitor_routes.MONITOR_ENDPOINTS`), so that it says what is served."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ._options import option_schema
from ._store import STATUSES

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response


@dataclass(frozen=True, slots=True)
class Endpoint:
    """One route of the API and what the OpenAPI document says of it: ``handler(owner,
    request)``, the owner being the route table's (the crawls' :class:`CrawlManager`, the
    :class:`MonitorService`); ``name`` its operationId (default: the handler's name)."""

    method: str
    path: str
    handler: Callable[[Any, Request], Awaitable[Response]]
    summary: str
    responses: dict[str, str]
    query: tuple[tuple[str, str], ...] = ()
    body: dict[str, Any] | None = None
    produces: tuple[str, ...] = ("application/json",)
    tags: tuple[str, ...] = field(default=("crawls",))
    name: str = ""


def openapi(
    title: str,
    version: str,
    endpoints: Sequence[Endpoint],
    more: Mapping[str, dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The OpenAPI 3.1 document of ``endpoints``, and of ``more`` (path items as they are:
    the routes not served by an :class:`Endpoint`, such as ``/mcp/``)."""
    paths: dict[str, dict[str, Any]] = {}
    for endpoint in endpoints:
        path = endpoint.path.replace(":path}", "}")
        parameters = [
            {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
            for name in _path_names(path)
        ]
        parameters += [
            {
                "name": name,
                "in": "query",
                "required": False,
                "description": text,
                "schema": {"type": "string"},
            }
            for name, text in endpoint.query
        ]
        operation: dict[str, Any] = {
            "summary": endpoint.summary,
            "operationId": endpoint.name or endpoint.handler.__name__,
            "tags": list(endpoint.tags),
            "parameters": parameters,
            "responses": {
                code: {
                    "description": text,
                    "content": {kind: {} for kind in endpoint.produces} if code < "300" else {},
                }
                for code, text in endpoint.responses.items()
            },
        }
        if endpoint.body is not None:
            properties = {**endpoint.body, **option_schema()}
            schema: dict[str, Any] = {"type": "object", "properties": properties}
            if "url" in endpoint.body:
                schema["required"] = ["url"]
            operation["requestBody"] = {"content": {"application/json": {"schema": schema}}}
        paths.setdefault(path, {})[endpoint.method.lower()] = operation
    for path, item in (more or {}).items():
        paths.setdefault(path, {}).update(item)
    return {
        "openapi": "3.1.0",
        "info": {"title": title, "version": version},
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "schemas": {"CrawlStatus": {"type": "string", "enum": list(STATUSES)}},
        },
        "security": [{"bearer": []}],
        "paths": paths,
    }


def _path_names(path: str) -> list[str]:
    return re.findall(r"{(\w+)}", path)
