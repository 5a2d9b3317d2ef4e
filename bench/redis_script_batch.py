#!/usr/bin/env python3
"""Would one script call a round trip cost redis-server less than one a frontier call?

A Redis worker makes ~1.1 script calls a page in ~0.35 round trips (bench/RESULTS.md 44).
Here a stand-in for a frontier script (the crawl's guard, then a body that reads every key
and argument and writes once) is called ``--calls`` times a pipeline, either as that many
EVALSHA, or as one EVALSHA of a dispatcher running the body once for each call's keys and
arguments (the guard once): redis-server's CPU a call (``INFO cpu``), interleaved rounds,
medians. A redis-server of its own is started on a free loopback port and stopped after.

    python bench/redis_script_batch.py --calls 3 --rounds 7
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import statistics
import subprocess
import tempfile
import time
from typing import Any

GUARD = """
local epoch = table.remove(ARGV)
local config = table.remove(KEYS)
if redis.call('HGET', config, 'epoch') ~= epoch then return redis.error_reply('GONE') end
"""
BODY = """
local n = 0
for i = 1, #KEYS do n = n + #KEYS[i] end
for i = 1, #ARGV do n = n + #ARGV[i] end
redis.call('HINCRBY', KEYS[1], 'calls', 1)
return n
"""
SINGLE = GUARD + BODY
# ARGV: the number of calls, then for each: its number of keys, of arguments, its arguments.
BATCH = (
    GUARD
    + "local function body(KEYS, ARGV)\n"
    + BODY
    + """end
local out, ki, ai = {}, 1, 2
for c = 1, tonumber(ARGV[1]) do
  local nk, na = tonumber(ARGV[ai]), tonumber(ARGV[ai + 1])
  ai = ai + 2
  local k, a = {}, {}
  for j = 1, nk do k[j] = KEYS[ki + j - 1] end
  for j = 1, na do a[j] = ARGV[ai + j - 1] end
  ki, ai = ki + nk, ai + na
  out[c] = body(k, a)
end
return out
"""
)
# A DONE call's shape: counts, queue, leases, pages, records, a seen bucket; member, record
# name, error, links.
KEYS = ["counts", "queue", "leases", "pages", "records", "seen:0a1b"]
ARGS = ["1\nkey\nhttp://127.0.0.1/a", "tok:1f", "", "3", "http://127.0.0.1/b", "x", "y", "z"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def _cpu(client: Any) -> float:
    info = await client.info("cpu")
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


async def _round(client: Any, shas: dict[str, str], mode: str, total: int, calls: int) -> float:
    before = await _cpu(client)
    for _ in range(total // calls):
        pipe = client.pipeline(transaction=False)
        if mode == "single":
            for _ in range(calls):
                pipe.evalsha(shas[mode], len(KEYS) + 1, *KEYS, "config", *ARGS, "e1")
        else:
            keys: list[str] = []
            args = [str(calls)]
            for _ in range(calls):
                keys += KEYS
                args += [str(len(KEYS)), str(len(ARGS)), *ARGS]
            pipe.evalsha(shas[mode], len(keys) + 1, *keys, "config", *args, "e1")
        await pipe.execute()
    return 1e6 * (await _cpu(client) - before) / total


async def _bench(port: int, args: argparse.Namespace) -> dict[str, list[float]]:
    import redis.asyncio as redis

    client = redis.Redis(port=port)
    await client.hset("config", "epoch", "e1")
    shas = {"single": await client.script_load(SINGLE), "batch": await client.script_load(BATCH)}
    results: dict[str, list[float]] = {"single": [], "batch": []}
    for rnd in range(args.rounds):
        for mode in ("single", "batch") if rnd % 2 == 0 else ("batch", "single"):
            results[mode].append(await _round(client, shas, mode, args.total, args.calls))
            print(f"  round {rnd + 1} {mode:<6} {results[mode][-1]:6.2f} us a call")
    await client.aclose()
    return results


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=3, help="script calls a pipeline (3)")
    ap.add_argument("--total", type=int, default=30_000, help="calls a round (30,000)")
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    port = _free_port()
    with tempfile.TemporaryDirectory() as tmp:
        command = ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", ""]
        command += ["--appendonly", "no", "--dir", tmp]
        server = subprocess.Popen(command, stdout=subprocess.DEVNULL)
        try:
            time.sleep(0.3)
            results = asyncio.run(_bench(port, args))
        finally:
            server.terminate()
            server.wait()
    for mode, values in results.items():
        print(f"{mode:<6} median {statistics.median(values):6.2f} us a call (redis-server CPU)")


if __name__ == "__main__":
    main()
