"""The MCP tools through the official SDK's own client: over stdio (``python -m sitecrawl
mcp`` spawned) and over streamable HTTP (the ASGI app mounted at ``/mcp`` in a real uvicorn
server, behind its bearer token), against real loopback sites."""

from __future__ import annotations

import shutil
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import aiohttp
import httpx2
import pytest
from aiohttp import web
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from starlette.applications import Starlette
from starlette.routing import Mount

from conftest import ServeFn
from servers import ServerThread, checkout_env, html
from sitecrawl import AsyncCrawler
from sitecrawl.serve import mcp_asgi_app
from uvicorn_server import UvicornThread

TOKEN = "mcp-test-token"
ARTICLE = (
    "<nav><a href='/'>Home</a> <a href='/article'>Article</a></nav>"
    "<main><article><h1>The article</h1><p>First paragraph of the article, long enough to"
    " be the main content of this page.</p><p>Second paragraph, with <b>bold</b> words and"
    " a <a href='/missing'>broken link</a>.</p><span class='price'>9.99</span></article></main>"
    "<footer>footer text</footer>"
)


def agent_site(version: dict[str, str]) -> web.Application:
    """``/`` links to ``/article`` and ``/other``; ``/article`` links to ``/missing`` (404);
    ``/other``'s title is ``version["other"]``."""

    async def home(request: web.Request) -> web.Response:
        links = "<a href='/article'>article</a> <a href='/other'>other</a>"
        return html(f"<h1>Home</h1>{links}", title="Home")

    async def article(request: web.Request) -> web.Response:
        return html(ARTICLE, title="The article")

    async def other(request: web.Request) -> web.Response:
        return html("<p>other</p>", title=version.get("other", "Other"))

    app = web.Application()
    app.router.add_get("/", home)
    app.router.add_get("/article", article)
    app.router.add_get("/other", other)
    return app


async def two_crawls(url: str, path: Path, version: dict[str, str]) -> None:
    """A state file holding two crawls of the site, ``/other``'s title changed between."""
    for title in ("Other", "Other, changed"):
        version["other"] = title
        async with AsyncCrawler(url, state=path) as crawler:
            await crawler.run()
    shutil.copy(path, path.with_name("copy.db"))


async def exercise(client: Client, site: ServerThread, state: str) -> None:
    """Every tool, through ``client``: structured content that says what the site holds."""
    tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(tools) == {"crawl", "markdown", "check", "extract", "diff"}
    for tool in tools.values():
        assert tool.output_schema is not None and tool.description
    assert "at most 500" in (tools["crawl"].description or "")

    result = await client.call_tool("crawl", {"url": site.url + "/", "max_pages": 10})
    assert not result.is_error, result.content
    crawl = result.structured_content
    assert crawl is not None
    pages = {page["url"].removeprefix(site.url): page for page in crawl["pages"]}
    assert pages["/article"]["title"] == "The article" and pages["/article"]["status"] == 200
    assert pages["/missing"]["status"] == 404 and crawl["pages_crawled"] == len(pages)
    assert not crawl["truncated"]

    result = await client.call_tool(
        "crawl", {"url": site.url + "/", "max_pages": 10, "exclude": ["/other"]}
    )
    assert result.structured_content is not None
    assert all("/other" not in page["url"] for page in result.structured_content["pages"])

    result = await client.call_tool(
        "crawl", {"url": site.url + "/article", "max_pages": 1, "markdown": True}
    )
    assert result.structured_content is not None
    (page,) = result.structured_content["pages"]
    assert "First paragraph of the article" in page["markdown"]

    result = await client.call_tool("markdown", {"url": site.url + "/article"})
    assert result.structured_content is not None, result.content
    text = result.structured_content["markdown"]
    assert "First paragraph of the article" in text and "Second paragraph" in text
    assert "footer text" not in text  # the main content only

    result = await client.call_tool("check", {"url": site.url + "/"})
    check = result.structured_content
    assert check is not None, result.content
    assert [link["url"] for link in check["broken"]] == [site.url + "/missing"]
    broken = check["broken"][0]
    assert broken["status"] == 404
    assert [ref["url"] for ref in broken["referrers"]] == [site.url + "/article"]
    assert broken["referrers"][0]["anchor_text"] == "broken link"

    result = await client.call_tool(
        "extract",
        {"url": site.url + "/article", "rules": {"price": "css:.price", "h1": "css:h1"}},
    )
    assert result.structured_content is not None, result.content
    assert result.structured_content["values"] == {"price": "9.99", "h1": "The article"}

    result = await client.call_tool("diff", {"state": state})
    diff = result.structured_content
    assert diff is not None, result.content
    titles = [c for c in diff["changes"] if c["kind"] == "title"]
    assert [(c["url"], c["old"], c["new"]) for c in titles] == [
        (site.url + "/other", "Other", "Other, changed")
    ]
    assert diff["since"] == "crawl 1" and diff["until"] == "crawl 2"
    assert diff["counts"]["title"] == 1 and diff["changes_total"] == len(diff["changes"])
    result = await client.call_tool("diff", {"state": state, "other": "copy.db"})
    assert result.structured_content is not None, result.content
    assert result.structured_content["changes_total"] == 0  # a crawl against itself

    # Failures are tool errors of one line.
    result = await client.call_tool("markdown", {"url": site.url + "/missing"})
    assert result.is_error and "404" in result.content[0].text  # type: ignore[union-attr]
    result = await client.call_tool("crawl", {"url": "ftp://example.com/"})
    assert result.is_error
    result = await client.call_tool("diff", {"state": "../outside.db"})
    assert result.is_error
    result = await client.call_tool("extract", {"url": site.url + "/", "rules": {"x": "nope:"}})
    assert result.is_error and "rules" in result.content[0].text  # type: ignore[union-attr]


