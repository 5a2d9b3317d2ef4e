"""The report's input: one crawl's meta data and rows, independent of where they are stored."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from .._models import Page
from ..audit import (
    DEFAULT_NEAR_DUP_THRESHOLD,
    ImageRow,
    LinkRow,
    image_rows,
    link_rows,
    links_from_pages,
    page_rows,
)


@dataclass(frozen=True, slots=True, kw_only=True)
class CrawlMeta:
    """When and how fast the crawl ran. Duration and rate are derived when not given."""

    base_url: str
    started_at: datetime | None = None
    finished_at: datetime | None = None
    duration_s: float | None = None
    pages_per_second: float | None = None
    #: The near-duplicate audit's threshold (the crawl's ``--near-dup-threshold``).
    near_dup_threshold: float = DEFAULT_NEAR_DUP_THRESHOLD

    @property
    def duration(self) -> float | None:
        if self.duration_s is not None:
            return self.duration_s
        if self.started_at is not None and self.finished_at is not None:
            return max(0.0, (self.finished_at - self.started_at).total_seconds())
        return None


@dataclass(frozen=True, slots=True, kw_only=True)
class ReportData:
    """Everything :func:`~sitecrawl.report.render_report` draws. Build it with :meth:`build`."""

    meta: CrawlMeta
    pages: tuple[Page, ...]
    links: tuple[LinkRow, ...]
    images: tuple[ImageRow, ...]

    @classmethod
    def build(
        cls,
        *,
        base_url: str,
        pages: Iterable[Page | Mapping[str, Any]],
        links: Iterable[LinkRow | Mapping[str, Any]] | None = None,
        images: Iterable[ImageRow | Mapping[str, Any]] = (),
        started_at: datetime | None = None,
        finished_at: datetime | None = None,
        duration_s: float | None = None,
        pages_per_second: float | None = None,
        near_dup_threshold: float = DEFAULT_NEAR_DUP_THRESHOLD,
    ) -> ReportData:
        """Rows may be mappings (page records, store rows) or the typed rows themselves.

        ``links=None`` rebuilds the links from each page's ``outgoing_links`` and
        ``image_urls`` (without anchor texts); pass the store's links table when there is one.
        """
        page_tuple = page_rows(pages)
        meta = CrawlMeta(
            base_url=base_url,
            started_at=started_at,
            finished_at=finished_at,
            duration_s=duration_s,
            pages_per_second=pages_per_second,
            near_dup_threshold=near_dup_threshold,
        )
        if meta.pages_per_second is None and meta.duration:
            meta = replace(meta, pages_per_second=len(page_tuple) / meta.duration)
        return cls(
            meta=meta,
            pages=page_tuple,
            links=links_from_pages(page_tuple) if links is None else link_rows(links),
            images=image_rows(images),
        )
