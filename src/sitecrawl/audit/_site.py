"""A crawl's links as the audit sees them: which targets are internal, where a link comes from
(its page, or the page a redirect ended on; ``html`` or added by JavaScript), and the crawl as
the audit's typed rows (:func:`site_rows`) for ``sitecrawl check`` and the HTML report. Pure."""

from __future__ import annotations

from collections.abc import Callable, Collection, Container, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TypeAlias

from .._models import Link, Page
from ..control import CrawlScope
from ._findings import page_key
from ._rows import LINK_KINDS, ImageRow, LinkKind, LinkRow, LinkSource, PageRow


class InternalTest:
    """Whether a link target is internal: in the crawl's scope, or a page the crawl fetched
    (which covers a ``--subdomains`` crawl read back from a state file)."""

    def __init__(self, base_url: str, crawled: Iterable[str] = ()) -> None:
        self._scope = CrawlScope([base_url], "site")
        self._crawled = set(crawled)
        self._memo: dict[str, bool] = {}

    def __call__(self, url: str) -> bool:
        found = self._memo.get(url)
        if found is None:
            found = self._memo[url] = self._scope.contains(url) or page_key(url) in self._crawled
        return found


#: A link target's ``(status, error, error_kind)``, when it was fetched or checked.
Target: TypeAlias = tuple[int | None, str | None, str | None]


def links_source(page: Page, crawled: Container[str]) -> str | None:
    """Where a page's links count from: its URL, or for a page that redirected the URL it
    ended on; None when that page was crawled at its own URL too (its links are there).
    ``crawled`` holds the :func:`page_key` of every crawled page."""
    if page.redirects and page.final_url:
        if page_key(page.final_url) in crawled:
            return None
        return page.final_url
    return page.url


def links_of(page: Page, crawled: Container[str]) -> Iterator[tuple[str, int, Link, LinkSource]]:
    """A page's links as every table counts them (the export's links and images, the
    audit's, the report's): ``(source_url, position, link, source)`` for each of
    ``page.links`` (duplicates included; ``position``: its index among them). They count from
    :func:`links_source` (none when that is None: a page that redirected to a page crawled at
    its own URL); ``source`` is ``js`` for an ``a`` link JavaScript added, else ``html``.
    ``crawled`` holds the :func:`page_key` of every crawled page."""
    source_url = links_source(page, crawled)
    if source_url is None or not page.links:
        return
    added_by_js = js_added(page)
    for position, link in enumerate(page.links):
        url, _, _, kind = link
        yield source_url, position, link, "js" if kind == "a" and url in added_by_js else "html"


def link_row(
    source_url: str,
    link: Link,
    internal: InternalTest,
    source: LinkSource,
    checked: Target | None = None,
) -> LinkRow:
    """The audit's row of one of a page's links, from :func:`links_of`; ``checked`` is the
    target's ``(status, error, error_kind)`` when it was checked apart from the crawl."""
    url, text, rel, kind = link
    status, error, error_kind = checked if checked is not None else (None, None, None)
    return LinkRow(
        source_url=source_url,
        target_url=url,
        anchor_text=text,
        rel=rel,
        internal=internal(url),
        kind=link_kind(kind),
        status=status,
        error=error,
        error_kind=error_kind,
        source=source,
    )


def js_added(page: Page) -> Collection[str]:
    """The targets of the ``a`` links JavaScript added to a page (none unless rendered)."""
    return set(page.js_links) if page.rendered and page.js_links else ()


@dataclass(frozen=True, slots=True)
class SiteRows:
    """A crawl as the audit's typed rows."""

    pages: tuple[PageRow, ...]
    links: tuple[LinkRow, ...]
    images: tuple[ImageRow, ...]


def site_rows(
    pages: Sequence[Page],
    base_url: str,
    *,
    target_status: Callable[[str], Target | None] | None = None,
) -> SiteRows:
    """The audit's rows of a crawl. ``target_status(url)`` gives ``(status, error,
    error_kind)`` for link targets checked apart from the crawl (external URLs, resources),
    else None.

    The links of a page that redirected are the links of the page it ended on: they count
    from that URL, and not at all when that page was crawled at its own URL too."""
    crawled = {page_key(page.url) for page in pages}
    internal = InternalTest(base_url, crawled)
    links: list[LinkRow] = []
    images: list[ImageRow] = []
    for page in pages:
        for source_url, _, link, source in links_of(page, crawled):
            url, text, _, kind = link
            checked = target_status(url) if target_status is not None else None
            links.append(link_row(source_url, link, internal, source, checked))
            if kind == "img":
                images.append(ImageRow(page_url=source_url, src=url, alt=text))
    return SiteRows(
        pages=tuple(pages),
        links=tuple(links),
        images=tuple(images),
    )


_KINDS: dict[str, LinkKind] = {kind: kind for kind in LINK_KINDS}


def link_kind(kind: str) -> LinkKind:
    return _KINDS.get(kind, "a")
