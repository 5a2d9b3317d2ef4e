"""A crawl's links as the audit sees them: which targets are internal, where a link comes from
(its page, or the page a redirect ended on; ``html`` or added by JavaScript), and the crawl as
the audit's typed rows (:func:`site_rows`) for ``sitecrawl check`` and the HTML report. Pure."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass

from .._models import Page
from .._urls import url_key
from ..control import CrawlScope
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
            found = self._memo[url] = self._scope.contains(url) or safe_key(url) in self._crawled
        return found


def safe_key(url: str) -> str:
    """The dedupe key of ``url``, or ``url`` itself when it has none."""
    try:
        return url_key(url)
    except ValueError:
        return url


def js_added(page: Page) -> Collection[str]:
    """The targets of the ``a`` links JavaScript added to a page (none unless rendered)."""
    return set(page.js_links) if page.rendered and page.js_links else ()


def link_source(url: str, kind: str, added_by_js: Collection[str]) -> LinkSource:
    """A link's ``source``: ``js`` for an ``a`` link JavaScript added, else ``html``."""
    return "js" if kind == "a" and url in added_by_js else "html"


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
    target_status: Callable[[str], tuple[int | None, str | None, str | None] | None] | None = None,
) -> SiteRows:
    """The audit's rows of a crawl. ``target_status(url)`` gives ``(status, error,
    error_kind)`` for link targets checked apart from the crawl (external URLs, resources),
    else None.

    The links of a page that redirected are the links of the page it ended on: they count
    from that URL, and not at all when that page was crawled at its own URL too."""
    crawled = {safe_key(page.url) for page in pages}
    internal = InternalTest(base_url, crawled)
    links: list[LinkRow] = []
    images: list[ImageRow] = []
    for page in pages:
        source = page.url
        if page.redirects and page.final_url:
            if safe_key(page.final_url) in crawled:
                continue  # the same document was crawled at its own URL: its links are there
            source = page.final_url
        added_by_js = js_added(page)
        for url, text, rel, kind in page.links:
            checked = target_status(url) if target_status is not None else None
            status, error, error_kind = checked if checked is not None else (None, None, None)
            links.append(
                LinkRow(
                    source_url=source,
                    target_url=url,
                    anchor_text=text,
                    rel=rel,
                    internal=internal(url),
                    kind=link_kind(kind),
                    status=status,
                    error=error,
                    error_kind=error_kind,
                    source=link_source(url, kind, added_by_js),
                )
            )
            if kind == "img":
                images.append(ImageRow(page_url=source, src=url, alt=text))
    return SiteRows(
        pages=tuple(pages),
        links=tuple(links),
        images=tuple(images),
    )


_KINDS: dict[str, LinkKind] = {kind: kind for kind in LINK_KINDS}


def link_kind(kind: str) -> LinkKind:
    return _KINDS.get(kind, "a")