async def test_tools_over_stdio(serve: ServeFn, tmp_path: Path) -> None:
    version: dict[str, str] = {}
    site = serve(agent_site(version))
    await two_crawls(site.url + "/", tmp_path / "site.db", version)
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "sitecrawl", "mcp", "--root", str(tmp_path)],
        env=checkout_env(),
    )
    async with Client(server, read_timeout_seconds=60) as client:
        await exercise(client, site, "site.db")


@asynccontextmanager
async def mcp_over_http(token: str | None, root: Path) -> AsyncIterator[UvicornThread]:
    mcp = mcp_asgi_app(token=token, root=str(root))

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with mcp.lifespan():
            yield

    server = UvicornThread(Starlette(routes=[Mount("/mcp", app=mcp)], lifespan=lifespan))
    server.start()
    try:
        yield server
    finally:
        server.stop()


async def test_tools_over_streamable_http_with_the_token(serve: ServeFn, tmp_path: Path) -> None:
    version: dict[str, str] = {}
    site = serve(agent_site(version))
    await two_crawls(site.url + "/", tmp_path / "site.db", version)
    async with mcp_over_http(TOKEN, tmp_path) as server:
        url = server.url + "/mcp"
        async with aiohttp.ClientSession() as session:
            for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}):
                async with session.post(url, json={}, headers=headers) as response:
                    assert response.status == 401
                    assert response.headers["WWW-Authenticate"] == "Bearer"
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60)
        async with http, Client(streamable_http_client(url, http_client=http)) as client:
            await exercise(client, site, "site.db")


async def test_without_a_token_only_loopback_names_are_served(tmp_path: Path) -> None:
    async with mcp_over_http(None, tmp_path) as server:
        async with aiohttp.ClientSession() as session:
            rebound = {"Host": "attacker.example", "Content-Type": "application/json"}
            body = b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}'
            async with session.post(server.url + "/mcp/", data=body, headers=rebound) as response:
                assert response.status in (403, 421)
        async with Client(server.url + "/mcp/") as client:
            assert {tool.name for tool in (await client.list_tools()).tools} >= {"crawl"}


def test_mcp_command_without_the_extra_says_how_to_install(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    import subprocess

    blocker = tmp_path / "mcp.py"
    blocker.write_text("raise ImportError('no mcp here')\n")
    env = checkout_env()
    env["PYTHONPATH"] = f"{tmp_path}:{env['PYTHONPATH']}"
    done = subprocess.run(
        [sys.executable, "-m", "sitecrawl", "mcp"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode != 0
    assert done.stderr.strip().splitlines() == [
        "sitecrawl: error: sitecrawl mcp needs the serve extra: pip install 'sitecrawl[serve]'"
    ]
