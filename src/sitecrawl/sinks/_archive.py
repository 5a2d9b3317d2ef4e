"""Archive outputs by suffix: ``.warc.gz`` and ``.warc`` (:mod:`._warc`), ``.wacz``
(:mod:`._wacz`). Unlike the row formats, an archive records the crawl's HTTP exchanges: its
sink carries a ``recorder`` for the crawler (:data:`~sitecrawl.fetch.Recorder`)."""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ._base import Sink

if TYPE_CHECKING:
    from .._models import Page
    from ..fetch import Exchange, Recorder
    from ._warc import ArchiveSink

#: Exchanges an archive may have queued, not yet written, before a crawl waits for it.
MAX_BACKLOG = 64
#: The archive formats, by extension.
ARCHIVE_FORMATS = (".warc.gz", ".warc", ".wacz")


def is_archive(path: str) -> bool:
    """Whether ``path`` names an archive output (``.warc.gz``, ``.warc``, ``.wacz``)."""
    return path.lower().endswith(ARCHIVE_FORMATS)


def archive_sink(path: str, **options: Any) -> ArchiveSink:
    """The sink of the archive ``path``; ``options`` as :class:`~._warc.WarcArchive`'s
    (``config``, ``max_size``, ``keep_cookies``). :class:`~sitecrawl.MissingExtra` without
    warcio."""
    if path.lower().endswith(".wacz"):
        from ._wacz import WaczSink

        return WaczSink(path, **options)
    from ._warc import WarcSink

    return WarcSink(path, **options)


def _archives(sinks: Iterable[Sink]) -> list[ArchiveSink]:
    """The archive sinks among ``sinks``. An archive sink exists only once :mod:`._warc` is
    imported, so a crawl without one imports none of the archives' modules (warcio, isal,
    zipfile: ~5 % of a short crawl's start in instructions)."""
    warc = sys.modules.get(f"{__package__}._warc")
    if warc is None:
        return []
    return [sink for sink in sinks if isinstance(sink, warc.ArchiveSink)]


def recorder_of(sinks: Iterable[Sink]) -> Recorder | None:
    """One recorder for every archive sink in ``sinks`` (None when there is none)."""
    recorders = [sink.recorder for sink in _archives(sinks)]
    if not recorders:
        return None
    if len(recorders) == 1:
        return recorders[0]

    def record(exchange: Exchange) -> None:
        for recorder in recorders:
            recorder(exchange)

    return record


def archived_hook(
    sinks: Sequence[Sink], *, durable: bool
) -> Callable[[Page], Awaitable[None]] | None:
    """A crawl's ``on_page`` hook with archive sinks (None without): it waits until every
    exchange so far is written (:meth:`~._warc.WarcArchive.synced`), so that a page a
    ``durable`` frontier marks done is in the archive (a crawl in memory waits only when
    more than :data:`MAX_BACKLOG` exchanges are queued: memory stays bounded)."""
    archives = [sink.archive for sink in _archives(sinks)]
    if not archives:
        return None

    async def archived(page: Page) -> None:
        for archive in archives:
            if durable or archive.backlog > MAX_BACKLOG:
                await archive.synced()

    return archived
