#!/usr/bin/env python3
"""Write a state file holding two crawls of a big site without crawling: the diff's bench.

Crawl 1 is :mod:`big_state`'s site; crawl 2 the same site changed: every 20th page another
title, every 50th page gone, as many new ones. Both go through the library's own store, the
second as the next crawl of the file (``SqliteFrontier`` opened again for a crawl).

    python bench/two_crawls.py /tmp/two.db --pages 100000
    /usr/bin/time -v sitecrawl diff /tmp/two.db -q -o /tmp/diff.jsonl   # time, peak RSS
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import time
from pathlib import Path

from big_state import BASE, _page

from sitecrawl._models import Request
from sitecrawl.frontier import SqliteFrontier


async def crawl(path: Path, pages: int, links: int, changed: bool) -> None:
    numbers = [
        i for i in range(pages + (pages // 50 if changed else 0)) if not (changed and i % 50 == 1)
    ]
    async with SqliteFrontier(path, base_url=BASE, commit_interval=1.0) as store:
        batch = 2000
        for start in range(0, len(numbers), batch):
            keys = numbers[start : start + batch]
            await store.add(
                [
                    Request(url=BASE if i == 0 else f"{BASE}p/{i}", key=f"big.test/p/{i}")
                    for i in keys
                ]
            )
            for _ in keys:
                request = await store.next()
                assert request is not None
                i = 0 if request.url == BASE else int(request.url.rsplit("/", 1)[1])
                page = _page(i, pages, links, random.Random(i))  # the same page each crawl
                if changed and i % 20 == 0:
                    page.title = f"Changed {i}"
                await store.mark_done(request, page)
        await store.finish()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("path", type=Path, help="the state file to (over)write")
    ap.add_argument("--pages", type=int, default=100_000, help="pages (%(default)s)")
    ap.add_argument("--links", type=int, default=30, help="<a> links per page (%(default)s)")
    args = ap.parse_args()
    started = time.perf_counter()
    if args.path.exists():
        args.path.unlink()
    asyncio.run(crawl(args.path, args.pages, args.links, changed=False))
    asyncio.run(crawl(args.path, args.pages, args.links, changed=True))
    size = os.path.getsize(args.path) / 1e6
    took = time.perf_counter() - started
    print(f"2 crawls of {args.pages:,} pages, {size:,.1f} MB in {took:.1f} s: {args.path}")


if __name__ == "__main__":
    main()
