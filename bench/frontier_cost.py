#!/usr/bin/env python3
"""What a frontier costs the event loop per page, without the network: a crawl replayed.

The pages of a real crawl's state file (``run_bench.py``'s SQLite variant leaves one, or
``sitecrawl crawl URL --state FILE``) are replayed through a fresh frontier as the crawler
drives it: ``concurrency`` workers each lease a request, offer the page's new links (each URL
once, as the crawler's link memo does), and end the lease with the page. The link keys are
computed before the clock starts, so only the frontier is measured: CPU seconds of this
process (a committing thread's included) and of the event loop's thread alone, interleaved
rounds, medians.

    python bench/frontier_cost.py STATE.db --rounds 5 [--only memory sqlite]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from sitecrawl._models import Page, Request
from sitecrawl._urls import url_key
from sitecrawl.frontier import Frontier, MemoryFrontier, SqliteFrontier


def load(path: str) -> tuple[str, dict[str, tuple[Page, list[tuple[str, str]]]]]:
    """The crawl's start URL and, by URL, each page with its links as ``(url, key)``."""

    async def read() -> tuple[str, dict[str, tuple[Page, list[tuple[str, str]]]]]:
        async with SqliteFrontier(path, create=False) as store:
            assert store.base_url is not None
            pages = {
                page.url: (page, [(url, url_key(url)) for url in page.outgoing_links])
                for page in store.pages()
            }
            return store.base_url, pages

    return asyncio.run(read())


async def replay(
    frontier: Frontier, start: str, pages: dict[str, tuple[Page, list[tuple[str, str]]]], c: int
) -> int:
    offered: set[str] = set()  # the crawler's link memo (LinkTargets): each URL offered once
    done = 0
    wake = asyncio.Event()
    in_flight = 0

    async def worker() -> None:
        nonlocal done, in_flight, wake
        while True:
            request = await frontier.next()
            if request is None:
                if in_flight == 0 and await frontier.is_finished():
                    wake.set()
                    return
                event = wake
                await event.wait()
                continue
            in_flight += 1
            await asyncio.sleep(0)  # the fetch
            page, links = pages[request.url]
            fresh = [
                Request(url=url, key=key, depth=request.depth + 1, referrer=request.url)
                for url, key in links
                if url in pages and url not in offered
            ]
            offered.update(r.url for r in fresh)
            if fresh and await frontier.add(fresh):
                wake.set()
                wake = asyncio.Event()
            in_flight -= 1
            await frontier.mark_done(request, page)
            done += 1
            if in_flight == 0:
                wake.set()
                wake = asyncio.Event()

    async with frontier:
        await frontier.add([Request(url=start, key=url_key(start))])
        offered.add(start)
        async with asyncio.TaskGroup() as group:
            for _ in range(c):
                group.create_task(worker())
    return done


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("state", help="a crawl's state file (its pages are replayed)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("-c", "--concurrency", type=int, default=16)
    ap.add_argument("--only", nargs="+", default=["memory", "sqlite"])
    args = ap.parse_args()
    start, pages = load(args.state)
    gc.freeze()  # the loaded pages are not the frontier's: keep them out of the collections
    print(f"{len(pages)} pages from {args.state}")
    results: dict[str, list[tuple[float, float, float]]] = {name: [] for name in args.only}
    with tempfile.TemporaryDirectory() as tmp:
        for rnd in range(args.rounds):
            for name in args.only[rnd % len(args.only) :] + args.only[: rnd % len(args.only)]:
                db = os.path.join(tmp, f"r{rnd}.db")
                frontier: Frontier = (
                    MemoryFrontier() if name == "memory" else SqliteFrontier(db, base_url=start)
                )
                cpu, loop, wall = time.process_time(), time.thread_time(), time.perf_counter()
                done = asyncio.run(replay(frontier, start, pages, args.concurrency))
                cpu, loop = time.process_time() - cpu, time.thread_time() - loop
                wall = time.perf_counter() - wall
                assert done == len(pages), (name, done)
                results[name].append((cpu, loop, wall))
                print(
                    f"  round {rnd + 1} {name:<8} cpu {cpu:6.3f} s  loop thread {loop:6.3f} s"
                    f"  wall {wall:6.3f} s"
                )
    for name, runs in results.items():
        cpu, loop, wall = (statistics.median(r[i] for r in runs) for i in range(3))
        print(
            f"{name:<8} us a page: cpu {1e6 * cpu / len(pages):6.1f}"
            f"  loop thread {1e6 * loop / len(pages):6.1f}  wall {1e6 * wall / len(pages):6.1f}"
        )


if __name__ == "__main__":
    main()
