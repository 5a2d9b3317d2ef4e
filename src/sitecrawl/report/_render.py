"""HTML assembly: one self-contained file with inline CSS, JS, SVG and a JSON data block.

Safety: strings drawn on the server go through :func:`html.escape`; table data travels as JSON
in a ``<script type="application/json">`` block with ``<``, ``>``, ``&``, U+2028 and U+2029
escaped, so no crawled text can close the block; the script writes it with ``textContent`` only,
bidi controls shown as escapes (``\\u202e``: no crawled text reads backwards).
A Content-Security-Policy admits exactly the inline style and script by their SHA-256 hashes and
forbids every load, so even a mistake here cannot fetch or run anything else.
"""

from __future__ import annotations

import statistics
from datetime import UTC, datetime
from html import escape
from typing import TYPE_CHECKING

from .._progress import size_text
from ..audit import DEFAULT_SLOW_LIMIT, DEFAULT_SLOW_MS, Audit, audit
from ._charts import MS_BUCKETS, SIZE_BUCKETS, bar_chart, bucket_bars, depth_bars, status_bars
from ._data import ReportData
from ._html import NOSCRIPT, card, contents, document, section
from ._table import MAX_ROWS, Table
from ._tables import build_tables

if TYPE_CHECKING:
    from .._diff import ChangeSet


def render_report(
    data: ReportData,
    *,
    findings: Audit | None = None,
    slow_threshold_ms: float = DEFAULT_SLOW_MS,
    slow_limit: int = DEFAULT_SLOW_LIMIT,
    generated_at: datetime | None = None,
    max_rows: int = MAX_ROWS,
    export_source: str = "STATE.db",
    changes: ChangeSet | None = None,
) -> str:
    """The report as one HTML document. ``findings`` defaults to :func:`audit` of ``data``.

    Each table embeds at most ``max_rows`` rows; past that it says how many more there are
    and the ``sitecrawl export`` command that writes them all (from ``export_source``: the
    state file's path, or ``--redis URL --crawl-id ID``). ``changes``: what changed since an
    earlier crawl, a section after the charts (:mod:`sitecrawl.report._changes`)."""
    if findings is None:
        findings = audit(
            data.pages,
            data.links,
            data.images,
            slow_threshold_ms=slow_threshold_ms,
            slow_limit=slow_limit,
            start_url=data.meta.base_url,
        )
    from ._issues import issue_tables

    issues = [table.capped(max_rows) for table in issue_tables(data, findings)]
    from ._rendered import rendered_tables

    rendered = [table.capped(max_rows) for table in rendered_tables(data)]
    tables = issues + rendered + build_tables(data, findings, max_rows=max_rows)
    changed: list[Table] = []
    changes_part = ""
    if changes is not None:
        from ._changes import change_tables, changes_section

        changed = change_tables(changes)
        changes_part = changes_section(changes, changed)
    when = (generated_at or datetime.now(UTC)).strftime("%Y-%m-%d %H:%M UTC")
    base = data.meta.base_url
    return document(
        title=f"Crawl report · {base}",
        heading="Crawl report",
        sub=f"{base} · generated {when}",
        body=[
            _summary(data, findings),
            contents([*changed, *tables]),
            _charts(data),
            changes_part,
            NOSCRIPT,
            *(section(table, export_source) for table in tables),
        ],
        tables=[*changed, *tables],
        export_source=export_source,
    )


def _summary(data: ReportData, found: Audit) -> str:
    pages = data.pages
    by_class = {"2": 0, "3": 0, "4": 0, "5": 0}
    no_response = 0
    for page in pages:
        if page.status is None:
            no_response += 1
        else:
            key = str(page.status)[0]
            if key in by_class:
                by_class[key] += 1
    times = [p.response_time_ms for p in pages if p.response_time_ms is not None]
    # A page revalidated by a 304 kept its previous record: no body was transferred for it.
    total_bytes = sum(p.size_bytes or 0 for p in pages if not p.revalidated)
    revalidated = sum(1 for p in pages if p.revalidated)
    duration = data.meta.duration
    rate = data.meta.pages_per_second
    errors = sum(1 for p in pages if p.error is not None)
    cards = [
        card(f"{len(pages):,}", "pages crawled"),
        card(f"{by_class['2']:,}", "2xx OK", "good"),
        card(f"{by_class['3']:,}", "3xx", ""),
        card(f"{by_class['4']:,}", "4xx client errors", "warn" if by_class["4"] else ""),
        card(f"{by_class['5']:,}", "5xx server errors", "bad" if by_class["5"] else ""),
        card(f"{no_response:,}", "no response", "bad" if no_response else ""),
        card(f"{errors:,}", "pages with errors", "bad" if errors else "good"),
        card(
            f"{len(found.broken_links):,}",
            "broken link targets",
            "bad" if found.broken_links else "good",
        ),
        card(_duration(duration), "duration"),
        card("—" if rate is None else f"{rate:,.1f}", "pages / s"),
        card("—" if not times else f"{statistics.median(times):,.0f} ms", "median response"),
        card(size_text(total_bytes), "downloaded"),
    ]
    if revalidated:
        cards.insert(2, card(f"{revalidated:,}", "of them 304 not modified (record kept)"))
    return f'<div class="cards">{"".join(cards)}</div>\n'


def _charts(data: ReportData) -> str:
    pages = data.pages
    charts = [
        ("Status codes", status_bars(pages)),
        ("Depth", depth_bars(pages)),
        (
            "Response time",
            bucket_bars(
                (p.response_time_ms for p in pages if p.response_time_ms is not None), MS_BUCKETS
            ),
        ),
        (
            "Page size",
            bucket_bars((p.size_bytes for p in pages if p.size_bytes is not None), SIZE_BUCKETS),
        ),
    ]
    parts = [
        f'<div class="card chart"><h3>{escape(title)}</h3>{bar_chart(title, bars)}</div>'
        for title, bars in charts
    ]
    return f'<div class="charts">{"".join(parts)}</div>\n'


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min" if hours else f"{minutes} min {secs:02d} s"
