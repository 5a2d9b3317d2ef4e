"""The browser's processes, read from ``/proc``: their memory, and killing a browser that
does not close."""

from __future__ import annotations

import contextlib
import os
import signal


def _processes() -> dict[int, tuple[int, str, bytes]]:
    """Every process: pid -> (parent pid, command name, command line)."""
    found: dict[int, tuple[int, str, bytes]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                text = stat.read().decode("ascii", "replace")
            with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                command = cmdline.read()
        except OSError:
            continue
        close = text.rfind(")")
        parent = int(text[close + 2 :].split()[1])
        found[int(entry)] = (parent, text[text.find("(") + 1 : close], command)
    return found


def _descendants(roots: set[int], processes: dict[int, tuple[int, str, bytes]]) -> set[int]:
    children: dict[int, list[int]] = {}
    for pid, (parent, _, _) in processes.items():
        children.setdefault(parent, []).append(pid)
    found: set[int] = set()
    todo = [child for root in roots for child in children.get(root, [])]
    while todo:
        pid = todo.pop()
        found.add(pid)
        todo += children.get(pid, [])
    return found


def tree_memory_mb(root: int, name: str = "chrom") -> float:
    """Memory (MB, proportional set size) of ``root``'s descendant processes whose command
    name holds ``name``, from ``/proc`` (0 where there is none)."""
    processes = _processes()
    total_kb = 0
    for pid in _descendants({root}, processes):
        if name not in processes[pid][1]:
            continue
        with contextlib.suppress(OSError), open(f"/proc/{pid}/smaps_rollup", "rb") as rollup:
            for line in rollup:
                if line.startswith(b"Pss:"):
                    total_kb += int(line.split()[1])
                    break
    return total_kb / 1024


def kill_tree(marker: str) -> int:
    """SIGKILL the processes whose command line holds the argument ``marker`` (a browser
    launched with it) and their descendants (its renderers); how many there were."""
    processes = _processes()
    roots = {
        pid for pid, (_, _, command) in processes.items() if marker.encode() in command.split(b"\0")
    }
    doomed = roots | _descendants(roots, processes)
    for pid in doomed:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    return len(doomed)
