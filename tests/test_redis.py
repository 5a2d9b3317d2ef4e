"""A crawl shared through a real redis-server by worker processes (``python -m sitecrawl``):
same pages as one process, each fetched once, politeness held across workers, a worker killed
with SIGKILL, Redis restarted mid-crawl, and the one-line errors."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from redis_server import RedisServer, shared_server
from servers import ServerThread, Traffic, checkout_env, expected_paths, site_app
from sitecrawl._cli import main

VOLATILE = ("response_time_ms", "depth")  # timing, and BFS depth under concurrency
#: Counted by `export` once the crawl has ended; the crawl's own -o leaves them empty.
AFTER_THE_CRAWL = ("inlinks", "unique_inlinks")
TOLERANCE = 0.03  # client-side start vs server-side arrival, across processes on 2 cores


def records(path: Path) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        assert record["url"] not in out, f"{record['url']} twice"
        out[record["url"]] = {
            k: v for k, v in record.items() if k not in VOLATILE + AFTER_THE_CRAWL
        }
    return out


def baseline(site: ServerThread, tmp_path: Path) -> dict[str, dict[str, Any]]:
    """One in-process crawl of ``site``; its traffic is forgotten afterwards."""
    out = tmp_path / "baseline.jsonl"
    assert main(["crawl", site.url, "--no-state", "-o", str(out), "-q"]) == 0
    site.traffic = Traffic()
    return records(out)


def export(url: str, crawl_id: str, tmp_path: Path) -> dict[str, dict[str, Any]]:
    out = tmp_path / f"{crawl_id}.jsonl"
    assert main(["export", "--redis", url, "--crawl-id", crawl_id, "-o", str(out), "-q"]) == 0
    return records(out)


def page_fetches(site: ServerThread) -> list[str]:
    return [p for p in site.traffic.paths if p == "/" or p.startswith("/p/")]


def sitecrawl(*argv: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "sitecrawl", *argv],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=checkout_env(),
    )


def wait_until(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def start_workers(
    server: RedisServer, site: ServerThread, crawl_id: str, workers: int, *options: str
) -> list[subprocess.Popen[str]]:
    """``crawl --redis`` seeds the crawl and works; ``workers - 1`` more join it, with the
    seed's ``-c``, ``-q`` and ``--redis-timeout``."""
    seed = sitecrawl("crawl", site.url, "--redis", server.url, "--crawl-id", crawl_id, *options)
    client = redis.Redis(port=server.port)
    wait_until(lambda: bool(client.exists(f"sitecrawl:{{{crawl_id}}}:config")), 10, "the seed")
    join = ["worker", "--redis", server.url, "--crawl-id", crawl_id]
    for option, takes_value in (("-c", True), ("-q", False), ("--redis-timeout", True)):
        if option in options:
            at = options.index(option)
            join += options[at : at + 1 + takes_value]
    return [seed] + [sitecrawl(*join) for _ in range(workers - 1)]


def finish(processes: list[subprocess.Popen[str]], timeout: float = 60) -> list[str]:
    """Wait for every process to exit 0; return their stderr."""
    errors = []
    for process in processes:
        _, err = process.communicate(timeout=timeout)
        assert process.returncode == 0, err
        errors.append(err)
    return errors


def done(server: RedisServer, crawl_id: str) -> int:
    value = redis.Redis(port=server.port).hget(f"sitecrawl:{{{crawl_id}}}:counts", "done")
    return int(value or 0)  # type: ignore[arg-type]


