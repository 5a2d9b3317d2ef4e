"""The real ``sitecrawl serve`` server's wiring end to end: a subprocess with a token and a
``--data`` directory, over loopback sites. Its monitors (``/api/monitors``) run and post
their webhook, its MCP tools answer the SDK's client at ``/mcp/`` behind the same token,
``--allow-hosts`` holds for both, and ``--no-allow-private-targets`` refuses loopback
targets on every road in (crawls, monitors, MCP)."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
from aiohttp import web
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from conftest import ServeFn
from serve_server import Server
from servers import html
from sitecrawl.serve import ServeConfig
from sitecrawl.serve._policy import private_target, refused_target

TOKEN = "wiring-token"
SECRET = "hook-secret"


def changing_site(version: dict[str, str]) -> web.Application:
    """``/`` links to ``/article``; ``/article``'s title is ``version["title"]``."""

    async def home(request: web.Request) -> web.Response:
        return html("<h1>Home</h1><a href='/article'>article</a>", title="Home")

    async def article(request: web.Request) -> web.Response:
        body = "<main><article><h1>The article</h1><p>Wiring paragraph, long enough to be"
        body += " the main content of this page.</p></article></main><footer>foot</footer>"
        return html(body, title=version["title"])

    app = web.Application()
    app.router.add_get("/", home)
    app.router.add_get("/article", article)
    return app


def receiver(posts: list[tuple[dict[str, str], bytes]]) -> web.Application:
    async def hook(request: web.Request) -> web.Response:
        posts.append((dict(request.headers), await request.read()))
        return web.Response(status=204)

    app = web.Application()
    app.router.add_post("/hook", hook)
    return app


@asynccontextmanager
async def mcp_client(server: Server) -> AsyncIterator[Client]:
    """The MCP SDK's client on the server's ``/mcp/``, with its token."""
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60)
    async with http, Client(streamable_http_client(server.url + "/mcp/", http_client=http)) as c:
        yield c


def until(found: Callable[[], Any], timeout: float = 90) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = found()
        if value:
            return value
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


async def test_monitors_and_mcp_are_wired_into_the_server(serve: ServeFn, tmp_path: Path) -> None:
    version = {"title": "First title"}
    site = serve(changing_site(version))
    posts: list[tuple[dict[str, str], bytes]] = []
    hook = serve(receiver(posts))
    server = Server(tmp_path / "data", token=TOKEN).start()
    try:
        # (a) A monitor, run every second: its second run sees the changed title and posts.
        body = {
            "url": site.url + "/",
            "every": 1,
            "webhook": hook.url + "/hook",
            "secret": SECRET,
            "max_pages": 5,
        }
        assert server.post("/api/monitors", body, token="wrong").status == 401
        created = server.post("/api/monitors", body)
        assert created.status == 201, created.body
        monitor = created.json()["id"]
        assert SECRET not in created.body.decode()
        assert [m["id"] for m in server.get("/api/monitors").json()] == [monitor]
        one = f"/api/monitors/{monitor}"
        until(lambda: (server.get(one).json()["last_crawl"] or 0) >= 1)
        version["title"] = "Second title"
        view = until(lambda: (lambda v: v if v["deliveries"] else None)(server.get(one).json()))
        assert view["deliveries"][0]["ok"], view
        headers, raw = posts[0]
        expected = hmac.new(SECRET.encode(), raw, hashlib.sha256).hexdigest()
        assert headers["X-Sitecrawl-Signature"] == f"sha256={expected}"
        changes = json.loads(raw)["changes"]
        assert {(c["url"], c["new"]) for c in changes if c["kind"] == "title"} == {
            (site.url + "/article", "Second title")
        }
        assert server.request("DELETE", one).status == 204

        # (b) The MCP tools at /mcp/, behind the same token.
        async with mcp_client(server) as c:
            names = {tool.name for tool in (await c.list_tools()).tools}
            assert names == {"crawl", "markdown", "check", "extract", "diff"}
            result = await c.call_tool("markdown", {"url": site.url + "/article"})
            assert result.structured_content is not None, result.content
            assert "Wiring paragraph" in result.structured_content["markdown"]
            assert "foot" not in result.structured_content["markdown"]
        assert server.post("/mcp/", {}, token="wrong").status == 401
    finally:
        server.stop()


