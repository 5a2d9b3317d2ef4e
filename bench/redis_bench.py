#!/usr/bin/env python3
"""Distributed crawl on Redis: 1 and 2 worker processes against the in-memory crawl, interleaved
(one of each per round, in a shuffled order), Redis round trips and script calls per page, and
Redis memory per URL of the seen set (and of seen set + queue).

    python bench/gen_site.py                     # once: bench/site, 5,000 pages
    python bench/redis_bench.py                  # nginx on 8088 (started unless it is up)
    python bench/redis_bench.py --port 8091 --root /tmp/site8091 --urls 1000000
    python bench/redis_bench.py --against /tmp/old/src --urls 0   # A/B against another tree

Each run starts its own redis-server on a free loopback port (no persistence). For N workers,
``sitecrawl crawl URL --redis ...`` seeds and works, N-1 ``sitecrawl worker`` processes join;
the time is from the seed's start until the last worker exits. The site has one host, so the
per-host cap is raised (``--per-host 64``): this measures the workers, not the politeness.
Round trips are Redis's ``total_reads_processed`` (one per read of a client's socket: a
pipeline of calls is one), script calls its ``EVALSHA`` count, both per page stored. With
``--against SRC``, the same rounds also run the Redis crawls with that source tree (its
``src`` directory), for an interleaved A/B of two versions.

CPU is counted for every process on the machine's cores: the crawl's (parsers included),
redis-server's and the site's nginx's. ``cores_busy`` is their CPU seconds per second of
wall time; ``ceiling_of_1`` is the machine's cores over one worker's ``cores_busy``: at one
worker's CPU a page, no number of workers can be faster than that on these cores.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(SRC))

from serve_site import (  # noqa: E402
    DEFAULT_ROOT,
    NginxServer,
    exit_on_sigterm,
    port_in_use,
    state_dir,
)

NGINX_PORT = 8088  # set by main(): the site's nginx, whose CPU counts too


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def start_redis(directory: str) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    argv = ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--dir", directory]
    process = subprocess.Popen(
        [*argv, "--save", "", "--appendonly", "no"], stdout=subprocess.DEVNULL
    )
    for _ in range(200):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return process, port
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("redis-server did not start")


def sitecrawl(src: Path, *argv: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    return subprocess.Popen([sys.executable, "-m", "sitecrawl", *argv], env=env)


def scaling(
    url: str, redis_url: str, workers: int, concurrency: int, src: Path
) -> dict[str, float]:
    import redis

    crawl_id = f"bench-{workers}-{time.time_ns()}"
    client = redis.Redis.from_url(redis_url)
    client.config_resetstat()
    redis_cpu = _redis_cpu(client)
    cpu = _children_cpu()
    nginx_cpu = _nginx_cpu()
    started = time.perf_counter()
    options = ["-c", str(concurrency), "--per-host", "64", "-q"]
    seed = sitecrawl(src, "crawl", url, "--redis", redis_url, "--crawl-id", crawl_id, *options)
    processes = [seed]
    polls = 1
    while not client.exists(f"sitecrawl:{{{crawl_id}}}:config"):
        time.sleep(0.01)
        polls += 1
    for _ in range(workers - 1):
        join = ["--redis", redis_url, "--crawl-id", crawl_id, "-c", str(concurrency), "-q"]
        processes.append(sitecrawl(src, "worker", *join))
    for process in processes:
        assert process.wait() == 0
    elapsed = time.perf_counter() - started
    cpu = _children_cpu() - cpu
    redis_cpu = _redis_cpu(client) - redis_cpu
    nginx_cpu = _nginx_cpu() - nginx_cpu
    done = int(client.hget(f"sitecrawl:{{{crawl_id}}}:counts", "done") or 0)  # type: ignore[arg-type]
    stats: dict[str, Any] = client.info("stats")  # type: ignore[assignment]
    scripts: dict[str, Any] = client.info("commandstats")  # type: ignore[assignment]
    calls = scripts.get("cmdstat_evalsha", {}).get("calls", 0)
    # Every command Redis ran for the crawl, the scripts' inner calls included (this
    # process's polls for the crawl's config and its INFO calls left out).
    ours = {"cmdstat_info", "cmdstat_config|resetstat", "cmdstat_config"}
    commands = sum(v.get("calls", 0) for k, v in scripts.items() if k not in ours) - polls - 1
    client.delete(*client.keys(f"sitecrawl:{{{crawl_id}}}:*"))
    client.close()
    return {
        "workers": workers,
        "pages": done,
        "seconds": elapsed,
        "pages_per_s": done / elapsed,
        "cpu_seconds": cpu,
        "redis_cpu_seconds": redis_cpu,
        "nginx_cpu_seconds": nginx_cpu,
        # Cores kept busy: the crawl's processes, redis-server and nginx, per second of wall
        # time. On C cores, N such workers can be at most C / busy times as fast as this.
        "cores_busy": (cpu + redis_cpu + nginx_cpu) / elapsed,
        "round_trips_per_page": stats["total_reads_processed"] / done,
        "script_calls_per_page": calls / done,
        "commands_per_page": commands / done,
        # CPU a page: the worker processes (their parsers included), and redis-server's.
        "cpu_us_per_page": cpu / done * 1e6,
        "redis_cpu_us_per_page": redis_cpu / done * 1e6,
    }


def single_process(url: str, concurrency: int, src: Path) -> dict[str, float]:
    cpu = _children_cpu()
    nginx_cpu = _nginx_cpu()
    started = time.perf_counter()
    process = sitecrawl(src, "crawl", url, "--no-state", "-c", str(concurrency), "-q")
    assert process.wait() == 0
    elapsed = time.perf_counter() - started
    cpu = _children_cpu() - cpu
    nginx_cpu = _nginx_cpu() - nginx_cpu
    busy = (cpu + nginx_cpu) / elapsed
    return {
        "seconds": elapsed,
        "cpu_seconds": cpu,
        "nginx_cpu_seconds": nginx_cpu,
        "cores_busy": busy,
    }


def _children_cpu() -> float:
    """CPU seconds of this process's children waited for (the crawls and their parsers)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _nginx_cpu() -> float:
    """CPU seconds of the site's nginx so far: its master process and workers."""
    try:
        master = int((state_dir(NGINX_PORT) / "nginx.pid").read_text())
    except (OSError, ValueError):
        return 0.0
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        pid, ppid = int(entry.name), int(fields[1])
        if pid == master or ppid == master:
            total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / ticks


