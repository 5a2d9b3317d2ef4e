"""The tables of a crawl, from its page records: pages, links, redirects, images. Pure.

A table is a :class:`TableSpec` (typed columns, so every output format, Parquet included,
writes the same schema) and rows as dicts, generated from :class:`~sitecrawl.Page` records
(a state file's :meth:`~sitecrawl.frontier.SqliteFrontier.pages`, or a crawl's own records)::

    pages      one row per crawled URL: the page record
    links      one row per link of a page, duplicates included: source_url, position,
               target_url, anchor_text (an image's alt), rel, kind (a, img, link, script,
               iframe), internal, the target's status and error when it was crawled, and
               source: ``js`` for an ``a`` link JavaScript added (``--render``), else ``html``

A page's links and images count from where it ended, as the audit's and the report's do
(:func:`sitecrawl.audit.links_of`): ``source_url`` (``page_url``) is the URL a redirect led to,
and a URL that redirected to a page crawled at its own URL gives none (that page gives them).
    redirects  one row per redirect hop: url (as requested), hop (1, 2, ...), hop_url,
               status (3xx), final_url and final_status (where the chain ended)
    images     one row per ``<img src>``: page_url, src, alt (None when absent)
    issues     one row per finding of the audit: url, check, severity, message, detail
               (not per page: :func:`sitecrawl.report.store_issue_rows` reads them)
    structured_data  one row per JSON-LD, Microdata or RDFa item (``--structured-data``): url,
               format, type, properties (JSON), error (JSON-LD that is not JSON)
    near_duplicates  one row per page with an exact or near duplicate (``--near-duplicates``):
               url, cluster_id, similar_to, similarity (1.0: exact)

:func:`sitecrawl.audit.site_rows` turns the same records into the audit's typed rows.
"""

from __future__ import annotations

import typing
from collections.abc import (
    AsyncIterator,
    Iterator,
    Mapping,
    Sequence,
)
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from .._models import CSV_LEFT_OUT, PAGE_FIELDS, Page
from .._pagecodec import COLUMN_TYPES, TUPLE_TYPES
from ..audit import Inlinks, InternalTest, links_of, page_key

if TYPE_CHECKING:
    from ..frontier import PageStore
    from ..parse import Rule

ColumnType: TypeAlias = Literal[
    "str", "int", "float", "bool", "strs", "hops", "pairs", "json", "date"
]
"""``strs``: a list of strings; ``hops``: ``[[url, status], ...]``; ``pairs``: ``[[a, b], ...]``
of strings (hreflang); ``json``: any JSON value (text as it is, anything else as JSON text in
CSV and Parquet); ``date``: ISO ``YYYY-MM-DD`` text (a Parquet date)."""

Row: TypeAlias = dict[str, Any]


@dataclass(frozen=True, slots=True)
class TableSpec:
    name: str
    columns: tuple[tuple[str, ColumnType], ...]
    #: Columns a CSV file leaves out (the pages' ``markdown``, unless ``--csv-markdown``:
    #: a page of text in a spreadsheet cell).
    csv_left_out: frozenset[str] = frozenset()

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.columns)


_PAGE_HINTS = typing.get_type_hints(Page)


def _page_column(name: str) -> ColumnType:
    """A page record's column type, from the page codec's (so from :class:`Page`'s fields)."""
    stored = COLUMN_TYPES[name] if name != "outgoing_links" else "list"
    if stored == "list":  # of strings, or of objects (structured_data): JSON
        return "strs" if _PAGE_HINTS[name] == list[str] else "json"
    if stored == "tuples":
        return "hops" if TUPLE_TYPES[name] == (str, int) else "pairs"
    if stored == "object":
        return "json"
    return stored  # type: ignore[return-value]  # bool, int, float or str


PAGES = TableSpec(
    "pages",
    tuple((name, _page_column(name)) for name in PAGE_FIELDS),
    csv_left_out=CSV_LEFT_OUT,
)
LINKS = TableSpec(
    "links",
    (
        ("source_url", "str"),
        ("position", "int"),
        ("target_url", "str"),
        ("anchor_text", "str"),
        ("rel", "str"),
        ("kind", "str"),
        ("internal", "bool"),
        ("target_status", "int"),
        ("target_error", "str"),
        ("target_error_kind", "str"),
        ("source", "str"),
    ),
)
REDIRECTS = TableSpec(
    "redirects",
    (
        ("url", "str"),
        ("hop", "int"),
        ("hop_url", "str"),
        ("status", "int"),
        ("final_url", "str"),
        ("final_status", "int"),
    ),
)
IMAGES = TableSpec("images", (("page_url", "str"), ("src", "str"), ("alt", "str")))
#: Every finding of the crawl (:func:`sitecrawl.audit.issue_rows`): not a page's rows, the
#: audit of them all (``sitecrawl export -t issues`` reads them through the report's data).
ISSUES = TableSpec(
    "issues",
    (("url", "str"), ("check", "str"), ("severity", "str"), ("message", "str"), ("detail", "json")),
)
#: Every page with an exact or near duplicate (``--near-duplicates``;
#: :func:`sitecrawl.audit.near_duplicates`): the audit of every page, like the issues.
NEAR_DUPLICATES = TableSpec(
    "near_duplicates",
    (("url", "str"), ("cluster_id", "int"), ("similar_to", "str"), ("similarity", "float")),
)
STRUCTURED_DATA = TableSpec(
    "structured_data",
    (("url", "str"), ("format", "str"), ("type", "str"), ("properties", "json"), ("error", "str")),
)
TABLES: dict[str, TableSpec] = {
    t.name: t for t in (PAGES, LINKS, REDIRECTS, IMAGES, ISSUES, STRUCTURED_DATA, NEAR_DUPLICATES)
}
#: The heading of an extraction rule's column (CSV, Parquet): ``x:NAME``.
EXTRACT_PREFIX = "x:"


