"""One contract suite for every page store (the durable frontiers of frontier_backends.py):
what ``export`` and ``report`` read back is what the crawl stored, every field of every page,
failures included, streamed."""

from __future__ import annotations

import dataclasses
import tracemalloc
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from frontier_backends import BASE_URL, DURABLE, Backend
from sitecrawl import Page, Request
from sitecrawl._urls import url_key
from sitecrawl.audit import InternalTest, fill_inlinks, page_key
from sitecrawl.frontier import Frontier, PageStore
from sitecrawl.sinks._tables import (
    IMAGES,
    LINKS,
    PAGES,
    REDIRECTS,
    Row,
    TableSpec,
    _rows,
    store_rows,
)

B = BASE_URL.rstrip("/")


def request(path: str, depth: int = 0) -> Request:
    url = B + path
    return Request(url=url, key=url_key(url), depth=depth)


#: A page with every field away from its default: a field added to Page and not set here fails
#: test_the_full_page_sets_every_field, so the round trip below covers it.
FULL = Page(
    url=B + "/full",
    final_url=B + "/home",
    status=200,
    content_type="text/html",
    depth=2,
    title="Tïtle \u202e",
    h1="H",
    first_paragraph="P",
    meta_description="M",
    canonical=B + "/home",
    outgoing_links=[B + "/a", "https://other.test/"],
    image_urls=[B + "/i.png"],
    response_time_ms=12.5,
    size_bytes=1234,
    error="body cut at 10 bytes",
    error_kind="too_large",
    location="https://other.test/x",
    attempts=2,
    redirects=[(B + "/full", 301)],
    in_sitemap=True,
    indexable=False,
    word_count=7,
    h2=["One", "Two"],
    lang="fr",
    hreflang=[("de", B + "/de/")],
    og_title="Shared",
    etag='"v1"',
    last_modified="Tue, 01 Dec 2026 10:00:00 GMT",
    body_hash="0" * 32,
    revalidated=True,
    rendered=True,
    render_ms=812.5,
    render_wait_ms=120.0,
    render_complete=False,
    html_hash="0123456789abcdef",
    dom_bytes=4096,
    blocked_resources=[B + "/api/private"],
    js_links_added=1,
    js_changed=["title", "links"],
    js_links=[B + "/js-only"],
    html_values={"title": "Loading", "links": []},
    extracted={"price": 9.5, "n": 3, "on": True, "none": None, "tags": ["a", "é"], "ld": {"a": 1}},
    inlinks=5,
    unique_inlinks=4,
    markdown="# Tïtle\n\nSome *text* \u202e with a [link](" + B + "/a).\n" * 40,
    page_count=3,
    structured_data=[
        {"format": "json-ld", "type": "Product", "properties": {"name": "é", "offers": {"p": 1}}},
        {"format": "json-ld", "type": None, "properties": {}, "error": "Expecting value"},
    ],
    content_hash="0123456789abcdef",
    content_minhash=bytes(range(256)) * 2,  # every byte value, a NUL first
    screenshot="site.screenshots/0123456789abcdef.png",
    a11y=[
        {
            "rule": "image-alt",
            "impact": "critical",
            "help": "Images must have alternative text",
            "help_url": "https://dequeuniversity.com/rules/axe/4.14/image-alt",
            "nodes": 2,
            "selectors": ["img", "#logo > img"],
        }
    ],
    links=[
        (B + "/a", "to a", None, "a"),
        ("https://other.test/", "other", "nofollow", "a"),
        (B + "/a", None, None, "a"),
        (B + "/i.png", "alt", None, "img"),
        (B + "/s.js", None, None, "script"),
    ],
)
FAILED = [
    Page(url=B + "/a", depth=1, error="timeout", error_kind="timeout", attempts=3),
    Page(
        url=B + "/away",
        depth=1,
        status=302,
        final_url=B + "/away",
        error="redirect out of scope: https://other.test/x",
        error_kind="redirect_out_of_scope",
        location="https://other.test/x",
        attempts=1,
    ),
    Page(url=B + "/private", depth=1, error="blocked by robots.txt", error_kind="blocked_robots"),
]


def test_the_full_page_sets_every_field() -> None:
    for f in dataclasses.fields(Page):
        default = f.default_factory() if callable(f.default_factory) else f.default
        assert getattr(FULL, f.name) != default, f.name