def _redis_cpu(client: Any) -> float:
    cpu = client.info("cpu")
    return float(cpu["used_cpu_user"]) + float(cpu["used_cpu_sys"])


def rounds(
    url: str,
    redis_url: str,
    workers: list[int],
    concurrency: int,
    repeat: int,
    against: Path | None,
) -> dict[str, Any]:
    """``repeat`` rounds of: the in-memory crawl, then each Redis crawl (each worker count,
    with this tree and ``against``) in a shuffled order. Ratios are within a round (the
    machine's load changes between rounds); their medians are reported."""
    trees = {"this": SRC} | ({"against": against} if against else {})
    runs: list[dict[str, Any]] = []
    rng = random.Random(1)
    for number in range(repeat):
        alone = single_process(url, concurrency, SRC)
        memory = alone["seconds"]
        row: dict[str, Any] = {"round": number, "memory_seconds": memory}
        row["memory_cpu_seconds"] = alone["cpu_seconds"]
        row["memory_cores_busy"] = alone["cores_busy"]
        order = [(tree, n) for tree in trees for n in workers]
        rng.shuffle(order)
        for tree, n in order:
            result = scaling(url, redis_url, n, concurrency, trees[tree])
            row[f"{tree}_{n}"] = result
            row[f"{tree}_{n}_of_memory"] = memory / result["seconds"]
            # CPU: the crawl's processes and redis-server's, against the in-memory crawl's.
            total = result["cpu_seconds"] + result["redis_cpu_seconds"]
            row[f"{tree}_{n}_cpu_of_memory"] = alone["cpu_seconds"] / total
            # The workers' CPU a page (redis-server apart) over the in-memory crawl's (both
            # crawl the whole site: the same pages).
            row[f"{tree}_{n}_worker_cpu_x_memory"] = result["cpu_seconds"] / alone["cpu_seconds"]
        for tree in trees:
            if 1 in workers and 2 in workers:
                row[f"{tree}_2_of_1"] = row[f"{tree}_1"]["seconds"] / row[f"{tree}_2"]["seconds"]
            if 1 in workers:  # what N workers could reach on these cores, at one's CPU a page
                cores = os.cpu_count() or 1
                row[f"{tree}_ceiling_of_1"] = cores / row[f"{tree}_1"]["cores_busy"]
        print(json.dumps(row), flush=True)
        runs.append(row)
    medians: dict[str, float] = {}
    for key in runs[0]:
        if key.endswith(("_of_memory", "_of_1", "cores_busy", "_x_memory", "memory_cpu_seconds")):
            medians[key] = statistics.median(run[key] for run in runs)
    for tree in trees:
        for n in workers:
            for what in (
                "round_trips_per_page",
                "script_calls_per_page",
                "commands_per_page",
                "cpu_us_per_page",
                "redis_cpu_us_per_page",
                "pages_per_s",
                "cpu_seconds",
                "redis_cpu_seconds",
                "nginx_cpu_seconds",
                "cores_busy",
            ):
                medians[f"{tree}_{n}_{what}"] = statistics.median(
                    run[f"{tree}_{n}"][what] for run in runs
                )
    print(json.dumps({"medians": medians}, indent=1), flush=True)
    return {"rounds": runs, "medians": medians}


