#!/usr/bin/env python3
"""Conditional requests on a real server: the same crawl twice, 5 % of the pages edited between.

The bench site (``gen_site.py``) is generated into a work directory and served by nginx, which
sends ``ETag`` and ``Last-Modified`` for static files and answers a matching
``If-None-Match`` / ``If-Modified-Since`` with ``304``; its access log records each request's
status and ``$body_bytes_sent``. The crawl runs once with ``--state``; then a deterministic 5 %
of the page files get another paragraph and a later mtime; then the very same command runs
again. Printed: the body bytes and statuses of each crawl (from the log), and whether exactly
the unedited pages are ``revalidated`` (from the crawl's output and from the state file).
Exits 1 when the second crawl transfers more than 10 % of the first's bytes or the
``revalidated`` pages are not exactly the unedited ones.

    python bench/revalidate_bench.py                   # 5,000 pages, nginx on a free port
    python bench/revalidate_bench.py --pages 500 --keep /tmp/reval
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shlex
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from gen_site import file_path, page_path
from serve_site import NginxServer, exit_on_sigterm

BENCH = Path(__file__).resolve().parent
LOG_FORMAT = "$status $body_bytes_sent $request_uri"
EDITED_SHARE = 0.05
MAX_BYTES_SHARE = 0.10


def edited_pages(pages: int, seed: int) -> list[int]:
    """The pages to edit: a seeded sample of 5 % of them (the home page may be one)."""
    return sorted(random.Random(seed).sample(range(pages), round(pages * EDITED_SHARE)))


def edit(root: Path, number: int) -> None:
    """Another paragraph in page ``number``'s file and an mtime an hour later: another ETag
    (nginx's is mtime and size) and another ``Last-Modified``."""
    path = root / file_path(number)
    html = path.read_text(encoding="utf-8")
    assert "</body>" in html, path
    path.write_text(
        html.replace("</body>", "<p>Edited between the two crawls.</p>\n</body>", 1),
        encoding="utf-8",
    )
    stat = path.stat()
    os.utime(path, (stat.st_atime, stat.st_mtime + 3600))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def log_tally(lines: list[str]) -> tuple[int, Counter[int]]:
    """Body bytes sent and the count of each status, from access log lines."""
    sent = 0
    statuses: Counter[int] = Counter()
    for line in lines:
        status, size, _ = line.split(" ", 2)
        statuses[int(status)] += 1
        sent += int(size)
    return sent, statuses


def crawl(
    command: list[str], log: Path, output: Path
) -> tuple[list[str], list[dict[str, object]], float]:
    """Run the crawl; its log lines, its output records and its wall time."""
    before = len(log.read_text(encoding="ascii").splitlines()) if log.exists() else 0
    started = time.perf_counter()
    subprocess.run(command, check=True)
    took = time.perf_counter() - started
    lines = log.read_text(encoding="ascii").splitlines()[before:]
    records = [json.loads(line) for line in output.read_text(encoding="utf-8").splitlines()]
    return lines, records, took


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=5000, help="pages (%(default)s)")
    ap.add_argument("--port", type=int, default=0, help="nginx port (default: a free one)")
    ap.add_argument("--seed", type=int, default=17, help="which pages are edited (%(default)s)")
    ap.add_argument("--keep", type=Path, help="work in this directory and keep it")
    ap.add_argument("--python", default=sys.executable, help="runs -m sitecrawl (%(default)s)")
    args = ap.parse_args()
    exit_on_sigterm()
    work = args.keep or Path(tempfile.mkdtemp(prefix="sitecrawl-reval-"))
    work.mkdir(parents=True, exist_ok=True)
    site, log, state = work / "site", work / "access.log", work / "state.db"
    output = work / "crawl.jsonl"
    for stale in (log, state, output):
        stale.unlink(missing_ok=True)
    port = args.port or free_port()
    base = f"http://127.0.0.1:{port}"
    generate = [args.python, str(BENCH / "gen_site.py"), "--pages", str(args.pages)]
    subprocess.run([*generate, "--base", base, "--out", str(site)], check=True)
    command = [args.python, "-m", "sitecrawl", "crawl", base + "/", "--state", str(state)]
    command += ["-q", "-o", str(output)]
    print("crawl command (both times):", shlex.join(command))
    try:
        with NginxServer(site, port, access_log=log, log_format=LOG_FORMAT):
            lines1, records1, took1 = crawl(command, log, output)
            shutil.copyfile(output, work / "crawl1.jsonl")
            edited = edited_pages(args.pages, args.seed)
            for number in edited:
                edit(site, number)
            lines2, records2, took2 = crawl(command, log, output)
        with sqlite3.connect(state) as conn:  # the state file's records of crawl 2
            stored = {
                str(url)
                for (url,) in conn.execute(
                    "SELECT u.url FROM urls u JOIN pages p ON p.id = u.id WHERE p.revalidated"
                )
            }
        conn.close()
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    bytes1, statuses1 = log_tally(lines1)
    bytes2, statuses2 = log_tally(lines2)
    every = {base + page_path(i) for i in range(args.pages)}
    changed = {base + page_path(i) for i in edited}
    crawled = {str(record["url"]) for record in records2}
    revalidated = {str(record["url"]) for record in records2 if record["revalidated"]}
    share = bytes2 / bytes1
    print(f"pages {args.pages:,}, edited {len(edited):,} (seed {args.seed})")
    for name, sent, statuses, took, records in (
        ("crawl 1", bytes1, statuses1, took1, records1),
        ("crawl 2", bytes2, statuses2, took2, records2),
    ):
        codes = ", ".join(f"{code}: {n:,}" for code, n in sorted(statuses.items()))
        print(
            f"{name}: {len(records):,} pages in {took:.1f} s, {sum(statuses.values()):,} requests"
            f" ({codes}), {sent:,} body bytes"
        )
    print(f"crawl 2 / crawl 1 body bytes: {share:.2%} (at most {MAX_BYTES_SHARE:.0%})")
    first = [record for record in records1 if record["revalidated"]]
    exact = not first and crawled == every and revalidated == stored == every - changed
    print(
        f"revalidated in crawl 1: {len(first):,}; in crawl 2 (output and state file):"
        f" {len(revalidated):,} / {len(stored):,};"
        f" exactly the {len(every - changed):,} unedited pages: {'yes' if exact else 'NO'}"
    )
    if not exact:
        print(f"  edited but revalidated: {sorted(revalidated & changed)[:5]}")
        print(f"  unedited, fetched: {sorted(every - changed - revalidated)[:5]}")
        print(
            f"  crawled not in the site / missing: {len(crawled - every)} / {len(every - crawled)}"
        )
    return 0 if exact and share <= MAX_BYTES_SHARE else 1


if __name__ == "__main__":
    sys.exit(main())
