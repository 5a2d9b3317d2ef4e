#!/usr/bin/env python3
"""What the page-shape step costs ``page_markdown``: CPU ms a page with and without it.

    PYTHONPATH=src python bench/shape_ab.py --site /tmp/content-site5k --pages 300 --rounds 5
    PYTHONPATH=src python bench/shape_ab.py --data /tmp/aeb --rounds 3

A is ``page_markdown`` with :func:`~sitecrawl.parse._content_shape.reshape` replaced by a no-op
(the code before it: the call is the only difference on the path), B is the shipped one. Each
page is given to both in turn, the order alternating page by page and round by round, after
a warm-up pass; CPU time (``time.process_time``), the machine being shared. ``--site`` is the
generated bench site (``bench/gen_site.py``: its pages take the fast path, which never
reshapes), ``--data`` the article-extraction benchmark of ``bench/content_quality.py`` (every
page goes through trafilatura); with ``--data`` the step alone is timed too, on the tree as
``page_markdown`` hands it over.
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import time
from pathlib import Path

import lxml.html

from sitecrawl.parse import _content_tree
from sitecrawl.parse._content import page_markdown
from sitecrawl.parse._content_boiler import strip_boilerplate

Page = tuple[str | bytes, str]
SHIPPED = _content_tree.reshape


def _off(tree: lxml.html.HtmlElement) -> None:
    return None


def site_pages(site: Path, count: int) -> list[Page]:
    base = json.loads((site / "site-meta.json").read_text())["base"]
    urls = (site / "urls.txt").read_text().split()[1 : count + 1]
    return [((site / url.removeprefix(base + "/")).read_bytes(), url) for url in urls]


def benchmark_pages(data: Path) -> list[Page]:
    truth = json.loads((data / "ground-truth.json").read_text(encoding="utf-8"))
    pages: list[Page] = []
    for page_id in sorted(truth):
        with gzip.open(data / "html" / f"{page_id}.html.gz", "rt", encoding="utf-8") as f:
            pages.append((f.read(), truth[page_id]["url"]))
    return pages


def rounds(pages: list[Page], count: int) -> dict[str, list[float]]:
    variants = [("A: no reshape", _off), ("B: shipped", SHIPPED)]
    for html, url in pages[:20]:
        page_markdown(html, url)
    per_round: dict[str, list[float]] = {name: [] for name, _ in variants}
    try:
        for turn in range(count):
            seconds = dict.fromkeys(per_round, 0.0)
            for at, (html, url) in enumerate(pages):
                for name, step in variants if (at + turn) % 2 == 0 else variants[::-1]:
                    _content_tree.reshape = step
                    start = time.process_time()
                    page_markdown(html, url)
                    seconds[name] += time.process_time() - start
            for name, total in seconds.items():
                per_round[name].append(total / len(pages) * 1000)
    finally:
        _content_tree.reshape = SHIPPED
    return per_round


def step_alone(pages: list[Page]) -> list[float]:
    """CPU ms of the step itself on each page's tree as the trafilatura path prepares it."""
    times = []
    for html, url in pages:
        tree = _content_tree.document(html if isinstance(html, str) else html.decode())
        if tree is None:
            continue
        _content_tree.prepare(tree, url, [])
        strip_boilerplate(tree)
        start = time.process_time()
        SHIPPED(tree)
        times.append((time.process_time() - start) * 1000)
    return times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    source = ap.add_mutually_exclusive_group(required=True)
    source.add_argument("--site", type=Path, help="the generated bench site")
    source.add_argument("--data", type=Path, help="the article benchmark (html/, ground truth)")
    ap.add_argument("--pages", type=int, default=300, help="with --site: the first N pages")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    pages = site_pages(args.site, args.pages) if args.site else benchmark_pages(args.data)
    per_round = rounds(pages, args.rounds)
    print(f"{len(pages)} pages, {args.rounds} rounds interleaved, page_markdown CPU ms a page")
    for name, values in per_round.items():
        shown = " ".join(f"{value:6.2f}" for value in values)
        print(f"  {name:14} {shown}   median {statistics.median(values):.2f}")
    a, b = (statistics.median(values) for values in per_round.values())
    print(f"  B / A {b / a:.3f}")
    if args.data:
        alone = step_alone(pages)
        print(
            f"  reshape alone: mean {statistics.fmean(alone):.3f} ms, "
            f"median {statistics.median(alone):.3f}, max {max(alone):.2f}"
        )


if __name__ == "__main__":
    main()
