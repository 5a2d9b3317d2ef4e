#!/usr/bin/env python3
"""Where one crawl's wall time goes: start-up, steady state, shutdown, and each process's CPU.

    python bench/timeline.py                                  # sitecrawl, memory mode
    python bench/timeline.py -- --state /tmp/t.db --fresh     # extra crawl arguments

nginx serves the bench site (it must not be running already) with an access log that
stamps each request to the millisecond; the crawl runs as a child while its CPU and its
descendants' (the parser processes) are read from /proc every 0.25 s. Printed: the time to
the first request, requests per 0.25 s, the steady rate (middle 80 % of requests), the time
from the last request to exit, and per-interval CPU use of each process. (It showed, on the
2-core machine, ~10 % of a 5 s crawl going to start-up and the parser process as the busier
of the two.)
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from run_bench import descendants
from serve_site import DEFAULT_PORT, DEFAULT_ROOT, NginxServer

_TICK = os.sysconf("SC_CLK_TCK")


def _cpu_seconds(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / _TICK


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--port", type=int, default=DEFAULT_PORT)
    ap.add_argument("crawl_args", nargs="*", help="after --: extra `sitecrawl crawl` arguments")
    args = ap.parse_args()
    url = f"http://127.0.0.1:{args.port}/"
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "access.log"
        with NginxServer(DEFAULT_ROOT, args.port, access_log=log):
            argv = [args.python, "-m", "sitecrawl", "crawl", url, "-q", "-o", f"{tmp}/out.jsonl"]
            argv += args.crawl_args or ["--no-state"]
            started = time.time()
            crawl = subprocess.Popen(argv)
            samples: list[tuple[float, dict[int, float]]] = []
            while crawl.poll() is None:
                cpu = {pid: c for pid in [crawl.pid, *descendants(crawl.pid)]
                       if (c := _cpu_seconds(pid)) is not None}  # fmt: skip
                samples.append((time.time() - started, cpu))
                with contextlib.suppress(subprocess.TimeoutExpired):
                    crawl.wait(timeout=0.25)
            ended = time.time() - started
        stamps = sorted(float(line.split()[0]) - started for line in log.read_text().splitlines())
    if crawl.returncode or not stamps:
        sys.exit(f"crawl failed (exit {crawl.returncode}) or made no request")
    cut = len(stamps) // 10
    middle = stamps[cut : len(stamps) - cut]
    steady = (len(middle) - 1) / (middle[-1] - middle[0]) if len(middle) > 1 else float("nan")
    print(f"requests {len(stamps)}; first at {stamps[0]:.3f} s, last at {stamps[-1]:.3f} s, "
          f"exit at {ended:.3f} s")  # fmt: skip
    print(f"overall {len(stamps) / ended:.0f} req/s; steady (middle 80 %) {steady:.0f} req/s")
    buckets: dict[int, int] = {}
    for stamp in stamps:
        buckets[int(stamp * 4)] = buckets.get(int(stamp * 4), 0) + 1
    print("requests per 0.25 s:", " ".join(f"{k / 4:.2f}:{n}" for k, n in sorted(buckets.items())))
    print("CPU per 0.25 s (main, then each child):")
    for (t1, a), (t2, b) in itertools.pairwise(samples):
        shares = [f"{(b[pid] - a[pid]) / (t2 - t1):4.0%}" for pid in b if pid in a]
        print(f"  {t2:5.2f} s  " + "  ".join(shares))


if __name__ == "__main__":
    main()
