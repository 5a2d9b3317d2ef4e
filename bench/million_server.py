#!/usr/bin/env python3
"""A site of unbounded size on 127.0.0.1, made from the request path: for the memory benchmark.

``/`` is page 0; page ``i`` (``/n/i``) links to its ``--fanout`` children ``/n/(i*F+1)`` ..
``/n/(i*F+F)`` (every URL new: a tree), back to ``/``, and to page ``i // F`` (its parent).
A breadth-first crawl that fetches P pages has therefore discovered ``1 + F*P`` distinct URLs,
so fetching 10,000 pages with F = 100 discovers a million. ``GET /_stats`` answers the number of
pages served, which is how memory_bench.py knows how many URLs the crawler has discovered.

    python bench/million_server.py --port 8099 --fanout 100
"""

from __future__ import annotations

import argparse
import json

from aiohttp import web


def make_app(fanout: int) -> web.Application:
    served = 0

    async def page(request: web.Request) -> web.Response:
        nonlocal served
        served += 1
        i = int(request.match_info.get("i", "0"))
        first = i * fanout + 1
        up = f"/n/{i // fanout}" if i >= fanout else "/"
        links = "".join(
            f'<li><a href="/n/{j}">page {j}</a></li>' for j in range(first, first + fanout)
        )
        body = (
            f"<!doctype html><html><head><title>Page {i}</title>"
            f'<meta name="description" content="generated page {i}"></head><body>'
            f"<h1>Page {i}</h1><main><p>Page {i} of a generated tree.</p></main>"
            f'<a href="/">home</a> <a href="{up}">up</a><ul>{links}</ul>'
            "</body></html>"
        )
        return web.Response(text=body, content_type="text/html")

    async def stats(request: web.Request) -> web.Response:
        return web.Response(text=json.dumps({"pages": served}), content_type="application/json")

    app = web.Application()
    app.router.add_get("/", page)
    app.router.add_get("/n/{i:[0-9]+}", page)
    app.router.add_get("/_stats", stats)
    return app


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8099)
    parser.add_argument("--fanout", type=int, default=100)
    args = parser.parse_args()
    web.run_app(
        make_app(args.fanout), host="127.0.0.1", port=args.port, access_log=None, print=None
    )


if __name__ == "__main__":
    main()
