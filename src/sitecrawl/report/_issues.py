"""The report's Issues section: every finding of the crawl, one row each
(:func:`sitecrawl.audit.issue_rows`), filtered by check and severity in the page, and the count
of each check with what it means (docs/checks.md says how to fix it). Pure."""

from __future__ import annotations

from ..audit import (
    CHECKS,
    SEVERITIES,
    Audit,
    IssueRow,
    issue_counts,
    issue_rows,
    near_duplicates,
    signed_pages,
)
from ._data import ReportData
from ._table import Table, cell_text


def issue_tables(data: ReportData, found: Audit) -> list[Table]:
    """The issues table (check and severity as menus) and the count per check."""
    threshold = data.meta.near_dup_threshold
    rows: list[IssueRow] = list(issue_rows(found, data.pages, near_dup_threshold=threshold))
    counts = issue_counts(rows)
    return [
        Table(
            "issues",
            "Issues",
            "Every finding of the crawl, worst first: a page is in a row per finding. Pick a"
            " check or a severity to filter; docs/checks.md says what each check means and how"
            " to fix it.",
            (
                ("Check", "text"),
                ("Severity", "text"),
                ("URL", "url"),
                ("Message", "text"),
                ("Detail", "text"),
            ),
            [
                [row.check, row.severity, row.url, row.message, cell_text(row.detail or None)]
                for row in rows
            ],
            export="issues",
            facets=(0, 1),
        ),
        Table(
            "issuecounts",
            "Issues by check",
            "How many rows each check found.",
            (("Check", "text"), ("Severity", "text"), ("Rows", "num"), ("Meaning", "text")),
            [[name, *_about(name, rows, n)] for name, n in counts.items()],
            export="issues",
        ),
        _clusters(data),
    ]


def _about(name: str, rows: list[IssueRow], n: int) -> tuple[str, int, str]:
    """A check's severity, row count and meaning: a listed check's own; an ``a11y.<rule>``
    check's worst row's severity and axe-core's help for it."""
    if (check := CHECKS.get(name)) is not None:
        return check.severity, n, check.summary
    mine = [row for row in rows if row.check == name]
    worst = min(mine, key=lambda row: SEVERITIES.index(row.severity))
    return worst.severity, n, str(worst.detail.get("help") or "an axe-core rule")


def _clusters(data: ReportData) -> Table:
    """The near-duplicate clusters (pages crawled with ``--near-duplicates``), a row a page."""
    found = near_duplicates(signed_pages(data.pages), data.meta.near_dup_threshold)
    return Table(
        "contentdups",
        "Duplicate content",
        "Pages whose main content another page has (similarity 100 %) or nearly has (at least"
        f" {data.meta.near_dup_threshold:.0%} of their 5-word shingles in common, estimated by"
        " MinHash), grouped in clusters. Needs a crawl with --near-duplicates.",
        (
            ("Cluster", "num"),
            ("Pages", "num"),
            ("URL", "url"),
            ("Similar to", "url"),
            ("Similarity", "text"),
        ),
        [
            [row.cluster, row.size, row.url, row.similar_to, f"{row.similarity:.0%}"]
            for row in found
        ],
        export="near_duplicates",
    )