def status(url: str, crawl_id: str, capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    assert main(["status", "--redis", url, "--crawl-id", crawl_id]) == 0
    return capsys.readouterr().out


@pytest.fixture
def gate() -> threading.Event:
    """The slow site answers while it is set (:func:`all_join`)."""
    opened = threading.Event()
    opened.set()
    return opened


@pytest.fixture
def slow_site(gate: threading.Event) -> Iterator[ServerThread]:
    server = ServerThread(site_app(40, delay=0.2, gate=gate)).start()
    yield server
    server.stop()


def all_join(
    server: RedisServer,
    site: ServerThread,
    gate: threading.Event,
    crawl_id: str,
    workers: int,
    capsys: pytest.CaptureFixture[str],
    *options: str,
) -> list[subprocess.Popen[str]]:
    """:func:`start_workers`, the site holding its answers until every worker has joined
    (however long a busy machine takes to start them): each gets a share of the crawl."""
    gate.clear()
    try:
        processes = start_workers(server, site, crawl_id, workers, *options)
        alive = f"{workers} workers alive"
        wait_until(lambda: alive in status(server.url, crawl_id, capsys), 60, alive)
    finally:
        gate.set()
    return processes


def test_three_workers_one_crawl_politeness_across_workers(
    slow_site: ServerThread,
    gate: threading.Event,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    expected = baseline(slow_site, tmp_path)
    server = shared_server()
    politeness = ("--per-host", "2", "--delay", "0.05", "-c", "4")
    processes = all_join(server, slow_site, gate, "three", 3, capsys, *politeness)
    errors = finish(processes)

    assert export(server.url, "three", tmp_path) == expected
    fetched = page_fetches(slow_site)
    assert sorted(fetched) == sorted(expected_paths(40))  # each page once
    traffic = slow_site.traffic
    # Up to 4 requests could start within one 0.2 s answer at 0.05 s apart, 12 with 3 workers
    # of -c 4: the cap is held across the workers, and reached.
    assert max(traffic.host_peak.values()) == 2
    # Starts are spaced on Redis's clock; the server sees them as they arrive, and a worker
    # that lags on a loaded machine makes a short gap after a long one (excused). Without the
    # shared delay, the two slots' requests would start in pairs: 20 short gaps, also after
    # long ones (the 0.2 s answers), so those must stay few.
    late, early = traffic.short_gaps(0.05, tolerance=TOLERANCE)  # robots.txt, sitemap.xml too
    assert not early and len(late) <= 5, (early, late)
    counts = [int(re.search(r"(\d+) pages in", err)[1]) for err in errors]  # type: ignore[index]
    assert sum(counts) == 40
    assert sum(1 for n in counts if n) >= 2, counts  # the work was shared
    line = status(server.url, "three", capsys)
    assert "(finished): 40 done · 0 queued · 0 in flight · 0 errors · 0 workers alive" in line


def test_a_worker_killed_with_sigkill_hands_its_pages_over(
    slow_site: ServerThread,
    gate: threading.Event,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    expected = baseline(slow_site, tmp_path)
    server = shared_server()
    options = ("--per-host", "4", "-c", "2", "--lease-ttl", "1", "-q")
    processes = all_join(server, slow_site, gate, "killed", 3, capsys, *options)
    wait_until(lambda: done(server, "killed") >= 8, 60, "8 pages")
    victim = processes[1]
    victim.kill()
    assert victim.wait(10) == -signal.SIGKILL
    assert victim.stderr is not None
    victim.stderr.close()
    wait_until(lambda: "2 workers alive" in status(server.url, "killed", capsys), 30, "2 alive")
    finish([processes[0], processes[2]])

    assert export(server.url, "killed", tmp_path) == expected
    fetched = page_fetches(slow_site)
    assert set(fetched) == expected_paths(40)
    assert len(fetched) <= 40 + 2  # only what the dead worker (-c 2) had in flight, again
    reclaimed = redis.Redis(port=server.port).hget("sitecrawl:{killed}:counts", "reclaimed")
    # Its leases: the two in flight, and the one it took ahead (-c 2 leases 1 per call).
    assert 1 <= int(reclaimed or 0) <= 3  # type: ignore[arg-type]
    assert max(slow_site.traffic.host_peak.values()) <= 4


def test_redis_restarted_mid_crawl_workers_reconnect_and_finish(
    slow_site: ServerThread, tmp_path: Path
) -> None:
    expected = baseline(slow_site, tmp_path)
    directory = tmp_path / "redis"
    directory.mkdir()
    server = RedisServer(directory, persistent=True).start()
    try:
        options = ("--per-host", "2", "-c", "4", "-q")
        processes = start_workers(server, slow_site, "restart", 2, *options)
        wait_until(lambda: done(server, "restart") >= 8, 20, "8 pages")
        assert done(server, "restart") < 30
        server.restart(pause=1.0)  # every connection drops; a second without Redis
        finish(processes)
        assert done(server, "restart") == 40
        assert export(server.url, "restart", tmp_path) == expected
        assert set(page_fetches(slow_site)) == expected_paths(40)
    finally:
        server.stop()


@pytest.mark.parametrize("command", ["worker", "status", "export"])
def test_unreachable_redis_bad_url_unknown_crawl_one_line_exit_2(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = ["-o", str(tmp_path / "x.jsonl")] if command == "export" else []
    live = shared_server().url
    cases = {
        "redis://127.0.0.1:1/0": "cannot reach Redis at redis://127.0.0.1:1/0",
        "http://127.0.0.1:6379/0": "bad Redis URL 'http://127.0.0.1:6379/0'",
        "redis://:hunter2@127.0.0.1:1/0": "cannot reach Redis at redis://:***@127.0.0.1:1/0",
        live: f"no crawl 'never-started' in Redis at {live}",
    }
    for url, message in cases.items():
        capsys.readouterr()
        assert main([command, "--redis", url, "--crawl-id", "never-started", *out]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"sitecrawl: error: {message}"), err
        assert err.count("\n") == 1 and "hunter2" not in err
    assert not (tmp_path / "x.jsonl").exists()


def test_crawl_refuses_another_sites_crawl_id_report_and_tables_read_redis(
    site: ServerThread, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = shared_server().url
    assert main(["crawl", site.url, "--redis", url, "--crawl-id", "mine", "-q"]) == 0
    other = site.url.replace("127.0.0.1", "localhost")
    capsys.readouterr()
    assert main(["crawl", other, "--redis", url, "--crawl-id", "mine", "-q"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("sitecrawl: error: crawl 'mine' in Redis at") and err.count("\n") == 1
    assert "--fresh" in err
    assert main(["crawl", other, "--redis", url, "--crawl-id", "mine", "-q", "--fresh"]) == 0
    assert "of http://localhost:" in status(url, "mine", capsys)
    links = tmp_path / "links.jsonl"
    source = ["--redis", url, "--crawl-id", "mine"]
    assert main(["export", *source, "-t", "links", "-o", str(links), "-q"]) == 0
    rows = [json.loads(line) for line in links.read_text().splitlines()]
    assert len({row["source_url"] for row in rows}) == 60
    assert {"a", "img"} <= {row["kind"] for row in rows}
    report = tmp_path / "report.html"
    assert main(["report", *source, "-o", str(report), "-q"]) == 0
    assert "http://localhost:" in report.read_text(encoding="utf-8")
    assert main(["report", *source, str(report), "-o", str(report)]) == 2  # both sources


def test_a_failed_start_page_exits_1_with_redis_too(
    site: ServerThread, unused_tcp_port: int, capsys: pytest.CaptureFixture[str]
) -> None:
    """As without Redis: a crawl whose only page is its failed start page says why in one
    line and exits 1 (a later worker joining the finished crawl says the same)."""
    url = shared_server().url
    dead = f"http://127.0.0.1:{unused_tcp_port}/"
    for base, crawl_id, error in [
        (dead, "dead-start", "connection refused"),
        (site.url + "/nope", "missing-start", "HTTP 404"),
    ]:
        capsys.readouterr()
        assert main(["crawl", base, "--redis", url, "--crawl-id", crawl_id, "-q"]) == 1
        err = capsys.readouterr().err
        assert err.startswith(f"sitecrawl: error: could not crawl {base}") and error in err
        assert err.count("\n") == 1 and "Traceback" not in err
        assert main(["worker", "--redis", url, "--crawl-id", crawl_id, "-q"]) == 1
    # A start page that works is not an error, however small the crawl.
    one = ["--max-pages", "1", "-q"]
    assert main(["crawl", site.url, "--redis", url, "--crawl-id", "ok-start", *one]) == 0


def test_max_pages_is_exact_and_the_crawl_ends_finished(
    site: ServerThread, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``-n`` is the whole crawl's budget, kept in Redis: exactly N pages with 16 requests in
    flight (as without Redis), then "finished"; running the command again adds none."""
    url = shared_server().url
    for attempt in range(2):
        out = tmp_path / f"run{attempt}.jsonl"
        argv = ["crawl", site.url, "--redis", url, "--crawl-id", "budget", "-n", "10"]
        assert main([*argv, "-c", "16", "-o", str(out), "-q"]) == 0
        assert len(records(out)) == 10
        assert "(finished): 10 done · " in status(url, "budget", capsys)
    assert len(page_fetches(site)) == 10


def test_max_pages_across_workers(site: ServerThread, capsys: pytest.CaptureFixture[str]) -> None:
    server = shared_server()
    processes = start_workers(server, site, "budget3", 3, "-n", "25", "-c", "16", "-q")
    finish(processes)
    assert done(server, "budget3") == 25
    assert len(page_fetches(site)) == 25
    assert "(finished): 25 done · " in status(server.url, "budget3", capsys)


def test_the_default_crawl_id_is_the_start_host_and_port_either_way(
    site: ServerThread, capsys: pytest.CaptureFixture[str]
) -> None:
    url = shared_server().url
    capsys.readouterr()
    assert main(["crawl", site.url, "--redis", url, "-n", "2", "--fresh"]) == 0
    host = f"127.0.0.1:{site.port}"
    assert f"crawl {host.replace(':', '_')} in Redis" in capsys.readouterr().err
    for crawl_id in (host, host.replace(":", "_")):
        assert "(finished): 2 done" in status(url, crawl_id, capsys)
    assert main(["worker", "--redis", url, "--crawl-id", host, "-q"]) == 0
    with pytest.raises(SystemExit):
        main(["crawl", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "(default: the start URL's HOST_PORT" in help_text