async def memory(redis_url: str, urls: int) -> dict[str, float]:
    import redis.asyncio as aioredis

    from sitecrawl._models import Request
    from sitecrawl.frontier import RedisFrontier

    client = aioredis.Redis.from_url(redis_url)
    await client.flushdb()
    before = (await client.info("memory"))["used_memory"]
    frontier = RedisFrontier(redis_url, crawl_id="memory", base_url="http://example.com/")
    async with frontier:
        batch = 1000
        for start in range(0, urls, batch):
            requests = []
            for i in range(start, min(urls, start + batch)):
                url = f"http://example.com/section-{i % 97}/page-{i}.html?ref={i % 13}"
                requests.append(Request(url=url, key=url[7:], depth=1 + i // 100_000))
            await frontier.add(requests)
        queued_total = (await client.info("memory"))["used_memory"] - before
        seen = 0
        async for key in client.scan_iter(match="sitecrawl:{memory}:seen:*", count=1000):
            seen += await client.memory_usage(key, samples=0) or 0
        queue = await client.memory_usage("sitecrawl:{memory}:queue", samples=0) or 0
        await client.delete("sitecrawl:{memory}:queue")  # as if every URL were done
        seen_total = (await client.info("memory"))["used_memory"] - before
        stats = await frontier.stats()
    await client.aclose()
    assert stats.seen == urls
    return {
        "urls": urls,
        "seen_set_memory_usage_bytes_per_url": seen / urls,
        "queue_memory_usage_bytes_per_url": queue / urls,
        "used_memory_seen_and_queued_bytes_per_url": queued_total / urls,
        "used_memory_seen_only_bytes_per_url": seen_total / urls,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=8088, help="the bench site's port (8088)")
    ap.add_argument("--root", type=Path, default=DEFAULT_ROOT, help="the generated site")
    ap.add_argument("--workers", default="1,2", help="worker counts (1,2)")
    ap.add_argument("-c", "--concurrency", type=int, default=16, help="per worker (16)")
    ap.add_argument("--repeat", type=int, default=5, help="rounds (5)")
    ap.add_argument("--against", type=Path, help="another tree's src/ to A/B against")
    ap.add_argument(
        "--urls", type=int, default=1_000_000, help="URLs for the memory figure (0: none)"
    )
    ap.add_argument("--json-out", type=Path)
    args = ap.parse_args()
    exit_on_sigterm()  # redis-server and nginx stopped on SIGTERM too
    url = f"http://127.0.0.1:{args.port}/"
    global NGINX_PORT
    NGINX_PORT = args.port
    directory = tempfile.mkdtemp(prefix="sitecrawl-redis-bench-")
    redis_process, redis_port = start_redis(directory)
    redis_url = f"redis://127.0.0.1:{redis_port}/0"
    results: dict[str, object] = {"cores": os.cpu_count()}
    try:
        server = None if port_in_use(args.port) else NginxServer(args.root, args.port)
        if server is not None:
            server.__enter__()
        try:
            workers = [int(n) for n in args.workers.split(",")]
            results |= rounds(url, redis_url, workers, args.concurrency, args.repeat, args.against)
        finally:
            if server is not None:
                server.__exit__(None, None, None)
        if args.urls:
            results["memory"] = asyncio.run(memory(redis_url, args.urls))
            print(json.dumps(results["memory"]), flush=True)
    finally:
        redis_process.terminate()
        redis_process.wait()
        shutil.rmtree(directory, ignore_errors=True)
    if args.json_out:
        args.json_out.parent.mkdir(parents=True, exist_ok=True)
        args.json_out.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
