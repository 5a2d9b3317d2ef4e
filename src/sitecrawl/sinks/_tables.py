"""The four tables of a crawl, from its page records: pages, links, redirects, images. Pure.

A table is a :class:`TableSpec` (typed columns, so every output format, Parquet included,
writes the same schema) and rows as dicts, generated from :class:`~sitecrawl.Page` records
(a state file's :meth:`~sitecrawl.frontier.SqliteFrontier.pages`, or a crawl's own records)::

    pages      one row per crawled URL: the page record
    links      one row per link of a page, duplicates included: source_url, position,
               target_url, anchor_text (an image's alt), rel, kind (a, img, link, script,
               iframe), internal, the target's status and error when it was crawled, and
               source: ``js`` for an ``a`` link JavaScript added (``--render``), else ``html``
    redirects  one row per redirect hop: url (as requested), hop (1, 2, ...), hop_url,
               status (3xx), final_url and final_status (where the chain ended)
    images     one row per ``<img src>``: page_url, src, alt (None when absent)

:func:`site_rows` turns the same records into the audit's typed rows
(:mod:`sitecrawl.audit._rows`), for ``sitecrawl check`` and the HTML report.
"""

from __future__ import annotations

from collections.abc import (
    AsyncIterator,
    Callable,
    Collection,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from .._models import PAGE_FIELDS, Page
from .._pagecodec import COLUMN_TYPES, TUPLE_TYPES
from .._urls import url_key
from ..audit._inlinks import Inlinks
from ..audit._rows import LINK_KINDS, ImageRow, LinkKind, LinkRow, LinkSource, PageRow
from ..control._scope import CrawlScope

if TYPE_CHECKING:
    from ..frontier import PageStore
    from ..parse._extraction import Rule

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

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.columns)


def _page_column(name: str) -> ColumnType:
    """A page record's column type, from the page codec's (so from :class:`Page`'s fields)."""
    stored = COLUMN_TYPES[name] if name != "outgoing_links" else "list"
    if stored == "list":
        return "strs"
    if stored == "tuples":
        return "hops" if TUPLE_TYPES[name] == (str, int) else "pairs"
    if stored == "object":
        return "json"
    return stored  # type: ignore[return-value]  # bool, int, float or str


PAGES = TableSpec("pages", tuple((name, _page_column(name)) for name in PAGE_FIELDS))
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
TABLES: dict[str, TableSpec] = {t.name: t for t in (PAGES, LINKS, REDIRECTS, IMAGES)}
#: The heading of an extraction rule's column (CSV, Parquet): ``x:NAME``.
EXTRACT_PREFIX = "x:"


def pages_table(rules: Sequence[Rule] = ()) -> TableSpec:
    """The pages table; with custom extraction rules, one typed column per rule
    (``x:NAME``, :func:`rule_column`) in place of the ``extracted`` object."""
    if not rules:
        return PAGES
    columns = [column for column in PAGES.columns if column[0] != "extracted"]
    columns += [(EXTRACT_PREFIX + rule.name, rule_column(rule)) for rule in rules]
    return TableSpec(PAGES.name, tuple(columns))


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


class InternalTest:
    """Whether a link target is internal: in the crawl's scope, or a page the crawl fetched
    (which covers a ``--subdomains`` crawl read back from a state file)."""

    def __init__(self, base_url: str, crawled: Iterable[str] = ()) -> None:
        self._scope = CrawlScope([base_url], "site")
        self._crawled = set(crawled)
        self._memo: dict[str, bool] = {}

    def __call__(self, url: str) -> bool:
        found = self._memo.get(url)
        if found is None:
            found = self._memo[url] = self._scope.contains(url) or _key(url) in self._crawled
        return found


def _key(url: str) -> str:
    try:
        return url_key(url)
    except ValueError:
        return url


#: What the links table says of a target the crawl fetched: ``(status, error, error_kind)``.
Target: TypeAlias = tuple[int | None, str | None, str | None]


