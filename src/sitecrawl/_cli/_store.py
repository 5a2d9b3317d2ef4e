"""Reading a finished crawl back for ``export`` and ``report``: a state file or a crawl in Redis
opened as one :class:`~sitecrawl.frontier.PageStore` (:func:`open_store`), and a store's pages,
or the records a crawl just collected in memory, as one :class:`CrawlRecords`."""

from __future__ import annotations

import argparse
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .._models import Page
    from ..frontier import PageStore, SqliteFrontier
    from ..frontier._redis import RedisFrontier
    from ..sinks import Sink


@dataclass(slots=True)
class CrawlRecords:
    """One crawl's pages (links included) and how long it took (None: unknown)."""

    base_url: str
    pages: list[Page] = field(default_factory=list)
    seconds: float | None = None


@asynccontextmanager
async def open_store(args: argparse.Namespace) -> AsyncIterator[PageStore]:
    """The crawl ``export`` and ``report`` read, open: the STATE file, or ``--redis URL
    --crawl-id ID`` (raises :class:`~sitecrawl.StateError` when unusable). The only place
    that tells the two apart: past it, a store is a :class:`~sitecrawl.frontier.PageStore`."""
    from ..frontier import SqliteFrontier
    from ._redis import frontier_for

    store: SqliteFrontier | RedisFrontier
    if args.redis is not None:
        store = frontier_for(args.redis, args.crawl_id)
    else:
        store = SqliteFrontier(args.state, create=False)
    async with store:
        yield store


def source_name(args: argparse.Namespace) -> str:
    """Where the crawl was read from, for messages."""
    return f"crawl {args.crawl_id} in Redis" if args.redis is not None else str(args.state)


async def read_records(store: PageStore) -> CrawlRecords:
    """Every page of a store (links included), in memory: what the audit needs."""
    assert store.base_url is not None
    pages = [page async for page in store.read_pages()]
    return CrawlRecords(store.base_url, pages, await store.crawl_seconds())


async def read_state(path: str | os.PathLike[str]) -> CrawlRecords:
    """Every page of a state file (raises :class:`~sitecrawl.StateError` when unusable)."""
    from ..frontier import SqliteFrontier

    async with SqliteFrontier(path, create=False) as store:
        return await read_records(store)


def collector(records: CrawlRecords) -> Sink:
    """A sink that keeps every page it is given in ``records.pages`` (in-memory crawls)."""
    from ..sinks import Sink

    class _Collect(Sink):
        def write(self, page: Page) -> None:
            records.pages.append(page)

        def close(self) -> None:
            pass

    return _Collect()
