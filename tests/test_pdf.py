"""PDFs: read by the crawl (title, pages, text, links followed and checked), and the ones
that cannot be read are records with their kind, never a stall.

Every PDF is real: printed by headless Chromium from the test server's own HTML pages (so its
link annotations point at that server), once per session; the encrypted ones are made by
pypdf, and the big one is PDFium's copy of a printed one's pages, several times over.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from aiohttp import web

from pdf_docs import (
    encrypt,
    long_html,
    print_pdf,
    printer,
    repeat_pages,
    report_html,
    retitle,
    with_link,
)
from servers import ServerThread, html
from sitecrawl import (
    AsyncCrawler,
    CrawlConfig,
    Limits,
    MissingExtra,
    Page,
    ParseError,
    PdfBroken,
    PdfEncrypted,
)
from sitecrawl._cli import main
from sitecrawl.parse import Parser, read_pdf

REPORT_LINKS = {
    "/about.html": "About us",
    "/gone.html": "A gone page",
    "https://external.invalid/x": "Elsewhere",
}
#: The start pages: path -> the links on it.
STARTS = {
    "/start/report.html": ["/report.pdf"],
    "/start/bad.html": ["/locked.pdf", "/owner-only.pdf", "/not-a.pdf", "/cut.pdf"],
    "/start/sizes.html": ["/report.pdf", "/long.pdf", "/chunked/long.pdf"],
    "/start/busy.html": ["/big.pdf", *(f"/p/{i}" for i in range(60))],
}


@dataclass
class PdfSite:
    pdfs: dict[str, bytes] = field(default_factory=dict)
    #: When the server finished sending a PDF (time.monotonic), by path.
    sent: dict[str, float] = field(default_factory=dict)
    #: Bytes of /chunked/long.pdf written before the client went away, and whether all were.
    chunked: list[tuple[int, bool]] = field(default_factory=list)
    server: ServerThread | None = None

    @property
    def url(self) -> str:
        assert self.server is not None
        return self.server.url


def pdf_app(site: PdfSite) -> web.Application:
    async def source(request: web.Request) -> web.Response:
        name = request.match_info["name"]
        if name == "report":
            return web.Response(text=report_html(REPORT_LINKS), content_type="text/html")
        return web.Response(text=long_html(9_000, link_every=40), content_type="text/html")

    async def pdf(request: web.Request) -> web.StreamResponse:
        name = request.match_info["name"]
        if name not in site.pdfs:
            raise web.HTTPNotFound()
        body = site.pdfs[name]
        response = web.StreamResponse(headers={"Content-Type": "application/pdf"})
        response.content_length = len(body)
        await response.prepare(request)
        await response.write(body)
        await response.write_eof()
        site.sent[request.path] = time.monotonic()
        return response

    async def chunked(request: web.Request) -> web.StreamResponse:
        body = site.pdfs[request.match_info["name"]]
        response = web.StreamResponse(headers={"Content-Type": "application/pdf"})
        response.enable_chunked_encoding()
        await response.prepare(request)
        sent = 0
        try:
            while sent < len(body):
                await response.write(body[sent : sent + 16384])
                sent += 16384
                await asyncio.sleep(0.005)
            await response.write_eof()
        finally:
            site.chunked.append((min(sent, len(body)), sent >= len(body)))
        return response

    async def start(request: web.Request) -> web.Response:
        links = STARTS.get(request.path)
        if links is None:
            raise web.HTTPNotFound()
        return html("".join(f'<a href="{link}">{link}</a>' for link in links), title="Start")

    async def plain(request: web.Request) -> web.Response:
        if request.path.startswith("/p/"):
            await asyncio.sleep(0.05)
        return html(f"<h1>{request.path}</h1><p>Plain page.</p>", title=request.path)

    app = web.Application()
    app.router.add_get("/src/{name}.html", source)
    app.router.add_get("/chunked/{name}.pdf", chunked)
    app.router.add_get("/{name}.pdf", pdf)
    app.router.add_get("/start/{name}.html", start)
    app.router.add_get("/about.html", plain)
    app.router.add_get("/section/{n}.html", plain)
    app.router.add_get("/p/{i}", plain)
    return app


@pytest.fixture(scope="session")
def pdf_site() -> Iterator[PdfSite]:
    """The site, and its PDFs printed by Chromium from its own pages."""
    site = PdfSite()
    site.server = ServerThread(pdf_app(site)).start()
    try:
        with printer() as browser:
            report = print_pdf(browser, url=site.url + "/src/report.html")
            long = print_pdf(browser, url=site.url + "/src/long.html")
            # (Chromium writes a Title always, about:blank here: made empty, as many PDFs have.)
            untitled = retitle(print_pdf(browser, source="<p>First words here</p>"), "")
        site.pdfs.update(
            report=report,
            long=long,
            untitled=untitled,
            big=repeat_pages(long, 8),
            locked=encrypt(report, user_password="secret"),
            cut=report[: len(report) // 3],
        )
        site.pdfs["owner-only"] = encrypt(report, user_password="")
        site.pdfs["not-a"] = b"<!doctype html><title>Not found</title><p>Sorry</p>"
        yield site
    finally:
        site.server.stop()


def by_path(pages: dict[str, Page], site: PdfSite) -> dict[str, Page]:
    return {url.removeprefix(site.url): page for url, page in pages.items()}


async def crawl(site: PdfSite, start: str, **limits: int) -> tuple[dict[str, Page], AsyncCrawler]:
    pages: dict[str, Page] = {}
    config = CrawlConfig(base_url=site.url + start, limits=Limits(**limits), link_details=True)
    async with AsyncCrawler(
        config.base_url, config=config, on_page=lambda p: pages.setdefault(p.url, p)
    ) as c:
        await c.crawl()
    return by_path(pages, site), c


# -- the reader (pure) -------------------------------------------------------------------------


def test_reads_title_pages_text_words_and_links_of_a_chromium_pdf(pdf_site: PdfSite) -> None:
    url = pdf_site.url + "/docs/report.pdf"
    pdf = read_pdf(pdf_site.pdfs["report"], url)
    assert pdf.title == "Annual Report 2026"  # the PDF's Title (Chromium: the <title>)
    assert pdf.page_count == 1
    assert pdf.markdown.startswith("<!-- page 1 -->\n\n# Annual Report 2026\n\nApache License")
    assert "\n\nSee About us for more.\n\nSee A gone page for more.\n\n" in pdf.markdown
    assert "\n\nYear Pages\n2025 12\n2026 14\n\n" in pdf.markdown  # the table, a row a line
    assert pdf.word_count == len(pdf.markdown.split()) - 5  # less the page marker and the #
    s = pdf_site.url
    assert pdf.outgoing_links == [s + "/about.html", s + "/gone.html", "https://external.invalid/x"]
    assert pdf.links == [
        (s + "/about.html", "About us", None, "a"),
        (s + "/gone.html", "A gone page", None, "a"),
        ("https://external.invalid/x", "Elsewhere", None, "a"),
    ]


def test_pages_are_marked_in_order_and_every_page_is_read(pdf_site: PdfSite) -> None:
    pdf = read_pdf(pdf_site.pdfs["long"], pdf_site.url + "/long.pdf")
    assert pdf.page_count >= 10
    markers = [line for line in pdf.markdown.splitlines() if line.startswith("<!-- page ")]
    assert markers == [f"<!-- page {n} -->" for n in range(1, pdf.page_count + 1)]
    assert 8_500 < pdf.word_count < 9_500 + 100  # the 9,000 words printed, and headings
    # The <h1> and each license's <h2> are headings, at their levels; paragraphs apart.
    assert pdf.markdown.startswith("<!-- page 1 -->\n\n# Licenses\n\n## Apache-2.0\n\nApache")
    assert pdf.markdown.count("\n## ") >= 3 and pdf.markdown.count("\n# ") == 1
    assert "\n\nTERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION\n\n" in pdf.markdown
    assert [link.rsplit("/", 1)[1] for link in pdf.outgoing_links][:2] == ["40.html", "80.html"]


def test_title_falls_back_to_the_first_line_and_relative_uris_resolve(pdf_site: PdfSite) -> None:
    untitled = read_pdf(pdf_site.pdfs["untitled"], "http://docs.test/a/b.pdf")
    assert untitled.title == "First words here"
    linked = with_link(pdf_site.pdfs["untitled"], "../guide.html#part")
    pdf = read_pdf(linked, "http://docs.test/a/b.pdf")
    assert pdf.outgoing_links == ["http://docs.test/guide.html"]
    mailto = with_link(pdf_site.pdfs["untitled"], "mailto:someone@example.com")
    assert read_pdf(mailto, "http://docs.test/a/b.pdf").outgoing_links == []


def test_encrypted_and_broken_pdfs_raise_their_kinds(pdf_site: PdfSite) -> None:
    with pytest.raises(PdfEncrypted) as locked:
        read_pdf(pdf_site.pdfs["locked"], "http://docs.test/locked.pdf")
    assert locked.value.kind == "pdf_encrypted"
    assert locked.value.url == "http://docs.test/locked.pdf"
    for name in ("not-a", "cut"):
        with pytest.raises(PdfBroken) as broken:
            read_pdf(pdf_site.pdfs[name], "http://docs.test/x.pdf")
        assert broken.value.kind == "pdf_broken"
    # Only an owner password (printing or copying restricted): read as any other.
    assert read_pdf(pdf_site.pdfs["owner-only"], "http://docs.test/o.pdf").title == (
        "Annual Report 2026"
    )


def test_a_missing_extra_is_one_line_naming_the_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pypdfium2", None)
    with pytest.raises(MissingExtra) as missing:
        read_pdf(b"%PDF-1.7", "http://docs.test/x.pdf")
    assert missing.value.extra == "pdf"
    assert str(missing.value).endswith(": pip install 'sitecrawl[pdf]'")
    assert "\n" not in str(missing.value)


# -- the crawl ---------------------------------------------------------------------------------


async def test_a_crawl_reads_a_pdf_and_follows_its_links_in_scope(pdf_site: PdfSite) -> None:
    pages, _ = await crawl(pdf_site, "/start/report.html")
    assert set(pages) == {"/start/report.html", "/report.pdf", "/about.html", "/gone.html"}
    pdf = pages["/report.pdf"]
    assert pdf.error is None
    assert pdf.content_type == "application/pdf"
    assert pdf.title == "Annual Report 2026"
    assert pdf.page_count == 1
    assert pdf.markdown is not None and "See A gone page for more." in pdf.markdown
    assert pdf.word_count == read_pdf(pdf_site.pdfs["report"], pdf_site.url).word_count
    assert pdf.outgoing_links[-1] == "https://external.invalid/x"  # recorded, not fetched
    assert pdf.indexable is True
    assert pages["/about.html"].depth == 2
    assert pages["/gone.html"].status == 404
    assert pages["/start/report.html"].page_count is None  # an HTML page has none


def test_check_names_the_pdf_as_the_referrer_of_its_broken_link(
    pdf_site: PdfSite,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    s = pdf_site.url
    assert main(["check", s + "/start/report.html", "--retries", "0", "-q"]) == 1
    out = capsys.readouterr().out
    assert f"BROKEN {s}/gone.html  HTTP 404  (internal)  <- 1 page" in out
    assert f'    from {s}/report.pdf "A gone page" [a]' in out.splitlines()


async def test_encrypted_and_broken_pdfs_are_records_with_their_kind(pdf_site: PdfSite) -> None:
    pages, _ = await crawl(pdf_site, "/start/bad.html")
    kinds = {path: page.error_kind for path, page in pages.items()}
    assert kinds == {
        "/start/bad.html": None,
        "/locked.pdf": "pdf_encrypted",
        "/owner-only.pdf": None,
        "/not-a.pdf": "pdf_broken",
        "/cut.pdf": "pdf_broken",
        "/about.html": None,  # the owner-only PDF's links
        "/gone.html": "http_status",
    }
    locked = pages["/locked.pdf"]
    assert (locked.status, locked.content_type, locked.page_count) == (200, "application/pdf", None)
    assert locked.error == "PDF is encrypted: it needs a password"


async def test_a_pdf_over_max_pdf_bytes_is_not_read(pdf_site: PdfSite) -> None:
    cap = len(pdf_site.pdfs["report"]) + 1000
    assert len(pdf_site.pdfs["long"]) > 2 * cap
    pages, _ = await crawl(pdf_site, "/start/sizes.html", max_pdf_bytes=cap)
    assert pages["/report.pdf"].page_count == 1  # under the cap: read
    declared = pages["/long.pdf"]  # Content-Length over the cap: the body is not read
    assert (declared.error_kind, declared.page_count) == ("too_large", None)
    assert declared.error == f"PDF over {cap} bytes: not read"
    assert declared.size_bytes == len(pdf_site.pdfs["long"]) and declared.body_hash is None
    streamed = pages["/chunked/long.pdf"]  # no length: read up to the cap, then cut off
    assert (streamed.error_kind, streamed.page_count, streamed.size_bytes) == (
        "too_large",
        None,
        cap,
    )
    await asyncio.sleep(0.2)  # (the server notices the closed connection)
    ((written, whole),) = pdf_site.chunked[-1:]
    assert not whole and written < len(pdf_site.pdfs["long"])
    assert not any(path.startswith("/section/") for path in pages)  # its links: not followed


async def test_max_pdf_bytes_zero_and_a_missing_extra_leave_pdfs_unread(
    pdf_site: PdfSite, monkeypatch: pytest.MonkeyPatch
) -> None:
    pages, crawler = await crawl(pdf_site, "/start/report.html", max_pdf_bytes=0)
    assert set(pages) == {"/start/report.html", "/report.pdf"}
    assert pages["/report.pdf"].error is None and pages["/report.pdf"].page_count is None
    assert crawler.stats.notes == []
    monkeypatch.setitem(sys.modules, "pypdfium2", None)  # as if the pdf extra were missing
    pages, crawler = await crawl(pdf_site, "/start/report.html")
    pdf = pages["/report.pdf"]
    assert (pdf.status, pdf.content_type, pdf.error, pdf.page_count) == (
        200,
        "application/pdf",
        None,
        None,
    )
    assert crawler.stats.notes == [
        "PDFs recorded unread: pip install 'sitecrawl[pdf]' to read them"
    ]


async def test_html_pages_keep_completing_while_a_big_pdf_is_read(pdf_site: PdfSite) -> None:
    done: dict[str, float] = {}
    config = CrawlConfig(
        base_url=pdf_site.url + "/start/busy.html", limits=Limits(max_concurrency=4)
    )
    async with AsyncCrawler(
        config.base_url, config=config, on_page=lambda p: done.setdefault(p.url, time.monotonic())
    ) as c:
        await c.crawl()
    s = pdf_site.url
    big_sent, big_done = pdf_site.sent["/big.pdf"], done[s + "/big.pdf"]
    during = [url for url, at in done.items() if "/p/" in url and big_sent < at < big_done]
    assert big_done - big_sent > 0.5  # the read took a while (it is 8 x the long PDF) ...
    assert len(during) >= 5, (big_done - big_sent, len(during))  # ... and pages kept coming


async def test_a_pdf_is_read_in_a_child_under_the_deadline(pdf_site: PdfSite) -> None:
    """The read never runs on the event loop: the loop keeps ticking while the child reads,
    and a read past the deadline is an error of the PDF alone."""
    big = pdf_site.pdfs["big"]
    async with Parser(1, deadline=30) as parser:
        ticks: list[float] = []

        async def tick() -> None:
            while True:
                ticks.append(time.monotonic())
                await asyncio.sleep(0.01)

        ticker = asyncio.create_task(tick())
        started = time.monotonic()
        pdf = await parser.read_pdf(big, "http://docs.test/big.pdf")
        took = time.monotonic() - started
        ticker.cancel()
        assert pdf.page_count == 8 * read_pdf(pdf_site.pdfs["long"], "http://x.test/").page_count
        gaps = [b - a for a, b in itertools.pairwise(ticks)]
        assert took > 0.5 and max(gaps) < took / 3, (took, max(gaps))
        assert parser.parsed_here == 0
    async with Parser(1, deadline=0.3) as parser:
        with pytest.raises(ParseError) as late:
            await parser.read_pdf(big, "http://docs.test/big.pdf")
        assert str(late.value) == "parse took longer than 0.3 s"
        assert late.value.kind == "parse"
        small = await parser.read_pdf(pdf_site.pdfs["untitled"], "http://docs.test/u.pdf")
        assert small.title == "First words here"  # a new child took the late one's place


def test_a_304_keeps_a_pdfs_text_without_markdown(pdf_site: PdfSite, tmp_path: Path) -> None:
    """A re-crawl of a SQLite state answered ``304`` (ETag) keeps the PDF's text (its
    ``markdown`` field) although the crawl makes no Markdown: it is the PDF's content, read
    without ``--markdown``; the HTML page keeps none."""
    body = pdf_site.pdfs["report"]
    etag = '"report-1"'
    not_modified: list[str] = []

    async def pdf(request: web.Request) -> web.Response:
        if request.headers.get("If-None-Match") == etag:
            not_modified.append(request.path)
            return web.Response(status=304, headers={"ETag": etag})
        return web.Response(body=body, content_type="application/pdf", headers={"ETag": etag})

    async def start(request: web.Request) -> web.Response:
        return html('<a href="/report.pdf">The report</a>', title="Start")

    app = web.Application()
    app.router.add_get("/", start)
    app.router.add_get("/report.pdf", pdf)
    server = ServerThread(app).start()
    try:
        state, out = tmp_path / "pdfs.db", tmp_path / "out.jsonl"
        argv = ["crawl", server.url + "/", "--state", str(state), "-q", "-o", str(out)]
        assert main(argv) == 0
        first = {row["url"]: row for row in map(json.loads, out.read_text().splitlines())}
        assert main(argv) == 0
        second = {row["url"]: row for row in map(json.loads, out.read_text().splitlines())}
    finally:
        server.stop()
    url = server.url + "/report.pdf"
    assert not_modified == ["/report.pdf"]
    assert second[url]["revalidated"] is True and second[url]["page_count"] == 1
    assert first[url]["markdown"] and "See A gone page for more." in first[url]["markdown"]
    assert second[url]["markdown"] == first[url]["markdown"]
    assert second[url]["word_count"] == first[url]["word_count"]
    assert second[server.url + "/"]["markdown"] is None
