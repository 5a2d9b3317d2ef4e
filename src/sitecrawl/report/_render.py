"""HTML assembly: one self-contained file with inline CSS, JS, SVG and a JSON data block.

Safety: strings drawn on the server go through :func:`html.escape`; table data travels as JSON
in a ``<script type="application/json">`` block with ``<``, ``>``, ``&``, U+2028 and U+2029
escaped, so no crawled text can close the block; the script writes it with ``textContent`` only,
bidi controls shown as escapes (``\\u202e``: no crawled text reads backwards).
A Content-Security-Policy admits exactly the inline style and script by their SHA-256 hashes and
forbids every load, so even a mistake here cannot fetch or run anything else.
"""

from __future__ import annotations

import base64
import hashlib
import json
import statistics
from datetime import UTC, datetime
from functools import cache
from html import escape
from importlib.resources import files
from typing import TYPE_CHECKING, Any

from .. import _version
from ..audit._findings import DEFAULT_SLOW_LIMIT, DEFAULT_SLOW_MS, Audit, audit
from ._charts import MS_BUCKETS, SIZE_BUCKETS, bar_chart, bucket_bars, depth_bars, status_bars
from ._data import ReportData
from ._tables import MAX_ROWS, Table, build_tables

if TYPE_CHECKING:
    from .._diff import ChangeSet

_JSON_ESCAPES = (
    ("<", "\\u003c"),
    (">", "\\u003e"),
    ("&", "\\u0026"),
    ("\u2028", "\\u2028"),
    ("\u2029", "\\u2029"),
)


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
    tables = build_tables(data, findings, max_rows=max_rows)
    changed: list[Table] = []
    section = ""
    if changes is not None:
        from ._changes import change_tables, changes_section

        changed = change_tables(changes)
        section = changes_section(changes, changed)
    when = (generated_at or datetime.now(UTC)).strftime("%Y-%m-%d %H:%M UTC")
    base = data.meta.base_url
    return document(
        title=f"Crawl report · {base}",
        heading="Crawl report",
        sub=f"{base} · generated {when}",
        body=[
            _summary(data, findings),
            _contents([*changed, *tables]),
            _charts(data),
            section,
            NOSCRIPT,
            *(_section(table, export_source) for table in tables),
        ],
        tables=[*changed, *tables],
        export_source=export_source,
    )


NOSCRIPT = (
    "<noscript><p>The tables need JavaScript; the summary and charts do not.</p></noscript>\n"
)


def document(
    *,
    title: str,
    heading: str,
    sub: str,
    body: list[str],
    tables: list[Table],
    export_source: str = "STATE.db",
) -> str:
    """One HTML document of the report's styles and script: ``body`` (markup) in its main
    part, the data of ``tables`` in its JSON block (a cut table or list names ``sitecrawl
    export EXPORT_SOURCE``); ``title``, ``heading`` and ``sub`` are text."""
    css, js = _asset("report.css"), _asset("report.js")
    payload = embed_json({"tables": [table.to_json(export_source) for table in tables]})
    return "".join(
        [
            '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n',
            f'<meta http-equiv="Content-Security-Policy" content="{csp(css, js)}">\n',
            '<meta name="referrer" content="no-referrer">\n',
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n',
            f"<title>{escape(title)}</title>\n<style>{css}</style>\n</head>\n<body>\n",
            f'<header class="top"><div class="wrap"><h1>{escape(heading)}</h1>',
            f'<div class="sub">{escape(sub)} by sitecrawl {_version.__version__}',
            '</div></div></header>\n<main class="wrap">\n',
            *body,
            "<footer>Generated offline by sitecrawl. This file loads nothing from the network."
            "</footer>\n</main>\n",
            f'<script type="application/json" id="report-data">{payload}</script>\n',
            f"<script>{js}</script>\n</body>\n</html>\n",
        ]
    )


def embed_json(value: Any) -> str:
    """JSON that is inert inside a ``<script>`` block: it cannot end the block or open a
    comment, and U+2028/U+2029 cannot break older JavaScript parsers."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    for raw, escaped in _JSON_ESCAPES:
        text = text.replace(raw, escaped)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate from a broken page: keep the file writable
        text = text.encode("utf-8", "replace").decode("utf-8")
    return text


def csp(css: str, js: str) -> str:
    """The policy: nothing loads; only this exact inline style and script apply."""
    return (
        "default-src 'none'; "
        f"style-src '{_sha256(css)}'; script-src '{_sha256(js)}'; "
        "img-src data:; base-uri 'none'; form-action 'none'"
    )


def _sha256(text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return "sha256-" + base64.b64encode(digest).decode("ascii")


@cache
def _asset(name: str) -> str:
    return files(__package__).joinpath("assets", name).read_text(encoding="utf-8")


def _card(value: str, label: str, tone: str = "") -> str:
    cls = f"card {tone}".strip()
    return (
        f'<div class="{cls}"><div class="value">{escape(value)}</div>'
        f'<div class="label">{escape(label)}</div></div>'
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
        _card(f"{len(pages):,}", "pages crawled"),
        _card(f"{by_class['2']:,}", "2xx OK", "good"),
        _card(f"{by_class['3']:,}", "3xx", ""),
        _card(f"{by_class['4']:,}", "4xx client errors", "warn" if by_class["4"] else ""),
        _card(f"{by_class['5']:,}", "5xx server errors", "bad" if by_class["5"] else ""),
        _card(f"{no_response:,}", "no response", "bad" if no_response else ""),
        _card(f"{errors:,}", "pages with errors", "bad" if errors else "good"),
        _card(
            f"{len(found.broken_links):,}",
            "broken link targets",
            "bad" if found.broken_links else "good",
        ),
        _card(_duration(duration), "duration"),
        _card("—" if rate is None else f"{rate:,.1f}", "pages / s"),
        _card("—" if not times else f"{statistics.median(times):,.0f} ms", "median response"),
        _card(_bytes(total_bytes), "downloaded"),
    ]
    if revalidated:
        cards.insert(2, _card(f"{revalidated:,}", "of them 304 not modified (record kept)"))
    return f'<div class="cards">{"".join(cards)}</div>\n'


def _contents(tables: list[Table]) -> str:
    links = []
    for table in tables:
        n = table.count
        tone = "" if not table.is_issue else ("some" if n else "zero")
        links.append(
            f'<a href="#{table.id}">{escape(table.title)}<span class="n {tone}">{n:,}</span></a>'
        )
    return f'<nav class="toc" aria-label="Contents">{"".join(links)}</nav>\n'


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


def _section(table: Table, export_source: str) -> str:
    n = table.count
    tone = "" if not table.is_issue else ("some" if n else "zero")
    more = ""
    if table.more:
        command = table.export_command(export_source)
        more = (
            f'<p class="help more">The first {len(table.rows):,} rows of {n:,}; '
            f"{table.more:,} more: <code>{escape(command)}</code></p>"
        )
    return (
        f'<section class="block" id="{table.id}"><h2>{escape(table.title)}'
        f'<span class="pill {tone}">{n:,}</span></h2>'
        f'<p class="help">{escape(table.help)}</p>{more}'
        f'<div class="datatable" data-table="{table.id}" data-total="{len(table.rows)}"></div>'
        "</section>\n"
    )


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min" if hours else f"{minutes} min {secs:02d} s"


def _bytes(n: int) -> str:
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:,.0f} {unit}" if unit == "B" else f"{size:,.1f} {unit}"
        size /= 1024
    raise AssertionError("unreachable")
