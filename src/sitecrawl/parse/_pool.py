"""Where HTML gets parsed: on the event loop, or in worker processes to use more cores.

Parsing and link resolution are the crawler's main CPU cost. With ``processes=1`` they run
inline; with ``processes=N`` the event loop keeps the network and bookkeeping and ``N - 1``
parser processes do the parsing.

A parser process is ``python -m sitecrawl.parse._child`` on two channels (:mod:`._channels`,
its stdin and stdout): jobs in (the body's bytes as they are, after a header and the
``marshal``-ed charset and URL), the :class:`Extracted` fields out as ``marshal`` frames,
strictly in order; before any job, the child reads its setup (whether to give each link's
details, the extraction rules) from the same channel. The event loop's share is mostly the
kernel's copy of the body into the channel, where
``ProcessPoolExecutor``'s pickling, queue threads and wake-ups cost more than the parse it
saves on a small page. Each process keeps its own :class:`JoinCache`. A child takes pages
once it has said it is ready; until then the event loop parses them itself.

One page cannot stall the crawl: every body is first read by the markup cost scan
(:mod:`._markup`), which refuses markup the parser would take quadratic time on; that is
what bounds a parse on the event loop. A child also has a deadline per page
(:data:`PARSE_DEADLINE`): a page it has not answered by then is recorded with a
:class:`ParseError`, the child is killed, the pages it still held are parsed again (by the
event loop, or by another child), and a new child takes its place.

A user's extraction rules are not bounded by the scan (a regex that backtracks, an XPath or
a selector that is cubic on the page), so with rules **every page is parsed in a child**,
under the deadline, and none on the event loop, whose work stays bounded and whose signal
handlers stay responsive: at least one child runs, even with ``processes=1``, and a page
waits for a ready child rather than being parsed on the loop. When the crawl is stopped
(:meth:`Parser.stop`, Ctrl-C), the deadline becomes :data:`STOP_DEADLINE`, and a page whose
child is gone is an error instead of waiting for another child: a stop takes seconds, not
one deadline per page in flight.
"""

from __future__ import annotations

import asyncio
import contextlib
import marshal
import os
import sys
from collections import deque
from types import TracebackType

from .._exceptions import ParseError
from ._channels import answers_channel, jobs_channel
from ._child import LENGTH, job_frame, parse_or_error, setup_frame
from ._extract import Extracted
from ._extraction import Extraction

#: Seconds a parser process may spend on one page before it is killed and replaced.
PARSE_DEADLINE = 10.0
#: The deadline once the crawl is stopping (the pages in flight finish, but not slowly).
STOP_DEADLINE = 1.0
#: With extraction rules: the children a page may lose (each ended while holding it, not
#: killed for another page's deadline) before it is recorded with an error; and the
#: children that may end before they are ready, one after the other, before pages are.
ATTEMPTS = 3


class _ChildGone(Exception):
    """The parser process ended; its work goes back to the event loop (or another child).
    ``overdue``: it was killed for another page, which passed its deadline."""

    def __init__(self, message: str, *, overdue: bool) -> None:
        super().__init__(message)
        self.overdue = overdue


class _ParserProcess:
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
        self.pending: deque[asyncio.Future[Extracted]] = deque()
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

    async def parse(self, body: bytes, charset: str | None, url: str) -> Extracted:
        stdin = self.jobs
        frame = job_frame(body, charset, url)
        future: asyncio.Future[Extracted] = asyncio.get_running_loop().create_future()
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
                future.set_exception(_ChildGone(str(exc), overdue=self.overdue))
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
                    future.set_result(Extracted(*answer))
                else:  # the child could not parse this page: (url, message)
                    future.set_exception(ParseError(answer[1], url=answer[0]))
        except (asyncio.IncompleteReadError, ConnectionError) as exc:
            self._ended()
            self._start_head()  # no timer for a child that is gone
            while self.pending:  # the child died: hand back what it still owed
                future = self.pending.popleft()
                if not future.done():
                    future.set_exception(_ChildGone(str(exc), overdue=self.overdue))
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


def _child_env() -> dict[str, str]:
    """The environment with this very sitecrawl first on ``PYTHONPATH``, so a child parses
    with the same code (and :class:`Extracted` layout) as its parent, whatever is installed."""
    package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    paths = [package_root, *filter(None, [os.environ.get("PYTHONPATH")])]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}


