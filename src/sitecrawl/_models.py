"""Records that flow through the crawler: frontier requests, page records and a crawl's
running totals. No I/O."""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field, fields
from operator import attrgetter
from typing import Any, TypeAlias

from xxhash import xxh3_64_hexdigest

from ._exceptions import BlockedByRobots
from ._fields import ChangeKind, Column, FieldInfo, field_info, info, record_field

#: One link of a page: (resolved absolute URL, text, ``rel`` attribute or None, kind). The kind
#: is the element: ``a`` (text: the anchor text, whitespace collapsed), ``img`` (text: the
#: ``alt``, None when absent), ``link`` (``<link href>``), ``script`` (``src``) or ``iframe``
#: (``src``), whose text is None. ``a`` links come first in document order, then each other
#: kind in document order. A plain tuple: it crosses the parser processes' ``marshal`` pipe and
#: is stored as a JSON array.
Link: TypeAlias = tuple[str, str | None, str | None, str]


def body_hash(body: bytes) -> str:
    """The hash a record keeps of a response's body: XXH3-64, 16 hex digits. It detects a
    changed body between two crawls of one URL (not an attacker's collision), at a small
    fraction of a cryptographic hash's cost. Hashes of other lengths come from older versions
    (SHA-256 cut to 32 hex digits): not comparable, never a change."""
    return xxh3_64_hexdigest(body)


@dataclass(slots=True)
class Request:
    """One URL in the frontier. ``key`` is its dedupe key (:func:`sitecrawl.normalize_url`)."""

    url: str
    key: str
    depth: int = 0
    referrer: str | None = None


