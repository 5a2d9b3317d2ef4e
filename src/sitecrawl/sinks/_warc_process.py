"""The archive's writer process seen from the crawl (:class:`WriterProcess`): started at
once, fed jobs through a socket without ever blocking the event loop, its answers read as they
come, ended by :meth:`~WriterProcess.close`. :mod:`._warc_child` is the other end.

The jobs of one event loop iteration are written together, with one ``writev`` (the bodies
not copied); what the socket cannot take at once waits in order and goes when it can
(``add_writer``). The answers say how many jobs
the writer has done: :meth:`~WriterProcess.synced` waits for all those sent so far. Without a
running event loop (a script archiving exchanges itself) the writes block instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import marshal
import os
import subprocess
import sys
from collections import deque
from typing import Any

from .._channels import child_channels, child_env
from ._warc_child import END, LENGTH, job_frames, raised

_READ = 1 << 16
#: At most this many buffers a ``writev`` (Linux's IOV_MAX is 1024).
_IOV = 512


class WriterProcess:
    """The writer child started with ``setup`` (:func:`~._warc_child.setup_frame`)."""

    def __init__(self, setup: bytes) -> None:
        with child_channels() as ((jobs_child, answers_child), (jobs, answers)):
            self.process = subprocess.Popen(
                [sys.executable, "-m", "sitecrawl.sinks._warc_child", str(os.getpid())],
                stdin=jobs_child,
                stdout=answers_child,
                env=child_env(),
                start_new_session=True,  # Ctrl-C reaches the crawl, which then ends the writer
            )
        self._jobs, self._answers = jobs, answers
        os.set_blocking(answers, False)
        self._write_all([setup])
        self._sent = self._done = 0
        self._error: OSError | None = None
        self._out: deque[memoryview] = deque()  # what the socket could not take yet, in order
        self._pending: list[bytes] = []  # this loop iteration's jobs, sent at its end
        self._scheduled = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._waiters: list[tuple[int, asyncio.Future[None]]] = []
        self._read = bytearray()
        self._closed: tuple[Any, ...] | None = None
        self._ended = False

    @property
    def backlog(self) -> int:
        """Jobs sent, not yet done."""
        return self._sent - self._done

    def send(self, kind: bytes, fields: Any, body: bytes = b"") -> None:
        """Send a job (raises the writer's error, once it had one). With an event loop the
        jobs of one loop iteration go together, in one ``writev`` at its end: the writer
        wakes once for them (each wake-up found the caches cold: ~0.4 s of the writer's CPU
        a 5,000-page crawl, bench/RESULTS.md section 38)."""
        if self._error is not None:
            raise self._error
        if self._ended:
            raise ValueError("the archive is closed")
        frames = job_frames(kind, fields, body)
        self._sent += 1
        if self._loop is None and not self._attach():
            self._write_all(frames)  # no event loop: block (and read what was answered)
            self._read_answers()
            return
        self._pending += frames
        if not self._scheduled:
            self._scheduled = True
            assert self._loop is not None
            self._loop.call_soon(self._push)

    def _push(self) -> None:
        """Send the jobs of this loop iteration (after what waits for room, in order)."""
        self._scheduled = False
        frames, self._pending = self._pending, []
        if not frames or self._ended:
            return
        if self._out:
            self._out.extend(map(memoryview, frames))
            return
        try:
            written = os.writev(self._jobs, frames[:_IOV])
        except BlockingIOError:
            written = 0
        except OSError as exc:  # the writer is gone: its answers say why (the next send raises)
            self._gone(exc)
            return
        self._keep(frames, written)

    def _attach(self) -> bool:
        """Write without blocking from now on, on the running event loop (False: none)."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return False
        self._loop = loop
        os.set_blocking(self._jobs, False)
        loop.add_reader(self._answers, self._read_answers)
        return True

    def _keep(self, frames: list[bytes], written: int) -> None:
        """Keep what follows the first ``written`` bytes of ``frames``, to send when the
        socket can take it."""
        for frame in frames:
            if written >= len(frame):
                written -= len(frame)
                continue
            self._out.append(memoryview(frame)[written:])
            written = 0
        if self._out:
            assert self._loop is not None
            self._loop.add_writer(self._jobs, self._drain)

    def _drain(self) -> None:
        out = self._out
        buffers = [out[i] for i in range(min(len(out), _IOV))]
        try:
            written = os.writev(self._jobs, buffers)
        except BlockingIOError:
            return
        except OSError as exc:
            out.clear()
            self._gone(exc)
            written = 0
        while out and written >= len(out[0]):
            written -= len(out.popleft())
        if out and written:
            out[0] = out[0][written:]
        if not out and self._loop is not None:
            self._loop.remove_writer(self._jobs)

    def _write_all(self, frames: list[Any]) -> None:
        for frame in frames:
            view = memoryview(frame)
            while view:
                view = view[os.write(self._jobs, view) :]

    def _read_answers(self) -> None:
        """Read what the writer answered: jobs done, its error, its last word."""
        ended = False
        while True:
            try:
                chunk = os.read(self._answers, _READ)
            except BlockingIOError:
                break
            if not chunk:
                ended = True
                break
            self._read += chunk
        data, start = self._read, 0
        while len(data) - start >= LENGTH.size:
            (size,) = LENGTH.unpack_from(data, start)
            if len(data) - start - LENGTH.size < size:
                break
            answer = marshal.loads(data[start + LENGTH.size : start + LENGTH.size + size])
            start += LENGTH.size + size
            self._take(answer)
        del data[:start]
        if ended:
            if self._loop is not None and not self._loop.is_closed() and not self._ended:
                self._loop.remove_reader(self._answers)
            if self._closed is None:
                self._gone(EOFError("no answer"))
        self._settle()

    def _take(self, answer: Any) -> None:
        error = answer[-1]
        if error is not None and self._error is None:
            self._error = raised(error)
        if answer[0] == "done":
            self._done = answer[1]
        else:  # ("closed", written, records, main, error): every job is done
            self._done = self._sent
            self._closed = answer[1:4]

    def _gone(self, exc: BaseException) -> None:
        """The writer ended without a word (killed, or it crashed)."""
        if self._error is None:
            status = self.process.poll()
            ended = f"exit status {status}" if status is not None else str(exc)
            self._error = OSError(f"the archive's writer process ended ({ended})")
        self._settle()

    def _settle(self) -> None:
        """Resolve the waiters whose jobs are done (all of them after an error)."""
        pending = []
        for target, waiter in self._waiters:
            if waiter.done():
                continue
            if self._error is not None:
                waiter.set_exception(self._error)
            elif self._done >= target:
                waiter.set_result(None)
            else:
                pending.append((target, waiter))
        self._waiters = pending

    async def synced(self) -> None:
        """Wait until every job sent so far is done (raises the writer's error)."""
        target = self._sent
        if self._error is None and self._done >= target:
            return
        if self._error is not None:
            raise self._error
        if self._loop is None:
            self._attach()
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append((target, waiter))
        await waiter

    def close(self) -> tuple[Any, ...] | None:
        """Send the end, wait for the writer to close the archive and end; its last word
        ``(segments written, records, main page)`` (None: closed before). Raises the
        writer's error."""
        if self._ended:
            return None
        self._ended = True
        loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.remove_reader(self._answers)
            loop.remove_writer(self._jobs)
        os.set_blocking(self._jobs, True)
        with contextlib.suppress(OSError):  # the writer is gone: its answers say why
            self._write_all([*self._out, *self._pending, *job_frames(END, None)])
        self._out.clear()
        self._pending = []
        os.close(self._jobs)
        os.set_blocking(self._answers, True)
        self._read_answers()  # (blocks until the writer ends: its end of the channel closes)
        os.close(self._answers)
        self.process.wait()
        if self._closed is None:
            self._gone(EOFError("no answer"))
        self._settle()
        if self._error is not None:
            raise self._error
        return self._closed
