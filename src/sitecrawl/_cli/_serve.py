"""``sitecrawl serve [--host 127.0.0.1] [--port 8080] [--data DIR] [--token TOKEN]``: the HTTP
API and web UI (:mod:`sitecrawl.serve`), run by uvicorn until Ctrl-C or SIGTERM; the crawls
running then go on when the server starts again on the same ``--data``."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from .._settings import count
from ._common import EXIT_OK, UsageError, run_async

SERVE_HINT = "pip install 'sitecrawl[serve]'"
#: Seconds the open requests (event streams, downloads) get to end on Ctrl-C or SIGTERM.
GRACE = 5


def add_command(commands: Any) -> None:
    from ..serve import DEFAULT_MAX_CRAWLS, DEFAULT_PORT

    serve = commands.add_parser("serve", help="run the HTTP API and web UI (crawls kept in --data)")
    serve.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (default %(default)s; any other than a loopback address"
        " needs a token)",
    )
    serve.add_argument(
        "--port", type=count(0), default=DEFAULT_PORT, help="port (default %(default)s)"
    )
    serve.add_argument(
        "--data",
        default="sitecrawl-data",
        metavar="DIR",
        help="where the crawls' state files and the server's bookkeeping live (default"
        " ./%(default)s); a server started again on it runs on the crawls that were running",
    )
    serve.add_argument(
        "--token",
        help="every request needs Authorization: Bearer TOKEN (default: SITECRAWL_TOKEN)",
    )
    serve.add_argument(
        "--max-crawls",
        type=count(1),
        default=DEFAULT_MAX_CRAWLS,
        metavar="N",
        help="crawls running at once; the others queue (default %(default)s)",
    )
    serve.add_argument(
        "--allow-hosts",
        action="append",
        default=[],
        metavar="PATTERN",
        help="only hosts matching PATTERN (a glob: '*.example.com') may be crawled through"
        " the API (repeatable, or comma-separated; default: any)",
    )
    serve.add_argument(
        "--allow-private-targets",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="let API callers (crawls, monitors, MCP) crawl start URLs on loopback, private or"
        " link-local addresses (default: yes when --host is a loopback address, no otherwise)",
    )
    serve.set_defaults(handler=_execute)


def _execute(args: argparse.Namespace) -> int:
    from .._exceptions import ConfigError

    try:
        import starlette  # noqa: F401
        import uvicorn
    except ImportError:
        raise UsageError(f"sitecrawl serve needs its extra: {SERVE_HINT}") from None
    from ..serve import ServeConfig, build_app

    token = args.token if args.token is not None else os.environ.get("SITECRAWL_TOKEN") or None
    patterns = tuple(p.strip() for item in args.allow_hosts for p in item.split(",") if p.strip())
    try:
        config = ServeConfig(
            data=args.data,
            host=args.host,
            port=args.port,
            token=token,
            max_crawls=args.max_crawls,
            allow_hosts=patterns,
            allow_private_targets=args.allow_private_targets,
        )
        app = build_app(config)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    server = uvicorn.Server(
        uvicorn.Config(
            app,
            host=args.host,
            port=args.port,
            log_level="warning",
            lifespan="on",
            timeout_graceful_shutdown=GRACE,  # open event streams end, then the crawls stop
        )
    )
    shown = f"[{args.host}]" if ":" in args.host else args.host
    print(
        f"sitecrawl serve: http://{shown}:{args.port}/ (data: {args.data}"
        f"{', token required' if token else ''})",
        file=sys.stderr,
        flush=True,
    )
    run_async(server.serve())
    return EXIT_OK
