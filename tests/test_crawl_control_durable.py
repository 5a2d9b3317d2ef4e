"""Crawl control across processes: the faceted shop with ``--strip-params 'utm_*' --exclude
'[?&]sort='`` shared by two Redis workers (the joining one was given no rules: it obeys the
stored ones), and killed with SIGKILL then resumed without the rules (the state file's are
taken). The server's log shows every product and listing page and no excluded URL."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from redis_server import RedisServer, shared_server
from servers import ServerThread, checkout_env
from shop_site import shop_app, shop_paths
from sitecrawl._cli import main
from test_redis import finish, sitecrawl, status, wait_until

RULES = ("--strip-params", "utm_*", "--exclude", "[?&]sort=")


@pytest.fixture
def shop() -> Iterator[ServerThread]:
    server = ServerThread(shop_app(delay=0.03)).start()  # ~4 s: time for a worker to join
    yield server
    server.stop()


def assert_only_the_shop_pages(shop: ServerThread, *, again: int = 0) -> None:
    fetched = shop.traffic.pages
    assert not [path for path in fetched if "sort=" in path or "utm_" in path]
    assert set(fetched) == shop_paths()
    assert len(fetched) <= len(shop_paths()) + again


def exported(argv: list[str], tmp_path: Path, shop: ServerThread) -> set[str]:
    out = tmp_path / "export.jsonl"
    assert main(["export", *argv, "-o", str(out), "-q"]) == 0
    lines = out.read_text(encoding="utf-8").splitlines()
    urls = [json.loads(line)["url"].removeprefix(shop.url) or "/" for line in lines]
    assert len(urls) == len(set(urls))
    return set(urls)


def test_shop_with_redis_and_two_workers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gate = threading.Event()  # the shop answers once both workers have joined
    shop = ServerThread(shop_app(delay=0.01, gate=gate)).start()
    try:
        server = shared_server()
        client = redis.Redis(port=server.port)
        seed = sitecrawl(
            "crawl", shop.url, "--redis", server.url, "--crawl-id", "shop", "-c", "4", *RULES
        )
        try:
            wait_until(lambda: bool(client.exists("sitecrawl:{shop}:config")), 60, "the seed")
            joined = sitecrawl("worker", "--redis", server.url, "--crawl-id", "shop", "-c", "4")
            alive = "2 workers alive"
            wait_until(lambda: alive in status(server.url, "shop", capsys), 60, alive)
        finally:
            gate.set()
        errors = finish([seed, joined])
        check_the_shared_crawl(shop, server, errors, tmp_path, capsys)
    finally:
        shop.stop()


def check_the_shared_crawl(
    shop: ServerThread,
    server: RedisServer,
    errors: list[str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert_only_the_shop_pages(shop)
    counts = [int(re.search(r"([\d,]+) pages in", err)[1].replace(",", "")) for err in errors]  # type: ignore[index]
    assert sum(counts) == len(shop_paths())
    assert all(counts), counts  # both worked, the joining one by the stored rules
    assert exported(["--redis", server.url, "--crawl-id", "shop"], tmp_path, shop) == shop_paths()
    # Joining with other rules is refused; without any, the stored ones are taken.
    argv = ["crawl", shop.url, "--redis", server.url, "--crawl-id", "shop", "-q"]
    assert main([*argv, "--exclude", "x"]) == 2
    assert "this crawl began with --exclude '[?&]sort='" in capsys.readouterr().err


def test_shop_killed_with_sigkill_resumes_with_the_stored_rules(
    shop: ServerThread, tmp_path: Path
) -> None:
    state = tmp_path / "shop.db"
    argv = [sys.executable, "-m", "sitecrawl", "crawl", shop.url, "--state", str(state)]
    process = subprocess.Popen(
        [*argv, "-c", "4", "-o", "-", *RULES],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=checkout_env(),
    )
    assert process.stdout is not None
    for _ in range(150):
        assert process.stdout.readline(), process.communicate()[1]
    process.kill()
    assert process.wait(10) == -signal.SIGKILL
    process.stdout.close()
    assert process.stderr is not None
    process.stderr.close()
    # Resumed without the rules: the state file's are taken, and said.
    result = subprocess.run(
        [*argv, "-c", "4"], capture_output=True, text=True, timeout=120, env=checkout_env()
    )
    assert result.returncode == 0, result.stderr
    assert "resumed with the rules this crawl began with" in result.stderr
    assert_only_the_shop_pages(shop, again=4)
    assert exported([str(state)], tmp_path, shop) == shop_paths()


def test_redis_worker_joining_after_a_start_redirect_keeps_its_scope() -> None:
    """The seed follows its start URL's redirect to another host, then dies; the worker that
    joined after the redirect finishes the crawl alone, in the redirected scope."""
    from servers import site_app
    from test_list_crawl import redirecting_start
    from test_redis import done

    site = ServerThread(site_app(40, delay=0.1)).start()
    old = ServerThread(redirecting_start(site.url + "/")).start()
    try:
        server = shared_server()
        argv = ("--redis", server.url, "--crawl-id", "moved", "-c", "2")
        seed = sitecrawl("crawl", old.url + "/", *argv, "--lease-ttl", "1")
        wait_until(lambda: done(server, "moved") >= 2, 20, "the start page and one more")
        joined = sitecrawl("worker", *argv)
        wait_until(lambda: done(server, "moved") >= 6, 20, "6 pages")
        seed.kill()
        assert seed.wait(10) == -signal.SIGKILL
        assert seed.stderr is not None
        seed.stderr.close()
        finish([joined])
        assert set(site.traffic.pages) == {"/"} | {f"/p/{i}" for i in range(1, 40)}
    finally:
        site.stop()
        old.stop()
