"""A crawl spread over two real redis-servers by host (``--redis A --redis B``): the same pages
as one process, each host's requests, dedupe and politeness in its own shard, one shard
restarted with its data or emptied mid-crawl, and the one-line refusals."""

from __future__ import annotations

import contextlib
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from redis_server import RedisServer, second_server, shared_server
from servers import ServerThread, Traffic, site_app
from sitecrawl import StateError
from sitecrawl._cli import main
from sitecrawl.frontier import RedisShards, shard_of
from test_redis import records, sitecrawl, wait_until
from test_redis_loss import one_error_line, stopped


def test_shard_of_is_stable_and_spreads_hosts() -> None:
    hosts = [f"host{i}.test:80" for i in range(1000)]
    first = [shard_of(h, 2) for h in hosts]
    assert first == [shard_of(h, 2) for h in hosts]  # the same in every process
    assert shard_of("Host1.test:80", 2) == shard_of("host1.test:80", 2)
    assert 400 < sum(first) < 600  # about half each
    assert {shard_of(h, 3) for h in hosts} == {0, 1, 2}


def two_shards_sites(pages: int, delay: float) -> list[ServerThread]:
    """Two sites whose hosts (127.0.0.1:PORT) fall in different shards of two."""
    sites: list[ServerThread] = []
    spare: list[ServerThread] = []
    while len(sites) < 2:
        site = ServerThread(site_app(pages, delay=delay)).start()
        if any(
            shard_of(f"127.0.0.1:{s.port}", 2) == shard_of(f"127.0.0.1:{site.port}", 2)
            for s in sites
        ):
            spare.append(site)
        else:
            sites.append(site)
        assert len(spare) < 20
    for site in spare:
        site.stop()
    if shard_of(f"127.0.0.1:{sites[0].port}", 2) == 1:
        sites.reverse()  # sites[i] is shard i's
    return sites


@pytest.fixture
def sites() -> Iterator[list[ServerThread]]:
    started = two_shards_sites(20, delay=0.1)
    yield started
    for site in started:
        site.stop()


def baseline(sites: list[ServerThread], tmp_path: Path) -> dict[str, dict[str, Any]]:
    out = tmp_path / "baseline.jsonl"
    assert main(["crawl", *(s.url for s in sites), "--no-state", "-o", str(out), "-q"]) == 0
    for site in sites:
        site.traffic = Traffic()
    return records(out)


def start(
    urls: list[str], sites: list[ServerThread], crawl_id: str, workers: int, *options: str
) -> list[subprocess.Popen[str]]:
    """The seed (``crawl``: the sites' URLs, ``--redis`` once per URL), then workers joining
    with the URLs as one comma list."""
    redis_args = [arg for url in urls for arg in ("--redis", url)]
    starts = [site.url for site in sites]
    seed = sitecrawl("crawl", *starts, *redis_args, "--crawl-id", crawl_id, *options)
    for url in urls:
        client = redis.Redis.from_url(url)
        key = f"sitecrawl:{{{crawl_id}}}:config"
        wait_until(lambda: bool(client.exists(key)), 20, "the seed")  # noqa: B023
    join = ["worker", "--redis", ",".join(urls), "--crawl-id", crawl_id, "-q"]
    if "-c" in options:
        join += ["-c", options[options.index("-c") + 1]]
    return [seed] + [sitecrawl(*join) for _ in range(workers - 1)]


def done(url: str, crawl_id: str) -> int:
    value = redis.Redis.from_url(url).hget(f"sitecrawl:{{{crawl_id}}}:counts", "done")
    return int(value or 0)  # type: ignore[arg-type]


def page_fetches(site: ServerThread) -> list[str]:
    return [p for p in site.traffic.paths if p == "/" or p.startswith("/p/")]