async def test_allow_hosts_holds_for_monitors_and_mcp(serve: ServeFn, tmp_path: Path) -> None:
    site = serve(changing_site({"title": "t"}))
    server = Server(tmp_path / "data", "--allow-hosts", "*.example.test", token=TOKEN).start()
    try:
        body = {"url": site.url + "/", "every": 60}
        refused = server.post("/api/monitors", body)
        assert refused.status in (400, 403) and "url" in refused.json()["error"], refused.body
        assert server.get("/api/monitors").json() == []
        async with mcp_client(server) as c:
            for tool in ("crawl", "markdown"):
                result = await c.call_tool(tool, {"url": site.url + "/"})
                assert result.is_error, (tool, result.content)
                assert "url" in result.content[0].text  # type: ignore[union-attr]
        assert not site.traffic.paths  # nothing fetched
    finally:
        server.stop()


async def test_private_targets_refused_on_every_road_in(serve: ServeFn, tmp_path: Path) -> None:
    site = serve(changing_site({"title": "t"}))
    server = Server(tmp_path / "data", "--no-allow-private-targets", token=TOKEN).start()
    try:
        for url in (site.url + "/", f"http://localhost:{site.port}/"):
            refused = server.post("/api/crawls", {"url": url})
            assert refused.status == 400 and refused.json()["option"] == "url", refused.body
            assert "loopback" in refused.json()["error"]
        wider = server.post("/api/crawls", {"url": site.url, "allow_private_redirects": True})
        assert wider.status == 400 and wider.json()["option"] == "allow_private_redirects"
        assert server.get("/api/crawls").json() == []
        monitor = server.post("/api/monitors", {"url": site.url + "/", "every": 60})
        assert monitor.status == 400 and "'url'" in monitor.json()["error"], monitor.body
        assert server.get("/api/monitors").json() == []
        async with mcp_client(server) as c:
            for tool in ("crawl", "markdown", "check"):
                result = await c.call_tool(tool, {"url": site.url + "/"})
                assert result.is_error, (tool, result.content)
                assert "loopback" in result.content[0].text  # type: ignore[union-attr]
        assert not site.traffic.paths  # nothing fetched
    finally:
        server.stop()


async def test_a_start_url_rebound_after_its_check_is_not_connected_to(serve: ServeFn) -> None:
    """Private targets refused, a start URL whose name was public when it was checked (a
    guard that let it through) and is loopback when the crawl connects (DNS rebinding): the
    crawl connects to nothing."""
    from sitecrawl.serve._mcp_work import Reach, crawl

    site = serve(changing_site({"title": "t"}))

    async def checked_public(url: Any, options: Any) -> None:
        return None

    reach = Reach(guard=checked_public)
    result = await crawl(reach, f"http://localhost:{site.port}/", 5, None, [], [], markdown=False)
    assert [page["error_kind"] for page in result["pages"]] == ["blocked_address"], result
    assert not site.traffic.paths  # nothing fetched


@pytest.mark.parametrize(
    ("url", "kind"),
    [
        ("http://127.0.0.1:9/", "loopback"),
        ("http://[::1]/", "loopback"),
        ("http://[::ffff:127.0.0.1]/", "loopback"),
        ("http://0.0.0.0/", "loopback"),
        ("http://10.1.2.3/", "private"),
        ("https://192.168.0.1/", "private"),
        ("http://169.254.169.254/latest/meta-data/", "link-local"),
        ("http://[fe80::1]/", "link-local"),
        ("http://8.8.8.8/", None),  # an address: classified, not connected to
        ("ftp://127.0.0.1/", None),  # refused elsewhere (only http(s))
    ],
)
async def test_private_target_classes(url: str, kind: str | None) -> None:
    why = await private_target(url)
    assert (why is None) if kind is None else (why is not None and f"a {kind} address" in why)


async def test_refused_target_names_what_reaches_a_private_address() -> None:
    public = "http://8.8.8.8/"
    assert await refused_target(public, {"max_pages": 3}) is None
    for name in ("proxy", "webhook"):
        refused = await refused_target(public, {name: "http://127.0.0.1:1/"})
        assert refused is not None and refused.option == name
    refused = await refused_target(public, {"allow_private_redirects": True})
    assert refused is not None and refused.option == "allow_private_redirects"


def test_private_targets_default_to_the_bound_address() -> None:
    assert ServeConfig(data="d").private_targets  # loopback: this machine's users
    assert ServeConfig(data="d", host="::1").private_targets
    assert not ServeConfig(data="d", host="0.0.0.0", token="t").private_targets
    assert ServeConfig(
        data="d", host="0.0.0.0", token="t", allow_private_targets=True
    ).private_targets
    assert not ServeConfig(data="d", allow_private_targets=False).private_targets
