"""``--markdown`` (library: ``markdown=True``): each HTML page's main content as Markdown, made
in the parser processes, in the record as ``markdown``. Crawled from a real blog on loopback
(:mod:`markdown_site`): articles inside navigation, banners, a sidebar, a share bar, an ad
and a footer."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import ServeFn
from markdown_site import BOILERPLATE, CONTENT_WORDS, Blog
from sitecrawl import AsyncCrawler, CrawlConfig, crawl_site_async
from sitecrawl._cli import main


def jsonl(path: Path) -> dict[str, dict[str, Any]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return {row["url"]: row for row in rows}


def assert_article(markdown: str, url: str) -> None:
    """The article's Markdown: its content, headings, absolute links, the fenced code with
    its language, the table and the quote; none of the boilerplate."""
    assert CONTENT_WORDS in markdown
    assert "# Harbour ledger" in markdown
    base = url.rsplit("/", 1)[0]
    assert f"]({base}/scans.html)" in markdown
    assert f"]({base.rsplit('/', 1)[0]}/about.html)" in markdown
    assert f"]({base}/img/ledger-" in markdown
    assert "```python\nfor entry in ledger:" in markdown
    assert re.search(r"\| Aurora +\| 1901 \|", markdown)
    assert "> Every ship that passed" in markdown
    for text in BOILERPLATE:
        assert text not in markdown


def test_the_cli_gives_each_html_page_its_markdown(serve: ServeFn, tmp_path: Path) -> None:
    blog = serve(Blog().app())
    out = tmp_path / "pages.jsonl"
    code = main(["crawl", blog.url + "/", "--markdown", "--no-state", "-q", "-o", str(out)])
    assert code == 0
    pages = jsonl(out)
    found = {url: page["markdown"] for url, page in pages.items() if page["status"] == 200}
    assert len(found) == 4  # (the links to /about.html and the scans answer 404)
    post = blog.url + "/blog/post-2.html"
    assert_article(found[post], post)
    assert all(found.values())
    assert {page["markdown"] for page in pages.values() if page["status"] == 404} == {None}

    plain = tmp_path / "plain.jsonl"
    assert main(["crawl", blog.url + "/", "--no-state", "-q", "-o", str(plain)]) == 0
    assert {page["markdown"] for page in jsonl(plain).values()} == {None}


async def test_the_library_gives_markdown_of_either_scope(serve: ServeFn) -> None:
    blog = serve(Blog().app())
    post = blog.url + "/blog/post-1.html"
    pages = await crawl_site_async(blog.url + "/", markdown=True)
    (page,) = (page for page in pages.values() if page["url"] == post)
    assert_article(page["markdown"], post)

    config = CrawlConfig(base_url=blog.url + "/", markdown=True, markdown_scope="full")
    async with AsyncCrawler(blog.url + "/", config=config) as crawler:
        full = await crawler.crawl()
    (page,) = (page for page in full.values() if page["url"] == post)
    assert CONTENT_WORDS in page["markdown"]
    assert "Accept all cookies" in page["markdown"]  # the whole page: its banner too

    async with AsyncCrawler(blog.url + "/") as crawler:  # off by default
        assert {page["markdown"] for page in (await crawler.crawl()).values()} == {None}


def test_a_bad_scope_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["crawl", "http://127.0.0.1:9/", "--markdown", "--markdown-scope", "all"])
    assert code == 2
    assert "invalid choice: 'all'" in capsys.readouterr().err


BLOCKED = """
import sys
sys.modules["trafilatura"] = None  # as if the markdown extra were not installed
from sitecrawl._cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_markdown_without_the_extra_is_one_line_before_the_crawl(
    serve: ServeFn, tmp_path: Path
) -> None:
    blog = serve(Blog().app())
    state = tmp_path / "crawl.db"
    argv = ["crawl", blog.url + "/", "--markdown", "--state", str(state)]
    done = subprocess.run(
        [sys.executable, "-c", BLOCKED, *argv], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [
        "sitecrawl: error: Markdown needs trafilatura and html-to-markdown (no module"
        " trafilatura): pip install 'sitecrawl[markdown]'"
    ]
    assert not state.exists()  # refused before anything started


def test_the_library_says_so_too() -> None:
    script = """
import sys
sys.modules["html_to_markdown"] = None
from sitecrawl import AsyncCrawler, MissingExtra
try:
    AsyncCrawler("http://127.0.0.1:9/", markdown=True)
except MissingExtra as exc:
    print(exc.extra, exc)
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert done.stdout.startswith("markdown Markdown needs"), done.stderr
    assert "pip install 'sitecrawl[markdown]'" in done.stdout
