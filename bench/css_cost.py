#!/usr/bin/env python3
"""CPU seconds to read a stylesheet's URLs (``--archive-assets``): tinycss2 (what
``sitecrawl.parse.css_urls`` uses) against a careful regex over comment-stripped CSS, and
whether the two find the same URLs (data: ones left out: never fetched).

    python bench/css_cost.py FILE.css [FILE.css ...] [--rounds 20]

Each file is read ``--rounds`` times by each; the best round's CPU time (process_time) is
printed, per file and per MB.
"""

from __future__ import annotations

import argparse
import re
import time
from collections.abc import Callable
from pathlib import Path

from sitecrawl.parse import css_urls

_COMMENT = re.compile(r"/\*.*?\*/", re.DOTALL)
_URL = re.compile(
    r"""url\(\s*(?:"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)'|((?:[^)\s\\]|\\.)*))\s*\)"""
    r"""|@import\s+(?:"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)')""",
    re.IGNORECASE,
)


def regex_urls(css: str) -> list[str]:
    """The regex reading: comments out, then url() and @import "..." (escapes not undone)."""
    text = _COMMENT.sub("", css)
    return [next(g for g in m.groups() if g is not None) for m in _URL.finditer(text)]


def best(read: Callable[[str], list[str]], css: str, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.process_time()
        read(css)
        times.append(time.process_time() - start)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+", type=Path)
    ap.add_argument("--rounds", type=int, default=20)
    args = ap.parse_args()
    for path in args.files:
        css = path.read_text(encoding="utf-8", errors="replace")
        mb = len(css.encode()) / 1e6
        ours, regex = css_urls(css), [u for u in regex_urls(css) if u.strip()]
        tiny_s, regex_s = best(css_urls, css, args.rounds), best(regex_urls, css, args.rounds)
        # (data: URLs are never fetched; the regex leaves their escaped newlines in)
        fetched = [u for u in ours if not u.startswith("data:")]
        same = fetched == [u for u in regex if not u.startswith("data:")]
        same_text = "same URLs" if same else f"differ: {set(ours) ^ set(regex)}"
        print(
            f"{path.name}: {mb * 1000:.0f} kB, {len(ours)} URLs; tinycss2 {tiny_s * 1000:.1f} ms"
            f" ({tiny_s / mb:.2f} s/MB), regex {regex_s * 1000:.2f} ms; {same_text} but data:"
        )


if __name__ == "__main__":
    main()
