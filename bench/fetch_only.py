#!/usr/bin/env python3
"""Fetch-only ceiling: GET every URL of a list with N concurrent aiohttp workers.

Reads each body and does nothing else (no parsing, no link discovery), so its
pages/s is the practical upper bound for a Python asyncio crawler on this
machine.  Writes one ``{"url", "status", "bytes"}`` JSON line per URL so the
benchmark can count and compare pages like any other contender.

    python bench/fetch_only.py bench/site/urls.txt -c 16 -o out.jsonl
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

import aiohttp


async def fetch_all(urls: list[str], concurrency: int, out: Path) -> int:
    """Fetch ``urls``; return the number of failed requests."""
    queue: asyncio.Queue[str] = asyncio.Queue()
    for url in urls:
        queue.put_nowait(url)
    lines: list[str] = []
    errors = 0

    async def worker(session: aiohttp.ClientSession) -> None:
        nonlocal errors
        while not queue.empty():
            url = queue.get_nowait()
            try:
                async with session.get(url) as resp:
                    body = await resp.read()
                lines.append(json.dumps({"url": url, "status": resp.status, "bytes": len(body)}))
            except aiohttp.ClientError as exc:
                errors += 1
                print(f"{url}: {exc!r}", file=sys.stderr)

    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:
        await asyncio.gather(*(worker(session) for _ in range(concurrency)))
    out.write_text("".join(line + "\n" for line in lines))
    return errors


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("urls", type=Path, help="file with one URL per line")
    ap.add_argument("-c", "--concurrency", type=int, default=16)
    ap.add_argument("-o", "--output", type=Path, required=True, help="JSONL output file")
    args = ap.parse_args()
    urls = args.urls.read_text().split()
    # Same event loop choice as sitecrawl's CLI: uvloop when installed.
    try:
        import uvloop

        loop_factory = uvloop.new_event_loop
    except ImportError:
        loop_factory = None
    with asyncio.Runner(loop_factory=loop_factory) as runner:
        errors = runner.run(fetch_all(urls, args.concurrency, args.output))
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
