"""What changed since an earlier crawl, drawn: a count of each kind of change, then a table of
each kind, most severe first (the order of :data:`~sitecrawl._diff.KINDS`), each cut to
``max_rows`` rows with a line naming the ``sitecrawl diff`` command that writes them all.

The section of ``sitecrawl report`` when the state file keeps an earlier crawl
(:func:`changes_section`), and the page of ``sitecrawl diff --report`` (:func:`render_changes`).
"""

from __future__ import annotations

from datetime import UTC, datetime
from html import escape
from typing import TYPE_CHECKING, Any

from .._diff import KINDS
from ._html import NOSCRIPT, card, contents, document, section
from ._table import MAX_LIST, ColumnType, Table, cell_list, cell_text

if TYPE_CHECKING:
    from .._diff import Change, ChangeSet

#: Rows each kind's table embeds; the rest are counted and left to ``sitecrawl diff -o``.
MAX_CHANGE_ROWS = 10_000

#: Each kind's table: its title and what a row says.
TITLES: dict[str, tuple[str, str]] = {
    "new-broken": ("New broken links", "URLs answering an error now, and the pages linking there."),
    "status": ("Status changed", "Pages answering another HTTP status."),
    "removed": ("Pages gone", "Pages of the earlier crawl this crawl did not reach."),
    "blocked": ("Newly blocked", "Pages robots.txt blocks now."),
    "redirect": (
        "Redirects moved",
        "URLs redirecting elsewhere (where they lead is not compared).",
    ),
    "noindex": (
        "Indexability changed",
        "Pages that became indexable, or stopped being so.",
    ),
    "canonical": ("Canonical changed", "Pages naming another canonical URL."),
    "added": ("New pages", "Pages this crawl reached and the earlier one did not."),
    "title": ("Titles changed", "Pages with another title."),
    "h1": ("H1 changed", "Pages with another first h1."),
    "meta-description": ("Meta descriptions changed", "Pages with another meta description."),
    "word-count": ("Word counts changed", "Word counts moved by more than a fifth (and 10 words)."),
    "extracted": ("Extracted values changed", "Custom extraction values (-x), a row per rule."),
    "body": ("Bodies changed", "Pages whose body is another one (another hash)."),
    "content": (  # markdown (issue 31)
        "Content changed",
        "Pages whose main content (--markdown) changed: the first line that differs.",
    ),
}
_TONES = {"error": "bad", "warning": "warn", "info": ""}


def _columns(kind: str) -> tuple[tuple[str, ColumnType], ...]:
    if kind == "new-broken":
        return (
            ("URL", "url"),
            ("Before", "text"),
            ("Now", "text"),
            ("Pages", "num"),
            ("Links", "num"),
            ("Linked from", "urls"),
        )
    if kind in ("added", "removed"):
        return (("URL", "url"), ("Status", "status"))
    if kind == "status":
        return (("URL", "url"), ("Before", "status"), ("Now", "status"))
    if kind == "redirect":
        return (("URL", "url"), ("Led to", "url"), ("Leads to", "url"))
    if kind == "extracted":
        return (("URL", "url"), ("Rule", "text"), ("Before", "text"), ("Now", "text"))
    return (("URL", "url"), ("Before", "text"), ("Now", "text"))


def _row(change: Change) -> list[Any]:
    kind = change.kind
    if kind == "new-broken":  # the answer before (None: a new URL) and now, who links to it
        pages = change.linking_pages or 0
        linking = cell_list(list(change.linked_from[:MAX_LIST]), pages)
        links = change.linking_links or 0
        return [change.url, cell_text(change.old), cell_text(change.new), pages, links, linking]
    if kind == "added":
        return [change.url, change.new]
    if kind in ("removed", "status", "redirect"):
        return [change.url, change.old, *([] if kind == "removed" else [change.new])]
    if kind == "noindex":
        return [change.url, *("indexable" if v else "noindex" for v in (change.old, change.new))]
    if kind == "extracted":
        return [
            change.url,
            (change.field or "").removeprefix("x:"),
            cell_text(change.old),
            cell_text(change.new),
        ]
    return [change.url, cell_text(change.old), cell_text(change.new)]


def change_tables(found: ChangeSet, *, max_rows: int = MAX_CHANGE_ROWS) -> list[Table]:
    """A table of each kind of change found, most severe first, cut to ``max_rows`` rows."""
    rows: dict[str, list[list[Any]]] = {}
    for change in found.changes:
        rows.setdefault(change.kind, []).append(_row(change))
    return [
        Table(
            f"changes-{kind}",
            TITLES[kind][0],
            f"{kind} ({KINDS[kind]}): {TITLES[kind][1]}",
            _columns(kind),
            rows[kind],
            is_issue=KINDS[kind] != "info",
            command=f"sitecrawl diff {found.command} -o changes.csv",
        ).capped(max_rows)
        for kind in KINDS
        if kind in rows
    ]


def changes_section(found: ChangeSet, tables: list[Table]) -> str:
    """The heading, the count of each kind and the tables (:func:`change_tables`)."""

    counts = found.counts()
    total = len(found.changes)
    cards = [card(f"{n:,}", kind, _TONES[KINDS[kind]]) for kind, n in counts.items()] or [
        card("0", "changes", "good")
    ]
    tone = "some" if any(KINDS[kind] != "info" for kind in counts) else "zero"
    command = f"sitecrawl diff {found.command} -o changes.csv"
    return "".join(
        [
            f'<section class="block" id="changes"><h2>Changes since {escape(found.since)}'
            f'<span class="pill {tone}">{total:,}</span></h2>',
            f'<p class="help">{escape(found.since)} → {escape(found.until)}, most severe first.'
            " Every change as"
            f" a row: <code>{escape(command)}</code></p>",
            f'<div class="cards">{"".join(cards)}</div></section>\n',
            *(section(table, "") for table in tables),
        ]
    )


def render_changes(
    found: ChangeSet,
    *,
    generated_at: datetime | None = None,
    max_rows: int = MAX_CHANGE_ROWS,
) -> str:
    """The changes as one HTML document (``sitecrawl diff --report``): the report's styles,
    script and safety (:mod:`sitecrawl.report._render`)."""

    tables = change_tables(found, max_rows=max_rows)
    when = (generated_at or datetime.now(UTC)).strftime("%Y-%m-%d %H:%M UTC")
    site = f"{found.base_url} · " if found.base_url else ""
    return document(
        title=f"Changes since {found.since}" + (f" · {found.base_url}" if found.base_url else ""),
        heading="Changes",
        sub=f"{site}{found.since} → {found.until} · generated {when}",
        body=[contents(tables) if tables else "", NOSCRIPT, changes_section(found, tables)],
        tables=tables,
    )
