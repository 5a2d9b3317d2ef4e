"""The archive's writer process: ``python -m sitecrawl.sinks._warc_child PARENT_PID`` on two
channels (:mod:`sitecrawl._channels`), started by :class:`~._warc.WarcArchive`; it dies with
its parent.

The first frame on its stdin is its setup (:func:`setup_frame`: length-prefixed JSON, the
keywords of :class:`~._warc_writer.ArchiveWriter`). Then each job (:func:`job_frames`) is a
header (its kind and two sizes), the ``marshal``-ed fields and a body as it is: ``x`` an
exchange (:meth:`~sitecrawl.fetch.Exchange.wire`, its body apart), ``p`` a page for
the page list (url, title), ``e`` the end. The child reads what is there and archives it;
once its socket is drained (or :data:`_BATCH` jobs on) it hands the records to the system and
answers with how many jobs it has done so far: ``("done", jobs, error)``; after ``e``, it
closes the archive and answers ``("closed", segments written, records, main page, error)``.
An error is ``(errno, message, file name)``, and once the writer had one it only counts the
jobs that follow.

Its stdin ending without ``e`` means the crawl is gone: the records it had are handed to the
system and the open segment is left as a ``kill -9`` leaves it, for the next run to recover.
"""

from __future__ import annotations

import signal

if __name__ == "__main__":
    # Ctrl-C reaches the crawl, which then ends us through the channel (see parse._child).
    signal.signal(signal.SIGINT, signal.SIG_IGN)

import contextlib
import json
import marshal
import os
import select
import struct
import sys
from typing import Any

from .._channels import die_with_parent

LENGTH = struct.Struct("!I")
#: A job's header: its kind, the sizes of its marshalled fields and of its body.
JOB = struct.Struct("!cII")
EXCHANGE, PAGE, END = b"x", b"p", b"e"
_READ = 1 << 20
#: Jobs done at most before the writer writes and answers, even while more keep coming (a
#: durable crawl's pages wait for the answer).
_BATCH = 64
Error = tuple[int, str, "str | None"]


def setup_frame(**setup: Any) -> bytes:
    """The first frame: the writer's keywords as length-prefixed JSON."""
    encoded = json.dumps(setup).encode()
    return LENGTH.pack(len(encoded)) + encoded


def job_frames(kind: bytes, fields: Any, body: bytes = b"") -> list[bytes]:
    """A job as buffers to write one after the other (the body not copied into a frame)."""
    meta = marshal.dumps(fields)
    return [JOB.pack(kind, len(meta), len(body)), meta, body]


def error_of(exc: BaseException) -> Error:
    """What the parent needs to raise ``exc`` again: an :class:`OSError`'s number, message
    and file; anything else's text (number 0)."""
    if isinstance(exc, OSError):
        return (exc.errno or 0, exc.strerror or str(exc), exc.filename)
    return (0, f"the archive's writer failed: {exc!r}", None)


def raised(error: Error) -> OSError:
    """The :class:`OSError` an answer's ``error`` stands for."""
    number, message, filename = error
    if number:
        return OSError(number, message, filename) if filename else OSError(number, message)
    return OSError(message)


def _read_exactly(fd: int, size: int) -> bytes:
    data = b""
    while len(data) < size:
        more = os.read(fd, size - len(data))
        if not more:
            break
        data += more
    return data


def _answer(fd: int, answer: Any) -> None:
    data = marshal.dumps(answer)
    view = memoryview(LENGTH.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view) :]


class _Work:
    """The writer and what the jobs so far did to it."""

    def __init__(self, setup: dict[str, Any]) -> None:
        from ..fetch import Exchange
        from ._warc_writer import ArchiveWriter

        self.exchange = Exchange
        self.done = 0
        self.error: Error | None = None
        self.writer: ArchiveWriter | None = None
        try:
            self.writer = ArchiveWriter(**setup)
        except Exception as exc:  # the writer's boundary: reported to the parent
            self.error = error_of(exc)

    def job(self, kind: bytes, fields: Any, body: bytes) -> None:
        self.done += 1
        if self.error is not None or self.writer is None:
            return
        try:
            if kind == EXCHANGE:
                self.writer.archive(self.exchange.from_wire(fields, body))
            elif kind == PAGE:
                self.writer.list_page(*fields)
        except Exception as exc:  # (OSError: a full disk; anything else is a bug, not a hang)
            self.error = error_of(exc)

    def flush(self) -> None:
        if self.error is None and self.writer is not None:
            try:
                self.writer.flush()
            except Exception as exc:
                self.error = error_of(exc)

    def close(self) -> tuple[Any, ...]:
        writer = self.writer
        if writer is None:
            return ("closed", [], 0, None, self.error)
        try:
            writer.close()
        except Exception as exc:
            self.error = self.error or error_of(exc)
        return ("closed", writer.written, writer.records, writer.main, self.error)


def _keep_rest(buffer: bytearray, start: int, filled: int) -> tuple[bytearray, int]:
    """The unread part of ``buffer`` (from ``start`` to ``filled``) moved to its start, in a
    larger buffer when the job it begins is larger than ``buffer``; the bytes kept."""
    rest = filled - start
    size = len(buffer)
    if rest >= JOB.size:
        _, meta_size, body_size = JOB.unpack_from(buffer, start)
        while JOB.size + meta_size + body_size >= size:  # (room for more, too)
            size *= 2
    if size != len(buffer):
        larger = bytearray(size)
        larger[:rest] = buffer[start:filled]
        return larger, rest
    if start:
        buffer[:rest] = buffer[start:filled]
    return buffer, rest


def serve(jobs: int, answers: int) -> None:
    """Read the setup, then the jobs as they come, until ``e`` (or the parent is gone)."""
    header = _read_exactly(jobs, LENGTH.size)
    if len(header) < LENGTH.size:
        return
    work = _Work(json.loads(_read_exactly(jobs, LENGTH.unpack(header)[0])))
    if work.error is not None:
        _answer(answers, ("done", 0, work.error))
    buffer, filled = bytearray(_READ), 0  # read into, not allocated a read (1 MB each)
    answered = 0
    waiting = select.poll()
    waiting.register(jobs, select.POLLIN)
    while got := os.readv(jobs, [memoryview(buffer)[filled:]]):
        filled += got
        view, start, ended = memoryview(buffer), 0, False
        while filled - start >= JOB.size:
            kind, meta_size, body_size = JOB.unpack_from(buffer, start)
            end = start + JOB.size + meta_size + body_size
            if end > filled:
                break
            fields = marshal.loads(view[start + JOB.size : start + JOB.size + meta_size])
            body = bytes(view[end - body_size : end])
            start = end
            if kind == END:
                ended = True
                break
            work.job(kind, fields, body)
        view.release()
        buffer, filled = _keep_rest(buffer, start, filled)
        if not ended and work.done - answered < _BATCH and waiting.poll(0):
            continue  # more is there: written and answered with it (fewer wake-ups)
        work.flush()
        answered = work.done
        if ended:
            _answer(answers, work.close())
            return
        _answer(answers, ("done", work.done, work.error))
    work.flush()  # the parent is gone: what it sent is written, the segment left open


if __name__ == "__main__":
    die_with_parent(int(sys.argv[1]))
    with contextlib.suppress(BrokenPipeError):  # the parent is gone: nobody to answer
        serve(0, 1)
    os._exit(0)  # everything is written: skip the interpreter's teardown
