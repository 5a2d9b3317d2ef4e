#!/usr/bin/env python3
"""What the near-duplicate audit costs (bench/RESULTS.md section 30): our MinHash (the C loop
and its Python twin) against datasketch, per page and for a 100,000-page crawl.

1. Signature CPU a page, over the bench site's pages: the body text without boilerplate (what
   ``--near-duplicates`` signs without ``--markdown``); the parse itself with and without the
   signature; datasketch's ``MinHash(num_perm=128).update_batch`` over the same 5-token
   shingles (datasketch hashes each with SHA-1, then permutes in numpy).
2. 100,000 synthetic signatures (300-word texts; 5 % exact copies, 10 % near copies with one
   word changed): our clustering (:func:`sitecrawl.audit.near_duplicates`) time and peak
   memory (tracemalloc), against datasketch's ``MinHashLSH`` (insert all, query each).

    PYTHONPATH=src python bench/neardup_cost.py --site /tmp/site1500 --pages 300 --n 100000

datasketch is a bench-only comparison (``pip install datasketch``): the package does not use it.
"""

from __future__ import annotations

import argparse
import random
import re
import time
import tracemalloc
from pathlib import Path

from sitecrawl.audit import near_duplicates
from sitecrawl.parse import content_signature
from sitecrawl.parse._extract import parse_html
from sitecrawl.parse._signature import signature_py


def cpu(fn, repeat: int = 3) -> float:  # type: ignore[no-untyped-def]
    """The lowest CPU seconds of ``repeat`` calls."""
    best = float("inf")
    for _ in range(repeat):
        started = time.process_time()
        fn()
        best = min(best, time.process_time() - started)
    return best


def per_page(site: Path, pages: int) -> None:
    files = sorted(site.rglob("*.html"))[:pages]
    htmls = [f.read_text(encoding="utf-8") for f in files]
    texts: list[str] = []
    import selectolax.lexbor as lx

    for html in htmls:
        tree = lx.LexborHTMLParser(html)
        tree.strip_tags(["script", "style", "noscript", "template"])
        tree.strip_tags(["nav", "header", "footer", "aside", "form"])
        assert tree.body is not None
        texts.append(tree.body.text(separator=" "))
    words = sum(len(t.split()) for t in texts) / len(texts)
    n = len(texts)
    ms = 1000 / n
    print(f"{n} pages of {site}, {words:.0f} words of text a page (mean)")
    plain = cpu(lambda: [parse_html(h, f"http://x/{i}") for i, h in enumerate(htmls)])
    signed = cpu(
        lambda: [
            parse_html(h, f"http://x/{i}", content_signature=True) for i, h in enumerate(htmls)
        ]
    )
    ours = cpu(lambda: [content_signature(t) for t in texts])
    twin = cpu(lambda: [signature_py(t.encode()) for t in texts[:20]], 1) * n / 20
    print(f"parse_html, every field:          {plain * ms:7.3f} ms a page")
    print(
        f"parse_html + content signature:   {signed * ms:7.3f} ms a page"
        f" (+{signed / plain - 1:.1%})"
    )
    print(f"our signature (C), text given:    {ours * ms:7.3f} ms a page")
    print(f"our signature (Python twin):      {twin * ms:7.3f} ms a page")
    from sitecrawl.parse._child import parse_body

    bodies = [h.encode() for h in htmls[:100]]
    md: list[float] = []
    nd: list[float] = []
    for _ in range(5):  # alternated, the lowest of each
        md.append(
            cpu(lambda: [parse_body(b, "utf-8", "http://x/", markdown="main") for b in bodies], 1)
        )
        nd.append(
            cpu(
                lambda: [
                    parse_body(b, "utf-8", "http://x/", markdown="main", near_duplicates=True)
                    for b in bodies
                ],
                1,
            )
        )
    each = 1000 / len(bodies)
    markdowns = [
        parse_body(b, "utf-8", "http://x/", markdown="main").fields["markdown"] for b in bodies
    ]
    extra = cpu(lambda: [content_signature(m) for m in markdowns], 5)
    mean_words = sum(len(m.split()) for m in markdowns) / len(markdowns)
    print(
        f"the signature of a page's Markdown ({mean_words:.0f} words): {extra * each:7.3f} ms,"
        f" {extra / min(md):.2%} of the --markdown page's parse"
    )
    print(
        f"--markdown page (parse + Markdown): {min(md) * each:7.3f} ms; with the signature of its"
        f" Markdown {min(nd) * each:7.3f} ms (+{min(nd) / min(md) - 1:.1%})"
    )
    try:
        from datasketch import MinHash
    except ImportError:
        print("datasketch not installed: pip install datasketch")
        return
    token = re.compile(r"[0-9a-z\x80-\U0010ffff]+")

    def datasketch_pages() -> None:
        for text in texts:
            tokens = token.findall(text.lower())
            shingles = {" ".join(tokens[i : i + 5]).encode() for i in range(len(tokens) - 4)}
            m = MinHash(num_perm=128)
            m.update_batch(list(shingles))

    ds = cpu(datasketch_pages, 1)
    print(f"datasketch MinHash(128) + shingles:{ds * ms:7.3f} ms a page ({ds / ours:.0f}x ours)")


