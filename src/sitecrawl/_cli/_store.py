"""Reading a finished crawl back for ``export`` and ``report``: a state file or a crawl in Redis
opened as one :class:`~sitecrawl.frontier.PageStore` (:func:`open_store`), and the records a crawl
just collected in memory (:class:`CrawlRecords`)."""

from __future__ import annotations

import argparse
import shlex
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .._models import Page
    from ..frontier import PageStore, SharedFrontier, SqliteFrontier
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

    store: SqliteFrontier | SharedFrontier
    if args.redis is not None:
        store = frontier_for(args.redis, args.crawl_id)
    else:
        store = SqliteFrontier(args.state, create=False)
    async with store:
        yield store


def source_name(args: argparse.Namespace) -> str:
    """Where the crawl was read from, for messages."""
    return f"crawl {args.crawl_id} in Redis" if args.redis is not None else str(args.state)


def default_output(args: argparse.Namespace, suffix: str) -> str:
    """The file ``export`` and ``report`` write without ``-o``, in the working folder: the
    state file's name without ``.sitecrawl.db`` (or its last suffix), or ``crawl-ID`` for a
    crawl in Redis, then ``.SUFFIX`` (``example.com.pages.csv``, ``example.com.report.html``)."""
    if args.redis is not None:
        stem = f"crawl-{args.crawl_id}"
    else:
        name = Path(args.state).name
        stem = name.removesuffix(".sitecrawl.db")
        if stem == name or not stem:
            stem = Path(name).stem or "crawl"
    return f"{stem}.{suffix}"


def source_args(args: argparse.Namespace) -> str:
    """The crawl's source as command arguments (for a command line to suggest)."""
    if args.redis is not None:
        urls = shlex.quote(",".join(args.redis))
        return f"--redis {urls} --crawl-id {shlex.quote(str(args.crawl_id))}"
    return shlex.quote(args.state)


def collector(records: CrawlRecords) -> Sink:
    """A sink that keeps every page it is given in ``records.pages`` (in-memory crawls)."""
    from ..sinks import Sink

    class _Collect(Sink):
        def write(self, page: Page) -> None:
            records.pages.append(page)

        def close(self) -> None:
            pass

    return _Collect()
