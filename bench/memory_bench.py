#!/usr/bin/env python3
"""Peak RSS against URLs discovered, on a site of a million URLs and more.

Starts bench/million_server.py (a fresh one per contender, so its page count starts at 0), runs
each contender as a subprocess and samples, every 0.2 s, the crawler's VmRSS (/proc/PID/status,
plus its child processes')
and the number of pages the server has served. Every page served links to ``--fanout`` new URLs,
so a breadth-first crawler has discovered ``1 + fanout * pages`` URLs by then.

    python bench/memory_bench.py --pages 10000 --fanout 100        # 1,000,001 URLs discovered

Contenders: sitecrawl in memory (``--no-state``) and SQLite (``--state``) mode, SQLite mode
writing a WARC archive (``sqlite-warc``), and Scrapy (bench/scrapy_spider.py, stock settings:
its scheduler and dupefilter live in memory).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import asdict, dataclass, field
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO_DIR = BENCH_DIR.parent
CHECKPOINTS = (100_000, 250_000, 500_000, 1_000_000, 2_500_000, 5_000_000, 10_000_000)


@dataclass
class Result:
    name: str
    argv: list[str]
    seconds: float = 0.0
    pages: int = 0
    discovered: int = 0
    peak_rss_mb: float = 0.0
    rss_mb_at: dict[int, float] = field(default_factory=dict)
    samples: list[tuple[int, float]] = field(default_factory=list)  # (discovered, RSS MB)
    state_bytes: int | None = None
    exit_code: int | None = None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def rss_mb(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except (FileNotFoundError, ProcessLookupError):
        return None
    return None


def tree_rss_mb(pid: int) -> float | None:
    """RSS of a process and its children (sitecrawl's parser process counts too)."""
    own = rss_mb(pid)
    if own is None:
        return None
    try:
        with open(f"/proc/{pid}/task/{pid}/children", encoding="ascii") as children:
            kids = [int(child) for child in children.read().split()]
    except (FileNotFoundError, ProcessLookupError):
        kids = []
    return own + sum(rss_mb(kid) or 0.0 for kid in kids)


def served(port: int) -> int:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stats", timeout=5) as response:
        pages: int = json.load(response)["pages"]
        return pages


def wait_for_server(port: int) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            served(port)
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("million_server.py did not start")


def run(name: str, argv: list[str], port: int, fanout: int, state: Path | None) -> Result:
    result = Result(name=name, argv=argv)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO_DIR / "src")]))
    started = time.monotonic()
    crawler = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    while crawler.poll() is None:
        rss = tree_rss_mb(crawler.pid)
        if rss is not None:
            discovered = 1 + fanout * served(port)
            result.samples.append((discovered, round(rss, 1)))
            result.peak_rss_mb = max(result.peak_rss_mb, rss)
            for mark in CHECKPOINTS:
                if discovered >= mark and mark not in result.rss_mb_at:
                    result.rss_mb_at[mark] = round(result.peak_rss_mb, 1)
        time.sleep(0.2)
    result.seconds = round(time.monotonic() - started, 1)
    result.exit_code = crawler.returncode
    assert crawler.stderr is not None
    errors = crawler.stderr.read().decode(errors="replace").strip()
    if crawler.returncode:
        print(f"  {name} exited {crawler.returncode}: {errors[-500:]}", file=sys.stderr)
    result.pages = served(port)
    result.discovered = 1 + fanout * result.pages
    result.peak_rss_mb = round(result.peak_rss_mb, 1)
    if state is not None:
        result.state_bytes = sum(
            p.stat().st_size for p in state.parent.iterdir() if p.name.startswith(state.name)
        )
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=10_000, help="pages to fetch (%(default)s)")
    ap.add_argument("--fanout", type=int, default=100, help="new links per page (%(default)s)")
    ap.add_argument("-c", "--concurrency", type=int, default=16)
    ap.add_argument("--only", nargs="+", choices=["memory", "sqlite", "sqlite-warc", "scrapy"])
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--json-out", type=Path, help="write every result (with samples) here")
    args = ap.parse_args()

    spider = BENCH_DIR / "scrapy_spider.py"
    tmp = Path(tempfile.mkdtemp(prefix="sitecrawl-membench-"))
    state = tmp / "million.sitecrawl.db"
    results = []
    for name in args.only or ["memory", "sqlite", "scrapy"]:
        port = free_port()
        url = f"http://127.0.0.1:{port}/"
        common = ["-c", str(args.concurrency)]
        sitecrawl = [args.python, "-m", "sitecrawl", "crawl", url, "-n", str(args.pages)]
        argv = {
            "memory": [*sitecrawl, *common, "-o", "-", "-q", "--no-state"],
            "sqlite": [*sitecrawl, *common, "-o", "-", "-q", "--state", str(state), "--fresh"],
            # the WARC archive's own memory (issue 33: flat with the crawl's size)
            "sqlite-warc": [
                *sitecrawl,
                *common,
                *("-o", "-", "-q", "--state", str(state), "--fresh"),
                *("-o", str(tmp / "million.warc.gz")),
            ],
            "scrapy": [
                args.python,
                str(spider),
                url,
                *common,
                "-n",
                str(args.pages),
                "-o",
                str(tmp / "scrapy.jsonl"),
            ],
        }[name]
        if name == "scrapy" and not spider.exists():
            print(f"  scrapy: skipped, {spider} is missing", file=sys.stderr)
            continue
        server = subprocess.Popen(
            [
                args.python,
                str(BENCH_DIR / "million_server.py"),
                "--port",
                str(port),
                "--fanout",
                str(args.fanout),
            ]
        )
        try:
            wait_for_server(port)
            stored = state if name.startswith("sqlite") else None
            result = run(name, argv, port, args.fanout, stored)
        finally:
            server.terminate()
            server.wait(10)
        results.append(result)
        marks = " ".join(f"{k:,}: {v:.0f} MB" for k, v in result.rss_mb_at.items())
        print(
            f"{name:<8} {result.pages:,} pages, {result.discovered:,} URLs discovered in"
            f" {result.seconds} s; peak RSS {result.peak_rss_mb:.0f} MB; at {marks}"
            + (
                f"; state {result.state_bytes / 1e6:.0f} MB"
                f" = {result.state_bytes / result.discovered:.0f} B/URL"
                if result.state_bytes
                else ""
            ),
            flush=True,
        )
    if args.json_out:
        args.json_out.write_text(json.dumps([asdict(r) for r in results], indent=1))


if __name__ == "__main__":
    main()