@dataclass(slots=True)
class Page:
    """What sitecrawl records for one crawled URL, failures included.

    ``status`` is None when no HTTP response arrived (timeout, refused connection) or the URL
    was not fetched (``error_kind`` ``"blocked_robots"``); ``error`` is None on success, else
    a short message for people, and ``error_kind`` the failure's stable name for code (the
    :attr:`~sitecrawl.FetchError.kind` of its exception class: ``timeout``, ``http_status``,
    ...). ``location`` is where a redirect that left the crawl's scope pointed (the
    ``Location`` header, as sent; kind ``redirect_out_of_scope``). ``attempts`` counts the
    tries of the last request (1 + retries; 0 when nothing was sent); ``redirects`` is the
    chain followed, ``[(url, status), ...]``; ``in_sitemap`` says whether the URL was listed
    in a sitemap; ``indexable`` is False for a ``noindex`` page (``<meta name="robots">`` or
    ``X-Robots-Tag``), None when no HTML page was read. ``word_count`` counts the words of the
    body's text (scripts and styles left out), ``h2`` lists the ``<h2>`` texts, ``lang`` is
    ``<html lang>``, ``hreflang`` the ``<link rel="alternate" hreflang>`` pairs
    ``[(lang, url), ...]``. ``extracted`` holds the custom extraction rules' values.

    A PDF (``content_type`` ``application/pdf``, read unless ``Limits.max_pdf_bytes`` is 0 or
    the ``pdf`` extra is missing) has ``title`` (its metadata's, else its first line),
    ``page_count``, ``markdown`` (its text, page by page after ``<!-- page N -->``),
    ``word_count`` and ``outgoing_links`` (its link annotations' URIs).
    """

    url: str = field(metadata=info(course="page_url", report=Column("URL", "url", 0)))
    final_url: str | None = record_field(
        None,
        diff=ChangeKind(
            "redirect",
            "warning",
            40,
            "Redirects moved",
            "URLs redirecting elsewhere (where they lead is not compared).",
            by_value=False,
        ),
    )
    status: int | None = record_field(
        None,
        diff=ChangeKind(
            "status", "error", 10, "Status changed", "Pages answering another HTTP status.", False
        ),
        report=Column("Status", "status", 1),
    )
    content_type: str | None = None
    depth: int = record_field(0, report=Column("Depth", "num", 2))
    title: str | None = record_field(
        None,
        parsed=True,
        diff=ChangeKind("title", "info", 80, "Titles changed", "Pages with another title."),
        rendered="title",
        audit_text="title",
        report=Column("Title", "text", 3),
    )
    h1: str | None = record_field(
        None,
        parsed=True,
        diff=ChangeKind("h1", "info", 90, "H1 changed", "Pages with another first h1."),
        rendered="h1",
        audit_text="h1",
        course="h1",
    )
    first_paragraph: str | None = record_field(None, parsed=True, course="first_paragraph")
    meta_description: str | None = record_field(
        None,
        parsed=True,
        diff=ChangeKind(
            "meta-description",
            "info",
            100,
            "Meta descriptions changed",
            "Pages with another meta description.",
        ),
        rendered="meta_description",
        audit_text="meta description",
    )
    canonical: str | None = record_field(
        None,
        parsed=True,
        diff=ChangeKind(
            "canonical", "warning", 60, "Canonical changed", "Pages naming another canonical URL."
        ),
        rendered="canonical",
    )
    outgoing_links: list[str] = record_field(factory=list, parsed=True, course="outgoing_link_urls")
    image_urls: list[str] = record_field(factory=list, parsed=True, course="image_urls")
    response_time_ms: float | None = record_field(None, report=Column("Time", "ms", 4))
    size_bytes: int | None = record_field(None, diff=True, report=Column("Size", "bytes", 5))
    error: str | None = record_field(None, report=Column("Error", "text", 8))
    error_kind: str | None = record_field(
        None,
        diff=ChangeKind(
            "blocked", "warning", 30, "Newly blocked", "Pages robots.txt blocks now.", False
        ),
    )
    location: str | None = None
    attempts: int = 0
    redirects: list[tuple[str, int]] = record_field(factory=list, diff=True)
    in_sitemap: bool = False
    #: With ``--render``, compared as the ``<meta name="robots">`` it comes from.
    indexable: bool | None = record_field(
        None,
        diff=ChangeKind(
            "noindex",
            "warning",
            50,
            "Indexability changed",
            "Pages that became indexable, or stopped being so.",
            by_value=False,
        ),
        rendered="robots",
        rendered_from="robots_meta",
        report=Column("Indexable", "bool", 7),
    )
    word_count: int | None = record_field(
        None,
        parsed=True,
        diff=ChangeKind(
            "word-count",
            "info",
            110,
            "Word counts changed",
            "Word counts moved by more than a fifth (and 10 words).",
            by_value=False,
        ),
        report=Column("Words", "num", 6),
    )
    h2: list[str] = record_field(factory=list, parsed=True)
    lang: str | None = record_field(None, parsed=True)
    hreflang: list[tuple[str, str]] = record_field(factory=list, parsed=True)
    #: ``<meta property="og:title">``: the title a link to the page shows when shared.
    og_title: str | None = record_field(
        None,
        parsed=True,
        diff=ChangeKind(
            "og-title", "info", 105, "Open Graph titles changed", "Pages with another og:title."
        ),
    )
    #: The response's ``ETag`` and ``Last-Modified`` (the next crawl's conditional request),
    #: and a hash of the body read (:func:`body_hash`): an unchanged body has the same.
    etag: str | None = record_field(None, diff=True)
    last_modified: str | None = record_field(None, diff=True)
    body_hash: str | None = record_field(
        None,
        diff=ChangeKind(
            "body",
            "info",
            130,
            "Bodies changed",
            "Pages whose body is another one (another hash).",
            by_value=False,
        ),
    )
    #: True when the server answered ``304 Not Modified`` to the conditional request of a
    #: later crawl: the record is the previous crawl's.
    revalidated: bool = False
    #: Rendering (``--render``): True when the fields come from the DOM headless Chromium
    #: rendered, ``render_ms`` the render's own time (``render_wait_ms``: the wait for a
    #: free tab before it, apart);
    #: ``render_complete`` is False when the render was cut off at ``--render-timeout``
    #: before the network went idle (its fields are the DOM at that moment: maybe partial),
    #: None when not rendered. ``body_hash`` of a rendered page is the rendered DOM's (what
    #: its other fields describe), ``html_hash`` the HTML body's and ``dom_bytes`` the
    #: DOM's size (``size_bytes`` stays the body's: what was downloaded).
    #: ``blocked_resources`` lists the requests of the render robots.txt blocked (also of a
    #: render that failed). ``js_links_added`` counts the ``a`` link
    #: targets JavaScript added (``js_links``, in order), ``js_changed`` names the fields
    #: whose rendered value differs from the raw HTML's (``title``, ``h1``,
    #: ``meta_description``, ``canonical``, ``robots``, ``links``) and ``html_values`` keeps
    #: the raw HTML's value of each (``links``: the targets JavaScript removed).
    rendered: bool = False
    render_ms: float | None = None
    render_wait_ms: float | None = None
    render_complete: bool | None = None
    html_hash: str | None = None
    dom_bytes: int | None = None
    blocked_resources: list[str] = field(default_factory=list)
    js_links_added: int | None = None
    js_changed: list[str] = field(default_factory=list)
    js_links: list[str] = field(default_factory=list)
    html_values: dict[str, Any] = field(default_factory=dict)
    #: The custom extraction rules' values, rule name -> value (``--extract``; see
    #: :mod:`.parse._extraction`); empty without rules, or for a page that was not HTML.
    extracted: dict[str, Any] = record_field(
        factory=dict,
        parsed=True,
        diff=ChangeKind(
            "extracted",
            "info",
            120,
            "Extracted values changed",
            "Custom extraction values (-x), a row per rule.",
            by_value=False,
        ),
    )
    #: The ``<a>`` links to this page from the crawl's other pages (duplicates included) and
    #: the distinct pages with one: counted once the crawl has ended (``export``, the report,
    #: ``check``; :mod:`sitecrawl.audit._inlinks`), None in records written as pages arrive.
    inlinks: int | None = record_field(None, report=Column("Inlinks", "num", 9))
    unique_inlinks: int | None = record_field(None, report=Column("Unique inlinks", "num", 10))
    #: The page's main content as Markdown (``--markdown``; :func:`sitecrawl.page_markdown`;
    #: a PDF's text, page by page), else None. Stored compressed; a change is the kind ``content``.
    markdown: str | None = record_field(
        None,
        csv=False,
        diff=ChangeKind(
            "content",
            "info",
            140,
            "Content changed",
            "Pages whose main content (--markdown) changed: the first line that differs.",
            by_value=False,
        ),
    )
    #: A PDF's number of pages (None: not a PDF read).
    page_count: int | None = record_field(None)
    #: The page's JSON-LD, Microdata and RDFa items (``--structured-data``), each
    #: ``{"format", "type", "properties"}`` (and ``error`` for JSON-LD that is not JSON):
    #: see :mod:`sitecrawl.parse._structured`. Empty without the setting.
    structured_data: list[dict[str, Any]] = record_field(factory=list, parsed=True)
    #: The main content's signature for the near-duplicate audit (``--near-duplicates``;
    #: :mod:`sitecrawl.parse._signature`): ``content_hash``, 16 hex digits equal for pages
    #: with the same words in the same order, and ``content_minhash``, 512 bytes of MinHash
    #: (stored, not part of the record); None without the setting or for a text too short.
    content_hash: str | None = record_field(None, parsed=True)
    content_minhash: bytes | None = record_field(None, parsed=True, record=False)
    #: A rendered page's screenshot (``--screenshot``): the PNG's path (its JPEG thumbnail
    #: beside it, ``.thumb.jpg``); and axe-core's accessibility violations (``--a11y``), each
    #: ``{"rule", "impact", "help", "help_url", "nodes", "selectors"}``
    #: (:mod:`sitecrawl.render._extras`). None and empty when not asked for or not rendered.
    screenshot: str | None = record_field(None)
    a11y: list[dict[str, Any]] = record_field(factory=list)
    #: Every link (``<a>``, ``<img>``, ``<link>``, ``<script>``, ``<iframe>``) with its text,
    #: rel and kind, duplicates included (what a page store and the link check need; filled
    #: only when asked for). Not part of the record: ``to_dict`` and the sinks leave it out.
    links: list[Link] = record_field(factory=list, parsed=True, record=False)

    @property
    def ok(self) -> bool:
        return self.error is None

    def to_dict(self) -> dict[str, Any]:
        """The record as a plain dict (lists are shared, not copied)."""
        return dict(zip(PAGE_FIELDS, _record_values(self), strict=True))


