"""How many pages may wait for a parser process before the event loop parses one itself."""

from __future__ import annotations

from sitecrawl import AsyncCrawler
from sitecrawl._crawler import parse_backlog


def test_the_backlog_is_12_or_three_quarters_of_the_workers() -> None:
    assert [parse_backlog(c) for c in (1, 8, 16, 17, 64, 256)] == [12, 12, 12, 12, 48, 192]


def test_the_crawler_gives_its_parser_the_backlog_of_its_workers() -> None:
    """At ``-c 64`` a backlog of 12 made the event loop parse most pages itself while its
    parser process idled (the loop, busy parsing, read the child's answers late)."""
    for workers, backlog in ((16, 12), (64, 48), (256, 192)):
        crawler = AsyncCrawler("http://site.test/", max_concurrency=workers, processes=2)
        assert crawler._parser.backlog == backlog
