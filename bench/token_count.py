#!/usr/bin/env python3
"""How far ``count_tokens`` (the chunks' token count, a regex approximation) is from real
tokenizers: per chunk, approximation / cl100k_base and / o200k_base.

The texts are the Markdown that ``content_quality.py --json`` wrote for one contender (the
article benchmark's 181 pages), cut with ``chunks(max_tokens=512)``; chunks of fewer than 50
real tokens are left out of the ratios. The real counts come from ``bpe-openai`` (the OpenAI
vocabularies inside the package: no download at run time)::

    pip install bpe-openai
    python bench/content_quality.py --data /tmp/aeb --only ours --json /tmp/pages.json
    PYTHONPATH=src python bench/token_count.py /tmp/pages.json
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

import bpe_openai

from sitecrawl.parse._chunks import chunks


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pages", type=Path, help="content_quality.py --json output")
    ap.add_argument("--contender", default="ours")
    ap.add_argument("--max-tokens", type=int, default=512)
    args = ap.parse_args()
    pages = json.loads(args.pages.read_text(encoding="utf-8"))[args.contender]
    pieces = [c for text in pages.values() for c in chunks(text, max_tokens=args.max_tokens)]
    print(f"{len(pages)} pages, {len(pieces)} chunks of at most {args.max_tokens} tokens")
    header = ("chunks", "total", "median", "p5", "p95", "min")
    print(f"{'encoding':<12} " + " ".join(f"{name:>6}" for name in header))
    for name in ("cl100k_base", "o200k_base"):
        encoding = bpe_openai.get_encoding(name)
        real = [len(encoding.encode(c.text)) for c in pieces]
        ratios = sorted(c.tokens / n for c, n in zip(pieces, real, strict=True) if n >= 50)
        total = sum(c.tokens for c in pieces) / sum(real)
        tail = len(ratios) // 20
        print(
            f"{name:<12} {len(ratios):>6} {total:>6.2f} {statistics.median(ratios):>6.2f} "
            f"{ratios[tail]:>6.2f} {ratios[-tail - 1]:>6.2f} {ratios[0]:>6.2f}"
        )


if __name__ == "__main__":
    main()
