"""A parser process seen from the event loop (:class:`ParserProcess`): its two channels, the
pages it holds in order, its deadline per page, and how it is started (:func:`spawn`) and
ended. :mod:`._pool` runs the processes; :mod:`._child` is the other end."""

from __future__ import annotations

import asyncio
import contextlib
import marshal
import os
import sys
from collections import deque
from typing import TYPE_CHECKING

from .._channels import child_channels, child_env
from .._exceptions import ParseError, PdfBroken, PdfEncrypted
from ._child import LENGTH, job_frame, setup_frame
from ._content import Scope
from ._extract import Extracted
from ._extraction import Extraction

if TYPE_CHECKING:
    from ._pdf import PdfText

#: The errors a child answers with, by kind (any other kind is a :class:`ParseError`).
_ERRORS: dict[str, type[ParseError]] = {cls.kind: cls for cls in (PdfBroken, PdfEncrypted)}


class ChildGone(Exception):
    """The parser process ended; its work goes back to the event loop (or another child).
    ``overdue``: it was killed for another page, which passed its deadline."""

    def __init__(self, message: str, *, overdue: bool) -> None:
        super().__init__(message)
        self.overdue = overdue


class ParserProcess:
    """One child process and the futures of its requests, answered in order."""

    def __init__(
        self,
        process: asyncio.subprocess.Process,
        jobs: asyncio.StreamWriter,
        answers: tuple[asyncio.StreamReader, asyncio.BaseTransport],
        deadline: float,
        changed: asyncio.Event,
    ) -> None:
        self.process = process
        self.jobs = jobs  # (the process's stdin and stdout are channels of our own)
        self._answers, self._answers_transport = answers
        self.pending: deque[asyncio.Future[Extracted | PdfText]] = deque()
        self.urls: deque[str] = deque()  # of the pending pages, for the deadline's error
        self.gone = False
        self.overdue = False  # killed: a page passed its deadline
        self.ready = False  # the child has imported what it needs and said so
        self.deadline = deadline
        self._timer: asyncio.TimerHandle | None = None
        #: When the child started on the first pending page (the event loop's clock).
        self._head_since = 0.0
        self.answers = 0  # pages answered (read back) so far
        #: Set when this child becomes ready or is gone (shared by a parser's children).
        self._changed = changed
        self.reader = asyncio.create_task(self._read_answers())

    def _start_head(self) -> None:
        """The child starts on the first pending page now: give it :attr:`deadline`. One
        timer at a time, armed when none is: an answer only notes when the next page began
        (no timer cancelled and made again per page), and the timer, when it fires, goes
        again for the page that is first by then."""
        if self.gone or not self.pending:
            return
        self._head_since = asyncio.get_running_loop().time()
        self._start_head_at(self._head_since)

    def shorten(self, deadline: float) -> None:
        """From now on, :attr:`deadline` is at most ``deadline``, also for the page begun."""
        if deadline >= self.deadline:
            return
        self.deadline = deadline
        if self._timer is not None:  # armed for the longer deadline: again for this one
            self._timer.cancel()
            self._timer = None
            self._start_head_at(self._head_since)

    def _start_head_at(self, since: float) -> None:
        if not self.gone and self.pending and self._timer is None:
            loop = asyncio.get_running_loop()
            self._timer = loop.call_at(since + self.deadline, self._overdue)

    def _ended(self) -> None:
        self.gone = True
        self._changed.set()

    def _overdue(self) -> None:
        self._timer = None
        if self.gone or not self.pending:
            return
        loop = asyncio.get_running_loop()
        due = self._head_since + self.deadline
        if loop.time() < due:  # the page first now began after the timer was armed
            self._timer = loop.call_at(due, self._overdue)
            return
        self.overdue = True
        self._ended()
        self.kill()
        head = self.pending[0]
        if not head.done():
            head.set_exception(
                ParseError(f"parse took longer than {self.deadline:g} s", url=self.urls[0])
            )

    async def parse(
        self, body: bytes, charset: str | None, url: str, kind: str = "html"
    ) -> Extracted | PdfText:
        stdin = self.jobs
        frame = job_frame(body, charset, url, kind)
        future: asyncio.Future[Extracted | PdfText] = asyncio.get_running_loop().create_future()
        self.pending.append(future)
        self.urls.append(url)
        if len(self.pending) == 1:
            self._start_head()
        try:
            stdin.writelines(frame)  # uvloop: one writev, the body not copied first
            await stdin.drain()
        except ConnectionError as exc:  # its outcome (a deadline's error) is read below
            self._ended()
            if not future.done():
                future.set_exception(ChildGone(str(exc), overdue=self.overdue))
        except BaseException:
            future.cancel()  # nobody will read it
            raise
        return await future

    async def _read_answers(self) -> None:
        stdout = self._answers
        try:
            while True:
                (size,) = LENGTH.unpack(await stdout.readexactly(LENGTH.size))
                answer = marshal.loads(await stdout.readexactly(size))
                if answer is None:  # the child is ready
                    self.ready = True
                    self._changed.set()
                    continue
                future = self.pending.popleft()
                self.urls.popleft()
                self.answers += 1
                self._start_head()
                if future.done():
                    continue
                if isinstance(answer, tuple):
                    future.set_result(Extracted.from_wire(answer))
                elif isinstance(answer, dict):  # a PDF read
                    from ._pdf import PdfText  # (ctypes: imported with the first PDF)

                    future.set_result(PdfText(**answer))
                else:  # the child could not parse this page: (url, message, kind)
                    error = _ERRORS.get(answer[2], ParseError)
                    future.set_exception(error(answer[1], url=answer[0]))
        except (asyncio.IncompleteReadError, ConnectionError) as exc:
            self._ended()
            self._start_head()  # no timer for a child that is gone
            while self.pending:  # the child died: hand back what it still owed
                future = self.pending.popleft()
                if not future.done():
                    future.set_exception(ChildGone(str(exc), overdue=self.overdue))
            self.urls.clear()

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            self.process.kill()

    async def close(self, kill: bool = False) -> None:
        """End the child (its stdin closes: it ends after the page it holds; ``kill``: at
        once) and close our ends of its channels, also when cancelled meanwhile (a second
        Ctrl-C): an open one would keep the event loop from closing."""
        try:
            if kill:
                self.kill()
            self.jobs.close()
            try:
                await self.process.wait()
            except asyncio.CancelledError:  # nobody waits for its pages any more
                self.kill()
                await self.process.wait()  # (ended now, not after the event loop has closed)
                raise
            await self.reader
        finally:
            self._answers_transport.close()


