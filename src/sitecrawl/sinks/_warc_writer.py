"""The archive's writer: exchanges in, WARC records out, in the archive's writer process.

:class:`ArchiveWriter` does the archive's work, all of it synchronous: it digests each body,
decides between a response and a revisit, makes the records (:mod:`._warc_records`),
compresses each as its own gzip member and appends them to the open segment
(:mod:`._warc_files`), starting the next segment past the size limit. It runs in the process
:mod:`._warc_child` starts, so none of this shares the crawl's interpreter (a thread did: it
held the GIL for half of the archive's ~330 us a page, and the event loop waited for it).

Revisits: a ``304`` to the crawl's conditional request refers to the URL's last capture; a
``2xx`` body whose payload digest was archived before refers to that capture. What was
captured is known from this run and from the archive's earlier segments (read once, when the
writer starts), kept in a temporary SQLite index (:mod:`._captures`): the writer's memory
stays flat with the crawl's size.

A WACZ's page list is written here too (:meth:`ArchiveWriter.list_page`): a page's exchange
reaches the writer before the page does, so its capture (the ``ts`` of the list) is known.
"""

from __future__ import annotations

import hashlib
import zlib
from typing import IO, Any

from .._json import dumps
from ._captures import CaptureIndex
from ._warc_files import SegmentFile, Segments, recover
from ._warc_records import Capture, Record, RecordMaker, payload_digest

#: Level 1: a few % larger files than zlib's default 6 for a third of its CPU (bench/RESULTS.md
#: section 23); with the isal package (the warc extra), ISA-L's level 1, four times faster yet.
GZIP_LEVEL = 1
#: Records shorter than this (a request, a redirect, a revisit) go at ISA-L's level 0: its
#: level 1 spends ~7 µs setting each stream up, more than such a record's compression, for
#: ~140 bytes less a record (2 % of an archive; bench/RESULTS.md section 41).
SMALL_RECORD = 4096


def _compressor() -> tuple[Any, int]:
    """ISA-L's zlib when installed (same format, several times faster), else zlib; and the
    level of a small record (zlib's level 0 would store it uncompressed)."""
    try:
        from isal import isal_zlib
    except ImportError:
        return zlib, GZIP_LEVEL
    return isal_zlib, 0


_ZLIB, _SMALL_LEVEL = _compressor()


def gzip_member(record: Record) -> bytes:
    """``record`` (its pieces) as one gzip member (what lets a reader seek to any record)."""
    data = b"".join(record)  # one compress call a record, not one a piece: faster, copy and all
    member: bytes = _ZLIB.compress(
        data, _SMALL_LEVEL if len(data) < SMALL_RECORD else GZIP_LEVEL, 31
    )
    return member


class ArchiveWriter:
    """The segments of the archive ``path`` (``.warc.gz`` or ``.warc``), written record by
    record. ``info``: the warcinfo fields each segment starts with; ``max_size``: bytes after
    which a segment is closed; ``keep_cookies``, ``secret_headers``: as
    :class:`~._warc_records.RecordMaker`'s; ``refer_back``: read the archive's closed segments
    first, so that revisits may refer to their captures; ``pages``: the file a WACZ's page
    list goes to (None: no list); ``owner``: the process the open segments are named after
    (:class:`~._warc_files.Segments`)."""

    def __init__(
        self,
        path: str,
        *,
        info: dict[str, str],
        max_size: int,
        keep_cookies: bool = False,
        secret_headers: list[str] | tuple[str, ...] = (),
        refer_back: bool = True,
        pages: str | None = None,
        owner: int | None = None,
    ) -> None:
        self._maker = RecordMaker(keep_cookies=keep_cookies, secret_headers=secret_headers)
        self.segments = Segments(path, owner)
        self.max_size = max_size
        self._info = info
        #: Segments put in place by this writer: the ones recovered, then this run's.
        self.written: list[str] = recover(self.segments)
        self._captures = CaptureIndex()  # what revisits refer to, on disk (flat memory)
        if refer_back:  # reading them costs a second or so per 100 MB
            for _, name in self.segments.closed():
                self._index(name)
        self._next = self.segments.next_number()
        self._file: SegmentFile | None = None
        self.records = 0
        self._pages: IO[bytes] | None = open(pages, "wb") if pages else None  # noqa: SIM115
        #: The page list's first page (url, capture date): a WACZ's main page.
        self.main: tuple[str, str] | None = None
        self._unlisted: list[tuple[str, str | None]] = []  # pages whose capture is not known

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

    def archive(self, exchange: Any) -> None:
        """Write ``exchange``'s records (an :class:`~sitecrawl.fetch.Exchange`) to the open
        segment; handed to the system by the next :meth:`flush`."""
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

    def _write(self, records: list[Record]) -> None:
        file = self._file
        if file is None:
            file = self._file = SegmentFile(self.segments, self._next)
            self._next += 1
            name = file.path.rsplit("/", 1)[-1]
            records = [self._maker.warcinfo(name, self._info), *records]
        if self.segments.gzip:
            file.write(b"".join(map(gzip_member, records)))
        else:
            file.write(b"".join([piece for record in records for piece in record]))
        self.records += len(records)
        if file.size >= self.max_size:
            self._close_segment()

    def flush(self) -> None:
        """Hand every record written so far to the system (a ``kill -9`` loses none)."""
        self._captures.commit()
        if self._file is not None:
            self._file.flush()
        if self._pages is not None:
            self._pages.flush()

    def list_page(self, url: str, title: str | None) -> None:
        """Add ``url`` to the page list once, with its capture's date (later, when its
        capture is not archived yet)."""
        if self._pages is None or not self._captures.list_once(url):
            return
        self._unlisted.append((url, title))
        self._list_known()

    def _list_known(self) -> None:
        assert self._pages is not None
        waiting = []
        for url, title in self._unlisted:
            capture = self._captures.by_url(url)
            if capture is None:
                waiting.append((url, title))
                continue
            if self.main is None:
                self.main = (url, capture.date)
            self._pages.write(page_line(url, capture.date, title))
        self._unlisted = waiting

    def _close_segment(self) -> None:
        file, self._file = self._file, None
        if file is not None:
            file.close()
            self.written.append(file.path)

    def close(self) -> None:
        """Close the open segment (it appears under its name) and the page list."""
        try:
            self._close_segment()  # whole records only, even after an error
        finally:
            if self._pages is not None:
                self._pages.close()
            self._captures.close()


def page_line(url: str, date: str, title: str | None) -> bytes:
    """A line of a WACZ's ``pages/pages.jsonl``."""
    entry = {"id": hashlib.sha1(url.encode()).hexdigest()[:32], "url": url, "ts": date}
    if title:
        entry["title"] = title
    return dumps(entry).encode() + b"\n"