async def _spawn(
    link_details: bool,
    deadline: float,
    extraction: Extraction | None,
    changed: asyncio.Event,
    structured_data: bool = False,
) -> _ParserProcess:
    jobs_child, jobs_loop = jobs_channel()
    answers_child, answers_loop = answers_channel()
    try:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "sitecrawl.parse._child",
            str(os.getpid()),  # (its parent: it dies with it)
            stdin=jobs_child,
            stdout=answers_child,
            env=_child_env(),
            # Its own session: a terminal's Ctrl-C reaches the crawler only, which finishes the
            # pages in flight and then closes the child's stdin. (Ignoring SIGINT in the child
            # leaves a window while it imports, where Ctrl-C would print its traceback.)
            start_new_session=True,
        )
    except BaseException:
        os.close(jobs_loop)
        os.close(answers_loop)
        raise
    finally:  # the child has its own copies
        os.close(jobs_child)
        os.close(answers_child)
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
    jobs.write(setup_frame(link_details, extraction, structured_data))
    return _ParserProcess(process, jobs, (answers, reading), deadline, changed)


class Parser:
    """``async with Parser(processes) as parser: data = await parser.parse(body, cs, url)``."""

    def __init__(
        self,
        processes: int = 1,
        *,
        link_details: bool = False,
        extraction: Extraction | None = None,
        backlog: int = 12,
        deadline: float = PARSE_DEADLINE,
        structured_data: bool = False,
    ) -> None:
        self.processes = processes
        self.deadline = deadline  # seconds a child may spend on one page
        #: Fill :attr:`Extracted.links` (``CrawlConfig.link_details``); a child is told once,
        #: when it starts.
        self.link_details = link_details
        #: The custom extraction rules run on every page (a child is given them when it
        #: starts); with rules, pages are parsed in children only.
        self.extraction = extraction
        #: Fill :attr:`Extracted.structured_data` (``CrawlConfig.structured_data``).
        self.structured_data = structured_data
        #: Pages a child may have waiting before the event loop parses the next one itself.
        #: Fetching costs the loop less than parsing costs a child, so without this the loop
        #: idles while its child is the bottleneck; with it, both cores stay busy.
        self.backlog = backlog
        #: Pages parsed on the event loop, and by the children.
        self.parsed_here = 0
        self.parsed_by_children = 0
        #: The children's answers read when the loop last parsed a page itself (see parse).
        self._answers_seen = -1
        self._children: list[_ParserProcess] = []
        #: Children that died or were killed, and the starts of those taking their place.
        self._ended: list[_ParserProcess] = []
        self._starting: set[asyncio.Task[None]] = set()
        #: Set when a child becomes ready or is gone, or a start fails (pages waiting for a
        #: child look again).
        self._changed = asyncio.Event()
        #: Children that ended before they were ready, one after the other.
        self._failed_starts = 0
        self._start_error: str | None = None
        self.stopping = False

    @property
    def isolated(self) -> bool:
        """True when every page is parsed in a child (there are extraction rules)."""
        return bool(self.extraction)

    async def __aenter__(self) -> Parser:
        wanted = max(self.processes - 1, 1 if self.isolated else 0)
        try:
            while len(self._children) < wanted:
                self._children.append(await self._spawn())
        except BaseException as exc:  # cancelled or failed midway: end those started
            await self.__aexit__(type(exc), exc, exc.__traceback__)
            raise
        return self

    async def _spawn(self) -> _ParserProcess:
        """A new child; a cancel (a second Ctrl-C during the start-up) lets the start finish,
        then kills the child and waits for it: cancelled midway, uvloop left the process it
        had started to end after the event loop closed, with a traceback."""
        starting = asyncio.ensure_future(
            _spawn(
                self.link_details,
                self.deadline,
                self.extraction,
                self._changed,
                self.structured_data,
            )
        )
        try:
            return await asyncio.shield(starting)
        except asyncio.CancelledError:
            with contextlib.suppress(OSError):
                await (await starting).close(kill=True)
            raise

    def stop(self) -> None:
        """The crawl is stopping: pages get :data:`STOP_DEADLINE` at most, and with rules a
        page that loses its child is an error (see the module's docstring)."""
        self.stopping = True
        self.deadline = min(self.deadline, STOP_DEADLINE)
        for child in self._children:
            child.shorten(self.deadline)
        self._changed.set()

    def _replace_gone(self) -> None:
        """Drop the children that are gone, and start one in the place of each."""
        for child in [child for child in self._children if child.gone]:
            self._children.remove(child)
            self._ended.append(child)
            if not child.ready:
                self._failed_starts += 1
            if not self.stopping:  # (stopping: its pages are errors, or parsed here)
                self._begin_start()

    def _begin_start(self) -> None:
        task = asyncio.create_task(self._start_one())
        self._starting.add(task)
        task.add_done_callback(self._starting.discard)

    async def _start_one(self) -> None:
        try:
            self._children.append(await self._spawn())
        except OSError as exc:  # no process could be started (out of memory, of PIDs)
            self._start_error = f"could not start a parser process: {exc}"
        finally:  # (before the pages waiting look again: a done callback would be late)
            if (task := asyncio.current_task()) is not None:
                self._starting.discard(task)
            self._changed.set()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        for task in list(self._starting):
            with contextlib.suppress(Exception):
                await task
        children, self._children = self._children + self._ended, []
        self._ended = []
        # Ended by an error or a cancel (a second Ctrl-C): nobody waits for the pages they hold.
        kill = exc_type is not None
        await asyncio.gather(*(child.close(kill) for child in children))

    async def parse(self, body: bytes, charset: str | None, url: str) -> Extracted:
        """Parse one page here or in a child; raises :class:`ParseError` for a page that
        cannot be parsed. A child that dies is replaced and its pages are parsed here (with
        extraction rules: in another child)."""
        if self.isolated:
            return await self._parse_in_child(body, charset, url)
        if any(child.gone for child in self._children):
            self._replace_gone()
        ready = [child for child in self._children if child.ready and not child.gone]
        if ready:
            child = min(ready, key=lambda c: len(c.pending))
            if len(child.pending) < self.backlog or not self._answered_since_own(ready):
                try:
                    data = await child.parse(body, charset, url)
                except _ChildGone:
                    self._replace_gone()
                else:
                    self.parsed_by_children += 1
                    return data
        # No child ready, or all of them busy: the event loop has spare time, parse here.
        self.parsed_here += 1
        return parse_or_error(
            body, charset, url, self.link_details, self.extraction, self.structured_data
        )

    async def _parse_in_child(self, body: bytes, charset: str | None, url: str) -> Extracted:
        """With extraction rules: parse in a child, never on the event loop (a rule may take
        any time; only a child's deadline bounds it)."""
        lost = 0  # children that ended while they held this page, not killed for another
        while lost < ATTEMPTS:
            child = await self._ready_child(url)
            try:
                data = await child.parse(body, charset, url)
            except _ChildGone as gone:
                self._replace_gone()
                if not gone.overdue:
                    lost += 1
                continue
            self.parsed_by_children += 1
            return data
        raise ParseError(f"its parser process ended {ATTEMPTS} times", url=url)

    async def _ready_child(self, url: str) -> _ParserProcess:
        """The ready child with the fewest pages waiting, once there is one."""
        while True:
            if any(child.gone for child in self._children):
                self._replace_gone()
            ready = [child for child in self._children if child.ready and not child.gone]
            if ready:
                self._failed_starts = 0
                return min(ready, key=lambda c: len(c.pending))
            if self.stopping:
                raise ParseError("not parsed: the crawl was stopped", url=url)
            if self._failed_starts >= ATTEMPTS:
                raise ParseError("parser processes end before they are ready", url=url)
            if not self._children and not self._starting:
                if self._start_error is not None:
                    raise ParseError(self._start_error, url=url)
                self._begin_start()
            self._changed.clear()
            await self._changed.wait()

    def _answered_since_own(self, children: list[_ParserProcess]) -> bool:
        """True (and noted) when a child has answered since the event loop last parsed a
        page itself: the loop parses at most one page between two answers it has read. A
        parse on the loop holds the loop, so the answers that came meanwhile are read only
        after it; without this rule, the pages that finished in the same moment (dozens at
        ``-c 64`` and more) were all parsed on the loop, one after the other, while the
        children, their answers unread, idled."""
        answers = sum(child.answers for child in children)
        if answers == self._answers_seen:
            return False
        self._answers_seen = answers
        return True
