"""An archive's numbered files (segments), each visible under its name only once closed.

``-o site.warc.gz`` names a series: ``site.warc.gz``, then ``site-00001.warc.gz``,
``site-00002.warc.gz``... A segment is written at ``.site-00001.warc.gz.sitecrawl-open-PID``
(PID: the writing process) and renamed to its name when it is closed: when it reaches the
archive's size limit, or the crawl ends. A run never writes over a segment: it starts after
the highest number there is, so a re-crawl's revisit records can refer to the earlier run's.

After a ``kill -9`` the open segment is left under its temporary name. The next run that
writes the archive recovers it (:func:`recover`): what follows its last complete record (a
gzip member, or a record of an uncompressed ``.warc``) is cut off, and it is renamed into
place, so every record written before the kill is kept and no file is left truncated. The
temporary files of a process still running (another worker) are left alone.
"""

from __future__ import annotations

import contextlib
import os
import re
import zlib
from collections.abc import Iterator
from typing import IO

from ._atomic import located, running

#: Marks an open segment in its temporary name: ``.site.warc.gz.sitecrawl-open-1234``.
OPEN_MARK = ".sitecrawl-open-"
ARCHIVE_SUFFIXES = (".warc.gz", ".warc")
_READ = 1 << 20


class Segments:
    """The names of the archive ``path`` (``.warc.gz``: gzip members; ``.warc``: plain).
    ``owner``: the process an open segment is named after (default: this one): the crawl's,
    when a writer process of its own writes the segments, so that the crawl's death is what
    leaves them to recover."""

    def __init__(self, path: str, owner: int | None = None) -> None:
        self.owner = owner
        lower = path.lower()
        ext = next((suffix for suffix in ARCHIVE_SUFFIXES if lower.endswith(suffix)), None)
        if ext is None:
            raise ValueError(f"not a WARC file name: {path!r}")
        self.path = path
        self.base = path[: len(path) - len(ext)]
        self.ext = path[len(path) - len(ext) :]
        self.gzip = ext == ".warc.gz"
        self.directory = os.path.dirname(os.path.abspath(path))
        stem = re.escape(os.path.basename(self.base))
        self._closed = re.compile(rf"{stem}(?:-(\d{{5,}}))?{re.escape(self.ext)}")
        self._open = re.compile(
            rf"\.{stem}(?:-(\d{{5,}}))?{re.escape(self.ext)}{re.escape(OPEN_MARK)}(\d+)"
        )

    def name(self, number: int) -> str:
        """Segment ``number``'s path (0: the path given)."""
        return self.path if number == 0 else f"{self.base}-{number:05d}{self.ext}"

    def temp(self, number: int, pid: int | None = None) -> str:
        directory, name = os.path.split(os.path.abspath(self.name(number)))
        if pid is None:
            pid = os.getpid() if self.owner is None else self.owner
        return os.path.join(directory, f".{name}{OPEN_MARK}{pid}")

    def _listing(self) -> list[str]:
        try:
            return os.listdir(self.directory)
        except OSError:
            return []

    def closed(self) -> list[tuple[int, str]]:
        """The closed segments there are, by number."""
        found = []
        for name in self._listing():
            if match := self._closed.fullmatch(name):
                found.append((int(match[1] or 0), os.path.join(self.directory, name)))
        return sorted(found)

    def open_ones(self) -> list[tuple[int, int, str]]:
        """``(number, pid, temporary path)`` of the segments left open."""
        found = []
        for name in self._listing():
            if match := self._open.fullmatch(name):
                found.append(
                    (int(match[1] or 0), int(match[2]), os.path.join(self.directory, name))
                )
        return sorted(found)

    def next_number(self) -> int:
        """The number after every segment there is, closed or open."""
        numbers = [number for number, _ in self.closed()]
        numbers += [number for number, _, _ in self.open_ones()]
        return max(numbers) + 1 if numbers else 0


