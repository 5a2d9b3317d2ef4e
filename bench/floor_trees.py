#!/usr/bin/env python3
"""The floors of what a state file costs a crawl: copies of this checkout's ``src/``, each
with one part of the state file's work taken out, for ``run_bench.py`` (or
``redis_bench.py --against``) to run beside the real thing. They answer "what would the
crawl cost if this part were free?", which no profile of the whole answers on a machine whose
cores are all busy (bench/RESULTS.md section 45). Never a product: the trees lose data.

    python bench/floor_trees.py /tmp/floors
    python bench/run_bench.py --serve --site /tmp/site5k --rounds 8 \\
      --variant 'sqlite=--state {output}.db --fresh' \\
      --variant 'details=@PYTHONPATH=/tmp/floors/details/src --no-state' \\
      --variant 'no-details=@PYTHONPATH=/tmp/floors/no-details/src --state {output}.db --fresh' \\
      --variant 'no-rows=@PYTHONPATH=/tmp/floors/no-rows/src --state {output}.db --fresh' \\
      --variant 'bare=@PYTHONPATH=/tmp/floors/bare/src --state {output}.db --fresh' \\
      --only sitecrawl details sqlite no-details no-rows bare

Each edit must match the code exactly once, or nothing is made: a floor measured on code
that has moved on would measure nothing.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"

_CRAWLER = "sitecrawl/_crawler.py"
_DETAILS = "config = replace(config, link_details=frontier.stores_pages or assets)"
_SCHEMA = "sitecrawl/frontier/_sqlite_schema.py"
_ROWS = "        conn.executemany(INSERT_PAGE, rows)\n"

# The edits, each (file under src/, text, its replacement).
_ALL_DETAILS = (_CRAWLER, _DETAILS, "config = replace(config, link_details=True)")
_NO_DETAILS = (_CRAWLER, _DETAILS, "config = replace(config, link_details=assets)")
_NO_ROWS = (_SCHEMA, _ROWS, "        pass  # (floor_trees: no page rows)\n")

#: Tree -> the edits made to it.
TREES: dict[str, list[tuple[str, str, str]]] = {
    # Every crawl reads its links' details, as a crawl with a state file does: what the
    # details cost the parser and the event loop, without storing them.
    "details": [_ALL_DETAILS],
    # A crawl with a state file that does not read its links' details.
    "no-details": [_NO_DETAILS],
    # A state file without page rows: URLs queued, leased and marked done, every page's
    # transaction committed as before, no INSERT of its row.
    "no-rows": [_NO_ROWS],
    "bare": [_NO_DETAILS, _NO_ROWS],
}


def make(out: Path, names: list[str]) -> None:
    """Check every edit against this checkout first, then make the trees under ``out``."""
    for name in names:
        for path, old, _ in TREES[name]:
            found = (SRC / path).read_text(encoding="utf-8").count(old)
            if found != 1:
                sys.exit(
                    f"floor_trees: {name}: {path} holds {old.strip()!r} {found} times, not once"
                )
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
    for name in names:
        tree = out / name / "src"
        shutil.rmtree(out / name, ignore_errors=True)
        shutil.copytree(SRC, tree, ignore=ignore)  # (the built C extensions included)
        for path, old, new in TREES[name]:
            file = tree / path
            file.write_text(file.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")
        print(f"{tree}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path, help="directory for the trees (each OUT/NAME/src)")
    ap.add_argument("--only", nargs="+", choices=sorted(TREES), default=sorted(TREES))
    args = ap.parse_args()
    make(args.out, args.only)


if __name__ == "__main__":
    main()
