"""``--markdown`` (library: ``markdown=True``): each HTML page's main content as Markdown, made
in the parser processes, in the record as ``markdown``. Crawled from a real blog on loopback
(:mod:`markdown_site`): articles inside navigation, banners, a sidebar, a share bar, an ad
and a footer."""

from __future__ import annotations

import base64
import contextlib
import csv
import json
import re
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow.parquet
import pytest
import redis

from browser import chromium_path
from conftest import ServeFn
from markdown_site import APP_WORDS, BOILERPLATE, CONTENT_WORDS, Blog, article, page
from redis_server import shared_server
from sitecrawl import AsyncCrawler, CrawlConfig, Limits, Page, Render, crawl_site_async
from sitecrawl._cli import main
from sitecrawl._exceptions import ParseError
from sitecrawl.parse import Parser

if sys.version_info >= (3, 14):
    from compression import zstd
else:
    from backports import zstd

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


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


def crawl(blog_url: str, state: Path, *more: str) -> int:
    return main(["crawl", blog_url + "/", "--markdown", "--state", str(state), "-q", *more])


def test_sqlite_keeps_it_compressed_export_writes_it_csv_when_asked(
    serve: ServeFn, tmp_path: Path
) -> None:
    blog = serve(Blog().app())
    state = tmp_path / "blog.db"
    assert crawl(blog.url, state) == 0
    post = blog.url + "/blog/post-3.html"
    with contextlib.closing(sqlite3.connect(state)) as conn:
        (stored,) = conn.execute(
            "SELECT p.markdown FROM pages p JOIN urls u ON u.id = p.id WHERE u.url = ?", (post,)
        ).fetchone()
    assert isinstance(stored, bytes)
    assert stored.startswith(ZSTD_MAGIC)
    text = zstd.decompress(stored).decode()
    assert_article(text, post)
    assert len(stored) < len(text.encode()) / 2

    out = [tmp_path / name for name in ("pages.jsonl", "pages.json", "pages.csv", "wide.csv")]
    argv = ["export", str(state), "-q"]
    assert main([*argv, "-o", str(out[0]), "-o", str(out[1]), "-o", str(out[2])]) == 0
    assert jsonl(out[0])[post]["markdown"] == text
    assert {row["url"]: row for row in json.loads(out[1].read_text())}[post]["markdown"] == text
    with out[2].open(newline="", encoding="utf-8") as file:
        assert "markdown" not in next(csv.reader(file))  # a page of text a cell: when asked
    assert main([*argv, "--csv-markdown", "-o", str(out[3])]) == 0
    with out[3].open(newline="", encoding="utf-8") as file:
        rows = {row["page_url"]: row for row in csv.DictReader(file)}
    assert rows[post]["markdown"] == text

    assert main([*argv, "-o", str(tmp_path / "pages.parquet")]) == 0
    table = pyarrow.parquet.read_table(tmp_path / "pages.parquet").to_pylist()
    assert {row["url"]: row for row in table}[post]["markdown"] == text


def test_the_crawls_own_csv_leaves_it_out_unless_asked(serve: ServeFn, tmp_path: Path) -> None:
    blog = serve(Blog().app())
    out, wide = tmp_path / "out.csv", tmp_path / "wide.csv"
    argv = ["crawl", blog.url + "/", "--markdown", "--no-state", "-q"]
    assert main([*argv, "-o", str(out)]) == 0
    assert main([*argv, "--csv-markdown", "-o", str(wide)]) == 0
    with out.open(newline="", encoding="utf-8") as file:
        assert "markdown" not in next(csv.reader(file))
    with wide.open(newline="", encoding="utf-8") as file:
        rows = {row["page_url"]: row for row in csv.DictReader(file)}
    assert CONTENT_WORDS in rows[blog.url + "/blog/post-1.html"]["markdown"]