async def store_rows(table: TableSpec, store: PageStore) -> AsyncIterator[Row]:
    """The rows of ``table`` from a page store, streamed: one pass over its pages, two for
    the links table (the first keeps each crawled page's status and error by its key, a few
    dozen bytes a page, for the ``target_*`` columns) and the pages table (the first counts
    each page's ``inlinks``: :class:`~sitecrawl.audit._inlinks.Inlinks`)."""
    targets: dict[str, Target] = {}
    inlinks = Inlinks() if table.name == PAGES.name else None
    if table is LINKS or inlinks is not None:
        async for page in store.read_pages():
            if inlinks is not None:
                inlinks.add(page)
            else:
                targets[_key(page.url)] = (page.status, page.error, page.error_kind)
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
    elif table is IMAGES:
        for url, text, _, kind in page.links:
            if kind == "img":
                yield {"page_url": page.url, "src": url, "alt": text}
    else:
        added_by_js = js_added(page)
        for position, (url, text, rel, kind) in enumerate(page.links):
            target_status, target_error, target_kind = targets.get(_key(url), _UNKNOWN)
            yield {
                "source_url": page.url,
                "position": position,
                "target_url": url,
                "anchor_text": text,
                "rel": rel,
                "kind": kind,
                "internal": internal(url),
                "target_status": target_status,
                "target_error": target_error,
                "target_error_kind": target_kind,
                "source": link_source(url, kind, added_by_js),
            }


_UNKNOWN: Target = (None, None, None)


def js_added(page: Page) -> Collection[str]:
    """The targets of the ``a`` links JavaScript added to a page (none unless rendered)."""
    return set(page.js_links) if page.rendered and page.js_links else ()


def link_source(url: str, kind: str, added_by_js: Collection[str]) -> LinkSource:
    """A link's ``source``: ``js`` for an ``a`` link JavaScript added, else ``html``."""
    return "js" if kind == "a" and url in added_by_js else "html"


@dataclass(frozen=True, slots=True)
class SiteRows:
    """A crawl as the audit's typed rows."""

    pages: tuple[PageRow, ...]
    links: tuple[LinkRow, ...]
    images: tuple[ImageRow, ...]


def site_rows(
    pages: Sequence[Page],
    base_url: str,
    *,
    target_status: Callable[[str], tuple[int | None, str | None, str | None] | None] | None = None,
) -> SiteRows:
    """The audit's rows of a crawl. ``target_status(url)`` gives ``(status, error,
    error_kind)`` for link targets checked apart from the crawl (external URLs, resources),
    else None.

    The links of a page that redirected are the links of the page it ended on: they count
    from that URL, and not at all when that page was crawled at its own URL too."""
    crawled = {_key(page.url) for page in pages}
    internal = InternalTest(base_url, crawled)
    links: list[LinkRow] = []
    images: list[ImageRow] = []
    for page in pages:
        source = page.url
        if page.redirects and page.final_url:
            if _key(page.final_url) in crawled:
                continue  # the same document was crawled at its own URL: its links are there
            source = page.final_url
        added_by_js = js_added(page)
        for url, text, rel, kind in page.links:
            checked = target_status(url) if target_status is not None else None
            status, error, error_kind = checked if checked is not None else (None, None, None)
            links.append(
                LinkRow(
                    source_url=source,
                    target_url=url,
                    anchor_text=text,
                    rel=rel,
                    internal=internal(url),
                    kind=_kind(kind),
                    status=status,
                    error=error,
                    error_kind=error_kind,
                    source=link_source(url, kind, added_by_js),
                )
            )
            if kind == "img":
                images.append(ImageRow(page_url=source, src=url, alt=text))
    return SiteRows(
        pages=tuple(pages),
        links=tuple(links),
        images=tuple(images),
    )


_KINDS: dict[str, LinkKind] = {kind: kind for kind in LINK_KINDS}


def _kind(kind: str) -> LinkKind:
    return _KINDS.get(kind, "a")
