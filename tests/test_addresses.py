"""Where a crawl may connect (issue 30, item 17): never into link-local addresses (the cloud
metadata service at 169.254.169.254), nor into a more private class of address than the start
URLs' (public < private < loopback) unless allowed, judged on the resolved address. The rules
on data; then the real resolver and real servers on 127.0.0.1 (nothing is ever connected to
169.254.169.254: the refusal comes before any connection, as its kind shows)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from aiohttp import web

from conftest import ServeFn
from servers import html
from sitecrawl import AsyncCrawler, BlockedAddress, CrawlConfig, Limits, Politeness, Timeouts
from sitecrawl._cli import main
from sitecrawl.fetch._addresses import (
    LINK_LOCAL,
    LOOPBACK,
    PRIVATE,
    PUBLIC,
    AddressGuard,
    address_class,
)
from sitecrawl.fetch._fetcher import Fetcher

METADATA = "http://169.254.169.254/latest/meta-data/"


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("93.184.215.14", PUBLIC),
        ("2606:4700::1111", PUBLIC),
        ("10.1.2.3", PRIVATE),
        ("172.16.0.1", PRIVATE),
        ("192.168.1.1", PRIVATE),
        ("100.100.100.200", PRIVATE),  # CGNAT: a cloud's metadata service too
        ("fd00:ec2::254", PRIVATE),  # ULA: AWS's IPv6 metadata address
        ("127.0.0.1", LOOPBACK),
        ("127.8.9.10", LOOPBACK),
        ("::1", LOOPBACK),
        ("0.0.0.0", LOOPBACK),  # reaches the machine itself
        ("::", LOOPBACK),
        ("169.254.169.254", LINK_LOCAL),
        ("fe80::1", LINK_LOCAL),
        ("fe80::1%eth0", LINK_LOCAL),
        ("::ffff:169.254.169.254", LINK_LOCAL),  # IPv4-mapped: judged as its IPv4 address
        ("::ffff:127.0.0.1", LOOPBACK),
    ],
)
def test_address_classes(address: str, kind: int) -> None:
    assert address_class(address) == kind


def test_link_local_is_refused_whatever_name_leads_there_and_whatever_is_allowed() -> None:
    for allow in (False, True):
        guard = AddressGuard(["127.0.0.1"], allow_private=allow)
        assert guard.admit("127.0.0.1", ["127.0.0.1"]) == ["127.0.0.1"]
        with pytest.raises(BlockedAddress) as caught:
            guard.admit("169.254.169.254", ["169.254.169.254"])
        assert caught.value.address == "169.254.169.254"
        assert caught.value.kind == "blocked_address"
        with pytest.raises(BlockedAddress, match=r"metadata\.test \(169\.254\.169\.254\)"):
            guard.admit("metadata.test", ["169.254.169.254"])  # a DNS name resolving there
    # A name resolving to both: only the allowed address is connected to.
    guard = AddressGuard(["127.0.0.1"], allow_private=False)
    guard.admit("127.0.0.1", ["127.0.0.1"])
    assert guard.admit("both.test", ["169.254.169.254", "127.0.0.1"]) == ["127.0.0.1"]


def test_more_private_than_the_start_is_refused_unless_allowed() -> None:
    guard = AddressGuard(["site.test"], allow_private=False)
    assert guard.admit("site.test", ["93.184.215.14"]) == ["93.184.215.14"]  # the start: public
    assert guard.admit("cdn.test", ["151.101.1.1"]) == ["151.101.1.1"]
    for host, address in [("intranet.test", "10.0.0.5"), ("localhost", "127.0.0.1")]:
        with pytest.raises(BlockedAddress, match="more private than the start URLs"):
            guard.admit(host, [address])
    allowed = AddressGuard(["site.test"], allow_private=True)
    allowed.admit("site.test", ["93.184.215.14"])
    assert allowed.admit("localhost", ["127.0.0.1"]) == ["127.0.0.1"]
    # From a private start, private and public are fine, loopback is not.
    guard = AddressGuard(["intranet.test"], allow_private=False)
    guard.admit("intranet.test", ["10.0.0.5"])
    assert guard.admit("wiki.test", ["10.0.0.9"]) == ["10.0.0.9"]
    assert guard.admit("cdn.test", ["151.101.1.1"]) == ["151.101.1.1"]
    with pytest.raises(BlockedAddress):
        guard.admit("localhost", ["127.0.0.1"])


def test_a_start_is_connected_to_whatever_it_resolves_to_the_first_time_only() -> None:
    guard = AddressGuard(["device.test", "169.254.7.7"], allow_private=False)
    assert guard.admit("device.test", ["169.254.1.5"]) == ["169.254.1.5"]  # given: allowed
    assert guard.admit("169.254.7.7", ["169.254.7.7"]) == ["169.254.7.7"]
    assert guard.admit("device.test", ["169.254.1.5"]) == ["169.254.1.5"]  # its own address
    with pytest.raises(BlockedAddress):  # rebound after its DNS entry expired
        guard.admit("device.test", ["169.254.169.254"])
    with pytest.raises(BlockedAddress):
        guard.admit("other.test", ["169.254.169.254"])


def test_public_only_holds_the_start_hosts_too_at_every_resolution() -> None:
    """A server's API callers: the start URL's name was public when the crawl was asked for;
    rebound since (DNS rebinding), it is refused like any other host."""
    guard = AddressGuard(["site.test"], allow_private=True, public_only=True)
    assert guard.unsettled("localhost", ["127.0.0.1"]) == []  # nothing to settle first
    assert guard.admit("site.test", ["93.184.215.14"]) == ["93.184.215.14"]
    with pytest.raises(BlockedAddress, match="public ones only"):
        guard.admit("site.test", ["169.254.169.254"])  # the same name, rebound
    assert guard.admit("site.test", ["10.0.0.5", "93.184.215.14"]) == ["93.184.215.14"]
    for host, address in [("intranet.test", "10.0.0.5"), ("localhost", "127.0.0.1")]:
        with pytest.raises(BlockedAddress, match="public ones only"):
            guard.admit(host, [address])
    first = AddressGuard(["device.test"], allow_private=False, public_only=True)
    with pytest.raises(BlockedAddress):  # a start resolving privately the first time: too
        first.admit("device.test", ["192.168.1.5"])


def test_the_start_hosts_are_resolved_before_a_refusal() -> None:
    """A refusal must not depend on which host was connected to first: the start hosts not
    resolved yet are named, to be resolved (and settled) before deciding."""
    guard = AddressGuard(["public.test", "local.test"], allow_private=False)
    guard.admit("public.test", ["93.184.215.14"])
    assert guard.unsettled("cdn.test", ["151.101.1.1"]) == []  # nothing would be refused
    assert guard.unsettled("localhost", ["127.0.0.1"]) == ["local.test"]
    guard.settle("local.test", ["127.0.0.1"])
    assert guard.unsettled("localhost", ["127.0.0.1"]) == []
    assert guard.admit("localhost", ["127.0.0.1"]) == ["127.0.0.1"]  # loopback like a start


async def test_the_resolver_refuses_a_name_resolving_more_privately_than_the_start(
    serve: ServeFn,
) -> None:
    """The class rule on the address the real resolver gives: ``localhost`` is loopback, the
    start URL (a public address literal, never connected to here) public."""

    async def local_page(request: web.Request) -> web.Response:
        return html("<h1>local</h1>")

    app = web.Application()
    app.router.add_get("/", local_page)
    server = serve(app)
    local = f"http://localhost:{server.port}/"
    for allow in (False, True):
        config = CrawlConfig(base_url="http://93.184.215.14/", allow_private_redirects=allow)
        async with Fetcher(config) as fetcher:
            if not allow:
                with pytest.raises(BlockedAddress) as caught:
                    await fetcher.get(local)
                assert caught.value.url == local
                assert caught.value.address == "127.0.0.1"
                with pytest.raises(BlockedAddress):  # an address literal: checked too
                    await fetcher.get(f"http://127.0.0.1:{server.port}/")
                assert server.traffic.paths == []
            else:
                assert (await fetcher.get(local)).status == 200
    assert server.traffic.paths == ["/"]


async def test_public_only_refuses_the_start_url_at_connect_time(serve: ServeFn) -> None:
    """The start URL itself (``localhost``: loopback through the real resolver) is refused
    when the crawl connects, not only when it was asked for."""
    server = serve(web.Application())
    config = CrawlConfig(base_url=f"http://localhost:{server.port}/", public_only=True)
    async with Fetcher(config) as fetcher:
        with pytest.raises(BlockedAddress, match="public ones only"):
            await fetcher.get(config.base_url)
    assert server.traffic.paths == []


def metadata_app() -> web.Application:
    """``/`` redirects to the metadata address; ``/page`` links to it (also by its decimal
    form) and to ``/away``, which redirects there; robots.txt redirects there too."""
    app = web.Application()

    async def start(request: web.Request) -> web.Response:
        raise web.HTTPFound(METADATA)

    async def page(request: web.Request) -> web.Response:
        hrefs = [METADATA, "http://2852039166/x", "/away"]
        return html("".join(f'<a href="{href}">link</a>' for href in hrefs))

    async def away(request: web.Request) -> web.Response:
        raise web.HTTPFound("http://2852039166/latest/meta-data/iam/")  # 169.254.169.254

    async def robots(request: web.Request) -> web.Response:
        raise web.HTTPFound("http://169.254.169.254/robots.txt")

    app.router.add_get("/", start)
    app.router.add_get("/page", page)
    app.router.add_get("/away", away)
    app.router.add_get("/robots.txt", robots)
    return app


async def test_a_start_url_redirecting_to_the_metadata_address_is_not_followed(
    serve: ServeFn,
) -> None:
    server = serve(metadata_app())
    config = CrawlConfig(
        base_url=server.url + "/",
        start_urls=(server.url + "/", server.url + "/page"),
        politeness=Politeness(retries=0),
        limits=Limits(max_depth=1),
        timeouts=Timeouts(total=5.0, connect=3.0),
    )
    started = time.monotonic()
    async with AsyncCrawler(config.base_url, config=config) as crawler:
        found = await crawler.crawl()
    pages = {page["url"]: page for page in found.values()}
    assert time.monotonic() - started < 3.0  # no connection was tried (none could time out)
    start = pages[server.url + "/"]
    assert start["error_kind"] == "blocked_address"
    assert "169.254.169.254" in start["error"]
    assert start["redirects"] == [(server.url + "/", 302)]
    assert start["final_url"] == METADATA
    # robots.txt's redirect there went nowhere: "unavailable", everything allowed.
    assert pages[server.url + "/page"]["status"] == 200
    # The scope stayed the server's: a page's redirect there leaves it.
    assert pages[server.url + "/away"]["error_kind"] == "redirect_out_of_scope"
    assert not any(url.startswith("http://169.254.") for url in pages if url != METADATA)
    assert all(page["status"] is None for url, page in pages.items() if "169.254" in url)
    assert server.traffic.paths.count("/robots.txt") == 1
    # Where it was refused is no new scope (whose robots.txt and sitemaps would be read).
    assert "169.254" not in crawler.stats.scope
    assert not any("169.254" in note for note in crawler.stats.notes)


def test_cli_refuses_the_metadata_address_even_with_allow_private_redirects(
    serve: ServeFn, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = serve(metadata_app())
    out = tmp_path / "out.jsonl"
    for extra in ([], ["--allow-private-redirects"]):
        argv = ["crawl", server.url + "/", "--no-state", "--retries", "0", "-o", str(out)]
        assert main([*argv, *extra]) == 1
        err = capsys.readouterr().err
        assert "not connected to 169.254.169.254: a link-local address" in err
        (record,) = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
        assert record["error_kind"] == "blocked_address"


def test_the_workers_of_a_redis_crawl_take_allow_private_redirects_from_it() -> None:
    from sitecrawl.frontier import decode, encode

    for allow in (False, True):
        config = CrawlConfig(base_url="http://intranet.test/", allow_private_redirects=allow)
        assert decode(encode(config)).allow_private_redirects is allow