#: Each field of :class:`Page` and how the code treats it (:mod:`._fields`), in field order.
FIELD_INFO: dict[str, FieldInfo] = {f.name: field_info(f) for f in fields(Page)}
#: The fields of a page record, in output order (``links`` is not one of them).
PAGE_FIELDS: tuple[str, ...] = tuple(name for name, info in FIELD_INFO.items() if info.record)
#: The fields the HTML parser fills: the subset of the record it answers with.
PARSED_FIELDS: tuple[str, ...] = tuple(name for name, info in FIELD_INFO.items() if info.parsed)
#: The fields ``sitecrawl diff`` reads of each page, in field order.
DIFF_FIELDS: tuple[str, ...] = tuple(name for name, info in FIELD_INFO.items() if info.diff)
#: Field -> the kind of change it makes, for the fields that make one.
FIELD_CHANGES: dict[str, ChangeKind] = {
    name: info.diff for name, info in FIELD_INFO.items() if isinstance(info.diff, ChangeKind)
}
#: The values compared between the raw HTML and the rendered DOM: the name ``js_changed``
#: gives a difference -> the parsed value compared, in field order.
RENDER_COMPARED: dict[str, str] = {
    info.rendered: info.rendered_from or name
    for name, info in FIELD_INFO.items()
    if info.rendered is not None
}
#: The texts the audit checks for missing and duplicate values -> their label, in field order.
AUDIT_TEXTS: dict[str, str] = {
    name: info.audit_text for name, info in FIELD_INFO.items() if info.audit_text is not None
}
#: The report's "All pages" columns: ``(field, column)``, in the columns' order.
REPORT_COLUMNS: tuple[tuple[str, Column], ...] = tuple(
    sorted(
        ((name, info.report) for name, info in FIELD_INFO.items() if info.report is not None),
        key=lambda item: item[1].at,
    )
)
#: The course's CSV columns: heading -> field, in field order.
COURSE_COLUMNS: dict[str, str] = {
    info.course: name for name, info in FIELD_INFO.items() if info.course is not None
}
#: The record fields CSV files leave out unless asked for (marked ``csv=False``).
CSV_LEFT_OUT: frozenset[str] = frozenset(name for name, info in FIELD_INFO.items() if not info.csv)
#: A page's record values in :data:`PAGE_FIELDS` order, read in one C call.
_record_values = attrgetter(*PAGE_FIELDS)


