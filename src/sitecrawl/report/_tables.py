"""The report's tables as plain JSON-ready specs: columns with a display type, rows as lists.

Column types (drawn by ``assets/report.js``): text, url, status, num, ms, bytes, bool, and the
lists urls, refs ([source, anchor, kind, html or js]) and hops ([url, status]).

A table embeds at most ``max_rows`` rows (:data:`MAX_ROWS`, in the audit's order) and a list
cell at most :data:`MAX_LIST` items (a broken link in every page's menu would otherwise carry
every page of the site), so that the report of any crawl stays a file a browser opens;
:attr:`Table.total` counts every row and :attr:`Table.export` names the ``sitecrawl export``
table that holds them all. A list cut short is ``{"items": [...], "total": N}`` (:func:`cell_list`)
and the table's JSON names the command listing every item (``more``). Referrers are counted
as everywhere: distinct pages (each listed once, with its first link's text), links beside.
"""

from __future__ import annotations

from operator import attrgetter
from typing import Any, cast

from .._models import AUDIT_TEXTS, REPORT_COLUMNS
from ..audit import TEXT_FIELDS, Audit, Referrer
from ._data import ReportData
from ._table import MAX_LIST, MAX_ROWS, ColumnType, Table, cell_list

#: Each text field the audit checks -> its label (``audit_text`` on the record's field).
FIELD_LABELS: dict[str, str] = AUDIT_TEXTS
#: The "All pages" table's columns: the record's fields with a ``report`` column.
PAGE_COLUMNS: tuple[tuple[str, ColumnType], ...] = tuple(
    (column.heading, cast(ColumnType, column.type)) for _, column in REPORT_COLUMNS
)
_page_values = attrgetter(*(name for name, _ in REPORT_COLUMNS))


def _refs(referrers: tuple[Referrer, ...], pages: int) -> list[Any] | dict[str, Any]:
    """The referring pages, each once (its first link's text and kind)."""
    first: dict[str, Referrer] = {}
    for ref in referrers:
        if ref.source_url not in first:
            first[ref.source_url] = ref
            if len(first) == MAX_LIST:
                break
    items = [[r.source_url, r.anchor_text, r.kind, r.source] for r in first.values()]
    return cell_list(items, pages)


def build_tables(data: ReportData, found: Audit, *, max_rows: int = MAX_ROWS) -> list[Table]:
    """The report's tables, each cut to ``max_rows`` rows."""
    tables = [
        Table(
            "broken",
            "Broken links",
            "Link targets that answered 4xx/5xx or not at all: how many distinct pages link"
            " to them, by how many links, and the pages (each once, with its first link's text).",
            (
                ("Target", "url"),
                ("Status", "status"),
                ("Reason", "text"),
                ("Scope", "text"),
                ("Pages", "num"),
                ("Links", "num"),
                ("Linked from", "refs"),
            ),
            [
                [
                    b.target_url,
                    b.status,
                    b.reason,
                    "internal" if b.internal else "external",
                    b.pages,
                    b.links,
                    _refs(b.referrers, b.pages),
                ]
                for b in found.broken_links
            ],
            export="links",
        ),
        Table(
            "redirects",
            "Redirect chains",
            "URLs that redirected before answering: each hop, where they ended, who links there.",
            (
                ("URL", "url"),
                ("Hops", "num"),
                ("Chain", "hops"),
                ("Final URL", "url"),
                ("Final", "status"),
                ("Linked from", "refs"),
            ),
            [
                [
                    c.url,
                    len(c.hops),
                    [list(hop) for hop in c.hops],
                    c.final_url,
                    c.final_status,
                    _refs(c.referrers, c.pages),
                ]
                for c in found.redirect_chains
            ],
            export="redirects",
            lists_from="links",
        ),
        Table(
            "missing",
            "Missing titles, h1 and meta descriptions",
            "Successful HTML pages without a title, an h1 or a meta description.",
            (("Missing", "text"), ("Page", "url")),
            [
                [FIELD_LABELS[name], url]
                for name in TEXT_FIELDS
                for url in found.missing.get(name, ())
            ],
        ),
        Table(
            "duplicates",
            "Duplicate titles, h1 and meta descriptions",
            "The same text on several pages (whitespace collapsed).",
            (("Field", "text"), ("Text", "text"), ("Pages", "num"), ("URLs", "urls")),
            [
                [FIELD_LABELS[name], g.value, len(g.urls), cell_list(list(g.urls), len(g.urls))]
                for name in TEXT_FIELDS
                for g in found.duplicates.get(name, ())
            ],
        ),
        Table(
            "slow",
            "Slow pages",
            f"Pages answering in {found.slow_threshold_ms:,.0f} ms or more, slowest first.",
            (("Page", "url"), ("Response time", "ms"), ("Size", "bytes")),
            [[s.url, s.response_time_ms, s.size_bytes] for s in found.slow_pages],
        ),
        Table(
            "nonindexable",
            "Non-indexable pages",
            "Successful pages that search engines are told not to index, or to index elsewhere.",
            (("Page", "url"), ("Reason", "text")),
            [[p.url, p.reason] for p in found.non_indexable],
        ),
        Table(
            "sitemap",
            "Sitemap vs links",
            "Pages listed in the sitemap that no page links to, and linked pages missing from it."
            if found.has_sitemap
            else "No sitemap was read during this crawl.",
            (("Page", "url"), ("Found", "text")),
            [[url, "sitemap only"] for url in found.sitemap_only]
            + [[url, "links only"] for url in found.links_only],
        ),
        Table(
            "noalt",
            "Images without alt text",
            "Images with a missing or empty alt attribute.",
            (("Page", "url"), ("Image", "url")),
            [[m.page_url, m.src] for m in found.images_missing_alt],
            export="images",
        ),
        Table(
            "pages",
            "All pages",
            "Every crawled URL, failures included.",
            PAGE_COLUMNS,
            [list(_page_values(p)) for p in data.pages],
            is_issue=False,
        ),
        Table(
            "images",
            "All images",
            "Every image found on a crawled page, with its alt text.",
            (("Page", "url"), ("Image", "url"), ("Alt text", "text")),
            [[i.page_url, i.src, i.alt] for i in data.images],
            is_issue=False,
            export="images",
        ),
    ]
    from ._extraction import extraction_tables
    from ._javascript import javascript_tables

    # Before the two lists of everything.
    tables[-2:-2] = javascript_tables(data.pages) + extraction_tables(data.pages)
    return [table.capped(max_rows) for table in tables]
