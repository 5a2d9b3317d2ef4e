#!/usr/bin/env python3
"""Main-content extraction quality and cost: word-shingle precision/recall/F1 and ms a page.

The data is scrapinghub's article-extraction-benchmark (MIT licence; 181 news and blog pages,
fetched with JavaScript off, one gzipped HTML file each, and ``ground-truth.json`` mapping each
page's id to its ``articleBody``). It is not in this repository; put its ``html/`` folder and
``ground-truth.json`` in one directory, e.g. from a clone of
``github.com/scrapinghub/article-extraction-benchmark``::

    git clone --depth 1 https://github.com/scrapinghub/article-extraction-benchmark /tmp/aeb
    python bench/content_quality.py --data /tmp/aeb                  # every contender
    python bench/content_quality.py --data /tmp/aeb --only ours trafilatura-txt

It then runs offline. The contenders are optional packages (``pip install trafilatura
resiliparse html-to-markdown``); best kept in a venv of their own, with ``PYTHONPATH=src`` for
``ours``. Each page is given to every contender in turn (the order rotated from page to page),
so a busy machine slows all of them alike; ms a page is the mean wall time of the extraction
call alone (the gunzip and the scoring are outside the clock).

The score is the benchmark's published one, computed here from its description: text is split
into ``\\w+`` tokens; a page's shingles are its runs of 4 consecutive tokens (a text of fewer
than 4 tokens is one shingle), counted as a multiset; true positives are the shingles both
texts share (the smaller count of each), false positives the extracted text's extra ones,
false negatives the ground truth's missing ones; the three are divided by their sum (so every
page weighs the same). Precision is the mean of tp / (tp + fp) over the pages with an
extraction, recall the mean of tp / (tp + fn) over the pages with a ground truth (both 1 when
fp = fn = 0), and F1 is the harmonic mean of those two means. The ± is the standard deviation
of F1 over 1,000 bootstrap resamplings of the pages (seed 0).

Markdown contenders are scored on their text as a reader sees it: a link ``[text](url)``
counts as its text, an autolink ``<url>`` as the URL, an image ``![alt](src "title")`` as
nothing (the ground truth has no link targets, alt texts or captions); the rest of the
Markdown syntax is punctuation, which the ``\\w+`` tokens skip anyway.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

_TOKEN = re.compile(r"\w+")
#: A Markdown link's target: ``(url)`` (balanced parentheses allowed in it), ``(<url>)``,
#: either with a ``"title"``.
_TARGET = r"\((?:<[^>]*>|(?:[^\s()]|\([^\s()]*\))*)(?:\s+\"(?:\\.|[^\"\\])*\")?\)"
#: Its text: escaped brackets (``\]``) and balanced ones (``[File: Reuters]``) do not end it.
_LABEL = r"\[((?:\\.|[^\\\[\]]|\[(?:\\.|[^\\\[\]])*\])*)\]"
_IMAGE = re.compile("!" + _LABEL + _TARGET)
_LINK = re.compile(_LABEL + _TARGET)
#: An autolink, ``<https://...>``: the reader sees the URL.
_AUTOLINK = re.compile(r"<(https?://[^>\s]*)>")

Extractor = Callable[[str, str], str]


def markdown_text(markdown: str) -> str:
    """The words of a Markdown text as a reader sees them: link targets and images out."""
    text = _IMAGE.sub("", markdown)
    text = _LINK.sub(r"\1", text)
    return _AUTOLINK.sub(r"\1", text)


def shingles(text: str, n: int = 4) -> Counter[tuple[str, ...]]:
    tokens = _TOKEN.findall(text)
    if len(tokens) < n:
        return Counter([tuple(tokens)] if tokens else [])
    return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def tp_fp_fn(true: str, pred: str) -> tuple[float, float, float]:
    want, got = shingles(true), shingles(pred)
    tp = float(sum((want & got).values()))
    fp = float(sum((got - want).values()))
    fn = float(sum((want - got).values()))
    total = tp + fp + fn
    return (tp / total, fp / total, fn / total) if total else (0.0, 0.0, 0.0)


def _ratio(tp: float, other: float, fp: float, fn: float) -> float:
    if fp == fn == 0:
        return 1.0
    return 0.0 if tp == other == 0 else tp / (tp + other)


def scores(counts: list[tuple[float, float, float]]) -> tuple[float, float, float]:
    """(F1, precision, recall) over pages, as the benchmark averages them."""
    precision = statistics.mean(_ratio(tp, fp, fp, fn) for tp, fp, fn in counts if tp + fp > 0)
    recall = statistics.mean(_ratio(tp, fn, fp, fn) for tp, fp, fn in counts if tp + fn > 0)
    return 2 * precision * recall / (precision + recall), precision, recall


def f1_spread(counts: list[tuple[float, float, float]], rounds: int = 1000) -> float:
    rng = random.Random(0)
    n = len(counts)
    f1s = [scores([counts[rng.randrange(n)] for _ in range(n)])[0] for _ in range(rounds)]
    return statistics.stdev(f1s)


def _skip(name: str, exc: ImportError) -> None:
    print(f"skipped {name}: {exc}", file=sys.stderr)


def contenders() -> dict[str, Extractor]:
    """Every contender that imports here: name -> (html, url) -> extracted text or Markdown."""
    found: dict[str, Extractor] = {}
    try:
        import trafilatura
    except ImportError as exc:
        _skip("trafilatura", exc)
    else:

        def trafilatura_txt(html: str, url: str) -> str:
            # As the benchmark's own runner calls it (its published figure).
            return trafilatura.extract(html, include_comments=False) or ""

        def trafilatura_md(html: str, url: str) -> str:
            return (
                trafilatura.extract(
                    html,
                    url=url,
                    output_format="markdown",
                    include_comments=False,
                    include_links=True,
                    include_images=True,
                    include_tables=True,
                    include_formatting=True,
                )
                or ""
            )

        found["trafilatura-txt"] = trafilatura_txt
        found["trafilatura-md"] = trafilatura_md
    try:
        from resiliparse.extract.html2text import extract_plain_text
    except ImportError as exc:
        _skip("resiliparse", exc)
    else:

        def resiliparse_main(html: str, url: str) -> str:
            return str(extract_plain_text(html, main_content=True))

        found["resiliparse"] = resiliparse_main
    try:
        import html_to_markdown
    except ImportError as exc:
        _skip("html-to-markdown", exc)
    else:
        options = html_to_markdown.ConversionOptions(extract_metadata=False)

        def h2m_full(html: str, url: str) -> str:
            return html_to_markdown.convert(html, options).content or ""

        found["html-to-markdown"] = h2m_full
        if "resiliparse" in found:

            def resiliparse_h2m(html: str, url: str) -> str:
                main = extract_plain_text(
                    html, main_content=True, preserve_formatting="minimal_html", links=True
                )
                return html_to_markdown.convert(str(main), options).content or ""

            found["resiliparse+h2m"] = resiliparse_h2m
    try:
        from sitecrawl.parse._content import page_markdown
    except ImportError as exc:
        _skip("ours", exc)
    else:
        found["ours"] = lambda html, url: page_markdown(html, url)
        found["ours-full"] = lambda html, url: page_markdown(html, url, scope="full")
    return found


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, required=True, help="has html/ and ground-truth.json")
    ap.add_argument("--only", nargs="+", help="contenders to run (default: all that import)")
    ap.add_argument("--pages", type=int, default=0, help="the first N pages only (0: all)")
    ap.add_argument("--json", type=Path, help="write each page's extractions here")
    args = ap.parse_args()

    truth = json.loads((args.data / "ground-truth.json").read_text(encoding="utf-8"))
    ids = sorted(truth)[: args.pages or None]
    runners = contenders()
    if args.only:
        missing = sorted(set(args.only) - set(runners))
        if missing:
            raise SystemExit(f"not importable here: {', '.join(missing)}")
        runners = {name: runners[name] for name in args.only}
    names = list(runners)
    texts: dict[str, dict[str, str]] = {name: {} for name in names}
    seconds: dict[str, float] = dict.fromkeys(names, 0.0)
    for turn, page_id in enumerate(ids):
        with gzip.open(args.data / "html" / f"{page_id}.html.gz", "rt", encoding="utf-8") as f:
            html = f.read()
        url = truth[page_id].get("url") or f"https://example.com/{page_id}"
        for k in range(len(names)):
            name = names[(turn + k) % len(names)]
            start = time.perf_counter()
            out = runners[name](html, url)
            seconds[name] += time.perf_counter() - start
            texts[name][page_id] = out
    print(f"{len(ids)} pages, contenders interleaved per page")
    print(f"{'contender':<18} {'F1':>13} {'precision':>10} {'recall':>7} {'ms/page':>8}")
    for name in names:
        counts = [
            tp_fp_fn(truth[i].get("articleBody", ""), markdown_text(texts[name][i])) for i in ids
        ]
        f1, precision, recall = scores(counts)
        spread = f1_spread(counts)
        ms = seconds[name] / len(ids) * 1000
        print(f"{name:<18} {f1:.3f} ± {spread:.3f} {precision:>10.3f} {recall:>7.3f} {ms:>8.2f}")
    if args.json:
        args.json.write_text(json.dumps(texts, ensure_ascii=False, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