def test_two_workers_over_two_shards_same_pages_each_host_in_its_shard(
    sites: list[ServerThread], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    expected = baseline(sites, tmp_path)
    assert len(expected) == 40
    urls = [shared_server().url, second_server().url]
    out = tmp_path / "pages.jsonl"
    options = ("--per-host", "2", "-c", "4", "-q", "-o", str(out))
    processes = start(urls, sites, "sharded", 2, *options)
    for process in processes:
        code, err = stopped(process, 60)
        assert code == 0, err
    assert records(out) == expected  # the seed's -o: every shard's pages
    exported = tmp_path / "export.jsonl"
    source = ["--redis", urls[0], "--redis", urls[1], "--crawl-id", "sharded"]
    assert main(["export", *source, "-o", str(exported), "-q"]) == 0
    assert records(exported) == expected
    for i, site in enumerate(sites):
        assert sorted(page_fetches(site)) == sorted(set(page_fetches(site)))  # each once
        assert len(page_fetches(site)) == 20
        # The host's pages, dedupe and politeness are in its own shard, none in the other.
        assert done(urls[i], "sharded") == 20
        own = redis.Redis.from_url(urls[i])
        other = redis.Redis.from_url(urls[1 - i])
        host = f"sitecrawl:{{sharded}}:host:127.0.0.1:{site.port}"
        assert own.exists(host) and not other.exists(host)
        assert max(site.traffic.host_peak.values()) <= 2  # --per-host across both workers
    capsys.readouterr()
    assert main(["status", "--redis", ",".join(urls), "--crawl-id", "sharded"]) == 0
    line = capsys.readouterr().out
    assert "(finished): 40 done · 0 queued · 0 in flight · 0 errors · 0 workers alive" in line


def test_one_shard_restarted_with_its_data_the_crawl_finishes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    slow = two_shards_sites(20, delay=0.2)
    directory = tmp_path / "redis"
    directory.mkdir()
    server = RedisServer(directory, persistent=True).start()
    try:
        expected = baseline(slow, tmp_path)
        urls = [shared_server().url, server.url]
        processes = start(urls, slow, "restart", 2, "--per-host", "2", "-c", "4", "-q")
        wait_until(lambda: done(server.url, "restart") >= 4, 30, "4 pages on shard 1")
        server.restart(pause=1.0)  # every connection to it drops; a second without it
        for process in processes:
            code, err = stopped(process, 60)
            assert code == 0, err
        assert done(urls[0], "restart") == done(urls[1], "restart") == 20
        out = tmp_path / "export.jsonl"
        source = ["--redis", ",".join(urls), "--crawl-id", "restart"]
        assert main(["export", *source, "-o", str(out), "-q"]) == 0
        assert records(out) == expected
    finally:
        server.stop()
        for site in slow:
            site.stop()


def test_one_shard_emptied_mid_crawl_every_process_stops_exit_1(tmp_path: Path) -> None:
    slow = two_shards_sites(30, delay=0.2)
    directory = tmp_path / "redis"
    directory.mkdir()
    server = RedisServer(directory).start()
    try:
        urls = [shared_server().url, server.url]
        processes = start(urls, slow, "emptied", 2, "--per-host", "2", "-c", "2", "-q")
        wait_until(lambda: done(server.url, "emptied") >= 4, 30, "4 pages on shard 1")
        client = redis.Redis(port=server.port)
        assert server.process is not None
        with contextlib.suppress(redis.ConnectionError):
            client.shutdown(nosave=True)
        server.process.wait(10)
        server.start()  # the same port, empty
        for process in processes:
            code, err = stopped(process)
            assert code == 1, err
            one_error_line(err, f"crawl 'emptied' is gone from Redis at {server.url}")
        assert client.keys("sitecrawl:*") == []  # nothing crawled into the empty shard
        time.sleep(0.1)
    finally:
        server.stop()
        for site in slow:
            site.stop()


async def test_joining_with_other_urls_or_order_is_refused() -> None:
    urls = [shared_server().url, second_server().url]
    seed = RedisShards(urls, crawl_id="order", base_url="http://site.test/", fresh=True)
    async with seed:
        pass
    for wrong in (urls[::-1], [urls[0]]):
        joining: Any = RedisShards(wrong, crawl_id="order") if len(wrong) > 1 else None
        if joining is None:
            from sitecrawl.frontier import RedisFrontier

            joining = RedisFrontier(wrong[0], crawl_id="order")
        with pytest.raises(StateError, match="same order"):
            async with joining:
                pass
    async with RedisShards(urls, crawl_id="order") as again:
        assert again.base_url == "http://site.test/"
        assert await again.drop() >= 2


def test_the_cli_refusals_are_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    urls = [shared_server().url, second_server().url]
    cases = [
        (["crawl", "http://site.test/", "--redis", ",".join(urls), "-n", "5"], "--max-pages"),
        (["worker", "--redis", f"{urls[0]},{urls[0]}", "--crawl-id", "x"], "twice"),
        (["status", "--redis", f"{urls[0]},http://x", "--crawl-id", "x"], "bad Redis URL"),
    ]
    for argv, message in cases:
        capsys.readouterr()
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith("sitecrawl: error: ") and message in err, err
        assert err.count("\n") == 1
