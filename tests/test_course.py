"""The course's API on AsyncCrawler (``_course.py``): its attributes and methods, and how
its keywords and a ``config=`` combine."""

from __future__ import annotations

import asyncio
import os
from typing import Any
from urllib.parse import urlsplit

import pytest

from servers import ServerThread, expected_paths
from sitecrawl import (
    AsyncCrawler,
    ConfigError,
    CrawlConfig,
    HTTPStatusError,
    Limits,
    Page,
    normalize_url,
)
from sitecrawl.parse import Parser


def paths_of(page_data: dict[str, dict[str, object]]) -> set[str]:
    return {urlsplit(str(page["url"])).path or "/" for page in page_data.values()}


async def test_async_crawler_api(site: ServerThread) -> None:
    async with AsyncCrawler(site.url + "/", max_concurrency=4, max_pages=500) as crawler:
        assert crawler.base_url == site.url + "/"
        assert crawler.base_domain == f"127.0.0.1:{site.port}"
        assert crawler.max_concurrency == 4
        assert crawler.session is not None and not crawler.session.closed
        assert isinstance(crawler.lock, asyncio.Lock)
        assert isinstance(crawler.semaphore, asyncio.Semaphore)
        assert await crawler.add_page_visit("example.com/x") is True
        assert await crawler.add_page_visit("example.com/x") is False
        assert "<h1>Page 3</h1>" in await crawler.get_html(site.url + "/p/3")
        with pytest.raises(HTTPStatusError) as info:
            await crawler.get_html(site.url + "/p/999")
        assert info.value.status == 404
        page_data = await crawler.crawl()
        session = crawler.session
    assert session.closed
    assert crawler.session is None
    assert paths_of(page_data) == expected_paths(60)


async def test_crawl_page_visits_once_and_queues_links(site: ServerThread) -> None:
    async with AsyncCrawler(site.url) as crawler:
        page = await crawler.crawl_page(site.url + "/p/2")
        assert page is not None and page.title == "Title 2"
        assert await crawler.crawl_page(site.url + "/p/2/") is None
        stats = await crawler.frontier.stats()
        assert stats.queued == 4  # /, /p/5, /p/6, /p/14
        assert list(crawler.page_data) == [normalize_url(site.url + "/p/2")]


@pytest.mark.parametrize(
    "keyword",
    [
        {"max_concurrency": 64},
        {"max_pages": 10},
        {"max_depth": 2},
        {"subdomains": True},
        {"user_agent": "Bot/1"},
        {"timeout": 5.0},
        {"processes": 2},
        {"link_details": True},
        {"link_details": False},
    ],
)
async def test_a_keyword_beside_config_is_a_config_error(keyword: dict[str, Any]) -> None:
    config = CrawlConfig(base_url="http://b.test/")
    with pytest.raises(ConfigError, match=f"set {next(iter(keyword))} in the config"):
        AsyncCrawler("http://b.test/", config=config, **keyword)


async def test_another_base_url_beside_config_is_a_config_error() -> None:
    """Once, this crawled b at concurrency 8, silently."""
    config = CrawlConfig(base_url="http://b.test")
    with pytest.raises(ConfigError, match=r"not config\.base_url"):
        AsyncCrawler("http://a.test", config=config)
    with pytest.raises(ConfigError, match="max_concurrency"):
        AsyncCrawler("http://a.test", config=config, max_concurrency=64)


async def test_config_alone_is_the_crawl_config() -> None:
    config = CrawlConfig(base_url="http://b.test", limits=Limits(max_concurrency=64))
    crawler = AsyncCrawler("http://b.test/", config=config)  # the same URL, written otherwise
    assert crawler.max_concurrency == 64 and crawler.config.limits is config.limits
    assert crawler.base_url == "http://b.test/"
    keywords = AsyncCrawler("http://a.test", 3, 5, max_depth=1, timeout=2.0, link_details=True)
    assert keywords.config.limits == Limits(max_concurrency=3, max_pages=5, max_depth=1)
    assert keywords.config.timeouts.total == 2.0 and keywords.config.link_details is True


async def test_link_details_is_one_config_field(site: ServerThread) -> None:
    """``CrawlConfig.link_details`` fills every page's links; by default an in-memory crawl
    leaves them out."""
    found: dict[bool | None, dict[str, list[Any]]] = {}
    for details in (True, None):
        pages: dict[str, list[Any]] = {}

        def keep(page: Page, pages: dict[str, list[Any]] = pages) -> None:
            pages[page.url] = page.links

        config = CrawlConfig(
            base_url=site.url,
            limits=Limits(max_concurrency=2, max_pages=12),
            link_details=details,
        )
        async with AsyncCrawler(site.url, config=config, on_page=keep) as crawler:
            await crawler.crawl()
        found[details] = pages
    assert len(found[True]) == 12
    assert all(links for links in found[True].values())
    assert all(any(link[3] == "a" for link in links) for links in found[True].values())
    assert not any(found[None].values())


@pytest.mark.parametrize("details", [True, False])
async def test_a_parser_process_is_told_link_details_once(details: bool) -> None:
    """The flag goes to a parser process when it starts, not with every page."""
    async with Parser(2, link_details=details) as parser:
        [child] = parser._children
        while not child.ready:
            await asyncio.sleep(0.01)
        data = await parser.parse(b"<a href='/x'>X</a>", None, "http://site.test/")
        assert not child.pending  # answered by the child
    assert data.outgoing_links == ["http://site.test/x"]
    assert data.links == ([("http://site.test/x", "X", None, "a")] if details else [])


async def test_a_parser_process_is_out_of_reach_of_the_terminals_ctrl_c() -> None:
    """Ctrl-C goes to the terminal's foreground process group: the crawler's, not its parser
    processes' (a child still importing would die of it, with a traceback)."""
    async with Parser(2) as parser:
        [child] = parser._children
        assert os.getpgid(child.process.pid) != os.getpgid(0)
