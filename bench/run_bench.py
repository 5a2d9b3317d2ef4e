#!/usr/bin/env python3
"""Benchmark sitecrawl against the Scrapy reference and a fetch-only ceiling.

Each round runs every contender once as a subprocess (the starting contender
rotates between rounds) against the site from gen_site.py and measures wall
time, pages found (lines of its JSONL output), pages/s, CPU time and peak RSS
(the root process's VmHWM, polled every 20 ms, and the process tree's summed
RSS, polled every 200 ms).  Finally it prints medians, sitecrawl/Scrapy and
sitecrawl/fetch-only ratios, and compares the page sets found.

    python bench/gen_site.py --pages 5000
    python bench/run_bench.py --serve --rounds 3 --concurrency 16

Contenders that fail (non-zero exit, timeout, no pages) are reported and
skipped in later rounds.  More sitecrawl variants: edit SITECRAWL_VARIANTS or
pass ``--variant NAME='ARGS'`` (``@VAR=VALUE`` words
set environment variables).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time
from contextlib import ExitStack
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from serve_site import NginxServer, exit_on_sigterm

BENCH_DIR = Path(__file__).resolve().parent
REPO_DIR = BENCH_DIR.parent
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")

# 20 crawl-control rules (issue 15: at most 3 % pages/s): 10 excludes that never match and 10
# includes of which only the last matches, so every link pays for all 20 regexes.
RULES20 = [
    *(f"--exclude={p}" for p in (r"[?&]sort=", "/cart", "/checkout", r"\.pdf$", r"[?&]utm_")),
    *(f"--exclude={p}" for p in ("/login", "/logout", "/tag/", "/print/", r"[?&]sessionid=")),
    *(f"--include={p}" for p in ("/blog/", "/docs/", "/shop/", "/news/", "/api/", "/help/")),
    *(f"--include={p}" for p in ("/about/", "/careers/", "/events/")),
    r"--include=/s\d+/g\d+/page-\d+\.html$",
]

# 10 custom extraction rules (issue 16: at most 15 % pages/s), CSS on the bench pages: text,
# attributes, lists, counts and a test of presence, as a data or SEO user would write them.
EXTRACT10 = [
    f"--extract={rule}"
    for rule in (
        "title=css:title",
        "h1=css:h1",
        "canonical=css:link[rel=canonical]@href",
        "description=css:meta[name=description]@content",
        "tagline=css:header .tagline",
        "h2s=all:css:h2",
        "sections=count:css:main h2",
        "nav=all:css:nav[aria-label=main] a@href",
        "breadcrumb=css:nav.breadcrumb a:last-child",
        "toc=exists:css:nav.toc",
    )
]
# One XPath rule (issue 16: at most 2 ms a page; lxml parses each page a second time).
XPATH1 = ["--extract=lead=xpath:string(//main//p[1])"]

# Named sitecrawl variants: extra CLI args appended to the base command.
SITECRAWL_VARIANTS: list[tuple[str, list[str]]] = [
    # memory mode, CLI defaults (2 processes on 2 cores); SQLite: --state {output}.db --fresh
    ("sitecrawl", ["--no-state"]),
    # Runs only when named: --only sitecrawl sitecrawl-rules20
    ("sitecrawl-rules20", ["--no-state", *RULES20]),
    # --only sitecrawl sitecrawl-extract10 sitecrawl-xpath1
    ("sitecrawl-extract10", ["--no-state", *EXTRACT10]),
    ("sitecrawl-xpath1", ["--no-state", *XPATH1]),
]
NAMED_ONLY_VARIANTS = {"sitecrawl-rules20", "sitecrawl-extract10", "sitecrawl-xpath1"}

Role = Literal["candidate", "reference", "ceiling"]


@dataclass(frozen=True)
class Contender:
    name: str
    role: Role
    argv: list[str]  # "{output}" is replaced by the run's JSONL path
    named_only: bool = False  # runs only when --only names it


@dataclass
class RunResult:
    name: str
    round: int
    ok: bool
    wall_s: float = 0.0
    cpu_s: float = 0.0
    sys_s: float = 0.0
    pages: int = 0
    unique_pages: int = 0
    errors: int = 0
    pages_per_s: float = 0.0
    peak_rss_mb: float = 0.0
    error: str = ""
    output: str = ""
    urls: set[str] = field(default_factory=set, repr=False)


# -- process-tree memory sampling ---------------------------------------------


def descendants(root: int) -> list[int]:
    """PIDs of all live descendants of ``root`` (from each /proc/PID/stat's ppid)."""
    kids: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        kids.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [root]
    while todo:
        children = kids.get(todo.pop(), [])
        found += children
        todo += children
    return found


def _rss_bytes(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * PAGE_SIZE
    except (OSError, IndexError, ValueError):
        return 0


def _hwm_bytes(pid: int) -> int:
    """VmHWM (peak RSS since exec) of ``pid``; 0 once it has exited."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


class RssSampler(threading.Thread):
    """Tracks the peak RSS of a process tree until stopped.

    The root's VmHWM (exact peak since exec) is read every ``interval``; the
    summed RSS of the whole tree, which needs a /proc scan, every ``tree_every``
    samples.  ``wait4``'s ru_maxrss is not used: on Linux it also counts the
    RSS the child inherited from this (forking) process before exec.
    """

    def __init__(self, pid: int, interval: float = 0.02, tree_every: int = 10) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.interval = interval
        self.tree_every = tree_every
        self.peak = 0
        self._stop_event = threading.Event()

    def run(self) -> None:
        samples = 0
        while not self._stop_event.is_set():
            self.peak = max(self.peak, _hwm_bytes(self.pid))
            if samples % self.tree_every == 0:
                tree = [self.pid, *descendants(self.pid)]
                self.peak = max(self.peak, sum(map(_rss_bytes, tree)))
            samples += 1
            self._stop_event.wait(self.interval)

    def stop(self) -> int:
        self._stop_event.set()
        self.join()
        return self.peak


# -- running contenders ---------------------------------------------------------


def read_output(path: Path) -> tuple[int, int, set[str]]:
    """Non-empty JSONL lines, error records among them and the set of their "url" values.

    A record is an error if it has a non-null "error" or a non-2xx "status"
    (sitecrawl also records failed fetches as pages).
    """
    lines, errors, urls = 0, 0, set()
    with path.open() as f:
        for line in f:
            if not line.strip():
                continue
            lines += 1
            try:
                record = json.loads(line)
                urls.add(record["url"])
            except (ValueError, KeyError, TypeError):
                errors += 1
                continue
            status = record.get("status")
            if record.get("error") is not None or not (isinstance(status, int) and status < 300):
                errors += 1
    return lines, errors, urls


def run_one(
    contender: Contender, rnd: int, out_dir: Path, env: dict[str, str], timeout: float
) -> RunResult:
    output = out_dir / f"{contender.name}-r{rnd}.jsonl"
    log = out_dir / f"{contender.name}-r{rnd}.log"
    output.unlink(missing_ok=True)
    # A state file or web archive a variant names after its output ({output}.db,
    # {output}.warc.gz and its segments {output}-00001.warc.gz, a WACZ's {output}-warc/) is
    # left by an earlier run: removed, so that every run is a first crawl (--fresh would
    # spend seconds emptying a state file; an archive would be added to).
    for pattern in (f"{output.name}.*", f"{output.name}-*", f".{output.name}*"):
        for leftover in out_dir.glob(pattern):
            if leftover.is_dir():
                shutil.rmtree(leftover)
            else:
                leftover.unlink()
    argv = [arg.replace("{output}", str(output)) for arg in contender.argv]
    result = RunResult(contender.name, rnd, ok=False, output=str(output))

    with log.open("wb") as log_f:
        start = time.perf_counter()
        try:
            proc = subprocess.Popen(
                argv, stdout=log_f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                cwd=REPO_DIR, env=env, start_new_session=True,
            )  # fmt: skip
        except OSError as exc:
            result.error = f"cannot start: {exc}"
            return result
        sampler = RssSampler(proc.pid)
        sampler.start()
        timer = threading.Timer(timeout, os.killpg, (proc.pid, signal.SIGKILL))
        timer.start()
        try:
            _, status, rusage = os.wait4(proc.pid, 0)
        except BaseException:  # Ctrl-C / SIGTERM: don't leave the contender running
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise
        finally:
            timer.cancel()
            result.peak_rss_mb = sampler.stop() / 2**20
        result.wall_s = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here, tell Popen
        result.cpu_s = rusage.ru_utime + rusage.ru_stime
        result.sys_s = rusage.ru_stime

    if proc.returncode != 0:
        timed_out = proc.returncode == -signal.SIGKILL and result.wall_s >= timeout
        result.error = (
            f"timeout after {timeout:.0f}s" if timed_out else f"exit code {proc.returncode}"
        )
    elif not output.exists():
        result.error = "no output file"
    else:
        result.pages, result.errors, result.urls = read_output(output)
        result.unique_pages = len(result.urls)
        result.pages_per_s = result.pages / result.wall_s
        result.ok = result.pages > 0
        result.error = "" if result.ok else "no pages in output"
    if not result.ok:
        tail = log.read_text(errors="replace").strip().splitlines()[-5:]
        result.error += f" (log {log}):\n      " + "\n      ".join(tail or ["<empty log>"])
    return result


# -- reporting -------------------------------------------------------------------


def normalize(url: str) -> str:
    """Scheme-less URL without trailing slash, for page-set comparison."""
    return url.split("://", 1)[-1].rstrip("/")


def print_header() -> None:
    print(
        f"  {'contender':<14} {'wall s':>8} {'cpu s':>8} {'sys s':>6} {'pages':>7} {'unique':>7}"
        f" {'errors':>6} {'pages/s':>9} {'RSS MB':>8}"
    )


def print_row(r: RunResult) -> None:
    if r.ok:
        print(
            f"  {r.name:<14} {r.wall_s:>8.2f} {r.cpu_s:>8.2f} {r.sys_s:>6.2f} {r.pages:>7}"
            f" {r.unique_pages:>7} {r.errors:>6} {r.pages_per_s:>9.1f} {r.peak_rss_mb:>8.1f}",
            flush=True,
        )
    else:
        print(f"  {r.name:<14} FAILED: {r.error}", flush=True)


def summarize(contenders: list[Contender], runs: list[RunResult]) -> dict[str, dict[str, Any]]:
    summary: dict[str, dict[str, Any]] = {}
    for c in contenders:
        ok = [r for r in runs if r.name == c.name and r.ok]
        failed = [r for r in runs if r.name == c.name and not r.ok]
        summary[c.name] = {
            "role": c.role,
            "runs": len(ok),
            "failed": failed[0].error if failed else None,
        }
        if ok:
            summary[c.name].update(
                pages=statistics.median(r.pages for r in ok),
                wall_s=statistics.median(r.wall_s for r in ok),
                cpu_s=statistics.median(r.cpu_s for r in ok),
                sys_s=statistics.median(r.sys_s for r in ok),
                pages_per_s=statistics.median(r.pages_per_s for r in ok),
                peak_rss_mb=statistics.median(r.peak_rss_mb for r in ok),
                max_rss_mb=max(r.peak_rss_mb for r in ok),
            )
    return summary


def _round_ratios(runs: list[RunResult], cand: str, other: str) -> list[float]:
    """pages/s of ``cand`` over ``other`` in each round both finished: runs of one round are
    minutes apart at most, so these ratios see less of the machine's drift than a ratio of
    medians taken over the whole benchmark."""
    speed = {(r.name, r.round): r.pages_per_s for r in runs if r.ok and r.pages_per_s}
    return [
        speed[cand, rnd] / speed[other, rnd]
        for rnd in sorted({rnd for name, rnd in speed if name == cand})
        if (other, rnd) in speed
    ]


def print_summary(
    summary: dict[str, dict[str, Any]], runs: list[RunResult]
) -> list[dict[str, Any]]:
    """Print medians and candidate ratios (of the medians, and per round); return the
    ratios."""
    print("\nSummary (medians over successful rounds)")
    print(
        f"  {'contender':<14} {'role':<10} {'runs':>4} {'pages':>7} {'wall s':>8} {'cpu s':>8}"
        f" {'sys s':>6} {'pages/s':>9} {'RSS MB':>8}"
    )
    for name, s in summary.items():
        if s["runs"]:
            print(
                f"  {name:<14} {s['role']:<10} {s['runs']:>4} {s['pages']:>7.0f}"
                f" {s['wall_s']:>8.2f} {s['cpu_s']:>8.2f} {s['sys_s']:>6.2f}"
                f" {s['pages_per_s']:>9.1f} {s['peak_rss_mb']:>8.1f}"
            )
        else:
            print(f"  {name:<14} {s['role']:<10} FAILED: {s['failed']}")

    ratios = []
    ok = {name: s for name, s in summary.items() if s["runs"]}
    for cand, cs in ok.items():
        if cs["role"] != "candidate":
            continue
        for other, ref in ok.items():
            if ref["role"] in ("reference", "ceiling"):
                ratio = {
                    "candidate": cand,
                    "versus": other,
                    "pages_per_s": cs["pages_per_s"] / ref["pages_per_s"],
                    "rss": cs["peak_rss_mb"] / ref["peak_rss_mb"],
                    "per_round": _round_ratios(runs, cand, other),
                }
                ratios.append(ratio)
                speed, rss = ratio["pages_per_s"], ratio["rss"]
                rounds = ", ".join(f"{r:.2f}" for r in ratio["per_round"])
                print(
                    f"  {cand}/{other}: pages/s x{speed:.2f}, RSS x{rss:.2f} (per round: {rounds})"
                )
    return ratios


def compare_sets(runs: list[RunResult], expected: set[str]) -> list[dict[str, Any]]:
    """Compare each contender's last successful page set with the others and urls.txt."""
    last: dict[str, set[str]] = {}
    for r in runs:
        if r.ok:
            last[r.name] = {normalize(u) for u in r.urls}
    sets = {"urls.txt": {normalize(u) for u in expected}, **last}
    names = list(sets)
    print("\nPage sets (normalized: no scheme, no trailing slash; last successful round)")
    comparisons = []
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            diff = sets[a] ^ sets[b]
            comparisons.append(
                {
                    "a": a,
                    "b": b,
                    "size_a": len(sets[a]),
                    "size_b": len(sets[b]),
                    "symdiff": len(diff),
                }
            )
            examples = ", ".join(sorted(diff)[:3])
            print(
                f"  {a} ({len(sets[a])}) vs {b} ({len(sets[b])}): symmetric difference {len(diff)}"
                + (f"  e.g. {examples}" if diff else "")
            )
    return comparisons


# -- main ------------------------------------------------------------------------


def _variant_argv(sitecrawl: list[str], variant: list[str], crawl_args: list[str]) -> list[str]:
    """``sitecrawl crawl ARGS -q VARIANT``; the variant's ``@NAME=VALUE`` words become an
    ``env NAME=VALUE`` prefix (for settings read from the environment)."""
    settings = [word[1:] for word in variant if word.startswith("@")]
    rest = [word for word in variant if not word.startswith("@")]
    cmd = [*sitecrawl, "crawl", *crawl_args, "-q", *rest]
    if not settings:
        return cmd
    if cmd[0] == "env":  # merge into the existing prefix
        return ["env", *settings, *cmd[1:]]
    return ["env", *settings, *cmd]


def build_contenders(args: argparse.Namespace, start_url: str, urls_file: Path) -> list[Contender]:
    common = ["-c", str(args.concurrency), "-o", "{output}"]
    sitecrawl = shlex.split(args.sitecrawl_cmd or f"{shlex.quote(args.python)} -m sitecrawl")
    extra = shlex.split(args.extra_args)
    variants = SITECRAWL_VARIANTS + [
        (name, shlex.split(variant_args))
        for name, _, variant_args in (v.partition("=") for v in args.variant)
    ]
    py = args.python
    contenders = [
        Contender(
            name,
            "candidate",
            _variant_argv(sitecrawl, v, [start_url, *common, *extra]),
            named_only=name in NAMED_ONLY_VARIANTS,
        )
        for name, v in variants
    ]
    if args.baseline:  # another checkout's sitecrawl (e.g. a git worktree of main), for A/B
        base_cmd = ["env", f"PYTHONPATH={args.baseline.resolve() / 'src'}", py, "-m", "sitecrawl"]
        contenders += [
            Contender(
                f"base-{name}",
                "candidate",
                _variant_argv(base_cmd, v, [start_url, *common, *extra]),
            )
            for name, v in variants
        ]
    contenders.append(
        Contender(
            "scrapy", "reference", [py, str(BENCH_DIR / "scrapy_spider.py"), start_url, *common]
        )
    )
    contenders.append(
        Contender(
            "fetch-only", "ceiling", [py, str(BENCH_DIR / "fetch_only.py"), str(urls_file), *common]
        )
    )
    # Every process fetching and parsing its share of the URL list (no frontier): the bound
    # of any design doing sitecrawl's work on this machine (--only ... fetch-parse).
    contenders.append(
        Contender(
            "fetch-parse",
            "ceiling",
            [py, str(BENCH_DIR / "fetch_parse.py"), str(urls_file), "-p", "2", *common],
            named_only=True,
        )
    )
    return contenders


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add = ap.add_argument
    add("--base", default="http://127.0.0.1:8088", help="origin serving the site (%(default)s)")
    add("-c", "--concurrency", type=int, default=16, help="for every contender (%(default)s)")
    add("--rounds", type=int, default=3, help="interleaved rounds (%(default)s)")
    add("--serve", action="store_true", help="start/stop nginx for the run (serve_site.py)")
    add("--site", type=Path, default=BENCH_DIR / "site", help="generated site (%(default)s)")
    add("--out-dir", type=Path, default=BENCH_DIR / "out", help="outputs, logs (%(default)s)")
    add("--json-out", type=Path, help="write machine-readable results here")
    add("--python", default=sys.executable, help="interpreter for contenders (%(default)s)")
    add("--sitecrawl-cmd", help="sitecrawl command prefix (default: PYTHON -m sitecrawl)")
    add("--extra-args", default="", help="extra args appended to every sitecrawl command")
    add("--variant", action="append", default=[], metavar="NAME=ARGS", help="sitecrawl variant")
    add("--baseline", type=Path, metavar="DIR", help="also run each variant from this checkout")
    add("--only", nargs="+", metavar="NAME", help="run only these contenders")
    add("--timeout", type=float, default=900, help="per-run timeout, seconds (%(default)s)")
    add(
        "--tls",
        action="store_true",
        help="https:// (--base https://...): with --serve, nginx gets a certificate from a test"
        " CA made now (tests/tls_ca.py); every contender trusts it through SSL_CERT_FILE",
    )
    args = ap.parse_args()

    base = args.base.rstrip("/")
    start_url = base + "/"
    urls_file = args.site / "urls.txt"
    meta = json.loads((args.site / "site-meta.json").read_text())
    if meta["base"] != base:
        sys.exit(
            f"site was generated for {meta['base']}, not {base}: rerun gen_site.py --base {base}"
        )
    expected = set(urls_file.read_text().split())
    all_contenders = build_contenders(args, start_url, urls_file)
    contenders = [
        ct for ct in all_contenders if (ct.name in args.only if args.only else not ct.named_only)
    ]
    args.out_dir.mkdir(parents=True, exist_ok=True)
    # Run this checkout's sitecrawl even if it is not installed in the venv.
    pythonpath = [str(REPO_DIR / "src"), *filter(None, [os.environ.get("PYTHONPATH")])]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(pythonpath))
    tls: tuple[Path, Path] | None = None
    if args.tls:  # a CA made for this run, on loopback only (nothing of it is kept)
        ca_dir = args.out_dir / "tls"
        maker = [args.python, str(REPO_DIR / "tests" / "tls_ca.py"), str(ca_dir)]
        subprocess.run(maker, check=True, stdout=subprocess.DEVNULL)
        tls = (ca_dir / "server.pem", ca_dir / "server.key")
        env["SSL_CERT_FILE"] = str(ca_dir / "ca.pem")

    print(
        f"site: {meta['pages']} pages, {meta['bytes'] / 1e6:.1f} MB at {base};"
        f" concurrency {args.concurrency}; {args.rounds} rounds"
    )
    for ct in contenders:
        print(f"  {ct.name:<12} {shlex.join(ct.argv)}")

    # Byte-compile the checkouts as `pip install` does: with PYTHONDONTWRITEBYTECODE set (as
    # on this machine) an editable checkout would otherwise be compiled from source on every
    # start (~60 ms a run, in the crawler and again in its parser process).
    sources = [REPO_DIR / "src", *([args.baseline.resolve() / "src"] if args.baseline else [])]
    subprocess.run([args.python, "-m", "compileall", "-q", *map(str, sources)], check=True)

    runs: list[RunResult] = []
    exit_on_sigterm()  # unwind (stop nginx, kill the running contender) on SIGTERM
    with ExitStack() as stack:
        if args.serve:
            port = urlsplit(base).port or (443 if args.tls else 80)
            stack.enter_context(NginxServer(args.site, port, tls=tls))
        # Warm the page cache (and check the server) with one unrecorded fetch-only run.
        warmup = next(ct for ct in all_contenders if ct.role == "ceiling")
        warm = run_one(warmup, 0, args.out_dir, env, args.timeout)
        if not warm.ok:
            sys.exit(f"warm-up fetch failed, is the site served at {base}? {warm.error}")

        active = list(contenders)
        for rnd in range(1, args.rounds + 1):
            if not active:
                break
            print(f"\nRound {rnd}/{args.rounds}")
            print_header()
            k = (rnd - 1) % len(active)
            for ct in active[k:] + active[:k]:
                result = run_one(ct, rnd, args.out_dir, env, args.timeout)
                print_row(result)
                runs.append(result)
            failed = {r.name for r in runs if not r.ok}
            active = [ct for ct in active if ct.name not in failed]

    summary = summarize(contenders, runs)
    ratios = print_summary(summary, runs)
    comparisons = compare_sets(runs, expected)
    print(f"\nexpected pages: {len(expected)}")

    if args.json_out:
        report = {
            "config": {
                "base": base, "concurrency": args.concurrency, "rounds": args.rounds,
                "site_pages": meta["pages"], "site_bytes": meta["bytes"], "cpus": os.cpu_count(),
                "tls": args.tls,
                "contenders": [asdict(ct) for ct in contenders],
            },
            "runs": [{k: v for k, v in asdict(r).items() if k != "urls"} for r in runs],
            "summary": summary,
            "ratios": ratios,
            "page_sets": comparisons,
        }  # fmt: skip
        args.json_out.write_text(json.dumps(report, indent=2) + "\n")
        print(f"results written to {args.json_out}")


if __name__ == "__main__":
    main()
