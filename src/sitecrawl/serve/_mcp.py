"""The MCP tools for agents, on the official MCP SDK (:class:`mcp.server.mcpserver.MCPServer`):
``crawl``, ``markdown``, ``check``, ``extract`` and ``diff``. Each turns its arguments into a
:class:`~sitecrawl.CrawlConfig` and calls the library (:mod:`._mcp_work`): the crawl driver,
the link checker of ``sitecrawl check``, the diff of ``sitecrawl diff``. Every result is
bounded (the caps are in each tool's description) and carries structured content, described
by the tool's output schema. A failure (a bad URL, a host not allowed, a page that could not
be fetched) is a tool error with one line saying why.

``sitecrawl mcp`` serves them on stdio; :func:`~sitecrawl.serve.mcp_asgi_app` over
streamable HTTP (the server's ``/mcp``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, Literal

from .._exceptions import MissingExtra

try:
    from mcp.server.mcpserver import MCPServer
    from mcp.types import ToolAnnotations
    from pydantic import Field
except ImportError as exc:  # the serve extra: its one line, not a traceback
    raise MissingExtra(
        f"the MCP tools need the mcp package: pip install 'sitecrawl[serve]' ({exc.name})",
        extra="serve",
    ) from None

from .._version import __version__
from . import _mcp_work as work
from ._mcp_work import (
    CheckResult,
    CrawlResult,
    DiffResult,
    ExtractResult,
    MarkdownResult,
)

if TYPE_CHECKING:
    from ._policy import TargetGuard

_READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=True)

Url = Annotated[str, Field(description="an http:// or https:// URL")]
Scope = Literal["site", "prefix", "subdomains", "domain"]


def mcp_server(
    *,
    root: str | None = None,
    url_allowed: Callable[[str], bool] | None = None,
    guard: TargetGuard | None = None,
) -> MCPServer[Any]:
    """The MCP server with sitecrawl's tools. ``root``: the directory the ``diff`` tool's
    state files must be in (relative paths are read from it; the server passes its data
    directory); None lets it read any path (stdio: the user's own machine).
    ``url_allowed(url)``: False refuses a URL (the server's ``--allow-hosts``);
    ``guard(url, options)`` refuses it too when it answers (the server's private targets)."""
    reach = work.Reach(root=root, url_allowed=url_allowed, guard=guard)
    server: MCPServer[Any] = MCPServer(
        "sitecrawl",
        version=__version__,
        instructions="Crawl web sites politely (robots.txt obeyed): list pages, read a page as"
        " Markdown, find broken links, extract values, compare two crawls.",
    )

    @server.tool(
        description=f"Crawl a site from url (robots.txt obeyed, polite pace) and list its pages:"
        f" url, status, title, depth, error kind; with markdown, each HTML page's main content"
        f" too. Caps: max_pages at most {work.MAX_CRAWL_PAGES} (default"
        f" {work.DEFAULT_PAGES}); {work.MAX_LISTED} pages listed; Markdown cut at"
        f" {work.MAX_PAGE_MARKDOWN} characters a page and {work.MAX_TOTAL_MARKDOWN} in all;"
        f" the crawl stops taking pages after {work.MAX_SECONDS:g} seconds.",
        annotations=_READ_ONLY,
    )
    async def crawl(
        url: Url,
        max_pages: Annotated[int, Field(ge=1, le=work.MAX_CRAWL_PAGES)] = work.DEFAULT_PAGES,
        scope: Annotated[
            Scope | None,
            Field(description="site (the host), prefix (its folder), subdomains, domain"),
        ] = None,
        include: Annotated[list[str] | None, Field(description="follow only URLs matching")] = None,
        exclude: Annotated[
            list[str] | None, Field(description="never follow URLs matching")
        ] = None,
        markdown: bool = False,
    ) -> CrawlResult:
        return await work.crawl(
            reach, url, max_pages, scope, include or [], exclude or [], markdown=markdown
        )

    @server.tool(
        description="Fetch one page politely (robots.txt obeyed) and give its content as"
        f" Markdown: scope main (the main content: navigation, header, footer dropped) or"
        f" full. Capped at {work.MAX_MARKDOWN} characters (truncated says so).",
        annotations=_READ_ONLY,
    )
    async def markdown(url: Url, scope: Literal["main", "full"] = "main") -> MarkdownResult:
        return await work.markdown(reach, url, scope)

    @server.tool(
        description="Crawl a site and check its links: the broken ones (HTTP 4xx/5xx or no"
        " answer), each with the pages linking to it. The site's images, scripts and styles"
        " are checked too; external links with external=true. Caps: max_pages at most"
        f" {work.MAX_CRAWL_PAGES} (default {work.DEFAULT_CHECK_PAGES}); {work.MAX_BROKEN}"
        f" broken links listed, {work.MAX_REFERRERS} referrers each.",
        annotations=_READ_ONLY,
    )
    async def check(
        url: Url,
        max_pages: Annotated[int, Field(ge=1, le=work.MAX_CRAWL_PAGES)] = work.DEFAULT_CHECK_PAGES,
        external: bool = False,
    ) -> CheckResult:
        return await work.check(reach, url, max_pages, external=external)

    @server.tool(
        description="Fetch one page politely and extract values with rules {name: spec}:"
        " spec is css:SELECTOR[@ATTR], xpath:EXPR, regex:PATTERN or jsonld:JMESPATH,"
        f" optionally after all:, count: or exists:. At most {work.MAX_RULES} rules; each"
        f" value cut at {work.MAX_VALUE} characters (a list at {work.MAX_ITEMS} items).",
        annotations=_READ_ONLY,
    )
    async def extract(
        url: Url,
        rules: Annotated[dict[str, str], Field(description="name -> spec")],
    ) -> ExtractResult:
        return await work.extract(reach, url, rules)

    @server.tool(
        description="What changed between two crawls kept in sitecrawl state files: state"
        " alone compares its last two crawls (or from_crawl and to_crawl of it); state and"
        " other compare the current crawls of two files. Changes most severe first (url,"
        f" kind, field, old, new); at most {work.MAX_CHANGES} listed, counts cover all.",
        annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False),
    )
    async def diff(
        state: Annotated[str, Field(description="a state file (.db) of sitecrawl crawl")],
        other: Annotated[str | None, Field(description="a second state file")] = None,
        from_crawl: int | None = None,
        to_crawl: int | None = None,
    ) -> DiffResult:
        return await work.diff(reach, state, other, from_crawl, to_crawl)

    return server
