#!/usr/bin/env python3
"""Milliseconds per page that custom extraction rules add to ``parse_html``, in one process
(no network): each page of the bench site is parsed without rules, then with them, and the
difference of the best of ``--repeat`` runs is divided by the pages.

    python bench/extract_cost.py --site /path/to/bench-site           # 10 CSS rules, 1 XPath
    python bench/extract_cost.py --site SITE --rules xpath1 --pages 500

A sanity check of the rules' cost per page; the pages/s A/B is ``run_bench.py --serve --only
sitecrawl sitecrawl-extract10 sitecrawl-xpath1``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from run_bench import EXTRACT10, XPATH1


def _specs(args: list[str]) -> dict[str, str]:
    pairs = (arg.removeprefix("--extract=").split("=", 1) for arg in args)
    return {name: spec for name, spec in pairs}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--site", type=Path, required=True, help="the generated bench site")
    ap.add_argument("--pages", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--rules", choices=("css10", "xpath1", "both"), default="both")
    args = ap.parse_args()

    from sitecrawl._urls import JoinCache
    from sitecrawl.parse import Extraction, decode_html
    from sitecrawl.parse._extract import parse_html

    files = sorted(args.site.glob("s*/g*/page-*.html"))[: args.pages]
    docs = [
        (decode_html(path.read_bytes()), f"http://127.0.0.1:8088/{path.relative_to(args.site)}")
        for path in files
    ]
    sets = {"css10": EXTRACT10, "xpath1": XPATH1}
    chosen = list(sets) if args.rules == "both" else [args.rules]

    def best(extraction: Extraction | None) -> float:
        times = []
        for _ in range(args.repeat):
            joins = JoinCache()
            start = time.perf_counter()
            for html, url in docs:
                parse_html(html, url, joins, extraction=extraction)
            times.append(time.perf_counter() - start)
        return min(times)

    best(None)  # warm-up: imports, allocator, caches
    base = best(None)
    print(f"{len(docs)} pages: parse_html {base / len(docs) * 1000:.3f} ms a page")
    for name in chosen:
        extraction = Extraction.from_specs(_specs(sets[name]))
        cost = best(extraction) - base
        print(f"{name}: +{cost / len(docs) * 1000:.3f} ms a page (+{cost / base:.0%} of the parse)")


if __name__ == "__main__":
    main()