@pytest.fixture(params=DURABLE, ids=lambda backend: backend.name)
def backend(request: pytest.FixtureRequest) -> Backend:
    return request.param  # type: ignore[no-any-return]


@pytest.fixture
async def store(backend: Backend, tmp_path: Path) -> AsyncIterator[Frontier]:
    async with backend.make(tmp_path) as opened:
        yield opened


async def crawl(frontier: Frontier, pages: list[Page]) -> None:
    """Store ``pages`` the way the crawler does: queued, leased, done with the page."""
    await frontier.add([request(p.url.removeprefix(B), p.depth) for p in pages])
    by_url = {p.url: p for p in pages}
    async with frontier.working():
        while (leased := await frontier.next()) is not None:
            await frontier.mark_done(leased, by_url[leased.url])


async def read(store: PageStore) -> list[Page]:
    return [page async for page in store.read_pages()]


async def test_every_field_of_every_page_round_trips(backend: Backend, tmp_path: Path) -> None:
    async with backend.make(tmp_path) as first:
        await crawl(first, [FULL, *FAILED])
    async with backend.make(tmp_path) as again:  # read back by another opening
        assert isinstance(again, PageStore)
        assert again.base_url == BASE_URL
        pages = {page.url: page for page in await read(again)}
    assert len(pages) == 4
    for page in [FULL, *FAILED]:
        assert dataclasses.asdict(pages[page.url]) == dataclasses.asdict(page), page.url
    # outgoing_links is not stored: derived from the links, as the parser derives it
    assert pages[FULL.url].outgoing_links == FULL.outgoing_links


async def test_meta_and_crawl_time(store: Frontier) -> None:
    assert isinstance(store, PageStore)
    meta = await store.read_meta()
    assert meta["base_url"] == BASE_URL
    assert meta["created"][:2] == "20" and meta["sitecrawl"]
    seconds = await store.crawl_seconds()
    assert seconds is None or seconds >= 0


def in_memory(table: TableSpec, pages: list[Page]) -> list[Row]:
    """The rows of ``table`` from the crawl's pages held in memory, the links' targets known
    up front: what a store streams (the targets read in a first pass)."""
    targets = {page_key(p.url): (p.status, p.error, p.error_kind) for p in pages}
    internal = InternalTest(BASE_URL, targets)
    if table is PAGES:  # counted from every page's links, as a store counts them
        fill_inlinks(pages)
    return [row for page in pages for row in _rows(table, page, targets, internal)]


async def test_the_tables_read_from_a_store_are_those_of_its_pages(store: Frontier) -> None:
    await crawl(store, [FULL, *FAILED])
    assert isinstance(store, PageStore)
    pages = await read(store)
    for table in (PAGES, LINKS, REDIRECTS, IMAGES):
        streamed = [row async for row in store_rows(table, store)]
        assert streamed == in_memory(table, pages), table.name
        assert all(list(row) == list(table.names) for row in streamed), table.name
    links = [row async for row in store_rows(LINKS, store)]
    assert [(r["target_url"], r["target_status"], r["target_error_kind"]) for r in links[:2]] == [
        (B + "/a", None, "timeout"),
        ("https://other.test/", None, None),
    ]


async def test_pages_and_tables_stream(store: Frontier) -> None:
    """Reading holds a batch of pages at most, not the crawl: the peak of memory allocated
    while reading every page (and every link row) is a small part of what holding the pages
    takes."""
    filler = "x" * 2000
    pages = [
        Page(
            url=f"{B}/p/{i}",
            depth=1,
            status=200,
            title=filler + str(i),
            links=[(f"{B}/p/{j}", filler[:100], None, "a") for j in range(i, i + 20)],
        )
        for i in range(2000)
    ]
    await crawl(store, pages)
    del pages
    assert isinstance(store, PageStore)
    tracemalloc.start()
    try:
        held = await read(store)
        _, whole = tracemalloc.get_traced_memory()
        del held
        tracemalloc.reset_peak()
        count = 0
        async for page in store.read_pages():
            count += page.title is not None
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        rows = 0
        async for _ in store_rows(LINKS, store):
            rows += 1
        _, links_peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert (count, rows) == (2000, 40_000)
    assert peak < whole / 4, (peak, whole)
    assert links_peak < whole / 4, (links_peak, whole)
