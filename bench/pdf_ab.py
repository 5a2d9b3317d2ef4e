"""A/B of sitecrawl's PDF reader between two source trees: CPU time of one read of each
PDF, in a fresh process per contender and round, interleaved (the first contender rotates).

    python bench/pdf_ab.py --base /tmp/base/src --rounds 6 /tmp/pdf-bench/book-100p.pdf ...

``--base`` is a tree's ``src`` (``git archive COMMIT src | tar -x -C /tmp/base``, C extensions
copied in); the other contender is this checkout's ``src``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHILD = """
import json, sys, time
from sitecrawl.parse import read_pdf
out = {}
for path in sys.argv[1:]:
    data = open(path, "rb").read()
    read_pdf(data, "https://bench.example/x.pdf")  # warm: imports, fonts
    times = []
    for _ in range(3):
        started = time.process_time()
        read_pdf(data, "https://bench.example/x.pdf")
        times.append(time.process_time() - started)
    out[path] = min(times)
print(json.dumps(out))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("pdfs", nargs="+")
    args = parser.parse_args()
    trees = {"head": ROOT / "src", "base": args.base}
    found: dict[tuple[str, str], list[float]] = {}
    names = list(trees)
    for round_ in range(args.rounds):
        for name in names[round_ % 2 :] + names[: round_ % 2]:
            env = {"PYTHONPATH": str(trees[name])}
            run = subprocess.run(
                [sys.executable, "-c", CHILD, *args.pdfs],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            )
            for path, seconds in json.loads(run.stdout).items():
                found.setdefault((name, path), []).append(seconds)
    print("| PDF | head (ms, median of rounds) | base (ms) | head / base per round | median |")
    print("|---|---:|---:|---|---:|")
    for path in args.pdfs:
        head, base = found["head", path], found["base", path]
        ratios = [h / b for h, b in zip(head, base, strict=True)]
        print(
            f"| {Path(path).name} | {statistics.median(head) * 1000:,.0f} |"
            f" {statistics.median(base) * 1000:,.0f} | {' '.join(f'{r:.2f}' for r in ratios)} |"
            f" {statistics.median(ratios):.3f} |"
        )


if __name__ == "__main__":
    main()
