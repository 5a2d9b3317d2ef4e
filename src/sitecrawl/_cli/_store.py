"""Reading a finished crawl back for the audit commands: a state file's pages, or the records a
crawl just collected in memory, as one :class:`CrawlRecords`."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .._models import Page
    from ..sinks import Sink


@dataclass(slots=True)
class CrawlRecords:
    """One crawl's pages (links included) and how long it took (None: unknown)."""

    base_url: str
    pages: list[Page] = field(default_factory=list)
    seconds: float | None = None


async def read_state(path: str | os.PathLike[str]) -> CrawlRecords:
    """Every page of a state file (raises :class:`~sitecrawl.StateError` when unusable)."""
    from ..frontier import SqliteFrontier

    async with SqliteFrontier(path, create=False) as store:
        assert store.base_url is not None
        seconds = store.meta().get("crawl_seconds")
        return CrawlRecords(
            store.base_url, list(store.pages()), float(seconds) if seconds else None
        )


def collector(records: CrawlRecords) -> Sink:
    """A sink that keeps every page it is given in ``records.pages`` (in-memory crawls)."""
    from ..sinks import Sink

    class _Collect(Sink):
        def write(self, page: Page) -> None:
            records.pages.append(page)

        def close(self) -> None:
            pass

    return _Collect()
