"""Where HTML gets parsed: on the event loop, or in worker processes to use more cores.

Parsing and link resolution are the crawler's main CPU cost. With ``processes=1`` they run
inline; with ``processes=N`` the event loop keeps the network and bookkeeping and ``N - 1``
parser processes do the parsing.

A parser process is ``python -m sitecrawl._parse_child`` on two pipes: jobs in (the body's
bytes as they are, after a header and the ``marshal``-ed charset and URL), the
:class:`Extracted` fields out as ``marshal`` frames, strictly in order. That costs the
event loop ~25 us a page, most of it the kernel's copy of the body into the pipe, where
``ProcessPoolExecutor``'s pickling, queue threads and wake-ups cost more than the parse it
saves on a small page. Each process keeps its own :class:`JoinCache`. A child takes pages
once it has said it is ready; until then the event loop parses them itself.
"""

from __future__ import annotations

import asyncio
import marshal
import os
import sys
from collections import deque
from types import TracebackType

from ._exceptions import ParseError
from ._extract import Extracted
from ._parse_child import LENGTH, LINK_DETAILS_FLAG, job_frame, parse_or_error


class _ChildGone(Exception):
    """The parser process ended; its work goes back to the event loop."""


class _ParserProcess:
    """One child process and the futures of its requests, answered in order."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.pending: deque[asyncio.Future[Extracted]] = deque()
        self.gone = False
        self.ready = False  # the child has imported what it needs and said so
        self.reader = asyncio.create_task(self._read_answers())

    async def parse(self, body: bytes, charset: str | None, url: str) -> Extracted:
        stdin = self.process.stdin
        assert stdin is not None
        frame = job_frame(body, charset, url)
        future: asyncio.Future[Extracted] = asyncio.get_running_loop().create_future()
        self.pending.append(future)
        try:
            stdin.writelines(frame)  # uvloop: one writev, the body not copied first
            await stdin.drain()
        except ConnectionError as exc:
            self.gone = True
            raise _ChildGone(str(exc)) from exc
        return await future

    async def _read_answers(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        try:
            while True:
                (size,) = LENGTH.unpack(await stdout.readexactly(LENGTH.size))
                answer = marshal.loads(await stdout.readexactly(size))
                if answer is None:  # the child is ready
                    self.ready = True
                    continue
                future = self.pending.popleft()
                if future.done():
                    continue
                if isinstance(answer, tuple):
                    future.set_result(Extracted(*answer))
                else:  # the child could not parse this page: (url, message)
                    future.set_exception(ParseError(answer[1], url=answer[0]))
        except (asyncio.IncompleteReadError, ConnectionError) as exc:
            self.gone = True
            while self.pending:  # the child died: hand back what it still owed
                future = self.pending.popleft()
                if not future.done():
                    future.set_exception(_ChildGone(str(exc)))

    async def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        await self.process.wait()
        await self.reader


def _child_env() -> dict[str, str]:
    """The environment with this very sitecrawl first on ``PYTHONPATH``, so a child parses
    with the same code (and :class:`Extracted` layout) as its parent, whatever is installed."""
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    paths = [package_root, *filter(None, [os.environ.get("PYTHONPATH")])]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}


async def _spawn(link_details: bool) -> _ParserProcess:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "sitecrawl._parse_child",
        *([LINK_DETAILS_FLAG] if link_details else []),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        env=_child_env(),
        # Its own session: a terminal's Ctrl-C reaches the crawler only, which finishes the
        # pages in flight and then closes the child's stdin. (Ignoring SIGINT in the child
        # leaves a window while it imports, where Ctrl-C would print its traceback.)
        start_new_session=True,
    )
    return _ParserProcess(process)


class Parser:
    """``async with Parser(processes) as parser: data = await parser.parse(body, cs, url)``."""

    def __init__(
        self, processes: int = 1, *, link_details: bool = False, backlog: int = 12
    ) -> None:
        self.processes = processes
        #: Fill :attr:`Extracted.links` (``CrawlConfig.link_details``); a child is told once,
        #: when it starts.
        self.link_details = link_details
        #: Pages a child may have waiting before the event loop parses the next one itself.
        #: Fetching costs the loop less than parsing costs a child, so without this the loop
        #: idles while its child is the bottleneck; with it, both cores stay busy.
        self.backlog = backlog
        self._children: list[_ParserProcess] = []

    async def __aenter__(self) -> Parser:
        while len(self._children) < self.processes - 1:
            self._children.append(await _spawn(self.link_details))
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        children, self._children = self._children, []
        await asyncio.gather(*(child.close() for child in children))

    async def parse(self, body: bytes, charset: str | None, url: str) -> Extracted:
        """Parse one page here or in a child; raises :class:`ParseError` for a page that
        cannot be parsed. A child that dies is dropped and its pages are parsed here."""
        ready = [child for child in self._children if child.ready and not child.gone]
        if ready:
            child = min(ready, key=lambda c: len(c.pending))
            if len(child.pending) < self.backlog:
                try:
                    return await child.parse(body, charset, url)
                except _ChildGone:
                    if child in self._children:
                        self._children.remove(child)
        # No child ready, or all of them busy: the event loop has spare time, parse here.
        return parse_or_error(body, charset, url, self.link_details)
