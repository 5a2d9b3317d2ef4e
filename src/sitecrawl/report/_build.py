"""The report's data read from a page store in two streamed passes, in memory that grows with
the pages, not with their links.

A crawl's links outnumber its pages thirty to one, and the audit needs few of them: every link
to a page that failed or redirected (the broken-links and redirect tables list all their
referrers), and, of the links to any other page, one navigation link from another page (which
is all the sitemap checks ask: is it linked from elsewhere?). The first pass keeps each page
without its links and learns which pages failed or redirected; the second keeps only those
links. :func:`~sitecrawl.audit._findings.audit` of the result finds what it finds of every link; the
tests hold the two to the same report.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from .._models import Page
from ..audit import (
    DEFAULT_NEAR_DUP_THRESHOLD,
    NAVIGATION_KINDS,
    ImageRow,
    Inlinks,
    InternalTest,
    LinkRow,
    Signatures,
    crawl_issues,
    is_broken,
    link_row,
    links_of,
    near_duplicates,
    page_key,
)
from ..frontier import PageStore
from ._data import ReportData


def _without_links(page: Page) -> Page:
    page.links = []
    page.outgoing_links = []
    page.image_urls = []
    return page


async def store_report_data(store: PageStore) -> ReportData:
    """The :class:`ReportData` of an open store's crawl (see the module docstring)."""
    assert store.base_url is not None
    pages: list[Page] = []
    crawled: set[str] = set()
    wanted: set[str] = set()  # keys of pages every link to which the audit needs
    inlinks = Inlinks()
    async for page in store.read_pages():
        inlinks.add(page)
        key = page_key(page.url)
        crawled.add(key)
        if page.redirects or is_broken(page.status, page.error, page.error_kind):
            wanted.add(key)
        pages.append(_without_links(page))
    for page in pages:
        inlinks.fill(page)
    internal = InternalTest(store.base_url, crawled)
    linked: set[str] = set()  # other targets: one navigation link from elsewhere is kept
    links: list[LinkRow] = []
    images: list[ImageRow] = []
    async for page in store.read_pages():
        for source_url, _, link, source in links_of(page, crawled):
            url, text, _, kind = link
            if kind == "img":
                images.append(ImageRow(page_url=source_url, src=url, alt=text))
            key = page_key(url)
            if key not in wanted:
                if key in linked or kind not in NAVIGATION_KINDS or key == page_key(source_url):
                    continue
                linked.add(key)
            links.append(link_row(source_url, link, internal, source))
    return ReportData.build(
        base_url=store.base_url,
        pages=pages,
        links=links,
        images=images,
        duration_s=await store.crawl_seconds(),
        near_dup_threshold=near_dup_threshold(store),
    )


def near_dup_threshold(store: PageStore) -> float:
    """The near-duplicate threshold a store's crawl was given (``--near-dup-threshold``),
    else the default."""
    for name in ("config", "options"):
        kept = getattr(store, name, None)
        value = kept.get("near_dup_threshold") if isinstance(kept, dict) else None
        if isinstance(value, int | float) and 0 < value <= 1:
            return float(value)
    return DEFAULT_NEAR_DUP_THRESHOLD


async def store_near_duplicate_rows(store: PageStore) -> AsyncIterator[dict[str, Any]]:
    """The ``near_duplicates`` table of an open store's crawl: the signatures read in one
    streamed pass (of each page compared, its URL, hash and 512 bytes of MinHash), then
    :func:`~sitecrawl.audit.near_duplicates` of them."""
    found = Signatures()
    async for page in store.read_pages():
        found.add(page)
    for row in near_duplicates(found.rows(), near_dup_threshold(store)):
        yield row.to_dict()


async def store_issue_rows(store: PageStore) -> AsyncIterator[dict[str, Any]]:
    """The issues table of an open store's crawl (``sitecrawl export -t issues``): the audit
    of the report's data (:func:`store_report_data`), one dict per finding."""
    data = await store_report_data(store)
    for row in crawl_issues(
        data.pages,
        data.links,
        data.images,
        start_url=data.meta.base_url,
        near_dup_threshold=data.meta.near_dup_threshold,
    ):
        yield row.to_dict()
