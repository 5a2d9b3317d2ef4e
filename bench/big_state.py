#!/usr/bin/env python3
"""Write a big crawl state file without crawling: the report's memory bench.

Pages go through the library's own SQLite store (``SqliteFrontier``: add, next, mark_done),
so the file has the schema a crawl writes. Page ``i`` (``/p/i``, depth ``1 + i % 6``) links to
``--links`` pages (some of them not crawled: broken links), an image, a stylesheet and an
external site; every 50th page is a 404, every 97th a timeout, every 31st a redirect, every
13th has a duplicate title, every 7th no meta description.

    python bench/big_state.py /tmp/big.db --pages 100000
    /usr/bin/time -v sitecrawl report /tmp/big.db -o /tmp/big.html   # Maximum resident set size

``--urls N`` then offers N more discovered URLs to the frontier (``add``, queued, never
fetched), in batches of 10,000 as a crawl's pages offer their links, and prints at every tenth
of them (``--every N``: every N) the insert rate, the process's RSS (and its peak) and the
file's bytes a URL: the frontier at 100 M discovered URLs. Their keys are scattered (a
multiplicative hash of ``i`` leads the path), so each insert lands anywhere in the ``key``
index, as real sites' URLs do.

    python bench/big_state.py /tmp/huge.db --pages 10000 --urls 100000000
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import time
from pathlib import Path

from sitecrawl import Page
from sitecrawl._models import Request
from sitecrawl.frontier import SqliteFrontier

BASE = "https://big.test/"
_LOREM_TEXT = (
    "crawler async queue socket parser frontier latency throughput request response header "
    "payload cache index archive network protocol buffer stream scheduler worker domain"
)
LOREM = _LOREM_TEXT.split()


def _page(i: int, pages: int, links: int, rng: random.Random) -> Page:
    url = BASE if i == 0 else f"{BASE}p/{i}"
    words = " ".join(rng.choice(LOREM) for _ in range(12))
    page = Page(url=url, final_url=url, depth=0 if i == 0 else 1 + i % 6, attempts=1)
    if i and i % 97 == 0:
        page.error, page.error_kind, page.attempts = "timeout", "timeout", 3
        return page
    page.status = 404 if i and i % 50 == 0 else 200
    if page.status == 404:
        page.error, page.error_kind = "HTTP 404", "http_status"
    if i and i % 31 == 0:
        page.redirects = [(f"{BASE}old/{i}", 301)]
    page.content_type = "text/html"
    page.title = "Same title" if i % 13 == 0 else f"Page {i}: {words[:40]}"
    page.h1 = f"Page {i}"
    page.first_paragraph = words
    page.meta_description = None if i % 7 == 0 else f"About page {i}: {words}"
    page.response_time_ms = round(rng.lognormvariate(3.5, 0.8), 2)
    page.size_bytes = rng.randrange(5_000, 200_000)
    page.word_count = rng.randrange(50, 3000)
    page.indexable = i % 89 != 0
    page.in_sitemap = i % 3 != 0
    page.lang = "en"
    page.h2 = [f"Section {n}" for n in range(3)]
    targets = [f"{BASE}p/{rng.randrange(1, int(pages * 1.02))}" for _ in range(links)]
    page.links = [
        (target, f"link {n} {rng.choice(LOREM)}", None, "a") for n, target in enumerate(targets)
    ]
    page.links += [
        (url, "this page", None, "a"),
        ("https://elsewhere.test/x", "elsewhere", "nofollow", "a"),
        (f"{BASE}img/{i % 500}.png", None if i % 11 == 0 else f"image {i}", None, "img"),
        (f"{BASE}static/site.css", None, "stylesheet", "link"),
    ]
    page.outgoing_links = list(dict.fromkeys(url for url, _, _, kind in page.links if kind == "a"))
    page.image_urls = [url for url, _, _, kind in page.links if kind == "img"]
    return page


async def write(
    path: Path, pages: int, links: int, seed: int, urls: int = 0, every: int = 0
) -> None:
    rng = random.Random(seed)
    if path.exists():
        path.unlink()
    async with SqliteFrontier(path, base_url=BASE, commit_interval=1.0) as store:
        batch = 2000
        for start in range(0, pages, batch):
            keys = range(start, min(start + batch, pages))
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
                await store.mark_done(request, _page(i, pages, links, rng))
        store.add_crawl_time(pages / 500)
        if urls:
            await discover(store, path, urls, every)


def _rss_mb() -> tuple[float, float]:
    """(VmRSS, VmHWM) of this process, MB."""
    fields = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines())
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


def _disk(path: Path) -> int:
    return sum(
        os.path.getsize(f"{path}{suffix}")
        for suffix in ("", "-wal")
        if os.path.exists(f"{path}{suffix}")
    )


async def discover(store: SqliteFrontier, path: Path, urls: int, every: int = 0) -> None:
    batch, step = 10_000, max(10_000, every or urls // 10)
    started = last = time.perf_counter()
    cpu0 = time.process_time()
    done_at = 0
    for start in range(0, urls, batch):
        requests = []
        for i in range(start, min(start + batch, urls)):
            url = f"{BASE}u/{(i * 2654435761) % 2**32:08x}/{i}"
            requests.append(Request(url=url, key=url[8:], depth=7))
        await store.add(requests)
        # A crawl commits the links it queues with the page that found them: a lease given
        # back commits the open transaction the same way (one transaction for all of them
        # left the whole frontier in the WAL until close: bench/RESULTS.md section 38).
        request = await store.next()
        assert request is not None
        await store.mark_done(request)
        end = start + len(requests)
        if end - done_at >= step or end == urls:
            now = time.perf_counter()
            rss, peak = _rss_mb()
            stats = await store.stats()
            print(
                f"{end:>13,} URLs  {(end - done_at) / (now - last):>9,.0f} URLs/s"
                f"  ({end / (now - started):,.0f} overall, CPU {time.process_time() - cpu0:,.0f} s)"
                f"  RSS {rss:,.0f} MB (peak {peak:,.0f})"
                f"  disk {_disk(path) / stats.seen:,.1f} B/URL ({_disk(path) / 1e9:,.2f} GB)",
                flush=True,
            )
            done_at, last = end, now


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("path", type=Path, help="the state file to (over)write")
    ap.add_argument("--pages", type=int, default=100_000, help="pages (%(default)s)")
    ap.add_argument("--links", type=int, default=30, help="<a> links per page (%(default)s)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--urls", type=int, default=0, help="discovered URLs added after the pages")
    ap.add_argument("--every", type=int, default=0, help="report every N URLs (a tenth)")
    args = ap.parse_args()
    started = time.perf_counter()
    asyncio.run(write(args.path, args.pages, args.links, args.seed, args.urls, args.every))
    size = os.path.getsize(args.path) / 1e6
    took = time.perf_counter() - started
    print(f"{args.pages:,} pages, {size:,.1f} MB in {took:.1f} s: {args.path}")


if __name__ == "__main__":
    main()
