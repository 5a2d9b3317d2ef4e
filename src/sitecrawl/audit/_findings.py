"""What is wrong with a crawled site: findings computed from its rows. Pure, no I/O.

:func:`audit` turns the pages, links and images of one crawl (:mod:`sitecrawl.audit._rows`) into
an :class:`Audit`: the HTML report draws it, and ``sitecrawl check`` turns it into an exit code.

Targets are matched to pages by the crawler's dedupe key (scheme, fragment and trailing slash
ignored), so ``http://x/a/`` and ``https://x/a`` are one page, as they were during the crawl.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache

from .._exceptions import RedirectOutOfScope
from .._models import AUDIT_TEXTS
from .._urls import url_key
from ._rows import Hop, ImageRow, LinkKind, LinkRow, LinkSource, PageRow, is_html, succeeded

#: The record's fields the audit checks for missing and duplicate texts (those marked
#: ``audit_text`` on :class:`~sitecrawl.Page`: title, h1, meta description), in field order.
TEXT_FIELDS: tuple[str, ...] = tuple(AUDIT_TEXTS)

DEFAULT_SLOW_MS = 1000.0
DEFAULT_SLOW_LIMIT = 100

NAVIGATION_KINDS: frozenset[LinkKind] = frozenset({"a", "iframe"})


@dataclass(frozen=True, slots=True)
class Referrer:
    """A page that links to a target, and how (anchor text, link kind, and ``js`` when
    JavaScript added the link to the rendered page)."""

    source_url: str
    anchor_text: str | None
    kind: LinkKind
    source: LinkSource = "html"


@dataclass(frozen=True, slots=True)
class BrokenLink:
    """A link target that failed (4xx, 5xx, or no response: DNS, refused, timeout, robots):
    ``pages`` distinct pages link to it by ``links`` links; ``referrers`` are the pages (the
    audit's: each distinct page, anchor text and kind; the check's: the first few pages)."""

    target_url: str
    status: int | None
    error: str | None
    internal: bool
    referrers: tuple[Referrer, ...]
    pages: int
    links: int

    @property
    def reason(self) -> str:
        if self.status is not None and self.status >= 400:
            return f"HTTP {self.status}"
        return self.error or "failed"


@dataclass(frozen=True, slots=True)
class RedirectChain:
    """A URL that redirected: each 3xx hop, then where it ended and who links to it
    (``pages`` distinct pages by ``links`` links, as :class:`BrokenLink`)."""

    url: str
    hops: tuple[Hop, ...]
    final_url: str | None
    final_status: int | None
    referrers: tuple[Referrer, ...]
    pages: int
    links: int


@dataclass(frozen=True, slots=True)
class DuplicateGroup:
    """Pages sharing one title, h1 or meta description (whitespace collapsed)."""

    field: str
    value: str
    urls: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class SlowPage:
    url: str
    response_time_ms: float
    size_bytes: int | None


@dataclass(frozen=True, slots=True)
class NonIndexablePage:
    url: str
    reason: str


@dataclass(frozen=True, slots=True)
class MissingAlt:
    page_url: str
    src: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Audit:
    """Every finding about one crawl. Tuples are in a stable, meaningful order."""

    broken_links: tuple[BrokenLink, ...] = ()
    redirect_chains: tuple[RedirectChain, ...] = ()
    missing: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    duplicates: Mapping[str, tuple[DuplicateGroup, ...]] = field(default_factory=dict)
    slow_pages: tuple[SlowPage, ...] = ()
    slow_threshold_ms: float = DEFAULT_SLOW_MS
    non_indexable: tuple[NonIndexablePage, ...] = ()
    has_sitemap: bool = False
    sitemap_only: tuple[str, ...] = ()
    links_only: tuple[str, ...] = ()
    images_missing_alt: tuple[MissingAlt, ...] = ()


def audit(
    pages: Iterable[PageRow],
    links: Iterable[LinkRow],
    images: Iterable[ImageRow] = (),
    *,
    slow_threshold_ms: float = DEFAULT_SLOW_MS,
    slow_limit: int = DEFAULT_SLOW_LIMIT,
    start_url: str | None = None,
) -> Audit:
    """Compute the findings of one crawl.

    Slow pages are those answering in at least ``slow_threshold_ms``, slowest first, at most
    ``slow_limit`` of them. Title, h1 and meta description checks cover successful HTML pages.
    ``start_url``, where the crawl began, counts as reached without a link.
    """
    pages = tuple(pages)
    links = tuple(links)
    by_key: dict[str, PageRow] = {}
    for page in pages:
        by_key.setdefault(page_key(page.url), page)
    referrers = referrers_by_key(links)
    counts = Counter(page_key(link.target_url) for link in links)
    checked = _checked_text(pages)
    return Audit(
        broken_links=_broken_links(links, by_key, referrers, counts),
        redirect_chains=_redirect_chains(pages, referrers, counts),
        missing={name: _missing(checked, name) for name in TEXT_FIELDS},
        duplicates={name: _duplicates(checked, name) for name in TEXT_FIELDS},
        slow_pages=_slow_pages(pages, slow_threshold_ms, slow_limit),
        slow_threshold_ms=slow_threshold_ms,
        non_indexable=_non_indexable(checked),
        has_sitemap=any(page.in_sitemap for page in pages),
        sitemap_only=_sitemap_only(pages, referrers, start_url),
        links_only=_links_only(pages, checked, referrers),
        images_missing_alt=tuple(
            MissingAlt(image.page_url, image.src)
            for image in images
            if image.alt is None or not image.alt.strip()
        ),
    )


@lru_cache(maxsize=1 << 18)  # a crawl names each URL many times (links, referrers, pages)
def page_key(url: str) -> str:
    """The key that identifies a page: the crawler's dedupe key, or the text itself when it
    has none (not a URL, or one that cannot be parsed)."""
    if "://" not in url:
        return url
    try:
        return url_key(url)
    except ValueError:
        return url


def is_broken(status: int | None, error: str | None, error_kind: str | None) -> bool:
    """4xx/5xx; no response (DNS, refused, timeout, robots); or a redirect that went nowhere
    (a loop, too many hops), but not one that merely left the site."""
    if status is not None and status >= 400:
        return True
    if error is None:
        return False
    return status is None or (300 <= status < 400 and error_kind != RedirectOutOfScope.kind)


def referrers_by_key(links: Iterable[LinkRow]) -> dict[str, tuple[Referrer, ...]]:
    """Each target key's distinct referrers, sorted by source URL."""
    found: defaultdict[str, set[Referrer]] = defaultdict(set)
    for link in links:
        found[page_key(link.target_url)].add(
            Referrer(link.source_url, link.anchor_text, link.kind, link.source)
        )
    return {
        key: tuple(sorted(refs, key=lambda r: (r.source_url, r.kind, r.anchor_text or "")))
        for key, refs in found.items()
    }


