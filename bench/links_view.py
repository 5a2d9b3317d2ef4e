#!/usr/bin/env python3
"""The state file's ``links`` view on one rendered page with many links (issue 30, item 25):
the time of ``SELECT ... origin FROM links`` against the same query without ``origin``.

The page is stored through the library's own SQLite store, rendered, with ``--links`` ``a``
links of which JavaScript added every other one (``js_links``: half of them).

    python bench/links_view.py /tmp/links.db --links 10000
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sqlite3
import time

from sitecrawl import Page
from sitecrawl._models import Request
from sitecrawl.frontier import SqliteFrontier

BASE = "https://links.test/"


async def write(path: str, links: int) -> None:
    targets = [f"{BASE}p/{i}" for i in range(links)]
    page = Page(url=BASE, final_url=BASE, status=200, rendered=True)
    page.links = [(target, f"link {i}", "", "a") for i, target in enumerate(targets)]
    page.js_links = targets[::2]
    async with SqliteFrontier(path, base_url=BASE, fresh=True) as store:
        await store.add([Request(url=BASE, key="links.test/")])
        request = await store.next()
        assert request is not None
        await store.mark_done(request, page)


def timed(conn: sqlite3.Connection, sql: str) -> tuple[float, list[tuple[object, ...]]]:
    started = time.perf_counter()
    rows = conn.execute(sql).fetchall()
    return time.perf_counter() - started, rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path")
    parser.add_argument("--links", type=int, default=10_000)
    args = parser.parse_args()
    asyncio.run(write(args.path, args.links))
    with contextlib.closing(sqlite3.connect(args.path)) as conn:
        plain, rows = timed(conn, "SELECT source, position, target, text, rel, kind FROM links")
        full, with_origin = timed(conn, "SELECT *, origin FROM links")
        js = sum(row[-1] == "js" for row in with_origin)
    print(f"sqlite {sqlite3.sqlite_version}, {os.path.getsize(args.path):,} bytes")
    print(f"links view, {len(rows):,} links ({js:,} js): without origin {plain:.3f} s,")
    print(f"with origin {full:.3f} s")


if __name__ == "__main__":
    main()
