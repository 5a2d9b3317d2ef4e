"""Pages/s against concurrency (1, 4, 16, 64) for sitecrawl and Scrapy, as a PNG chart.

Runs ``run_bench.py`` once per concurrency level (interleaved rounds inside each run) and plots
the medians. Usage (the site must exist: ``bench/gen_site.py``)::

    python bench/concurrency_chart.py --rounds 1 --png bench/concurrency.png

Needs matplotlib (the ``[bench]`` extra).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--levels", type=int, nargs="+", default=[1, 4, 16, 64])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--png", default=str(HERE / "concurrency.png"))
    parser.add_argument("--json-out", default=str(HERE / "out" / "concurrency.json"))
    parser.add_argument(
        "--from-json", metavar="FILE", help="only redraw the chart from an earlier --json-out"
    )
    parser.add_argument(
        "--variant",
        action="append",
        default=["sitecrawl-p1=--no-state -p 1"],
        help="extra sitecrawl variants, passed to run_bench.py",
    )
    args = parser.parse_args()
    if args.from_json:
        saved = json.loads(Path(args.from_json).read_text())
        _plot({int(level): row for level, row in saved.items()}, Path(args.png))
        print(f"chart: {args.png}")
        return 0

    results: dict[int, dict[str, float]] = {}
    for level in args.levels:
        out = HERE / "out" / f"concurrency-{level}.json"
        only = ["sitecrawl", "scrapy", *(v.split("=", 1)[0] for v in args.variant)]
        command = [
            sys.executable,
            str(HERE / "run_bench.py"),
            "--serve",
            "-c",
            str(level),
            "--rounds",
            str(args.rounds),
            *(arg for variant in args.variant for arg in ("--variant", variant)),
            "--only",
            *only,
            "--json-out",
            str(out),
        ]
        print("$", " ".join(command), flush=True)
        subprocess.run(command, check=True)
        summary = json.loads(out.read_text())["summary"]
        results[level] = {name: row["pages_per_s"] for name, row in summary.items()}
        print(f"concurrency {level}: {results[level]}", flush=True)

    Path(args.json_out).write_text(json.dumps(results, indent=2))
    _plot(results, Path(args.png))
    print(f"chart: {args.png}")
    return 0


def _plot(results: dict[int, dict[str, float]], png: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    levels = sorted(results)
    names = sorted({name for row in results.values() for name in row})
    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=120)
    for name in names:
        ax.plot(
            levels, [results[c].get(name, float("nan")) for c in levels], marker="o", label=name
        )
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks(levels, [str(c) for c in levels])
    ax.set_xlabel("concurrency (requests in flight)")
    ax.set_ylabel("pages/s (log)")
    ax.set_title("5,000-page site on 127.0.0.1 (nginx), 2 cores")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(png)


if __name__ == "__main__":
    sys.exit(main())
