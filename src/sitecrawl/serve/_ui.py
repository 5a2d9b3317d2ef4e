"""The web UI: one HTML page and its script and style (``ui/``, package data), plain HTML
and JavaScript with no build step. ``GET /`` is the page, ``GET /ui/{name}`` its files;
everything it shows it reads from the JSON API, with the token the page asks for once."""

from __future__ import annotations

from pathlib import Path

from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import Route

UI = Path(__file__).with_name("ui")
_TYPES = {".js": "text/javascript", ".css": "text/css", ".html": "text/html"}
#: The page's Content-Security-Policy: its own files only, and requests to this server.
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self';"
    " img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
)


async def index(request: Request) -> Response:
    return FileResponse(
        UI / "index.html", media_type="text/html", headers={"Content-Security-Policy": CSP}
    )


async def asset(request: Request) -> Response:
    name = request.path_params["name"]
    path = UI / name
    if "/" in name or path.suffix not in _TYPES or path.name == "index.html" or not path.is_file():
        return Response("not found", status_code=404, media_type="text/plain")
    return FileResponse(path, media_type=_TYPES[path.suffix])


ROUTES = [Route("/", index, methods=["GET"]), Route("/ui/{name}", asset, methods=["GET"])]