def referring_pages(referrers: Iterable[Referrer]) -> int:
    """How many distinct pages the referrers are: how referrers are counted everywhere."""
    return len({ref.source_url for ref in referrers})


def _broken_links(
    links: tuple[LinkRow, ...],
    by_key: Mapping[str, PageRow],
    referrers: Mapping[str, tuple[Referrer, ...]],
    counts: Mapping[str, int],
) -> tuple[BrokenLink, ...]:
    broken: dict[str, BrokenLink] = {}
    for link in links:
        key = page_key(link.target_url)
        if key in broken:
            continue
        status, error, kind = link.status, link.error, link.error_kind
        if status is None and error is None and (page := by_key.get(key)) is not None:
            status, error, kind = page.status, page.error, page.error_kind
        if is_broken(status, error, kind):
            broken[key] = BrokenLink(
                target_url=link.target_url,
                status=status,
                error=error,
                internal=link.internal,
                referrers=referrers[key],
                pages=referring_pages(referrers[key]),
                links=counts[key],
            )
    return tuple(sorted(broken.values(), key=lambda b: (-b.pages, b.target_url)))


def _redirect_chains(
    pages: tuple[PageRow, ...],
    referrers: Mapping[str, tuple[Referrer, ...]],
    counts: Mapping[str, int],
) -> tuple[RedirectChain, ...]:
    chains = []
    for page in pages:
        if page.redirects:
            key = page_key(page.url)
            refs = referrers.get(key, ())
            chains.append(
                RedirectChain(
                    url=page.url,
                    hops=tuple(page.redirects),
                    final_url=page.final_url,
                    final_status=page.status,
                    referrers=refs,
                    pages=referring_pages(refs),
                    links=counts.get(key, 0),
                )
            )
    return tuple(sorted(chains, key=lambda c: (-len(c.hops), -c.pages, c.url)))


