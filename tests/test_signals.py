"""Stop signals on a real ``sitecrawl`` process: SIGTERM is Ctrl-C, Ctrl-C any number of times
never prints a traceback or loses an output, and not during the start-up either."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import ServeFn
from servers import ServerThread, checkout_env, site_app
from sitecrawl import CrawlConfig
from sitecrawl._cli import _signals
from sitecrawl._cli._common import EXIT_INTERRUPTED, run_async
from sitecrawl._cli._crawl import _crawl
from sitecrawl.frontier import SqliteFrontier
from sitecrawl.sinks import TEMP_MARK


def start(site: ServerThread, cwd: Path, *extra: str, **options: object) -> subprocess.Popen[str]:
    argv = [sys.executable, "-m", "sitecrawl", "crawl", site.url, "-c", "2", "-p", "2", *extra]
    return subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=checkout_env(),
        cwd=cwd,
        **options,  # type: ignore[call-overload]
    )


def read_pages(process: subprocess.Popen[str], count: int) -> None:
    assert process.stdout is not None
    for _ in range(count):
        assert process.stdout.readline(), "the crawl ended early"


def finish(process: subprocess.Popen[str]) -> tuple[str, str]:
    """The rest of stdout (what ``readline`` buffered included: ``communicate`` would miss
    it) and stderr, once the process has ended."""
    assert process.stdout is not None and process.stderr is not None
    with process.stdout, process.stderr:
        out = process.stdout.read()
        process.wait(60)
        return out, process.stderr.read()


def whole_jsonl(path: Path) -> list[dict[str, object]]:
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert len({r["url"] for r in records}) == len(records)
    return records


def test_sigterm_is_handled_as_ctrl_c(serve: ServeFn, tmp_path: Path) -> None:
    site = serve(site_app(60, delay=0.1))
    outputs = ["-o", "-", "-o", "pages.jsonl", "-o", "pages.json", "--report", "r.html"]
    process = start(site, tmp_path, "--state", "s.db", *outputs)
    read_pages(process, 5)
    process.send_signal(signal.SIGTERM)
    out, err = finish(process)
    assert process.returncode == 143, err
    assert "Traceback" not in err
    assert "SIGTERM: stopping: finishing requests in flight" in err
    assert "interrupted: run the same command again to resume (s.db)" in err
    assert "report: r.html" in err
    pages = whole_jsonl(tmp_path / "pages.jsonl")
    assert len(pages) == 5 + len(out.splitlines()) < 60
    assert json.loads((tmp_path / "pages.json").read_text()) == pages
    assert "<html" in (tmp_path / "r.html").read_text()
    assert [name for name in os.listdir(tmp_path) if TEMP_MARK in name] == []


@pytest.mark.parametrize("pause", [0.0, 0.05])
def test_three_ctrl_c_no_traceback_and_the_outputs_whole(
    pause: float, serve: ServeFn, tmp_path: Path
) -> None:
    site = serve(site_app(30, delay=0.5))
    process = start(site, tmp_path, "--no-state", "-o", "-", "-o", "pages.jsonl", "-o", "p.csv")
    read_pages(process, 2)
    for _ in range(3):
        process.send_signal(signal.SIGINT)
        time.sleep(pause)
    out, err = finish(process)
    assert process.returncode == 130, err
    assert "Traceback" not in err
    pages = whole_jsonl(tmp_path / "pages.jsonl")
    assert len(pages) == 2 + len(out.splitlines()) >= 2
    assert len((tmp_path / "p.csv").read_text(encoding="utf-8")) > 0


def children(pid: int) -> list[int]:
    with open(f"/proc/{pid}/task/{pid}/children") as listing:
        return [int(child) for child in listing.read().split()]


def catches_sigterm(pid: int) -> bool:
    with open(f"/proc/{pid}/status") as status:
        caught = next(line for line in status if line.startswith("SigCgt:"))
    return bool(int(caught.split()[1], 16) & (1 << (signal.SIGTERM - 1)))


def wait_for(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 20
    while not condition():
        assert time.monotonic() < deadline
        time.sleep(0.002)


@pytest.mark.parametrize("delay", [0.0, 0.1, 0.15, 0.2, 0.25])
def test_ctrl_c_while_the_parser_process_starts(
    delay: float, serve: ServeFn, tmp_path: Path
) -> None:
    """As a terminal does: SIGINT to the whole process group, while the parser process
    imports what it needs."""
    site = serve(site_app(30, delay=0.2))
    process = start(site, tmp_path, "--no-state", "-o", "pages.jsonl", start_new_session=True)
    wait_for(lambda: bool(children(process.pid)))
    time.sleep(delay)
    os.killpg(process.pid, signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert process.returncode == 130, err
    whole_jsonl(tmp_path / "pages.jsonl")


@pytest.mark.parametrize("delay", [0.0, 0.01, 0.03, 0.06])
def test_ctrl_c_during_the_start_up(delay: float, serve: ServeFn, tmp_path: Path) -> None:
    """From the moment the entry point handles signals (it catches SIGTERM too), through the
    imports: one line, exit 130."""
    site = serve(site_app(30, delay=0.2))
    process = start(site, tmp_path, "--no-state", "-o", "pages.jsonl", start_new_session=True)
    wait_for(lambda: catches_sigterm(process.pid))
    time.sleep(delay)
    os.killpg(process.pid, signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert process.returncode == 130, err


def ended(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")  # a zombie has ended
    except FileNotFoundError:
        return True


def test_the_parser_process_ends_when_the_crawler_is_killed(serve: ServeFn, tmp_path: Path) -> None:
    site = serve(site_app(30, delay=0.2))
    process = start(site, tmp_path, "--no-state", "-o", "-")
    read_pages(process, 1)
    (child,) = children(process.pid)
    process.kill()
    finish(process)
    wait_for(lambda: ended(child))


class _OpensSlowly(SqliteFrontier):
    """A state file that takes two Ctrl-C while it opens (as while the crawler starts its
    parser process)."""

    async def open(self) -> None:
        for _ in range(2):
            os.kill(os.getpid(), signal.SIGINT)
            await asyncio.sleep(0.05)  # the event loop's handler runs
        await super().open()


def test_two_ctrl_c_while_the_crawler_starts_stop_it_without_a_traceback(
    serve: ServeFn, tmp_path: Path
) -> None:
    """The second signal cancels the crawl before it began: an interrupted crawl (exit 130),
    not a ``CancelledError`` out of the event loop."""
    site = serve(site_app(5))
    config = CrawlConfig(base_url=site.url, processes=1)
    state = _OpensSlowly(str(tmp_path / "s.db"), base_url=site.url)
    with _signals.handled():
        code = run_async(_crawl(config, [], state, quiet=True))
    assert code == EXIT_INTERRUPTED
