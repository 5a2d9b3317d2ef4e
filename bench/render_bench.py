#!/usr/bin/env python3
"""``--render always`` (or ``--mode auto``) on the generated SPA site (tests/spa_site.py):
pages/s and the browser's memory as the rendered pages go by.

The site is served by a child process (aiohttp on 127.0.0.1), the crawl runs here through the
library with ``Render(mode="always", tabs=N)``. Every ``--every`` rendered pages the browser's
memory is read (the proportional set size of the Chromium processes under this one, from
/proc, as the pool reads it); the report gives pages/s over the whole crawl and between the
200th and the last rendered page, and the memory at the 200th and the last.

    python bench/render_bench.py --pages 2100 --tabs 4
    python bench/render_bench.py --pages 2100 --tabs 4 --restart 1000000   # no restart
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests")]


def serve(pages: int, port: int) -> None:
    from aiohttp import web

    from spa_site import spa_app

    web.run_app(spa_app(pages), host="127.0.0.1", port=port, print=None, access_log=None)


async def crawl(args: argparse.Namespace, base: str) -> dict[str, object]:
    from sitecrawl import AsyncCrawler, CrawlConfig, Limits, Page, Render
    from sitecrawl.render._procs import tree_memory_mb

    render = Render(
        mode=args.mode, browser=args.browser, tabs=args.tabs, restart_every=args.restart
    )
    config = CrawlConfig(
        base_url=base,
        render=render,
        processes=args.processes,
        limits=Limits(max_concurrency=args.concurrency),
    )
    marks: list[tuple[int, float, float]] = []  # (rendered pages, seconds, browser MB)
    rendered = 0
    errors = 0
    started = time.monotonic()

    def on_page(page: Page) -> None:
        nonlocal rendered, errors
        errors += page.error is not None
        if page.rendered:
            rendered += 1
            if rendered % args.every == 0 or rendered == 200:
                marks.append((rendered, time.monotonic() - started, tree_memory_mb(os.getpid())))

    async with AsyncCrawler(base, config=config, on_page=on_page, keep_pages=False) as crawler:
        await crawler.crawl()
    elapsed = time.monotonic() - started
    if rendered < 400:  # too few to read the memory from the 200th on
        return {
            "pages": crawler.stats.pages,
            "rendered": rendered,
            "seconds": round(elapsed, 1),
            "pages_per_s": round(crawler.stats.pages / elapsed, 2),
            "why": dict(crawler.stats.rendered),
        }
    first = next(m for m in marks if m[0] == 200)
    last = marks[-1]
    return {
        "pages": crawler.stats.pages,
        "rendered": rendered,
        "errors": errors,
        "seconds": round(elapsed, 1),
        "pages_per_s": round(crawler.stats.pages / elapsed, 2),
        "pages_per_s_after_200": round((last[0] - 200) / (last[1] - first[1]), 2),
        "memory_mb_at_200": round(first[2]),
        f"memory_mb_at_{last[0]}": round(last[2]),
        "memory_ratio": round(last[2] / first[2], 2),
        "memory_median_mb": round(statistics.median(m[2] for m in marks if m[0] >= 200)),
        "memory_max_mb": round(max(m[2] for m in marks if m[0] >= 200)),
        "why": dict(crawler.stats.rendered),
        "browser_starts": crawler._renderer.pool.starts if crawler._renderer else 0,  # type: ignore[attr-defined]
        "marks": [(n, round(t, 1), round(mb)) for n, t, mb in marks],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=2100)
    ap.add_argument("--tabs", type=int, default=4)
    ap.add_argument("--mode", choices=("auto", "always"), default="always")
    ap.add_argument("--restart", type=int, default=1000, help="--render-restart (default 1000)")
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--processes", type=int, default=1)
    ap.add_argument("--every", type=int, default=100, help="read memory every N renders")
    ap.add_argument("--browser", default="/usr/bin/chromium")
    ap.add_argument("--port", type=int, default=8099)
    ap.add_argument("--serve-only", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.serve_only:
        serve(args.pages, args.port)
        return
    server = subprocess.Popen(
        [
            sys.executable,
            __file__,
            "--serve-only",
            "--pages",
            str(args.pages),
            "--port",
            str(args.port),
        ]
    )
    try:
        time.sleep(1.5)
        result = asyncio.run(crawl(args, f"http://127.0.0.1:{args.port}/"))
    finally:
        server.terminate()
        server.wait()
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