#: How many failed pages :class:`CrawlStats` names (the summary says how many more).
FAILURES_KEPT = 5


@dataclass(slots=True)
class CrawlStats:
    """Running totals of one crawl, for progress displays and the summary."""

    pages: int = 0
    errors: int = 0
    blocked: int = 0
    retries: int = 0
    sitemap_urls: int = 0
    dropped_links: int = 0  # distinct URLs not queued: too long, or too many query variants
    scope: str = ""  # the scope that ran (CrawlScope.describe())
    refused: Counter[str] = field(default_factory=Counter)  # rule -> distinct URLs refused
    notes: list[str] = field(default_factory=list)
    resumed: int = 0  # pages done by earlier runs of a durable frontier
    #: Extraction rule -> pages whose value could not be converted to the rule's type.
    unconverted: Counter[str] = field(default_factory=Counter)
    #: Pages by status; a page revalidated by a ``304`` (its previous record kept) is a 304.
    statuses: Counter[int | None] = field(default_factory=Counter)
    revalidated: int = 0  # pages whose previous record a 304 confirmed
    #: Body bytes received by this run (a revalidated page's: none).
    received_bytes: int = 0
    #: The first :data:`FAILURES_KEPT` pages with an error: ``(url, error_kind, status)``.
    failures: list[tuple[str, str | None, int | None]] = field(default_factory=list)
    #: Pages rendered in Chromium, by why (``always``, ``empty root``, ``template``, ...).
    rendered: Counter[str] = field(default_factory=Counter)
    #: Rendered pages whose render was cut off at the render timeout (``render_complete``).
    render_cut: int = 0
    started: float = field(default_factory=time.monotonic)
    finished: float | None = None

    def count(self, page: Page) -> None:
        """Count a recorded ``page`` in these totals."""
        self.pages += 1
        self.statuses[304 if page.revalidated else page.status] += 1
        if page.revalidated:
            self.revalidated += 1
        else:
            self.received_bytes += page.size_bytes or 0
        if page.error_kind == BlockedByRobots.kind:
            self.blocked += 1
        if page.render_complete is False:
            self.render_cut += 1
        if page.error is not None:
            self.errors += 1
            if len(self.failures) < FAILURES_KEPT:
                self.failures.append((page.url, page.error_kind, page.status))

    @property
    def elapsed(self) -> float:
        return (self.finished or time.monotonic()) - self.started

    @property
    def pages_per_second(self) -> float:
        elapsed = self.elapsed
        return self.pages / elapsed if elapsed > 0 else 0.0