async def spawn(
    link_details: bool,
    deadline: float,
    extraction: Extraction | None,
    changed: asyncio.Event,
    markdown: Scope | None = None,
    structured_data: bool = False,
    near_duplicates: bool = False,
    requisites: bool = False,
) -> ParserProcess:
    with child_channels() as ((jobs_child, answers_child), (jobs_loop, answers_loop)):
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "sitecrawl.parse._child",
            str(os.getpid()),  # (its parent: it dies with it)
            stdin=jobs_child,
            stdout=answers_child,
            env=child_env(),
            # Its own session: a terminal's Ctrl-C reaches the crawler only, which finishes the
            # pages in flight and then closes the child's stdin. (Ignoring SIGINT in the child
            # leaves a window while it imports, where Ctrl-C would print its traceback.)
            start_new_session=True,
        )
    loop = asyncio.get_running_loop()
    answers = asyncio.StreamReader()
    jobs_file = open(jobs_loop, "wb", buffering=0)  # noqa: SIM115 - the transport closes it
    answers_file = open(answers_loop, "rb", buffering=0)  # noqa: SIM115 - as above
    reading, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(answers), answers_file
    )
    transport, protocol = await loop.connect_write_pipe(
        lambda: asyncio.StreamReaderProtocol(asyncio.StreamReader()), jobs_file
    )
    jobs = asyncio.StreamWriter(transport, protocol, None, loop)
    # Read first; the jobs queue behind it.
    setup = setup_frame(
        link_details, extraction, markdown, structured_data, near_duplicates, requisites
    )
    jobs.write(setup)
    return ParserProcess(process, jobs, (answers, reading), deadline, changed)
