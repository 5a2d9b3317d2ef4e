#!/usr/bin/env python3
"""Sum a py-spy raw (collapsed-stack) profile by category: which share of the samples went to
fetching, parsing, word count, link resolution, imports, output...

    py-spy record -r 300 --subprocesses -f raw -o p.raw -- python -m sitecrawl crawl URL ...
    python bench/summarize_pyspy.py p.raw '_parse_child"' exclude   # the main process
    python bench/summarize_pyspy.py p.raw '_parse_child"' include   # the parser process

A sample counts for the first category (in the order below) one of its frames matches.
"""

import collections
import sys
from pathlib import Path

# The line of parse_html that builds the Lexbor tree (py-spy names frames by line).
_EXTRACT = Path(__file__).resolve().parent.parent / "src" / "sitecrawl" / "_extract.py"
_LEXBOR_LINE = next(
    number
    for number, text in enumerate(_EXTRACT.read_text().splitlines(), 1)
    if "= LexborHTMLParser(html)" in text
)

cats = collections.Counter()
total = 0
rules = [
    ("import", ["_find_and_load"]),
    ("word_count", ["_word_count", "count_words"]),
    ("lexbor parse", [f"parse_html (sitecrawl/_extract.py:{_LEXBOR_LINE})"]),
    ("joins", ["join_each", "_join_each", "join (sitecrawl/_urls"]),
    ("extract other", ["parse_html", "decode_html"]),
    ("sink/json", ["JsonlSink", "_json.py"]),
    ("fetch aiohttp", ["Fetcher.get"]),
    ("links/frontier", ["keyed", "LinkTargets", "frontier", "_enqueue", "Frontier"]),
    ("record", ["_record", "on_page"]),
    ("crawler other", ["_worker", "_crawl_request", "PageJob"]),
]
with open(sys.argv[1]) as lines:
    for line in lines:
        if len(sys.argv) > 2 and (sys.argv[2] in line) == (sys.argv[3] == "exclude"):
            continue
        stack, _, n = line.rstrip().rpartition(" ")
        total += int(n)
        frames = stack.split(";")
        for name, keys in rules:
            if any(k in f for f in frames for k in keys):
                cats[name] += int(n)
                break
        else:
            cats["other:" + frames[-1][:70]] += int(n)
print(total)
for k, v in cats.most_common(25):
    print(f"{v:6d} {100 * v / total:5.1f}% {k}")