def test_a_304_keeps_the_markdown_and_diff_reports_changed_content(
    serve: ServeFn, tmp_path: Path
) -> None:
    site = Blog()
    blog = serve(site.app())
    state = tmp_path / "blog.db"
    assert crawl(blog.url, state, "-o", str(tmp_path / "first.jsonl")) == 0
    first = jsonl(tmp_path / "first.jsonl")
    site.edited = {2}
    assert crawl(blog.url, state, "-o", str(tmp_path / "second.jsonl")) == 0
    second = jsonl(tmp_path / "second.jsonl")
    one, two = blog.url + "/blog/post-1.html", blog.url + "/blog/post-2.html"
    assert one.removeprefix(blog.url) in site.not_modified
    assert second[one]["revalidated"] is True
    assert second[one]["markdown"] == first[one]["markdown"]  # the 304 kept it
    assert second[two]["revalidated"] is False
    assert "A correction was added" in second[two]["markdown"]
    # The store has it too (the export reads the current crawl's rows).
    exported = tmp_path / "exported.jsonl"
    assert main(["export", str(state), "-q", "-o", str(exported)]) == 0
    assert jsonl(exported)[one]["markdown"] == first[one]["markdown"]

    changes = tmp_path / "changes.jsonl"
    assert main(["diff", str(state), "-q", "-o", str(changes)]) == 0
    rows = [json.loads(line) for line in changes.read_text().splitlines()]
    content = [row for row in rows if row["kind"] == "content"]
    assert [(row["url"], row["field"], row["severity"]) for row in content] == [
        (two, "markdown", "info")
    ]
    assert content[0]["new"].startswith("A correction was added after the first crawl.")
    assert content[0]["old"].startswith("Article 2: the lighthouse keepers")
    report = tmp_path / "changes.html"
    assert main(["diff", str(state), "-q", "--report", str(report)]) == 0
    assert "Content changed" in report.read_text(encoding="utf-8")


def test_a_plain_crawl_after_a_markdown_one_revalidates_without_it(
    serve: ServeFn, tmp_path: Path
) -> None:
    """And a --markdown crawl after a plain one fetches the pages in full (a 304 would leave
    them without their Markdown)."""
    site = Blog()
    blog = serve(site.app())
    state, out = tmp_path / "blog.db", tmp_path / "out.jsonl"
    argv = ["crawl", blog.url + "/", "--state", str(state), "-q", "-o", str(out)]
    assert main(argv) == 0
    assert main([*argv, "--markdown"]) == 0
    assert site.not_modified == []
    assert all(page["markdown"] for page in jsonl(out).values() if page["status"] == 200)
    assert main(argv) == 0
    assert len(site.not_modified) == 4
    assert {page["markdown"] for page in jsonl(out).values()} == {None}


