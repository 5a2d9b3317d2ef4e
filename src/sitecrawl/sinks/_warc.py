"""``-o FILE.warc.gz`` / ``-o FILE.warc``: every HTTP exchange of the crawl, archived as WARC 1.1.

:class:`WarcArchive` is the fetcher's recorder (:data:`~sitecrawl.fetch.Recorder`): each
request the crawl makes (pages, every redirect hop, retries, robots.txt, sitemaps) becomes a
``response`` (or ``revisit``) and a ``request`` record (:mod:`._warc_records`), written as it
happens, each record one gzip member, into numbered segments that appear under their names
only when closed (:mod:`._warc_files`). Records reach the operating system (one ``write``
each) before the page is handed to the frontier, so a page the state file holds as done is in
the archive even after ``kill -9``: the next run recovers the open segment and writes its own
pages to the next one.

Revisits: a ``304`` to the crawl's conditional request refers to the URL's last capture; a
``2xx`` body whose payload digest was archived before refers to that capture. What was
captured is known from this run and from the archive's earlier segments (read once, when the
archive is opened), kept in a temporary SQLite index (:mod:`._captures`): the archive's
memory stays flat with the crawl's size.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
import zlib
from abc import abstractmethod
from collections.abc import Collection
from importlib import metadata
from typing import TYPE_CHECKING, Any

from .._json import dumps
from .._models import Page
from .._version import __version__
from ._base import Sink
from ._captures import CaptureIndex
from ._warc_files import SegmentFile, Segments, recover
from ._warc_records import Capture, RecordMaker, import_warcio, payload_digest

if TYPE_CHECKING:
    from .._config import CrawlConfig
    from ..fetch import Exchange, Recorder

#: ``--warc-max-size``'s default: a segment is closed once it holds this many bytes.
DEFAULT_MAX_SIZE = 1 << 30
#: Exchanges the writer thread writes at most with one ``write`` (those queued meanwhile).
BATCH = 32
#: Level 1: a few % larger files than zlib's default 6 for a third of its CPU (bench/RESULTS.md
#: section 23); with the isal package (the warc extra), ISA-L's level 1, four times faster yet.
GZIP_LEVEL = 1


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

    ``max_size``: bytes after which a segment is closed and the next begun; ``keep_cookies``:
    archive the ``Set-Cookie`` headers of responses; ``secret_headers``: request header names
    never archived besides ``Authorization``, ``Cookie`` and ``Proxy-Authorization`` (the
    crawl's ``-H`` headers); ``refer_back``: read the archive's earlier segments when it is
    opened, so that revisits may refer to their captures (a resumed or repeated crawl's).
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
    ) -> None:
        if config is not None:
            secret_headers = {*secret_headers, *(name for name, _ in config.requests.headers)}
        self._maker = RecordMaker(keep_cookies=keep_cookies, secret_headers=secret_headers)
        self.segments = Segments(path)
        self.max_size = max_size
        self._info = crawl_info(config)
        #: Segments put in place by this archive: the ones recovered, then this run's.
        self.written: list[str] = recover(self.segments)
        self._captures = CaptureIndex()  # what revisits refer to, on disk (flat memory)
        if refer_back:  # reading them costs a second or so per 100 MB
            for _, name in self.segments.closed():
                self._index(name)
        self._next = self.segments.next_number()
        self._file: SegmentFile | None = None
        self.records = 0
        self._queue: queue.SimpleQueue[Exchange | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._queued = self._written = 0
        self._error: Exception | None = None
        self._waiters: list[tuple[int, asyncio.Future[None], asyncio.AbstractEventLoop]] = []
        self._lock = threading.Lock()

    def _index(self, path: str) -> None:
        """Note the captures of an earlier segment (what revisits may refer to)."""
        from warcio.archiveiterator import ArchiveIterator
        from warcio.exceptions import ArchiveLoadFailed

        try:
            with open(path, "rb") as stream:
                for record in ArchiveIterator(stream):
                    headers = record.rec_headers
                    if record.rec_type == "revisit":
                        self._refer(headers)
                    if record.rec_type != "response":
                        continue
                    capture = Capture(
                        headers.get_header("WARC-Target-URI"),
                        headers.get_header("WARC-Date"),
                        headers.get_header("WARC-Record-ID"),
                    )
                    digest = headers.get_header("WARC-Payload-Digest")
                    whole = digest and not headers.get_header("WARC-Truncated")
                    self._captures.note(capture.uri, capture, digest if whole else None)
        except (OSError, ValueError, EOFError, zlib.error, ArchiveLoadFailed):
            return  # not ours, or damaged: nothing to refer to there

    def _refer(self, headers: Any) -> None:
        """A revisit of an earlier segment: its URL's capture is the one it refers to."""
        refers = [
            headers.get_header(name)
            for name in ("WARC-Refers-To-Target-URI", "WARC-Refers-To-Date", "WARC-Refers-To")
        ]
        if all(refers):
            self._captures.note(headers.get_header("WARC-Target-URI"), Capture(*refers))

    def captured(self, url: str) -> Capture | None:
        """The last capture of ``url`` in this archive (None: not archived)."""
        return self._captures.by_url(url)

    @property
    def paths(self) -> list[str]:
        """Every closed segment of the archive, in order."""
        return [name for _, name in self.segments.closed()]

    def __call__(self, exchange: Exchange) -> None:
        """Archive ``exchange``: queued to the archive's writer thread, which digests,
        compresses and writes it (hashlib and zlib let the event loop run meanwhile). Raises
        the writer's error (``OSError``: a full disk) once it had one."""
        if self._error is not None:
            raise self._error
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="sitecrawl-warc", daemon=True)
            self._thread.start()
        self._queued += 1
        self._queue.put(exchange)

    @property
    def backlog(self) -> int:
        """Exchanges queued, not yet written."""
        return self._queued - self._written

    async def synced(self) -> None:
        """Wait until every exchange given so far is written (handed to the system: a
        ``kill -9`` loses none of it). A crawl's ``on_page`` awaits it before the page is
        done in the frontier, so that a page done is a page archived."""
        target = self._queued
        if self._written >= target and self._error is None:
            return
        loop = asyncio.get_running_loop()
        waiter = loop.create_future()
        with self._lock:
            self._waiters.append((target, waiter, loop))
            self._wake()
        await waiter

    def _wake(self) -> None:
        """Resolve the waiters whose exchanges are written (on their loop)."""
        written, error = self._written, self._error
        pending = []
        for target, waiter, loop in self._waiters:
            if written >= target or error is not None:
                loop.call_soon_threadsafe(_settle, waiter, error)
            else:
                pending.append((target, waiter, loop))
        self._waiters = pending

    def _run(self) -> None:
        """The writer thread: archives what is queued, in batches of what is there (up to
        :data:`BATCH`), each batch one ``write`` (whole records: a kill cuts at most the
        last), then counts the batch as written."""
        done = False
        while not done:
            batch = [self._queue.get()]
            while len(batch) < BATCH and not self._queue.empty():
                batch.append(self._queue.get_nowait())
            if batch[-1] is None:
                done = True
                batch.pop()
            try:
                if self._error is None:
                    for exchange in batch:
                        assert exchange is not None
                        self._archive(exchange)
                    if self._file is not None:
                        self._file.flush()
            except Exception as exc:  # the thread's end: raised on the loop
                self._error = exc  # (OSError: a full disk; anything else is a bug, not a hang)
            self._written += len(batch)
            if self._waiters:
                with self._lock:
                    self._wake()

    def _archive(self, exchange: Exchange) -> None:
        body = exchange.body
        digest = payload_digest(body) if body is not None else None
        whole = digest is not None and bool(body) and not exchange.truncated
        refers = None
        if exchange.status == 304:
            refers = self._captures.by_url(exchange.url)
        elif whole and 200 <= exchange.status < 300:
            assert digest is not None
            refers = self._captures.by_digest(digest)
        records, record_id, date = self._maker.exchange(exchange, refers, digest)
        if refers is not None:  # a revisit: this URL's payload is that capture's
            self._captures.note(exchange.url, refers)
        elif exchange.status != 304:
            capture = Capture(exchange.url, date, record_id)
            self._captures.note(exchange.url, capture, digest if whole else None)
        self._write(records)

    def _write(self, records: list[bytes]) -> None:
        file = self._file
        if file is None:
            file = self._file = SegmentFile(self.segments, self._next)
            self._next += 1
            name = file.path.rsplit("/", 1)[-1]
            records = [self._maker.warcinfo(name, self._info), *records]
        data = b"".join(map(_gzip_member, records) if self.segments.gzip else records)
        file.write(data)
        self.records += len(records)
        if file.size >= self.max_size:
            self._close_segment()

    def _close_segment(self) -> None:
        file, self._file = self._file, None
        if file is not None:
            file.close()
            self.written.append(file.path)

    def close(self) -> None:
        """Write what is queued and close the open segment: it appears under its name.
        Raises the writer's error, if it had one."""
        thread, self._thread = self._thread, None
        if thread is not None:
            self._queue.put(None)
            thread.join()
        self._close_segment()  # whole records only, even after an error
        if self._error is not None:
            raise self._error


def _settle(waiter: asyncio.Future[None], error: Exception | None) -> None:
    if not waiter.done():
        if error is None:
            waiter.set_result(None)
        else:
            waiter.set_exception(error)


def _compressor() -> Any:
    """ISA-L's zlib when installed (same format, several times faster), else zlib."""
    try:
        from isal import isal_zlib
    except ImportError:
        return zlib
    return isal_zlib


_ZLIB = _compressor()


def _gzip_member(record: bytes) -> bytes:
    """``record`` as one gzip member (what lets a reader seek to any record)."""
    compressor = _ZLIB.compressobj(GZIP_LEVEL, _ZLIB.DEFLATED, 31)
    return bytes(compressor.compress(record) + compressor.flush())


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
