"""One issues table: every finding of a crawl as a row. Pure, no I/O.

:func:`issue_rows` reads the :class:`~sitecrawl.audit.Audit` of a crawl (broken links,
redirects, missing and duplicate text, slow and non-indexable pages, images without alt, the
sitemap's orphans and missing pages) and the pages themselves (hreflang, sitemap URLs,
canonicals), and yields one :class:`IssueRow` per finding: a page can be in several rows. The
checks, their names and severities are :data:`~sitecrawl.audit._checks.CHECKS`; what each
means and how to fix it, ``docs/checks.md``. It runs once the crawl has ended, over the records
read back from the store (``export -t issues``, the report, ``check --fail-on``): none of it is
on the crawl's path.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from .._models import Page
from ._checks import (
    A11Y,
    A11Y_SEVERITY,
    CHECKS,
    SEVERITIES,
    Finding,
    IssueRow,
    Severity,
    is_a11y,
    severity_at_least,
)
from ._findings import DEFAULT_SLOW_MS, TEXT_FIELDS, Audit, audit
from ._hreflang import canonical_elsewhere, documents, hreflang_findings, own_url
from ._neardup import (
    DEFAULT_NEAR_DUP_THRESHOLD,
    near_duplicate_findings,
    near_duplicates,
    signed_pages,
)
from ._rows import ImageRow, LinkRow
from ._sitemapaudit import sitemap_findings
from ._structured import structured_data_issues

#: How many referring pages a link finding's detail names (``pages`` counts them all).
REFERRERS_KEPT = 10

_LABELS = {"title": "title", "h1": "h1", "meta_description": "meta description"}


def issue_rows(
    found: Audit,
    pages: Sequence[Page],
    extra: Iterable[Finding] = (),
    *,
    near_dup_threshold: float = DEFAULT_NEAR_DUP_THRESHOLD,
) -> Iterator[IssueRow]:
    """Every finding of one crawl, worst severity first, then by check (in
    :data:`CHECKS` order) and URL. ``found`` is :func:`~sitecrawl.audit.audit` of ``pages``;
    ``extra``: findings of other analyses of the crawl, ``(check, url, message, detail)``
    (each check listed in :data:`CHECKS` and docs/checks.md); ``near_dup_threshold``: the
    near-duplicate audit's (pages crawled with ``--near-duplicates``; else none)."""
    order = {name: i for i, name in enumerate(CHECKS)}
    last = len(order)  # a11y.<rule>: after the listed checks
    rows = [_row(finding) for finding in (*_findings(found, pages), *extra)]
    similar = near_duplicates(signed_pages(pages), near_dup_threshold)
    rows += map(_row, near_duplicate_findings(similar))
    rows += structured_data_issues(pages)  # pages crawled with --structured-data; else none
    rows.sort(
        key=lambda r: (SEVERITIES.index(r.severity), order.get(r.check, last), r.check, r.url)
    )
    return iter(rows)


def crawl_issues(
    pages: Sequence[Page],
    links: Iterable[LinkRow],
    images: Iterable[ImageRow] = (),
    *,
    start_url: str | None = None,
    slow_threshold_ms: float = DEFAULT_SLOW_MS,
    extra: Iterable[Finding] = (),
    near_dup_threshold: float = DEFAULT_NEAR_DUP_THRESHOLD,
) -> list[IssueRow]:
    """The issues of a crawl's rows (:func:`~sitecrawl.audit.site_rows`, or a store's as the
    report reads them): :func:`~sitecrawl.audit.audit` of them, every slow page included;
    ``extra`` and ``near_dup_threshold`` as for :func:`issue_rows`."""
    found = audit(
        pages,
        links,
        images,
        slow_threshold_ms=slow_threshold_ms,
        slow_limit=max(1, len(pages)),
        start_url=start_url,
    )
    return list(issue_rows(found, pages, extra, near_dup_threshold=near_dup_threshold))


def failing(
    rows: Iterable[IssueRow], *, checks: Iterable[str] = (), severity: Severity | None = None
) -> list[IssueRow]:
    """The rows that fail a CI run: those of the named ``checks``, and those of ``severity``
    or worse."""
    named = frozenset(checks)
    return [
        row
        for row in rows
        if row.check in named
        or (A11Y in named and is_a11y(row.check))
        or (severity is not None and severity_at_least(row.severity, severity))
    ]


