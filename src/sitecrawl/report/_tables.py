"""The report's tables as plain JSON-ready specs: columns with a display type, rows as lists.

Column types (drawn by ``assets/report.js``): text, url, status, num, ms, bytes, bool, and the
lists urls, refs ([source, anchor, kind]) and hops ([url, status]).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from .._audit import TEXT_FIELDS, Audit, Referrer, TextField
from ._data import ReportData

ColumnType: TypeAlias = Literal[
    "text", "url", "status", "num", "ms", "bytes", "bool", "urls", "refs", "hops"
]

FIELD_LABELS: dict[TextField, str] = {
    "title": "title",
    "h1": "h1",
    "meta_description": "meta description",
}


@dataclass(frozen=True, slots=True)
class Table:
    id: str
    title: str
    help: str
    columns: tuple[tuple[str, ColumnType], ...]
    rows: list[list[Any]]
    is_issue: bool = True
    """Whether a row here is a problem (drawn red in the contents) or just information."""

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "columns": [{"label": label, "type": kind} for label, kind in self.columns],
            "rows": self.rows,
        }


def _refs(referrers: tuple[Referrer, ...]) -> list[list[str | None]]:
    return [[r.source_url, r.anchor_text, r.kind] for r in referrers]


def build_tables(data: ReportData, found: Audit) -> list[Table]:
    tables = [
        Table(
            "broken",
            "Broken links",
            "Link targets that answered 4xx/5xx or not at all, with every page linking to them.",
            (
                ("Target", "url"),
                ("Status", "status"),
                ("Reason", "text"),
                ("Scope", "text"),
                ("Referrers", "num"),
                ("Linked from", "refs"),
            ),
            [
                [
                    b.target_url,
                    b.status,
                    b.reason,
                    "internal" if b.internal else "external",
                    len(b.referrers),
                    _refs(b.referrers),
                ]
                for b in found.broken_links
            ],
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
                    _refs(c.referrers),
                ]
                for c in found.redirect_chains
            ],
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
                [FIELD_LABELS[name], g.value, len(g.urls), list(g.urls)]
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
        ),
        Table(
            "pages",
            "All pages",
            "Every crawled URL, failures included.",
            (
                ("URL", "url"),
                ("Status", "status"),
                ("Depth", "num"),
                ("Title", "text"),
                ("Time", "ms"),
                ("Size", "bytes"),
                ("Words", "num"),
                ("Indexable", "bool"),
                ("Error", "text"),
            ),
            [
                [
                    p.url,
                    p.status,
                    p.depth,
                    p.title,
                    p.response_time_ms,
                    p.size_bytes,
                    p.word_count,
                    p.indexable,
                    p.error,
                ]
                for p in data.pages
            ],
            is_issue=False,
        ),
        Table(
            "images",
            "All images",
            "Every image found on a crawled page, with its alt text.",
            (("Page", "url"), ("Image", "url"), ("Alt text", "text")),
            [[i.page_url, i.src, i.alt] for i in data.images],
            is_issue=False,
        ),
    ]
    return tables