def recover(segments: Segments) -> list[str]:
    """Close the segments a killed run left open: cut each after its last complete record and
    rename it into place (an empty one is removed). Return the paths put in place."""
    recovered = []
    for number, pid, temp in segments.open_ones():
        if running(pid):
            continue
        final = segments.name(number)
        with open(temp, "r+b") as file:
            end = _complete_gzip(file) if segments.gzip else _complete_plain(file)
            file.truncate(end)
            file.flush()
            os.fsync(file.fileno())
        if end == 0 or os.path.exists(final):
            os.unlink(temp)
            continue
        os.replace(temp, final)
        recovered.append(final)
    return recovered


def _complete_gzip(file: IO[bytes]) -> int:
    """The offset after the last complete gzip member of ``file``."""
    file.seek(0)
    end = offset = 0
    decoder = zlib.decompressobj(31)
    while chunk := file.read(_READ):
        data = chunk
        while data:
            try:
                decoder.decompress(data)  # output dropped: only the member's end matters
            except zlib.error:
                return end
            if not decoder.eof:
                offset += len(data)
                break
            used = len(data) - len(decoder.unused_data)
            offset += used
            end = offset
            data = decoder.unused_data
            decoder = zlib.decompressobj(31)
    return end


def _complete_plain(file: IO[bytes]) -> int:
    """The offset after the last complete record of an uncompressed WARC ``file``."""
    file.seek(0, os.SEEK_END)
    size = file.tell()
    end = 0
    for start, length in _plain_records(file):
        if start + length > size:
            break
        end = start + length
    return end


def _plain_records(file: IO[bytes]) -> Iterator[tuple[int, int]]:
    """``(offset, length)`` of each record: its header block, content and the CRLF CRLF."""
    offset = 0
    while True:
        file.seek(offset)
        head = b""
        while b"\r\n\r\n" not in head:
            more = file.read(4096)
            if not more:
                return
            head += more
        block, _, _ = head.partition(b"\r\n\r\n")
        if not block.startswith(b"WARC/"):
            return
        match = re.search(rb"\r\ncontent-length:\s*(\d+)", block, re.IGNORECASE)
        if match is None:
            return
        length = len(block) + 4 + int(match[1]) + 4
        yield offset, length
        offset += length


class SegmentFile:
    """One open segment: whole records appended (:meth:`write`) and handed to the system
    together (:meth:`flush`: one ``write``, so a kill leaves at most the last record cut),
    renamed into place by :meth:`close`."""

    def __init__(self, segments: Segments, number: int) -> None:
        self.number = number
        self.path = segments.name(number)
        self.temp = segments.temp(number)
        self._fd = os.open(self.temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o644)
        self.size = 0  # the bytes written and pending
        self._flushed = 0
        self._pending: list[bytes] = []

    def write(self, data: bytes) -> None:
        """Append ``data`` (whole records), written by the next :meth:`flush`."""
        self._pending.append(data)
        self.size += len(data)

    def flush(self) -> None:
        """Hand what is pending to the system; on an error (a full disk) the segment is cut
        back to what it held, whole records, and the error names the segment."""
        if not self._pending:
            return
        data = b"".join(self._pending) if len(self._pending) > 1 else self._pending[0]
        self._pending = []
        view = memoryview(data)
        try:
            while view:
                written = os.write(self._fd, view)
                view = view[written:]
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, self._flushed)
            self.size = self._flushed
            raise located(exc, self.path) from exc
        self._flushed = self.size

    def close(self) -> None:
        """Write what is pending, flush to disk and rename into place (after a failed
        write too: the segment holds whole records; the error is raised then)."""
        if self._fd < 0:
            return
        error: OSError | None = None
        try:
            self.flush()
        except OSError as exc:
            error = exc
        fd, self._fd = self._fd, -1
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(self.temp, self.path)
        if error is not None:
            raise error

    def abandon(self) -> None:
        """Close without renaming (the next run recovers it)."""
        fd, self._fd = self._fd, -1
        if fd >= 0:
            with contextlib.suppress(OSError):
                os.close(fd)
