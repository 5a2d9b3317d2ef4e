#!/usr/bin/env python3
"""Where a page's Markdown time goes, step by step, on the generated bench site (one process).

    python bench/gen_site.py --pages 5000 --out /tmp/site5k-md
    PYTHONPATH=src python bench/markdown_cost.py --site /tmp/site5k-md --pages 300

Steps, each timed in CPU time (``time.process_time``) on every page (after one warm-up pass):
the crawl's own parse (``parse_body`` without Markdown: decode, scan, Lexbor, every field),
lxml's parse of the page, our tree preparation, the boilerplate names and the page's shape
(``parse/_content_shape.py``), trafilatura's extraction, our XML -> HTML,
html-to-markdown, the zstd frame the stores keep (trafilatura's path, step by step); the
shipped ``page_markdown`` whole (semantic pages take the fast path: ``parse/_content_fast.py``);
then two alternatives for comparison:
trafilatura with ``fast=True``, and html-to-markdown alone on the page's ``<main>`` (what a
fast path for semantic pages costs).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import html_to_markdown
import trafilatura
from selectolax.lexbor import LexborHTMLParser

from sitecrawl._pagecodec import pack
from sitecrawl.parse._child import parse_body
from sitecrawl.parse._content import page_markdown
from sitecrawl.parse._content_boiler import strip_boilerplate
from sitecrawl.parse._content_shape import reshape
from sitecrawl.parse._content_tree import _HTML_OPTIONS, document, extract, prepare
from sitecrawl.parse._content_xml import main_html, put_images


def _extract(tree: Any, images: list[tuple[str, str, str]], fast: bool = False) -> Any:
    return trafilatura.bare_extraction(
        tree,
        include_comments=False,
        include_tables=True,
        include_images=False,
        include_formatting=True,
        include_links=True,
        with_metadata=False,
        fast=fast,
    )


def one_page(body: bytes, url: str, times: dict[str, list[float]]) -> None:
    def timed(name: str, step: Callable[[], Any]) -> Any:
        start = time.process_time()  # CPU time: the machine is shared (wall time is not)
        value = step()
        times.setdefault(name, []).append((time.process_time() - start) * 1000)
        return value

    timed("crawl parse (no Markdown)", lambda: parse_body(body, None, url))
    timed("shipped: page_markdown (fast path or not)", lambda: page_markdown(body, url))
    text = body.decode("utf-8")
    tree = timed("lxml parse", lambda: document(text))
    images: list[tuple[str, str, str]] = []
    timed("tree preparation", lambda: prepare(tree, url, images))
    timed("boilerplate by name", lambda: strip_boilerplate(tree))
    timed("page shape (reshape)", lambda: reshape(tree))
    # as shipped: precision mode, the default mode again for a page it leaves near empty
    extracted = timed("trafilatura extraction", lambda: extract(tree))
    html = timed("XML -> HTML", lambda: put_images(main_html(extracted), images))
    result = timed("html-to-markdown", lambda: html_to_markdown.convert(html, _HTML_OPTIONS))
    timed("zstd frame (store)", lambda: pack(result.content))
    tree = document(text)
    prepare(tree, url, [])
    timed("alt: trafilatura fast=True", lambda: _extract(tree, [], fast=True))

    def main_only() -> Any:
        main = LexborHTMLParser(text).css_first("main")
        return html_to_markdown.convert(main.html if main else text, _HTML_OPTIONS)

    timed("alt: <main> through html-to-markdown", main_only)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--site", type=Path, required=True)
    ap.add_argument("--pages", type=int, default=300)
    ap.add_argument("--json", type=Path, help="write the per-step means here")
    args = ap.parse_args()
    meta = json.loads((args.site / "site-meta.json").read_text())
    urls = (args.site / "urls.txt").read_text().split()[1 : args.pages + 1]
    base = meta["base"]
    bodies = [(args.site / url.removeprefix(base + "/")).read_bytes() for url in urls]
    warm: dict[str, list[float]] = {}
    for body, url in zip(bodies[:20], urls, strict=False):
        one_page(body, url, warm)
    times: dict[str, list[float]] = {}
    for body, url in zip(bodies, urls, strict=True):
        one_page(body, url, times)
    pipeline = [name for name in times if not name.startswith(("alt:", "crawl", "shipped"))]
    total = sum(statistics.fmean(times[name]) for name in pipeline)
    print(f"{len(bodies)} pages, mean CPU ms a page (median); Markdown total {total:.2f}")
    for name, values in times.items():
        mean = statistics.fmean(values)
        share = f"{mean / total:6.1%}" if name in pipeline else "      "
        print(f"  {name:38} {mean:7.2f} ({statistics.median(values):6.2f}) {share}")
    if args.json:
        args.json.write_text(json.dumps({k: statistics.fmean(v) for k, v in times.items()}))


if __name__ == "__main__":
    main()
