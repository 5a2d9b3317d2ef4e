"""``-o FILE.warc.gz`` / ``-o FILE.warc``: every HTTP exchange of the crawl, archived as WARC 1.1.

:class:`WarcArchive` is the fetcher's recorder (:data:`~sitecrawl.fetch.Recorder`): each
request the crawl makes (pages, every redirect hop, retries, robots.txt, sitemaps) becomes a
``response`` (or ``revisit``) and a ``request`` record (:mod:`._warc_records`), written as it
happens, each record one gzip member, into numbered segments that appear under their names
only when closed (:mod:`._warc_files`). The archive's writer process does that work
(:mod:`._warc_writer`, :mod:`._warc_child`); the crawl only sends it the exchanges
(:mod:`._warc_process`). Records reach the operating system before the page is handed to the
frontier, so a page the state file holds as done is in the archive even after ``kill -9``:
the next run recovers the open segment and writes its own pages to the next one.
"""

from __future__ import annotations

import contextlib
import os
from abc import abstractmethod
from collections.abc import Collection
from importlib import metadata
from typing import TYPE_CHECKING, Any

from .._json import dumps
from .._models import Page
from .._version import __version__
from ._base import Sink
from ._warc_child import EXCHANGE, PAGE, setup_frame
from ._warc_files import Segments
from ._warc_process import WriterProcess
from ._warc_records import import_warcio

if TYPE_CHECKING:
    from .._config import CrawlConfig
    from ..fetch import Exchange, Recorder

#: ``--warc-max-size``'s default: a segment is closed once it holds this many bytes.
DEFAULT_MAX_SIZE = 1 << 30


def crawl_info(config: CrawlConfig | None) -> dict[str, str]:
    """The warcinfo fields of a crawl: the software, the format and the crawl's settings as
    its state file keeps them (credentials: only which were given, never a value)."""
    import_warcio()
    fields = {
        "software": f"sitecrawl/{__version__} (warcio/{metadata.version('warcio')})",
        "format": "WARC File Format 1.1",
        "conformsTo": "https://iipc.github.io/warc-specifications/specifications/"
        "warc-format/warc-1.1/",
    }
    if config is not None:
        from ..frontier import encode

        fields["http-header-user-agent"] = config.user_agent
        fields["robots"] = "obey" if config.politeness.obey_robots else "ignore"
        fields["sitecrawl-start-urls"] = " ".join(config.starts)
        fields["sitecrawl-config"] = dumps(encode(config))
    return fields


class WarcArchive:
    """The WARC archive at ``path`` (``.warc.gz`` or ``.warc``), a recorder of exchanges.

    The archive is written by a process of its own (:mod:`._warc_child`, started here): the
    crawl's event loop only sends it each exchange through a socket (a writer thread shared
    the interpreter's lock with the loop, which then waited for half of the records' work).
    ``max_size``: bytes after which a segment is closed and the next begun; ``keep_cookies``:
    archive the ``Set-Cookie`` headers of responses; ``secret_headers``: request header names
    never archived besides ``Authorization``, ``Cookie`` and ``Proxy-Authorization`` (the
    crawl's ``-H`` headers); ``refer_back``: read the archive's earlier segments when it is
    opened, so that revisits may refer to their captures (a resumed or repeated crawl's);
    ``pages``: the file :meth:`list_page` writes a WACZ's page list to.
    :class:`~sitecrawl.MissingExtra` without warcio."""

    def __init__(
        self,
        path: str,
        *,
        config: CrawlConfig | None = None,
        max_size: int = DEFAULT_MAX_SIZE,
        keep_cookies: bool = False,
        secret_headers: Collection[str] = (),
        refer_back: bool = True,
        pages: str | None = None,
    ) -> None:
        if config is not None:
            secret_headers = {*secret_headers, *(name for name, _ in config.requests.headers)}
        self.segments = Segments(path)  # (a name that is not an archive's: ValueError now)
        setup = setup_frame(
            path=path,
            info=crawl_info(config),
            max_size=max_size,
            keep_cookies=keep_cookies,
            secret_headers=sorted(secret_headers),
            refer_back=refer_back,
            pages=pages,
            owner=os.getpid(),  # a kill -9 of the crawl leaves the open segment to recover
        )
        self._writer = WriterProcess(setup)
        #: Segments put in place: the ones recovered, then this run's (known once closed).
        self.written: list[str] = []
        #: Records written (known once closed).
        self.records = 0
        #: The page list's first page and its capture's date (known once closed).
        self.main: tuple[str, str] | None = None

    @property
    def paths(self) -> list[str]:
        """Every closed segment of the archive, in order."""
        return [name for _, name in self.segments.closed()]

    def __call__(self, exchange: Exchange) -> None:
        """Archive ``exchange``: sent to the writer process, which digests, compresses and
        writes it. Raises the writer's error (``OSError``: a full disk) once it had one."""
        self._writer.send(EXCHANGE, exchange.wire(), exchange.body or b"")

    def list_page(self, url: str, title: str | None) -> None:
        """Add ``url`` to the page list once, with the date of its capture (the exchange
        archived last for it: send the page after its exchanges)."""
        self._writer.send(PAGE, (url, title))

    @property
    def backlog(self) -> int:
        """Exchanges (and pages) sent, not yet written."""
        return self._writer.backlog

    async def synced(self) -> None:
        """Wait until every exchange given so far is written (handed to the system: a
        ``kill -9`` loses none of it). A crawl's ``on_page`` awaits it before the page is
        done in the frontier, so that a page done is a page archived."""
        await self._writer.synced()

    def close(self) -> None:
        """Write what was sent and close the open segment: it appears under its name.
        Raises the writer's error, if it had one."""
        closed = self._writer.close()
        if closed is not None:
            written, self.records, main = closed
            self.written = list(written)
            self.main = (main[0], main[1]) if main else None


class ArchiveSink(Sink):
    """An archive output: its :attr:`archive` is given to the crawler as its ``recorder``.
    :meth:`discard` keeps what is archived (the pages it holds may be done in the state
    file)."""

    path: str
    archive: WarcArchive

    @property
    def recorder(self) -> Recorder:
        return self.archive

    @abstractmethod
    def discard(self) -> None: ...


class WarcSink(ArchiveSink):
    """A crawl's ``-o FILE.warc.gz``: the pages need nothing more (their exchanges are
    archived)."""

    def __init__(self, path: str, **options: Any) -> None:
        self.path = path
        self.archive = WarcArchive(path, **options)

    def write(self, page: Page) -> None:
        pass

    def close(self) -> None:
        self.archive.close()

    def discard(self) -> None:
        with contextlib.suppress(OSError):  # the error that stopped the crawl is reported
            self.archive.close()
