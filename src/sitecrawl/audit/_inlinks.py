"""Each page's inlinks, Screaming Frog's two columns: ``inlinks`` (the ``<a>`` links to it from
other pages, duplicates included) and ``unique_inlinks`` (the distinct pages with such a link).
Pure, no I/O.

They need every page's links, so they exist once a crawl has ended: :class:`Inlinks` counts a
crawl's pages in one pass (memory: two counters over the distinct link targets, not the links)
and then fills the records. ``sitecrawl export`` (the pages table), the HTML report and
``check`` count them; the crawl's own outputs, written as each page arrives, leave them empty.

A page's links count from where it ended (a redirect's final URL) and once per document: a
URL that redirected to a page crawled in its own right adds nothing. A link to a URL counts for
that URL (a link to a redirecting URL, for the redirect). Links to itself do not count.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from .._models import Page
from ._findings import page_key


class Inlinks:
    """``counter.add(page)`` for every page (with its links), then ``counter.fill(page)``."""

    def __init__(self) -> None:
        self.links: Counter[str] = Counter()
        self.pages: Counter[str] = Counter()
        self._sources: set[str] = set()

    def add(self, page: Page) -> None:
        source = page_key(page.final_url or page.url)
        if source in self._sources:
            return  # the same document, reached by another URL: its links counted once
        self._sources.add(source)
        targets: set[str] = set()
        for url, _, _, kind in page.links:
            if kind != "a":
                continue
            key = page_key(url)
            if key != source:
                self.links[key] += 1
                targets.add(key)
        self.pages.update(targets)

    def fill(self, page: Page) -> Page:
        key = page_key(page.url)
        page.inlinks = self.links.get(key, 0)
        page.unique_inlinks = self.pages.get(key, 0)
        return page


def fill_inlinks(pages: Iterable[Page]) -> None:
    """Count and fill the inlinks of a crawl's pages (held in memory, with their links)."""
    pages = list(pages)
    counter = Inlinks()
    for page in pages:
        counter.add(page)
    for page in pages:
        counter.fill(page)
