#!/usr/bin/env python3
"""Instructions per page of ``parse_html`` (callgrind), for comparing checkouts on a noisy
machine: instruction counts do not move with the load on the other core, wall times do.

    python bench/parse_cost.py                      # this checkout
    python bench/parse_cost.py --src /path/to/other/checkout/src
    python bench/parse_cost.py --wire               # + the parser process's pipe and the copy

It runs valgrind twice, parsing the first 100 pages of the bench site to warm the join memo
(as a crawl would) and then ``--pages`` more (or none), and prints the difference divided by
``--pages``: the cost of one page's parse and extraction, imports and set-up excluded.
Needs ``valgrind`` and the generated site (``bench/gen_site.py``).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent


def _work(pages: int, site: Path, anchors: bool, wire: bool) -> None:
    from sitecrawl._urls import JoinCache
    from sitecrawl.parse import decode_html
    from sitecrawl.parse._extract import parse_html

    files = sorted(site.glob("s*/g*/page-*.html"))[: 100 + pages]
    docs = [
        (path.read_bytes(), f"http://127.0.0.1:8088/{path.relative_to(site)}") for path in files
    ]
    if wire:
        _wire(docs, anchors)
        return
    joins = JoinCache()
    for body, url in docs:
        parse_html(decode_html(body), url, joins, link_details=anchors)


def _wire(docs: list[tuple[bytes, str]], anchors: bool) -> None:
    """A parser process's whole path, in one process: the child's loop (``serve``: the job
    frames read, each page parsed and its answer marshalled), then the parent's side of each
    answer (unmarshalled, made an ``Extracted``, its fields copied into a page record)."""
    import io
    import marshal

    from sitecrawl import Page
    from sitecrawl.fetch import _pagejob
    from sitecrawl.parse._child import LENGTH, job_frame, serve, setup_frame
    from sitecrawl.parse._extract import Extracted

    jobs = io.BytesIO()
    jobs.write(setup_frame(anchors, None))
    for body, url in docs:
        jobs.writelines(job_frame(body, None, url))
    jobs.seek(0)
    answers = io.BytesIO()
    serve(jobs, answers)  # type: ignore[arg-type]
    answers.seek(0)
    copied = getattr(_pagejob, "EXTRACTED_FIELDS", None)  # a checkout from before issue 29
    from_wire = hasattr(Extracted, "from_wire")
    while header := answers.read(LENGTH.size):
        answer = marshal.loads(answers.read(LENGTH.unpack(header)[0]))
        if not isinstance(answer, tuple):
            continue  # the ready frame
        # (a checkout from before section 28 sent the attributes as they are)
        data = Extracted.from_wire(answer) if from_wire else Extracted(*answer)
        page = Page(url="http://127.0.0.1:8088/")
        if copied is not None:
            for name in copied:
                setattr(page, name, getattr(data, name))
        else:
            for name, value in data.fields.items():
                setattr(page, name, value)


def _instructions(pages: int, src: Path, site: Path, anchors: bool, wire: bool) -> int:
    env = dict(os.environ, PYTHONPATH=str(src), PYTHONHASHSEED="0")
    cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable]
    cmd += [__file__, "--work", str(pages), "--site", str(site), *(["--anchors"] * anchors)]
    cmd += ["--wire"] * wire
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    found = re.search(r"Collected : (\d+)", done.stderr)
    if found is None:
        sys.exit(f"no instruction count in valgrind's output:\n{done.stderr[-2000:]}")
    return int(found.group(1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--src", type=Path, default=BENCH_DIR.parent / "src", help="sitecrawl source")
    ap.add_argument("--pages", type=int, default=100, help="pages measured (%(default)s)")
    ap.add_argument("--anchors", action="store_true", help="with link details (state files)")
    ap.add_argument(
        "--wire",
        action="store_true",
        help="a parser process's whole path: the child's loop and marshalling, the parent's"
        " Extracted and the copy into the page record",
    )
    ap.add_argument("--site", type=Path, default=BENCH_DIR / "site", help=argparse.SUPPRESS)
    ap.add_argument("--work", type=int, help=argparse.SUPPRESS)  # the measured child
    args = ap.parse_args()
    if args.work is not None:
        _work(args.work, args.site, args.anchors, args.wire)
        return
    if not (args.site / "urls.txt").exists():
        sys.exit(f"no bench site in {args.site}: run bench/gen_site.py first")
    base = _instructions(0, args.src, args.site, args.anchors, args.wire)
    total = _instructions(args.pages, args.src, args.site, args.anchors, args.wire)
    what = "the parser process's path" if args.wire else "parse_html"
    what += ", link_details=True" if args.anchors else ""
    print(f"{args.src}: {(total - base) / args.pages:,.0f} instructions per page ({what})")


if __name__ == "__main__":
    main()