def synthetic(n: int, seed: int = 1) -> list[tuple[str, str, bytes]]:
    rng = random.Random(seed)
    vocabulary = [f"w{i}" for i in range(20000)]
    signed: list[tuple[str, str, bytes]] = []
    originals: list[list[str]] = []
    for i in range(n):
        roll = rng.random()
        if originals and roll < 0.05:
            words = rng.choice(originals)  # an exact copy
        elif originals and roll < 0.15:
            words = list(rng.choice(originals))
            words[rng.randrange(len(words))] = f"edit{i}"  # a near copy
        else:
            words = [rng.choice(vocabulary) for _ in range(300)]
            originals.append(words)
        content_hash, minhash = content_signature(" ".join(words))
        assert content_hash is not None and minhash is not None
        signed.append((f"https://example.com/p/{i}", content_hash, minhash))
    return signed


def at_scale(n: int) -> None:
    started = time.process_time()
    signed = synthetic(n)
    print(f"\n{n:,} synthetic signatures made in {time.process_time() - started:.1f} s CPU")
    started = time.process_time()
    rows = near_duplicates(signed)
    spent = time.process_time() - started
    tracemalloc.start()  # (a second run: tracing slows every allocation)
    near_duplicates(signed)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    clusters = len({row.cluster for row in rows})
    held = n * (512 + 33 + 16 + 50)  # the signatures, their hashes and URLs, as held
    print(
        f"ours: clusters in {spent:.2f} s CPU, peak {peak / 2**20:.0f} MB above the"
        f" ~{held / 2**20:.0f} MB of input; {len(rows):,} pages in {clusters:,} clusters"
    )
    try:
        import numpy as np
        from datasketch import LeanMinHash, MinHashLSH
    except ImportError:
        return
    hashes = [np.frombuffer(sig, dtype="<u4").astype(np.uint32) for _, _, sig in signed]

    def index() -> tuple[float, float, int]:
        started = time.process_time()
        lsh = MinHashLSH(threshold=0.9, num_perm=128)
        sketches = [LeanMinHash(seed=1, hashvalues=h, scheme="affine32") for h in hashes]
        for (url, _, _), sketch in zip(signed, sketches, strict=True):
            lsh.insert(url, sketch)
        inserted = time.process_time() - started
        matched = sum(len(lsh.query(sketch)) > 1 for sketch in sketches)
        return inserted, time.process_time() - started, matched

    inserted, spent, matched = index()
    tracemalloc.start()
    index()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(
        f"datasketch MinHashLSH(0.9, 128): insert {inserted:.2f} s, insert + query {spent:.2f} s"
        f" CPU, peak {peak / 2**20:.0f} MB; {matched:,} pages with a candidate (unverified)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--site", type=Path, required=True)
    parser.add_argument("--pages", type=int, default=300)
    parser.add_argument("--n", type=int, default=100_000)
    args = parser.parse_args()
    per_page(args.site, args.pages)
    at_scale(args.n)


if __name__ == "__main__":
    main()