def _row(finding: Finding) -> IssueRow:
    name, url, message, detail = finding
    if is_a11y(name):
        severity = A11Y_SEVERITY.get(str(detail.get("impact")), "warning")
        return IssueRow(url, name, severity, message, detail)
    if (check := CHECKS.get(name)) is None:
        raise ValueError(f"unknown check {name!r}: list it in CHECKS and docs/checks.md")
    return IssueRow(url, name, check.severity, message, detail)


def _findings(found: Audit, pages: Sequence[Page]) -> Iterator[Finding]:
    for broken in found.broken_links:
        yield (
            "link.broken",
            broken.target_url,
            f"{broken.reason}, linked from {_pages(broken.pages)}",
            {
                "status": broken.status,
                "error": broken.error,
                "internal": broken.internal,
                "pages": broken.pages,
                "links": broken.links,
                "linked_from": _sources(ref.source_url for ref in broken.referrers),
            },
        )
    for chain in found.redirect_chains:
        hops = len(chain.hops)
        yield (
            "redirect.chain" if hops > 1 else "link.redirect",
            chain.url,
            f"redirects {hops} time{'s' * (hops != 1)} to {chain.final_url}",
            {
                "hops": [list(hop) for hop in chain.hops],
                "final_url": chain.final_url,
                "final_status": chain.final_status,
                "pages": chain.pages,
                "linked_from": _sources(ref.source_url for ref in chain.referrers),
            },
        )
    for name in TEXT_FIELDS:
        for url in found.missing.get(name, ()):
            yield (f"{name}.missing", url, f"no {_LABELS[name]}", {})
        for group in found.duplicates.get(name, ()):
            for url in group.urls:
                others = [other for other in group.urls if other != url]
                yield (
                    f"{name}.duplicate",
                    url,
                    f"{_LABELS[name]} shared with {_pages(len(others))}: {group.value!r}",
                    {"value": group.value, "pages": len(group.urls), "others": _sources(others)},
                )
    for slow in found.slow_pages:
        yield (
            "page.slow",
            slow.url,
            f"answered in {slow.response_time_ms:,.0f} ms"
            f" (threshold {found.slow_threshold_ms:,.0f} ms)",
            {"response_time_ms": slow.response_time_ms, "threshold_ms": found.slow_threshold_ms},
        )
    for page in found.non_indexable:
        yield ("page.noindex", page.url, "noindex: search engines are told not to index it", {})
    for document in documents(pages):
        if (canonical := canonical_elsewhere(document)) is not None:
            yield (
                "page.canonicalised",
                own_url(document),
                f"canonical is another URL: {canonical}",
                {"canonical": canonical},
            )
    for image in found.images_missing_alt:
        yield (
            "image.missing_alt",
            image.page_url,
            f"image without alt text: {image.src}",
            {"src": image.src},
        )
    yield from hreflang_findings(pages)
    yield from sitemap_findings(found, pages)
    yield from a11y_findings(pages)


def a11y_findings(pages: Sequence[Page]) -> Iterator[Finding]:
    """A row per axe-core rule a rendered page breaks (``--a11y``): ``a11y.<rule>``, its
    impact, help, how many elements and the first ones' selectors in the detail."""
    for page in pages:
        for violation in page.a11y:
            rule, nodes = violation.get("rule"), violation.get("nodes") or 0
            if not isinstance(rule, str) or not is_a11y(f"{A11Y}.{rule}"):
                continue
            yield (
                f"{A11Y}.{rule}",
                own_url(page),
                f"{violation.get('help') or rule} ({nodes} element{'s' * (nodes != 1)})",
                {
                    "impact": violation.get("impact"),
                    "help": violation.get("help"),
                    "help_url": violation.get("help_url"),
                    "nodes": nodes,
                    "selectors": violation.get("selectors") or [],
                },
            )


def _pages(n: int) -> str:
    return f"{n:,} page{'s' * (n != 1)}"


def _sources(urls: Iterable[str]) -> list[str]:
    """The first :data:`REFERRERS_KEPT` distinct URLs."""
    kept: dict[str, None] = {}
    for url in urls:
        kept.setdefault(url)
        if len(kept) == REFERRERS_KEPT:
            break
    return list(kept)


def issue_counts(rows: Iterable[IssueRow]) -> dict[str, int]:
    """Rows per check, in :data:`CHECKS` order, then the ``a11y.<rule>`` checks (checks
    without a row left out)."""
    counts = dict.fromkeys(CHECKS, 0)
    for row in rows:
        counts[row.check] = counts.get(row.check, 0) + 1
    return {name: n for name, n in counts.items() if n}
