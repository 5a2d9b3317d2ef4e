#!/usr/bin/env python3
"""Scrapy reference implementation for the sitecrawl benchmark.

This is the REFERENCE: a stock Scrapy (>= 2.13) CrawlSpider that follows every
same-site link (``LinkExtractor(allow_domains=["127.0.0.1:8088"])``, i.e. the
start URL's host:port) and emits, per page, the fields sitecrawl is expected to
produce:

    url, status, title, h1, first_paragraph (first <p> inside <main>, else the
    first <p>), meta_description, canonical, outgoing_links (absolute http(s)
    <a href> targets, fragment stripped, de-duplicated, document order),
    image_urls (absolute <img src> URLs, de-duplicated, document order)

(the field names of sitecrawl's ``Page`` record).

Text fields are whitespace-normalised; missing ones are null.  Settings are
Scrapy defaults except for what the benchmark needs (concurrency, no robots.txt,
no throttling/delay, quiet logging, no telnet console / remote control).

    python bench/scrapy_spider.py http://127.0.0.1:8088/ -c 16 -o out.jsonl
"""

from __future__ import annotations

import argparse
from collections.abc import AsyncIterator, Iterator
from typing import Any
from urllib.parse import urldefrag, urlsplit

from parsel import Selector, SelectorList
from scrapy.crawler import CrawlerProcess
from scrapy.http import Request, Response
from scrapy.linkextractors import LinkExtractor
from scrapy.spiders import CrawlSpider, Rule


def clean_text(node: Selector | None) -> str | None:
    """Whitespace-normalised string value of ``node``; None if absent or empty."""
    if node is None:
        return None
    text = " ".join(node.xpath("string()").get("").split())
    return text or None


def first_or_none(nodes: SelectorList[Selector]) -> Selector | None:
    return nodes[0] if nodes else None


class BenchSpider(CrawlSpider):
    name = "bench"

    def __init__(self, start_url: str, **kwargs: Any) -> None:
        parts = urlsplit(start_url)
        self.start_urls = [start_url]
        # OffsiteMiddleware matches the bare host; LinkExtractor.allow_domains
        # compares against the netloc, so it needs the port ("127.0.0.1:8088").
        self.allowed_domains = [parts.hostname or "127.0.0.1"]
        self.rules = (
            Rule(LinkExtractor(allow_domains=[parts.netloc]), callback="parse_page", follow=True),
        )
        super().__init__(**kwargs)  # compiles self.rules

    async def start(self) -> AsyncIterator[Request]:
        # The default start request has dont_filter=True, so the dupefilter would
        # not record it and the site's links back to "/" would fetch it again.
        for url in self.start_urls:
            yield Request(url)

    def parse_start_url(self, response: Response, **kwargs: Any) -> Iterator[dict[str, Any]]:
        yield from self.parse_page(response)

    def parse_page(self, response: Response) -> Iterator[dict[str, Any]]:
        hrefs = (
            urldefrag(response.urljoin(h.strip())).url for h in response.xpath("//a/@href").getall()
        )
        links = [url for url in hrefs if url.startswith(("http://", "https://"))]
        images = [response.urljoin(src.strip()) for src in response.xpath("//img/@src").getall()]
        main_p, any_p = response.xpath("//main//p"), response.xpath("//p")
        canonical = response.xpath('//link[@rel="canonical"]/@href').get()
        yield {
            "url": response.url,
            "status": response.status,
            "title": clean_text(first_or_none(response.xpath("//title"))),
            "h1": clean_text(first_or_none(response.xpath("//h1"))),
            "first_paragraph": clean_text(first_or_none(main_p) or first_or_none(any_p)),
            "meta_description": response.xpath('//meta[@name="description"]/@content').get(),
            "canonical": response.urljoin(canonical) if canonical else None,
            "outgoing_links": list(dict.fromkeys(links)),  # de-duplicated, in order
            "image_urls": list(dict.fromkeys(images)),
        }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("url", help="start URL, e.g. http://127.0.0.1:8088/")
    ap.add_argument("-c", "--concurrency", type=int, default=16)
    ap.add_argument("-o", "--output", required=True, help="JSONL feed file (overwritten)")
    ap.add_argument(
        "-n", "--max-pages", type=int, default=0, help="stop after N pages (0 = no limit)"
    )
    args = ap.parse_args()

    process = CrawlerProcess(
        settings={
            "CONCURRENT_REQUESTS": args.concurrency,
            "CONCURRENT_REQUESTS_PER_DOMAIN": args.concurrency,
            "ROBOTSTXT_OBEY": False,
            "LOG_LEVEL": "WARNING",
            "TELNETCONSOLE_ENABLED": False,
            "REMOTE_CONTROL_ENABLED": False,
            "AUTOTHROTTLE_ENABLED": False,
            "DOWNLOAD_DELAY": 0,
            "CLOSESPIDER_PAGECOUNT": args.max_pages,
            "FEEDS": {args.output: {"format": "jsonlines", "encoding": "utf-8", "overwrite": True}},
        }
    )
    process.crawl(BenchSpider, start_url=args.url)
    process.start()


if __name__ == "__main__":
    main()
