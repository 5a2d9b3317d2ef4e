"""Sitemap checks over a finished crawl: what its sitemaps list that should not be there (errors,
redirects, noindex, canonicalised elsewhere, blocked by robots.txt), what they miss, and their
orphans; and what a generated sitemap lists (:func:`sitemap_entry`). Pure, no I/O; run after
the crawl, from the store.

A page's :attr:`~sitecrawl.Page.in_sitemap` says a sitemap listed its URL (the crawl fetches
every listed URL in scope); orphans and missing pages are the audit's
(:attr:`Audit.sitemap_only`, :attr:`Audit.links_only`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import UTC
from email.utils import parsedate_to_datetime
from typing import Any

from .._exceptions import BlockedByRobots, RedirectOutOfScope
from .._models import Page
from ._checks import Finding
from ._findings import Audit, is_broken, page_key
from ._hreflang import canonical_elsewhere, own_url
from ._rows import is_html, succeeded


def sitemap_findings(found: Audit, pages: Sequence[Page]) -> Iterator[Finding]:
    """Every sitemap finding of a crawl (none when it read no sitemap)."""
    for page in pages:
        if page.in_sitemap:
            yield from _listed(page)
    by_key = {page_key(page.url): page for page in pages}
    for url in found.sitemap_only:
        yield ("sitemap.orphan", url, "in a sitemap, but no crawled page links to it", {})
    for url in found.links_only:
        listed = by_key.get(page_key(url))
        if listed is not None and canonical_elsewhere(listed) is not None:
            continue  # rightly left out: the sitemap lists its canonical
        yield ("sitemap.missing", url, "an indexable page that no sitemap lists", {})


def _listed(page: Page) -> Iterator[Finding]:
    url = page.url
    if page.error_kind == BlockedByRobots.kind:
        yield ("sitemap.blocked", url, "in a sitemap, but robots.txt disallows it", {})
    elif page.redirects or page.error_kind == RedirectOutOfScope.kind:
        final = page.location if page.error_kind == RedirectOutOfScope.kind else page.final_url
        detail: dict[str, Any] = {"final_url": final, "hops": [list(h) for h in page.redirects]}
        yield ("sitemap.redirect", url, f"in a sitemap, but redirects to {final}", detail)
    elif is_broken(page.status, page.error, page.error_kind):
        why = f"HTTP {page.status}" if page.status is not None else page.error_kind or "failed"
        detail = {"status": page.status, "error_kind": page.error_kind}
        yield ("sitemap.broken", url, f"in a sitemap, but answers {why}", detail)
    elif succeeded(page) and is_html(page):
        if page.indexable is False:
            yield ("sitemap.non_indexable", url, "in a sitemap, but noindex", {})
        if (canonical := canonical_elsewhere(page)) is not None:
            yield (
                "sitemap.canonicalised",
                own_url(page),
                f"in a sitemap, but its canonical is {canonical}",
                {"canonical": canonical},
            )


def sitemap_entry(page: Page) -> tuple[str, str | None] | None:
    """What a generated sitemap lists for ``page``: ``(URL, lastmod)`` for an indexable,
    self-canonical HTML page that answered 200 (at the URL a redirect ended on), ``lastmod``
    its ``Last-Modified`` as a W3C datetime (None without one); None for any other page."""
    if page.status != 200 or page.error is not None or not is_html(page):
        return None
    if page.indexable is not True or canonical_elsewhere(page) is not None:
        return None
    return own_url(page), w3c_datetime(page.last_modified)


def w3c_datetime(http_date: str | None) -> str | None:
    """An HTTP date (``Last-Modified``) as a W3C datetime in UTC, or None when it is none."""
    if not http_date:
        return None
    try:
        when = parsedate_to_datetime(http_date)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:  # "-0000": UTC, as RFC 9110 dates are
        when = when.replace(tzinfo=UTC)
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S+00:00")
