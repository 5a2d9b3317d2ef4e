"""The link targets of a crawl in one pass over its pages' links: what each distinct target
answered, and who links to the broken and redirected ones. Pure, no I/O.

``sitecrawl check`` reads this instead of the audit's rows: a site of 10,000 pages has half a
million links, and a row object for each, sets of referrers for every target and the audit's
other findings cost seconds and hundreds of megabytes for an answer about a few targets. Here
a link costs one key lookup; only the targets that are broken or redirected keep their
referring pages (a set of the page URLs the crawl already holds, and the first few with their
anchor text).

Referrers are counted one way everywhere (check, report, diff): **distinct pages**, with the
number of links beside it (:class:`Referred`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .._models import Page
from ._findings import Referrer, page_key
from ._rows import LINK_KINDS, LinkKind
from ._site import links_source

if TYPE_CHECKING:
    from ..control import CrawlScope

#: Referring pages a target keeps by name (the rest are counted).
SHOWN = 5
#: Pages between two calls of the progress callback.
PROGRESS_EVERY = 500

_KINDS: dict[str, LinkKind] = {kind: kind for kind in LINK_KINDS}


@dataclass(frozen=True, slots=True)
class Referred:
    """Who links to one target: ``pages`` distinct pages by ``links`` links, the first few
    pages (``first``, in crawl order: each with its first link's anchor text and kind)."""

    pages: int
    links: int
    first: tuple[Referrer, ...]

    @property
    def more(self) -> int:
        """Referring pages not named in :attr:`first`."""
        return self.pages - len(self.first)


@dataclass(slots=True)
class _Tally:
    sources: set[str] = field(default_factory=set)
    links: int = 0
    first: list[Referrer] = field(default_factory=list)

    def add(self, source: str, text: str | None, kind: str, shown: int) -> None:
        self.links += 1
        if source not in self.sources:
            self.sources.add(source)
            if len(self.first) < shown:
                self.first.append(Referrer(source, text, _KINDS.get(kind, "a")))

    def referred(self) -> Referred:
        return Referred(len(self.sources), self.links, tuple(self.first))


def page_links(pages: Sequence[Page], crawled: Mapping[str, Page]) -> Iterator[tuple[str, Page]]:
    """``(source URL, page)`` of each page, the source where its links count from: a page
    that redirected counts from where it ended, and not at all (``""``) when that page was
    crawled at its own URL (as :func:`~sitecrawl.audit.site_rows`)."""
    for page in pages:
        yield links_source(page, crawled) or "", page


def tally_targets(
    pages: Sequence[Page],
    crawled: Mapping[str, Page],
    wanted: Callable[[str, str], bool],
    *,
    shown: int = SHOWN,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[dict[str, str], dict[str, Referred]]:
    """One pass over the links: each distinct target key's first URL (in link order), and
    for the keys ``wanted(key, url)`` (asked once per key), who links to them.
    ``progress(done, total)`` is called every :data:`PROGRESS_EVERY` pages and at the end."""
    first_url: dict[str, str] = {}
    tallies: dict[str, _Tally] = {}
    keyed: dict[str, str] = {}  # URL -> key: a target is named by many pages
    total = len(pages)
    for done, (source, page) in enumerate(page_links(pages, crawled), 1):
        if source:
            for url, text, _, kind in page.links:
                key = keyed.get(url)
                if key is None:
                    key = keyed[url] = page_key(url)
                    if key not in first_url:
                        first_url[key] = url
                        if wanted(key, url):
                            tallies[key] = _Tally()
                tally = tallies.get(key)
                if tally is not None:
                    tally.add(source, text, kind, shown)
        if progress is not None and done % PROGRESS_EVERY == 0:
            progress(done, total)
    if progress is not None:
        progress(total, total)
    return first_url, {key: tally.referred() for key, tally in tallies.items()}


def link_targets(
    pages: list[Page], scope: CrawlScope, *, external: bool, followed: bool = True
) -> list[str]:
    """What to check after the crawl: targets it did not fetch, one URL per page key (as the
    summary counts them), in link order. The site's resources (every kind but ``a``; links
    too when the crawl ``followed`` none: a list); external URLs of any kind with
    ``external``."""
    by_key = {page_key(page.url): page for page in pages}
    crawled = set(by_key)
    seen: set[str] = set()
    targets: list[str] = []
    for source, page in page_links(pages, by_key):  # the links the summary counts
        if not source:
            continue
        for url, _, _, kind in page.links:
            if url in seen:
                continue
            seen.add(url)
            key = page_key(url)
            if key in crawled:
                continue
            if (kind != "a" or not followed) if scope.contains(url) else external:
                crawled.add(key)  # the first URL of a key stands for it
                targets.append(url)
    return targets
