#!/usr/bin/env python3
"""Fetch-and-parse ceiling: N processes, each GETting its share of a URL list with aiohttp
and parsing every page with sitecrawl's own extraction (``parse_html``), nothing else.

No frontier, no link dedupe, no politeness, no records: the upper bound of a design where
every process fetches *and* parses, to set beside the fetch-only ceiling and sitecrawl
itself. Writes one ``{"url", "status",
"links"}`` JSON line per URL so ``run_bench.py`` can count pages like any contender's.

    python bench/fetch_parse.py bench/site/urls.txt -c 16 -p 2 -o out.jsonl
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path


async def crawl_share(urls: list[str], concurrency: int) -> list[str]:
    """Fetch and parse ``urls`` with ``concurrency`` workers; return JSON lines."""
    import aiohttp

    from sitecrawl._urls import JoinCache
    from sitecrawl.parse import decode_html
    from sitecrawl.parse._extract import parse_html

    joins = JoinCache()
    queue = list(reversed(urls))
    lines: list[str] = []

    async def worker(session: aiohttp.ClientSession) -> None:
        while queue:
            url = queue.pop()
            async with session.get(url) as resp:
                body = await resp.read()
                status, charset = resp.status, resp.charset
            data = parse_html(decode_html(body, charset), url, joins)
            lines.append(json.dumps({"url": url, "status": status, "links": len(data.links)}))

    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:
        await asyncio.gather(*(worker(session) for _ in range(concurrency)))
    return lines


def run_share(urls: list[str], concurrency: int, out: Path) -> None:
    try:
        import uvloop

        loop_factory = uvloop.new_event_loop
    except ImportError:
        loop_factory = None
    with asyncio.Runner(loop_factory=loop_factory) as runner:
        lines = runner.run(crawl_share(urls, concurrency))
    out.write_text("".join(line + "\n" for line in lines))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("urls", type=Path, help="file with one URL per line")
    ap.add_argument("-c", "--concurrency", type=int, default=16, help="requests in flight, all")
    ap.add_argument("-p", "--processes", type=int, default=2)
    ap.add_argument("-o", "--output", type=Path, required=True, help="JSONL output file")
    args = ap.parse_args()
    urls = args.urls.read_text().split()
    n = args.processes
    per_process = max(1, args.concurrency // n)
    parts = [args.output.with_suffix(f".part{i}") for i in range(n)]
    children = []
    for i in range(n):
        pid = os.fork()
        if pid == 0:  # each process takes every n-th URL
            code = 1
            try:
                run_share(urls[i::n], per_process, parts[i])
                code = 0
            finally:
                os._exit(code)
        children.append(pid)
    failed = sum(os.waitpid(pid, 0)[1] != 0 for pid in children)
    with args.output.open("w") as out:
        for part in parts:
            out.write(part.read_text() if part.exists() else "")
            part.unlink(missing_ok=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
