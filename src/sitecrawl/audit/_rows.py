"""Typed rows describing one finished crawl: the input of the audit and the HTML report. No I/O.

A page is the :class:`~sitecrawl.Page` record itself; a store, a list of page dicts or a test's
literals all become rows through the ``from_mapping`` constructors, which read the keys they
know and ignore the rest::

    from_mapping(page.to_dict())        # sitecrawl._pagecodec: a Page
    LinkRow.from_mapping({"source_url": ..., "target_url": ..., "internal": True, "kind": "a"})
    ImageRow.from_mapping({"page_url": ..., "src": ..., "alt": ...})

Every row is slotted (links and images frozen too): a 100,000-page crawl is held as tuples of
small objects.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from .._models import Page
from .._pagecodec import from_mapping

LinkKind: TypeAlias = Literal["a", "img", "link", "script", "iframe"]
LINK_KINDS: tuple[LinkKind, ...] = ("a", "img", "link", "script", "iframe")
LinkSource: TypeAlias = Literal["html", "js"]
"""``js``: an ``<a>`` link JavaScript added to a rendered page (``--render``); else ``html``."""

Hop: TypeAlias = tuple[str, int]
"""One redirect response: the URL that answered and its 3xx status."""


#: One crawled URL: the :class:`~sitecrawl.Page` record itself (``redirects`` lists the 3xx
#: responses followed before ``final_url`` answered with ``status``).
PageRow: TypeAlias = Page


def succeeded(page: Page) -> bool:
    """A successful (2xx) response with no error."""
    return page.error is None and page.status is not None and 200 <= page.status < 300


def is_html(page: Page) -> bool:
    """Whether a page is an HTML document (an unknown type counts as HTML)."""
    return page.content_type is None or "html" in page.content_type.lower()


@dataclass(frozen=True, slots=True, kw_only=True)
class LinkRow:
    """One link found on a crawled page.

    ``status``, ``error`` and ``error_kind`` describe the target when the link itself was
    checked (external links); otherwise the audit looks the target up among the pages.
    """

    source_url: str
    target_url: str
    anchor_text: str | None = None
    rel: str | None = None
    internal: bool = True
    kind: LinkKind = "a"
    status: int | None = None
    error: str | None = None
    error_kind: str | None = None
    source: LinkSource = "html"

    @classmethod
    def from_mapping(cls, row: Mapping[str, Any]) -> LinkRow:
        kind = str(row.get("kind") or "a")
        if kind not in LINK_KINDS:
            raise ValueError(f"unknown link kind {kind!r}; expected one of {LINK_KINDS}")
        return cls(
            source_url=str(row["source_url"]),
            target_url=str(row["target_url"]),
            anchor_text=_opt_str(row.get("anchor_text")),
            rel=_opt_str(row.get("rel")),
            internal=bool(row.get("internal", True)),
            kind=kind,  # checked against LINK_KINDS above
            status=_opt_int(row.get("status")),
            error=_opt_str(row.get("error")),
            error_kind=_opt_str(row.get("error_kind")),
            source="js" if row.get("source") == "js" else "html",
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class ImageRow:
    """One ``<img>`` on a crawled page. ``alt`` is None when the attribute is absent."""

    page_url: str
    src: str
    alt: str | None = None

    @classmethod
    def from_mapping(cls, row: Mapping[str, Any]) -> ImageRow:
        return cls(page_url=str(row["page_url"]), src=str(row["src"]), alt=_opt_str(row.get("alt")))


def page_rows(rows: Iterable[Page | Mapping[str, Any]]) -> tuple[Page, ...]:
    """Pages, as they are or from mappings of their fields (:func:`._pagecodec.from_mapping`)."""
    return tuple(r if isinstance(r, Page) else from_mapping(r) for r in rows)


def link_rows(rows: Iterable[LinkRow | Mapping[str, Any]]) -> tuple[LinkRow, ...]:
    return tuple(r if isinstance(r, LinkRow) else LinkRow.from_mapping(r) for r in rows)


def image_rows(rows: Iterable[ImageRow | Mapping[str, Any]]) -> tuple[ImageRow, ...]:
    return tuple(r if isinstance(r, ImageRow) else ImageRow.from_mapping(r) for r in rows)


def links_from_pages(pages: Iterable[PageRow]) -> tuple[LinkRow, ...]:
    """Links rebuilt from the pages' ``outgoing_links`` and ``image_urls``, for data without a
    links table (a JSON Lines export, say): no anchor texts, and ``internal`` means same host."""
    rows: list[LinkRow] = []
    for page in pages:
        host = _host(page.final_url or page.url)
        for target in page.outgoing_links:
            rows.append(
                LinkRow(source_url=page.url, target_url=target, internal=_host(target) == host)
            )
        for src in page.image_urls:
            rows.append(
                LinkRow(
                    source_url=page.url, target_url=src, internal=_host(src) == host, kind="img"
                )
            )
    return tuple(rows)


def _host(url: str) -> str:
    start = url.find("://")
    if start < 0:
        return ""
    start += 3
    end = len(url)
    for stop in "/?#":
        at = url.find(stop, start)
        if 0 <= at < end:
            end = at
    authority = url[start:end]
    return authority[authority.rfind("@") + 1 :].lower()


def _opt_str(value: object) -> str | None:
    return None if value is None else str(value)


def _opt_int(value: object) -> int | None:
    return None if value is None or value == "" else int(value)  # type: ignore[call-overload]
