"""The request options (issue 15): a private site behind Basic auth and a session cookie is
crawled in full while an external site (another port of 127.0.0.1: another site, though
cookies ignore ports) receives no credential, by links, redirects, robots.txt and
``check --external``; a forward proxy carries the crawl; bodies that are not HTML are not
downloaded; secrets are not stored and a resume asks for them again."""

from __future__ import annotations

import json
import re
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from login_site import (
    BIG,
    PASSWORD,
    PREF,
    PRIVATE_PAGES,
    SECRETS,
    SESSION,
    TOKEN,
    USER,
    Seen,
    Sent,
    binary_app,
    consent_app,
    external_app,
    private_app,
    proxy_app,
)
from servers import ServerThread, expected_paths, site_app
from sitecrawl import AsyncCrawler, CrawlConfig, Requests, crawl_site_async
from sitecrawl._cli import main
from sitecrawl._exceptions import ConfigError
from sitecrawl.fetch._session import basic_auth

CREDENTIALS = ["--auth", USER, "-H", f"X-Token: {TOKEN}", "--cookie", f"pref={PREF}"]


@pytest.fixture
def sites() -> Iterator[tuple[ServerThread, Seen, ServerThread, Seen]]:
    """``(private, its requests, external, its requests)``."""
    ext_seen, seen = Seen(), Seen()
    external = ServerThread(external_app(ext_seen)).start()
    private = ServerThread(private_app(seen, external.url)).start()
    yield private, seen, external, ext_seen
    private.stop()
    external.stop()