def _checked_text(pages: tuple[PageRow, ...]) -> list[PageRow]:
    """Successful HTML pages, one per document: a URL that redirected to a page crawled in
    its own right is that page again, and is left out so it does not count twice."""
    direct = [page for page in pages if succeeded(page) and is_html(page) and not page.redirects]
    seen = {page_key(page.final_url or page.url) for page in direct}
    for page in pages:
        if succeeded(page) and is_html(page) and page.redirects:
            key = page_key(page.final_url or page.url)
            if key not in seen:
                seen.add(key)
                direct.append(page)
    return direct


def _missing(checked: list[PageRow], name: str) -> tuple[str, ...]:
    return tuple(
        sorted(
            page.url for page in checked if not (value := getattr(page, name)) or not value.strip()
        )
    )


def _duplicates(checked: list[PageRow], name: str) -> tuple[DuplicateGroup, ...]:
    groups: defaultdict[str, list[str]] = defaultdict(list)
    for page in checked:
        value = getattr(page, name)
        if value and (text := " ".join(value.split())):
            groups[text].append(page.url)
    dupes = [
        DuplicateGroup(name, text, tuple(sorted(urls)))
        for text, urls in groups.items()
        if len(urls) > 1
    ]
    return tuple(sorted(dupes, key=lambda g: (-len(g.urls), g.value)))


def _slow_pages(pages: tuple[PageRow, ...], threshold: float, limit: int) -> tuple[SlowPage, ...]:
    slow = [
        SlowPage(page.url, page.response_time_ms, page.size_bytes)
        for page in pages
        if page.response_time_ms is not None and page.response_time_ms >= threshold
    ]
    slow.sort(key=lambda s: (-s.response_time_ms, s.url))
    return tuple(slow[:limit])


def _non_indexable(checked: list[PageRow]) -> tuple[NonIndexablePage, ...]:
    found = []
    for page in checked:
        if page.indexable is not False:
            continue
        canonical = page.canonical
        if canonical and page_key(canonical) != page_key(page.final_url or page.url):
            reason = f"canonical: {canonical}"
        else:
            reason = "noindex"
        found.append(NonIndexablePage(page.url, reason))
    return tuple(sorted(found, key=lambda p: p.url))


def _linked_from_elsewhere(page: PageRow, referrers: Mapping[str, tuple[Referrer, ...]]) -> bool:
    key = page_key(page.url)
    return any(
        ref.kind in NAVIGATION_KINDS and page_key(ref.source_url) != key
        for ref in referrers.get(key, ())
    )


def _sitemap_only(
    pages: tuple[PageRow, ...],
    referrers: Mapping[str, tuple[Referrer, ...]],
    start_url: str | None,
) -> tuple[str, ...]:
    start = None if start_url is None else page_key(start_url)
    return tuple(
        sorted(
            page.url
            for page in pages
            if page.in_sitemap
            and page_key(page.url) != start
            and not _linked_from_elsewhere(page, referrers)
        )
    )


def _links_only(
    pages: tuple[PageRow, ...],
    checked: list[PageRow],
    referrers: Mapping[str, tuple[Referrer, ...]],
) -> tuple[str, ...]:
    """Successful, indexable HTML pages reached by links but absent from the sitemap.

    Empty when the crawl read no sitemap: then every page would be listed.
    """
    if not any(page.in_sitemap for page in pages):
        return ()
    return tuple(
        sorted(
            page.url
            for page in checked
            if not page.in_sitemap
            and not page.redirects  # the sitemap should list where it leads, not the URL
            and page.indexable is not False
            and _linked_from_elsewhere(page, referrers)
        )
    )
