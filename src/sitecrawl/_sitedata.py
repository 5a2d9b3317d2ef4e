"""Typed rows describing one finished crawl: the input of the audit and the HTML report. No I/O.

A store, a list of :class:`~sitecrawl.Page` dicts or a test's literals all become these rows
through the ``from_mapping`` constructors, which read the keys they know and ignore the rest::

    PageRow.from_mapping(page.to_dict())
    LinkRow.from_mapping({"source_url": ..., "target_url": ..., "internal": True, "kind": "a"})
    ImageRow.from_mapping({"page_url": ..., "src": ..., "alt": ...})

Every row is frozen and slotted: a 100,000-page crawl is held as tuples of small objects.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

LinkKind: TypeAlias = Literal["a", "img", "link", "script", "iframe"]
LINK_KINDS: tuple[LinkKind, ...] = ("a", "img", "link", "script", "iframe")

Hop: TypeAlias = tuple[str, int]
"""One redirect response: the URL that answered and its 3xx status."""


@dataclass(frozen=True, slots=True, kw_only=True)
class PageRow:
    """One crawled URL: the :class:`~sitecrawl.Page` record plus what the store adds.

    ``redirects`` lists the 3xx responses followed before ``final_url`` answered with
    ``status``. ``in_sitemap`` and ``indexable`` are None when unknown.
    """

    url: str
    final_url: str | None = None
    status: int | None = None
    content_type: str | None = None
    depth: int = 0
    title: str | None = None
    h1: str | None = None
    first_paragraph: str | None = None
    meta_description: str | None = None
    canonical: str | None = None
    outgoing_links: tuple[str, ...] = ()
    image_urls: tuple[str, ...] = ()
    response_time_ms: float | None = None
    size_bytes: int | None = None
    error: str | None = None
    error_kind: str | None = None
    location: str | None = None
    in_sitemap: bool | None = None
    indexable: bool | None = None
    word_count: int | None = None
    redirects: tuple[Hop, ...] = ()

    @property
    def ok(self) -> bool:
        """A successful (2xx) response with no error."""
        return self.error is None and self.status is not None and 200 <= self.status < 300

    @property
    def is_html(self) -> bool:
        """Whether this page is an HTML document (an unknown type counts as HTML)."""
        return self.content_type is None or "html" in self.content_type.lower()

    @classmethod
    def from_mapping(cls, row: Mapping[str, Any]) -> PageRow:
        return cls(
            url=str(row["url"]),
            final_url=_opt_str(row.get("final_url")),
            status=_opt_int(row.get("status")),
            content_type=_opt_str(row.get("content_type")),
            depth=int(row.get("depth") or 0),
            title=_opt_str(row.get("title")),
            h1=_opt_str(row.get("h1")),
            first_paragraph=_opt_str(row.get("first_paragraph")),
            meta_description=_opt_str(row.get("meta_description")),
            canonical=_opt_str(row.get("canonical")),
            outgoing_links=_str_tuple(row.get("outgoing_links")),
            image_urls=_str_tuple(row.get("image_urls")),
            response_time_ms=_opt_float(row.get("response_time_ms")),
            size_bytes=_opt_int(row.get("size_bytes")),
            error=_opt_str(row.get("error")),
            error_kind=_opt_str(row.get("error_kind")),
            location=_opt_str(row.get("location")),
            in_sitemap=_opt_bool(row.get("in_sitemap")),
            indexable=_opt_bool(row.get("indexable")),
            word_count=_opt_int(row.get("word_count")),
            redirects=tuple((str(url), int(status)) for url, status in row.get("redirects") or ()),
        )


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


def page_rows(rows: Iterable[PageRow | Mapping[str, Any]]) -> tuple[PageRow, ...]:
    return tuple(r if isinstance(r, PageRow) else PageRow.from_mapping(r) for r in rows)


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


def _opt_float(value: object) -> float | None:
    return None if value is None or value == "" else float(value)  # type: ignore[arg-type]


def _opt_bool(value: object) -> bool | None:
    return None if value is None else bool(value)


def _str_tuple(value: object) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):  # a store may keep lists joined by ";" (as the CSV sink does)
        return tuple(part for part in value.split(";") if part)
    if isinstance(value, Iterable):
        return tuple(str(item) for item in value)
    raise TypeError(f"expected a list of strings, got {type(value).__name__}")