def pages_table(rules: Sequence[Rule] = (), *, csv_markdown: bool = False) -> TableSpec:
    """The pages table; with custom extraction rules, one typed column per rule
    (``x:NAME``, :func:`rule_column`) in place of the ``extracted`` object; with
    ``csv_markdown``, CSV files keep the ``markdown`` column too."""
    table = PAGES
    if rules:
        columns = [column for column in PAGES.columns if column[0] != "extracted"]
        columns += [(EXTRACT_PREFIX + rule.name, rule_column(rule)) for rule in rules]
        table = TableSpec(PAGES.name, tuple(columns), PAGES.csv_left_out)
    return replace(table, csv_left_out=frozenset()) if csv_markdown else table


def rule_column(rule: Rule) -> ColumnType:
    """A rule's column type: ``count:`` int, ``exists:`` bool, ``all:`` a list of strings
    (JSON text when typed otherwise or JSON-LD), else its ``type`` (a JSON-LD or XPath value
    without one: any JSON value)."""
    if rule.mode == "count":
        return "int"
    if rule.mode == "exists":
        return "bool"
    if rule.mode == "all":
        return "strs" if rule.kind != "jsonld" and rule.type in (None, "str") else "json"
    if rule.type is not None:
        return rule.type  # type: ignore[return-value]  # str, int, float, bool or date
    return "str" if rule.kind in ("css", "regex") else "json"


def cell(row: Row, name: str) -> Any:
    """A row's value for column ``name``: an ``x:NAME`` column reads ``extracted``."""
    if name.startswith(EXTRACT_PREFIX) and name not in row:
        return (row.get("extracted") or {}).get(name[len(EXTRACT_PREFIX) :])
    return row.get(name)


#: What the links table says of a target the crawl fetched: ``(status, error, error_kind)``.
Target: TypeAlias = tuple[int | None, str | None, str | None]


async def store_rows(table: TableSpec, store: PageStore) -> AsyncIterator[Row]:
    """The rows of ``table`` from a page store, streamed: one pass over its pages, two for
    the links table (the first keeps each crawled page's status and error by its key, a few
    dozen bytes a page, for the ``target_*`` columns) and the pages table (the first counts
    each page's ``inlinks``: :class:`~sitecrawl.audit._inlinks.Inlinks`)."""
    if table is ISSUES or table is NEAR_DUPLICATES:
        raise ValueError(f"the {table.name} table is the audit of every page: store_{table.name}")
    targets: dict[str, Target] = {}
    inlinks = Inlinks() if table.name == PAGES.name else None
    if table is LINKS or table is IMAGES or inlinks is not None:
        async for page in store.read_pages():
            if inlinks is not None:
                inlinks.add(page)
            else:
                targets[page_key(page.url)] = (page.status, page.error, page.error_kind)
    assert store.base_url is not None, "an open store knows its crawl's start URL"
    internal = InternalTest(store.base_url, targets)
    async for page in store.read_pages():
        if inlinks is not None:
            inlinks.fill(page)
        for row in _rows(table, page, targets, internal):
            yield row


def _rows(
    table: TableSpec, page: Page, targets: Mapping[str, Target], internal: InternalTest
) -> Iterator[Row]:
    """The rows one page gives ``table``."""
    if table.name == PAGES.name:
        yield page.to_dict()
    elif table is REDIRECTS:
        for hop, (url, status) in enumerate(page.redirects, 1):
            yield {
                "url": page.url,
                "hop": hop,
                "hop_url": url,
                "status": status,
                "final_url": page.final_url,
                "final_status": page.status,
            }
    elif table is STRUCTURED_DATA:
        for item in page.structured_data:
            yield {"url": page.url, **{name: item.get(name) for name in STRUCTURED_DATA.names[1:]}}
    elif table is IMAGES:
        for source_url, _, (url, text, _, kind), _ in links_of(page, targets):
            if kind == "img":
                yield {"page_url": source_url, "src": url, "alt": text}
    else:
        for source_url, position, (url, text, rel, kind), source in links_of(page, targets):
            target_status, target_error, target_kind = targets.get(page_key(url), _UNKNOWN)
            yield {
                "source_url": source_url,
                "position": position,
                "target_url": url,
                "anchor_text": text,
                "rel": rel,
                "kind": kind,
                "internal": internal(url),
                "target_status": target_status,
                "target_error": target_error,
                "target_error_kind": target_kind,
                "source": source,
            }


_UNKNOWN: Target = (None, None, None)
