#!/usr/bin/env python3
"""Instructions per page of a whole crawl (the crawler and its parser process), counted by
callgrind, for comparing checkouts on a busy machine: unlike wall or CPU seconds, an
instruction count does not move with the load other processes put on the cores.

    python bench/crawl_instructions.py --site SITE --baseline /path/to/other/checkout \\
        [--rounds 2] [--args '--no-state'] [--args '--state {db} --fresh']

Each round crawls the site served by nginx (``bench/serve_site.py``) once per checkout and
per ``--args`` set, under ``valgrind --tool=callgrind --trace-children=yes``, and sums the
instructions of every process of the crawl. A crawl under valgrind runs ~50x slower, so the
parser process keeps up and the crawler parses nothing itself: the count is the work of one
page's fetch, bookkeeping, parse and record, with start-up spread over the pages. What a
page costs the server (nginx) is not counted. The ratios are what to read.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

from serve_site import NginxServer  # noqa: E402


def count(src: Path, url: str, args: list[str], out: Path) -> tuple[int, int, int]:
    """(instructions of all the crawl's processes, of the event loop's, pages written)."""
    logs = Path(tempfile.mkdtemp(prefix="cg-"))
    env = dict(os.environ, PYTHONPATH=str(src), PYTHONHASHSEED="0")
    cmd = [
        "valgrind",
        "--tool=callgrind",
        "--trace-children=yes",
        f"--callgrind-out-file={logs}/cg.%p",
        f"--log-file={logs}/log.%p",
        sys.executable,
        "-m",
        "sitecrawl",
        "crawl",
        url,
        "-q",
        "-o",
        str(out),
        *args,
    ]
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)
    counts = {}
    for log in logs.glob("log.*"):
        found = re.search(r"Collected : (\d+)", log.read_text())
        if found:
            counts[int(log.name.split(".")[1])] = int(found.group(1))
    total = sum(counts.values())
    loop = counts[min(counts)] if counts else 0  # the first process: the event loop's
    pages = sum(1 for _ in out.open()) if out.suffix == ".jsonl" else 0
    subprocess.run(["rm", "-rf", str(logs)], check=True)
    return total, loop, pages


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--site", type=Path, required=True, help="generated site (gen_site.py)")
    ap.add_argument("--port", type=int, help="nginx port (default: the site's base URL's)")
    ap.add_argument("--baseline", type=Path, help="another checkout to compare with")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument(
        "--args",
        action="append",
        help="crawl options (repeatable; {db} is a fresh state file path); default --no-state",
    )
    args = ap.parse_args()
    base_url = json.loads((args.site / "site-meta.json").read_text())["base"]
    port = args.port or int(base_url.rsplit(":", 1)[1].strip("/"))
    sources = {"this": BENCH_DIR.parent / "src"}
    if args.baseline:
        sources["baseline"] = args.baseline.resolve() / "src"
    sets = args.args or ["--no-state"]
    # Byte-compiled as `pip install` leaves them (run_bench.py does the same): with
    # PYTHONDONTWRITEBYTECODE set, each process would compile the checkout from source.
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", *map(str, sources.values())], check=True
    )
    results: dict[tuple[str, str], list[float]] = {}
    with NginxServer(args.site, port), tempfile.TemporaryDirectory() as tmp:
        for round_ in range(args.rounds):
            for options in sets:
                for name, src in sources.items():
                    db = Path(tmp) / f"{name}-{round_}.db"
                    crawl_args = shlex.split(options.replace("{db}", str(db)))
                    out = Path(tmp) / f"{name}-{round_}.jsonl"
                    total, loop, pages = count(src, f"http://127.0.0.1:{port}/", crawl_args, out)
                    per_page, loop_per_page = total / max(pages, 1), loop / max(pages, 1)
                    results.setdefault((options, name), []).append(per_page)
                    results.setdefault((options, name + " loop"), []).append(loop_per_page)
                    print(
                        f"round {round_ + 1} [{options}] {name}: {pages} pages, "
                        f"{per_page:,.0f} instructions a page ({loop_per_page:,.0f} in the"
                        " event loop's process)",
                        flush=True,
                    )
    for options in sets:
        this = statistics.median(results[(options, "this")])
        line = f"[{options}] this checkout: {this:,.0f} instructions a page (median)"
        if args.baseline:
            base = statistics.median(results[(options, "baseline")])
            line += f"; baseline {base:,.0f}; this / baseline = {this / base:.3f}"
            loops = [statistics.median(results[(options, n + " loop")]) for n in sources]
            line += f"; event loop's process {loops[0]:,.0f} / {loops[1]:,.0f} = "
            line += f"{loops[0] / loops[1]:.3f}"
        print(line)


if __name__ == "__main__":
    main()