@pytest.fixture
def password(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SITECRAWL_PASSWORD", PASSWORD)


def read_jsonl(path: Path) -> dict[str, dict[str, Any]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return {record["url"]: record for record in map(json.loads, lines)}


def assert_crawled_in_full(private: ServerThread, seen: Seen, pages: dict[str, Any]) -> None:
    """Every page fetched with 200; ``/`` is the login page's record (where it redirected)."""
    for path in PRIVATE_PAGES[1:]:
        page = pages[private.url + path]
        assert (page["status"], page["error"]) == (200, None), page
    login = pages[private.url + "/login"]
    assert (login["final_url"], login["status"], login["error"]) == (private.url + "/", 200, None)
    assert seen.refused == []  # every request to the site carried every credential


@pytest.mark.usefixtures("password")
def test_private_site_crawled_in_full_external_site_gets_no_credential(
    sites: tuple[ServerThread, Seen, ServerThread, Seen], tmp_path: Path
) -> None:
    """Two start URLs: ``/login`` (sets the session cookie, redirects to ``/``) and ``/away``
    (redirects to the external site: fetched, with its robots.txt, and crawled, but as
    another site, without credentials)."""
    private, seen, _, ext_seen = sites
    out = tmp_path / "pages.jsonl"
    argv = ["crawl", private.url + "/login", private.url + "/away", "--no-state", "-q"]
    assert main([*argv, "-o", str(out), *CREDENTIALS]) == 0
    assert_crawled_in_full(private, seen, read_jsonl(out))
    # The external site was reached across the off-site redirect, its robots.txt read, its
    # pages crawled: never with a credential, though its host is the site's (127.0.0.1).
    assert {"/robots.txt", "/landing", "/more"} <= set(ext_seen.paths())
    assert ext_seen.leaks() == []


@pytest.mark.usefixtures("password")
def test_check_external_sends_no_credential_to_external_links(
    sites: tuple[ServerThread, Seen, ServerThread, Seen], capsys: pytest.CaptureFixture[str]
) -> None:
    private, seen, _, ext_seen = sites
    main(["check", private.url + "/login", "--external", "-q", *CREDENTIALS])
    # (a whole 403: a server's port, 40319, holds the digits)
    assert not re.search(r"\b403\b", capsys.readouterr().out)
    assert seen.refused == []
    assert {"/page", "/img.png"} <= set(ext_seen.paths())  # HEAD each
    assert ext_seen.leaks() == []


async def test_library_requests_config_and_the_one_place_requests_are_made(
    sites: tuple[ServerThread, Seen, ServerThread, Seen],
) -> None:
    """The same through the library: ``CrawlConfig(requests=Requests(...))``; and the
    fetcher itself refuses credentials to another host, whatever its caller asks."""
    from sitecrawl.fetch import FetchStack, FollowPolicy, RedirectTrail

    private, seen, external, ext_seen = sites
    requests = Requests(
        headers=(("X-Token", TOKEN),), cookies=(("pref", PREF),), auth=(USER, PASSWORD)
    )
    config = CrawlConfig(base_url=private.url + "/login", requests=requests)
    async with AsyncCrawler(config.base_url, config=config) as crawler:
        pages = await crawler.crawl()
    assert {page["url"] for page in pages.values() if page["status"] == 200} >= {
        private.url + path for path in ("/login", *PRIVATE_PAGES[1:])
    }
    assert seen.refused == []
    async with FetchStack(config) as stack:
        anywhere = FollowPolicy(scope=None, max_redirects=5)
        result = await stack.client.follow(RedirectTrail(private.url + "/moved", anywhere))
        assert result.status == 200 and not isinstance(result, Exception)
        assert result.url == external.url + "/landing"
        assert stack.robots is not None
        await stack.robots.rules(external.url + "/elsewhere")
    assert {"/landing", "/robots.txt"} <= set(ext_seen.paths())
    assert ext_seen.leaks() == []
    assert "pw-" not in repr(requests) and TOKEN not in repr(config)


async def test_requests_keyword_of_crawl_site_async(
    sites: tuple[ServerThread, Seen, ServerThread, Seen],
) -> None:
    private, seen, _, ext_seen = sites
    requests = Requests(
        headers=(("X-Token", TOKEN),), cookies=(("pref", PREF),), auth=(USER, PASSWORD)
    )
    pages = await crawl_site_async(private.url + "/login", requests=requests)
    assert sum(page["status"] == 200 for page in pages.values()) == len(PRIVATE_PAGES)
    assert seen.refused == [] and ext_seen.leaks() == []
    config = CrawlConfig(base_url=private.url)
    with pytest.raises(ConfigError, match="requests"):
        AsyncCrawler(private.url, config=config, requests=requests)


def test_password_from_the_environment_or_a_clear_error(
    sites: tuple[ServerThread, Seen, ServerThread, Seen],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    private = sites[0]
    monkeypatch.delenv("SITECRAWL_PASSWORD", raising=False)
    assert main(["crawl", private.url, "--no-state", "-q", "--auth", USER]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "SITECRAWL_PASSWORD" in err, err
    for bad, expected in [
        (["-H", "no colon"], "-H takes 'Name: value'"),
        (["--cookie", "novalue"], "--cookie takes name=value"),
        (["--proxy", "ftp://x"], "a proxy is an http:// or https:// URL"),
        (["--cookies", "/nonexistent/cookies.txt"], "cannot read cookies file"),
        (["--auth", "a:b", "-H", "Authorization: x"], "not both"),
    ]:
        assert main(["crawl", private.url, "--no-state", "-q", *bad]) == 2
        err = capsys.readouterr().err.strip()
        assert expected in err and err.count("\n") == 0, err
    with pytest.raises(ConfigError):
        Requests(headers=(("X-A", "b\r\nInjected: yes"),))


@pytest.mark.usefixtures("password")
def test_cookies_file_netscape_format(
    sites: tuple[ServerThread, Seen, ServerThread, Seen], tmp_path: Path
) -> None:
    """``--cookies FILE`` instead of ``--cookie``: its cookie, for the site's host, is sent."""
    private, seen, _, ext_seen = sites
    jar = tmp_path / "cookies.txt"
    jar.write_text(
        "# Netscape HTTP Cookie File\n"
        f"127.0.0.1\tFALSE\t/\tFALSE\t0\tpref\t{PREF}\n"
        f"127.0.0.1\tFALSE\t/\tFALSE\t0\tsession\t{SESSION}\n"
    )
    out = tmp_path / "pages.jsonl"
    argv = ["crawl", private.url + "/", "--no-state", "-q", "--auth", USER, "-H"]
    assert main([*argv, f"X-Token: {TOKEN}", "--cookies", str(jar), "-o", str(out)]) == 0
    pages = read_jsonl(out)
    for path in PRIVATE_PAGES:
        assert pages[private.url + path]["status"] == 200
    assert seen.refused == []
    assert ext_seen.leaks() == []


@pytest.mark.usefixtures("password")
def test_no_cookies_keeps_none_of_the_sites_cookies(
    sites: tuple[ServerThread, Seen, ServerThread, Seen], tmp_path: Path
) -> None:
    private, seen, _, _ = sites
    out = tmp_path / "pages.jsonl"
    argv = ["crawl", private.url + "/login", "--no-state", "-q", "--no-cookies"]
    assert main([*argv, *CREDENTIALS, "-o", str(out)]) == 1  # the start page failed
    assert read_jsonl(out)[private.url + "/login"]["status"] == 403
    assert "/" in seen.refused


def test_a_consent_page_that_sends_back_where_it_came_from(tmp_path: Path) -> None:
    """``/`` -> ``/consent`` (sets the cookie) -> ``/`` is not a redirect loop: the cookie
    changed the answer; every page after it is served at once."""
    site = ServerThread(consent_app()).start()
    out = tmp_path / "pages.jsonl"
    try:
        assert main(["crawl", site.url, "--no-state", "-q", "-o", str(out)]) == 0
    finally:
        site.stop()
    pages = read_jsonl(out)
    start = pages[site.url + "/"]
    assert (start["status"], start["error"], start["final_url"]) == (200, None, site.url + "/")
    assert [pages[site.url + path]["redirects"] for path in ("/x", "/y")] == [[], []]
    assert site.traffic.count("/consent?next=/") == 1


@pytest.mark.usefixtures("password")
def test_secrets_not_in_the_state_file_and_a_resume_asks_for_them(
    sites: tuple[ServerThread, Seen, ServerThread, Seen],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    private, seen, _, _ = sites
    state = tmp_path / "private.db"
    argv = ["crawl", private.url + "/login", "--state", str(state), "-q"]
    assert main([*argv, *CREDENTIALS]) == 0
    stored = b"".join(path.read_bytes() for path in tmp_path.iterdir())
    for secret in SECRETS:
        assert secret.encode() not in stored
    assert b"x-token" in stored  # which credentials were given is stored
    capsys.readouterr()
    with sqlite3.connect(state) as conn:  # as if interrupted at its end: the next run resumes
        conn.execute("UPDATE crawls SET status = 'running'")
    conn.close()
    assert main(argv) == 2  # the same crawl, resumed without its credentials
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0, err
    assert "--auth" in err and "x-token" in err and "--cookie pref=" in err, err
    assert main([*argv, *CREDENTIALS]) == 0
    assert seen.refused == []


@pytest.mark.usefixtures("password")
def test_secrets_not_in_redis_and_a_worker_asks_for_them(
    sites: tuple[ServerThread, Seen, ServerThread, Seen],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    import redis

    from redis_server import shared_server

    private, seen, _, ext_seen = sites
    server = shared_server()
    crawl_id = f"secrets{time.monotonic_ns()}"
    where = ["--redis", server.url, "--crawl-id", crawl_id]
    assert main(["crawl", private.url + "/login", *where, "-q", *CREDENTIALS]) == 0
    client = redis.Redis(port=server.port)
    dump = b""
    for key in client.scan_iter(f"sitecrawl:{{{crawl_id}}}*"):
        kind = client.type(key)
        if kind == b"hash":
            dump += b"".join(k + v for k, v in client.hgetall(key).items())
        elif kind == b"string":
            dump += client.get(key) or b""
        elif kind == b"list":
            dump += b"".join(client.lrange(key, 0, -1))
        elif kind in (b"set", b"zset"):
            dump += b"".join(client.zrange(key, 0, -1) if kind == b"zset" else client.smembers(key))
    assert b"x-token" in dump
    for secret in SECRETS:
        assert secret.encode() not in dump
    capsys.readouterr()
    assert main(["worker", *where, "-q"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "--auth" in err and "x-token" in err, err
    assert main(["worker", *where, "-q", *CREDENTIALS]) == 0
    assert seen.refused == [] and ext_seen.leaks() == []


def test_a_forward_proxy_carries_the_crawl(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """``--proxy URL``; ``HTTP_PROXY`` from the environment; ``NO_PROXY`` bypasses it; an
    explicit ``--proxy`` beats the environment."""
    carried: list[str] = []
    auths: list[str] = []
    site = ServerThread(site_app(12)).start()
    proxy = ServerThread(proxy_app(carried, auths)).start()
    for name in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    pages = {site.url + path for path in expected_paths(12)}
    try:
        assert main(["crawl", site.url, "--no-state", "-q", "--proxy", proxy.url]) == 0
        assert pages <= set(carried)
        carried.clear()
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        assert main(["crawl", site.url, "--no-state", "-q"]) == 0
        assert pages <= set(carried)
        carried.clear()
        monkeypatch.setenv("NO_PROXY", "localhost,127.0.0.1")
        assert main(["crawl", site.url, "--no-state", "-q"]) == 0
        assert carried == []
        monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")  # nothing listens there
        out = tmp_path / "pages.jsonl"
        argv = ["crawl", site.url, "--no-state", "-q", "--proxy", proxy.url, "-o", str(out)]
        assert main(argv) == 0
        assert pages <= set(carried)
        assert all(page["status"] == 200 for page in read_jsonl(out).values())
        # The proxy's own credentials, from its URL, go to the proxy as Proxy-Authorization.
        auths.clear()
        with_user = proxy.url.replace("http://", "http://squid:hunter2@")
        assert main(["crawl", site.url, "--no-state", "-q", "--proxy", with_user]) == 0
        assert auths and set(auths) == {basic_auth("squid", "hunter2")}
    finally:
        site.stop()
        proxy.stop()


def test_bodies_that_are_not_html_are_not_downloaded(tmp_path: Path) -> None:
    """A zip, a video and an image of 64 MiB each: recorded from their headers (type, size
    from Content-Length), their bodies not read; ``check`` checks the image (HEAD refused,
    so GET) without downloading it either."""
    sent = Sent()
    site = ServerThread(binary_app(sent)).start()
    out = tmp_path / "pages.jsonl"
    try:
        assert main(["crawl", site.url, "--no-state", "-q", "-o", str(out)]) == 0
        pages = read_jsonl(out)
        assert main(["check", site.url, "-q"]) == 0
        time.sleep(0.3)  # the server notices the closed connections
    finally:
        site.stop()
    for path, kind in [("/big.zip", "application/zip"), ("/film.mp4", "video/mp4")]:
        page = pages[site.url + path]
        assert (page["status"], page["content_type"], page["size_bytes"]) == (200, kind, BIG)
    assert set(sent.bytes) == {"/big.zip", "/film.mp4", "/photo.jpg"}
    for path, count in sent.bytes.items():
        assert count < 4 * 1024 * 1024, f"{path}: {count:,} of {BIG:,} bytes sent"
