"""The four tables of a crawl, from its page records: pages, links, redirects, images. Pure.

A table is a :class:`TableSpec` (typed columns, so every output format, Parquet included,
writes the same schema) and rows as dicts, generated from :class:`~sitecrawl.Page` records
(a state file's :meth:`~sitecrawl.frontier.SqliteFrontier.pages`, or a crawl's own records)::

    pages      one row per crawled URL: the page record
    links      one row per link of a page, duplicates included: source_url, position,
               target_url, anchor_text (an image's alt), rel, kind (a, img, link, script,
               iframe), internal, and the target's status and error when it was crawled
    redirects  one row per redirect hop: url (as requested), hop (1, 2, ...), hop_url,
               status (3xx), final_url and final_status (where the chain ended)
    images     one row per ``<img src>``: page_url, src, alt (None when absent)

:func:`site_rows` turns the same records into the audit's typed rows
(:mod:`sitecrawl._sitedata`), for ``sitecrawl check`` and the HTML report.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from ._models import PAGE_FIELDS, Page
from ._pagecodec import COLUMN_TYPES
from ._scope import CrawlScope
from ._sitedata import LINK_KINDS, ImageRow, LinkKind, LinkRow, PageRow
from ._urls import url_key

ColumnType: TypeAlias = Literal["str", "int", "float", "bool", "strs", "hops", "pairs"]
"""``strs``: a list of strings; ``hops``: ``[[url, status], ...]``; ``pairs``: ``[[a, b], ...]``
of strings (hreflang)."""

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
        return "hops" if name == "redirects" else "pairs"
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


def table_rows(table: TableSpec, pages: Sequence[Page], base_url: str) -> Iterator[Row]:
    """The rows of ``table`` from a crawl's page records, in page order."""
    if table is PAGES:
        return (page.to_dict() for page in pages)
    if table is REDIRECTS:
        return _redirect_rows(pages)
    if table is IMAGES:
        return (
            {"page_url": page.url, "src": url, "alt": text}
            for page in pages
            for url, text, _, kind in page.links
            if kind == "img"
        )
    return _link_rows(pages, base_url)


def _link_rows(pages: Sequence[Page], base_url: str) -> Iterator[Row]:
    crawled = {_key(page.url): page for page in pages}
    internal = InternalTest(base_url, crawled)
    for page in pages:
        for position, (url, text, rel, kind) in enumerate(page.links):
            target = crawled.get(_key(url))
            yield {
                "source_url": page.url,
                "position": position,
                "target_url": url,
                "anchor_text": text,
                "rel": rel,
                "kind": kind,
                "internal": internal(url),
                "target_status": None if target is None else target.status,
                "target_error": None if target is None else target.error,
                "target_error_kind": None if target is None else target.error_kind,
            }


def _redirect_rows(pages: Iterable[Page]) -> Iterator[Row]:
    for page in pages:
        for hop, (url, status) in enumerate(page.redirects, 1):
            yield {
                "url": page.url,
                "hop": hop,
                "hop_url": url,
                "status": status,
                "final_url": page.final_url,
                "final_status": page.status,
            }


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