def test_a_resume_with_another_markdown_setting_is_refused_or_takes_it(
    serve: ServeFn, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blog = serve(Blog().app())
    state = tmp_path / "blog.db"
    # A crawl cut at 2 pages: the next run resumes it.
    assert crawl(blog.url, state, "-n", "2", "--markdown-scope", "full") == 0
    capsys.readouterr()
    assert crawl(blog.url, state) == 2
    err = capsys.readouterr().err
    assert "began with --markdown --markdown-scope full, not --markdown" in err
    plain = ["crawl", blog.url + "/", "--state", str(state), "-o", str(tmp_path / "o.jsonl")]
    assert main(plain) == 0  # none given: the stored one taken, and said
    assert "resumed with the Markdown this crawl began with" in capsys.readouterr().err
    pages = jsonl(tmp_path / "o.jsonl")
    found = [page["markdown"] for page in pages.values() if page["status"] == 200]
    assert found
    assert all("Accept all cookies" in markdown for markdown in found)


def test_redis_keeps_it_compressed_and_export_writes_it(tmp_path: Path, serve: ServeFn) -> None:
    server = shared_server()
    blog = serve(Blog().app())
    argv = ["crawl", blog.url + "/", "--markdown", "--redis", server.url, "-q"]
    assert main([*argv, "--crawl-id", "md", "--fresh"]) == 0
    post = blog.url + "/blog/post-1.html"
    client = redis.Redis(port=server.port)
    names = client.lrange("sitecrawl:{md}:pages", 0, -1)  # each page's record, by name
    stored = [json.loads(record) for record in client.hmget("sitecrawl:{md}:records", names)]
    (record,) = (record for record in stored if record["url"] == post)
    frame = base64.b64decode(record["markdown"])
    assert frame.startswith(ZSTD_MAGIC)
    text = zstd.decompress(frame).decode()
    assert_article(text, post)
    out = tmp_path / "redis.jsonl"
    source = ["--redis", server.url, "--crawl-id", "md"]
    assert main(["export", *source, "-q", "-o", str(out)]) == 0
    assert jsonl(out)[post]["markdown"] == text


@pytest.mark.timeout(120)
async def test_a_rendered_page_gets_the_markdown_of_its_rendered_dom(serve: ServeFn) -> None:
    blog = serve(Blog().app())
    start = blog.url + "/app.html"
    render = Render(mode="always", browser=chromium_path())
    pages: list[Page] = []
    config = CrawlConfig(base_url=start, render=render, markdown=True, limits=Limits(max_pages=1))
    async with AsyncCrawler(start, config=config, on_page=pages.append) as crawler:
        await crawler.crawl()
    (page,) = pages
    assert page.rendered and page.error is None
    assert page.markdown is not None
    assert "# Application ledger" in page.markdown
    assert APP_WORDS in page.markdown  # only the rendered DOM has it
    assert "Accept all cookies" not in page.markdown

    raw: list[Page] = []
    plain = CrawlConfig(base_url=start, markdown=True, limits=Limits(max_pages=1))
    async with AsyncCrawler(start, config=plain, on_page=raw.append) as crawler:
        await crawler.crawl()
    assert APP_WORDS not in (raw[0].markdown or "")  # (the raw HTML's: without the article)


def test_a_state_file_without_the_column_gets_it(serve: ServeFn, tmp_path: Path) -> None:
    """A state file of a version before the field: the column is added when it is opened, and
    the pages crawled before read back without Markdown."""
    blog = serve(Blog().app())
    state = tmp_path / "old.db"
    plain = ["crawl", blog.url + "/", "--state", str(state), "-q"]
    assert main([*plain, "-n", "2"]) == 0
    with contextlib.closing(sqlite3.connect(state)) as conn:
        for table in ("pages", "history"):
            conn.execute(f"ALTER TABLE {table} DROP COLUMN markdown")
        conn.commit()
    out = tmp_path / "out.jsonl"
    assert main([*plain, "-o", str(out)]) == 0  # resumed: the rest of the cut crawl
    with contextlib.closing(sqlite3.connect(state)) as conn:
        columns = {row[1]: row[2] for row in conn.execute("PRAGMA table_info(pages)")}
    assert columns["markdown"] == "BLOB"
    exported = tmp_path / "exported.jsonl"
    assert main(["export", str(state), "-q", "-o", str(exported)]) == 0
    assert {page["markdown"] for page in jsonl(exported).values()} == {None}
    assert main([*plain, "--markdown", "-o", str(out)]) == 0  # the next crawl: with it
    post = blog.url + "/blog/post-1.html"
    assert_article(jsonl(out)[post]["markdown"], post)


async def test_markdown_is_made_in_a_child_under_the_parse_deadline() -> None:
    """With Markdown every page goes to a parser process (none is parsed on the event loop),
    and a page whose Markdown passes the deadline is a ParseError; the next page is served
    by the child that replaced the one killed."""
    small = page(article(1), title="Ledger").encode()
    # ~3.5 MB of article, in a <div>: trafilatura's path (html-to-markdown alone, the fast
    # path of a plain <main>, converts it within the deadline)
    huge = page(f"<div>{article(1) * 1500}</div>", title="Long ledger").encode()
    url = "http://blog.test/blog/post-1.html"
    async with Parser(1, markdown="main", deadline=1.0) as parser:
        with pytest.raises(ParseError, match=r"parse took longer than 1 s"):
            await parser.parse(huge, "utf-8", url)
        data = await parser.parse(small, "utf-8", url)
        assert parser.parsed_here == 0
        assert parser.parsed_by_children == 1
    assert data.markdown is not None
    assert_article(data.markdown, url)


def test_resuming_a_markdown_crawl_without_the_extra_is_refused(
    serve: ServeFn, tmp_path: Path
) -> None:
    blog = serve(Blog().app())
    state = tmp_path / "blog.db"
    assert crawl(blog.url, state, "-n", "2") == 0  # cut: the next run resumes it
    argv = ["crawl", blog.url + "/", "--state", str(state), "-q"]  # --markdown not given
    done = subprocess.run(
        [sys.executable, "-c", BLOCKED, *argv], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.splitlines()
    assert "this crawl makes Markdown (--markdown): Markdown needs" in line
    assert line.endswith("pip install 'sitecrawl[markdown]'")
