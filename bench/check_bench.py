#!/usr/bin/env python3
"""``sitecrawl check`` on the generated site: how long it is silent after the checks, its peak
memory and how many lines it prints (issue 30, items 4 and 5).

The site (``gen_site.py``) is served by Python's threaded ``http.server`` on a free port (no
nginx needed: the crawl's speed is not what is measured). Its pages link to stylesheets,
scripts and images that do not exist, so every page links to broken targets. The check runs
as a child process; each stderr line is timestamped as it arrives. Printed: the wall time,
the time from the checks' last progress line (``checked N of N``) to the end (what the
results cost), the child's peak RSS, and the output's lines.

    python bench/check_bench.py --pages 10000
    python bench/check_bench.py --site /tmp/site --python /other/tree/python   # an A/B
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=10_000, help="pages (%(default)s)")
    ap.add_argument("--site", type=Path, help="generate the site here and keep it")
    ap.add_argument("--python", default=sys.executable, help="runs -m sitecrawl (%(default)s)")
    ap.add_argument("--rounds", type=int, default=1, help="runs of the check (%(default)s)")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="sitecrawl-check-"))
    site = args.site or work / "site"
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    generate = [sys.executable, str(BENCH / "gen_site.py"), "--pages", str(args.pages)]
    subprocess.run([*generate, "--base", base, "--out", str(site)], check=True)
    server = subprocess.Popen(
        [sys.executable, "-m", "http.server", "--bind", "127.0.0.1", str(port)],
        cwd=site,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    command = [args.python, "-m", "sitecrawl", "check", base + "/"]
    print("command:", " ".join(command))
    try:
        for _ in range(50):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        for round_ in range(1, args.rounds + 1):
            run(command, work / "out.txt", round_)
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(work, ignore_errors=True)
    return 0


def run(command: list[str], out: Path, round_: int) -> None:
    started = time.perf_counter()
    checked_at = None
    with out.open("wb") as stdout:
        child = subprocess.Popen(
            command, stdout=stdout, stderr=subprocess.PIPE, text=True, env=dict(os.environ)
        )
        assert child.stderr is not None
        last = ""
        for line in child.stderr:
            last = line.rstrip()
            if line.startswith("checked ") and " in " in line:  # the checks' last line
                checked_at = time.perf_counter()
        child.wait()
    ended = time.perf_counter()
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    lines = out.read_text(encoding="utf-8").splitlines()
    after = "?" if checked_at is None else f"{ended - checked_at:.2f} s"
    print(
        f"round {round_}: exit {child.returncode}, wall {ended - started:.1f} s,"
        f" after the checks {after}, peak RSS (largest child so far) {peak_kb / 1024:.0f} MB,"
        f" {len(lines):,} lines of output; last stderr line: {last}"
    )
    print(f"  summary: {lines[-1] if lines else ''}")


if __name__ == "__main__":
    sys.exit(main())
