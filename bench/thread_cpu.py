#!/usr/bin/env python3
"""CPU seconds of a command by process and by thread, read from /proc as it runs.

Every 10 ms the command's process tree is walked and each thread's utime + stime
(``/proc/PID/task/TID/stat``) kept; a thread's last reading is its CPU (up to 10 ms of it can
be missed at its end), with the time it waited runnable for a CPU (``schedstat``: what the
machine's other processes cost it). Prints one line per process and thread, by name, and the
wall time.

    python bench/thread_cpu.py -- .venv/bin/python -m sitecrawl crawl URL -q -o out.jsonl --no-state
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

TICK = os.sysconf("SC_CLK_TCK")


def _children(pid: int) -> list[int]:
    kids: list[int] = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children", encoding="ascii") as f:
                kids += [int(k) for k in f.read().split()]
    except OSError:
        pass
    return kids


def _tree(root: int) -> list[int]:
    seen, todo = [], [root]
    while todo:
        pid = todo.pop()
        seen.append(pid)
        todo += _children(pid)
    return seen


def _threads(pid: int, cpu: dict[tuple[int, int], tuple[str, float, float]]) -> None:
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/stat", encoding="utf-8") as f:
                stat = f.read()
        except OSError:
            continue
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat", encoding="ascii") as f:
                waited = int(f.read().split()[1]) / 1e9
        except (OSError, IndexError, ValueError):  # no schedstats in this kernel
            waited = 0.0
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2 :].split()
        cpu[(pid, int(tid))] = (name, (int(fields[11]) + int(fields[12])) / TICK, waited)


def measure(argv: list[str]) -> dict[str, object]:
    cpu: dict[tuple[int, int], tuple[str, float, float]] = {}
    started = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL)
    while proc.poll() is None:
        for pid in _tree(proc.pid):
            _threads(pid, cpu)
        time.sleep(0.01)
    wall = time.perf_counter() - started
    threads = [
        {"pid": pid, "tid": tid, "name": name, "cpu": round(seconds, 3), "waited": round(waited, 3)}
        for (pid, tid), (name, seconds, waited) in sorted(cpu.items())
    ]
    return {"wall": round(wall, 3), "exit": proc.returncode, "threads": threads}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="one JSON object instead of lines")
    ap.add_argument("argv", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    argv = args.argv[1:] if args.argv[:1] == ["--"] else args.argv
    result = measure(argv)
    if args.json:
        print(json.dumps(result))
        return
    for t in result["threads"]:  # type: ignore[attr-defined]
        role = "main" if t["pid"] == t["tid"] else "thread"
        print(
            f"{t['pid']:>7} {t['tid']:>7} {role:<6} {t['name']:<16} {t['cpu']:6.2f} s"
            f"  waited for a CPU {t['waited']:6.2f} s"
        )
    print(f"wall {result['wall']} s, exit {result['exit']}", file=sys.stderr)


if __name__ == "__main__":
    main()
