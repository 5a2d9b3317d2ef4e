"""Where HTML gets parsed: on the event loop, or in worker processes to use more cores.

Parsing and link resolution are the crawler's main CPU cost. With ``processes=1`` they run
inline; with ``processes=N`` the event loop keeps the network and bookkeeping and ``N - 1``
parser processes do the parsing.

A parser process is ``python -m sitecrawl._parsing`` on two pipes, speaking length-prefixed
``marshal`` frames: ``(body, charset, url, anchors)`` in, the :class:`Extracted` fields out,
strictly in order. That costs the event loop a few microseconds a page, where
``ProcessPoolExecutor``'s pickling, queue threads and wake-ups cost more than the parse it
saves on a small page. Each process keeps its own :class:`JoinCache`.
"""

from __future__ import annotations

import asyncio
import marshal
import os
import signal
import struct
import sys
from collections import deque
from dataclasses import fields
from types import TracebackType
from typing import BinaryIO

from ._exceptions import ParseError
from ._extract import Extracted, decode_html, parse_html
from ._urls import JoinCache

_joins = JoinCache()  # one per process
_LENGTH = struct.Struct("!I")
_FIELDS = tuple(f.name for f in fields(Extracted))


def parse_body(body: bytes, charset: str | None, url: str, anchors: bool = False) -> Extracted:
    """Decode and parse one HTML body (runs in whichever process calls it); ``anchors``:
    also each link's text and rel (:attr:`Extracted.links`)."""
    return parse_html(decode_html(body, charset), url, _joins, anchors=anchors)


def _parse_or_error(body: bytes, charset: str | None, url: str, anchors: bool) -> Extracted:
    """:func:`parse_body`, with whatever the parser raises turned into :class:`ParseError`:
    one unreadable page is a record with an error, not the end of the crawl."""
    try:
        return parse_body(body, charset, url, anchors)
    except Exception as exc:  # the parsing boundary: Lexbor, ada-url, codecs
        raise ParseError(f"could not parse: {exc!r}", url=url) from exc


class _ChildGone(Exception):
    """The parser process ended; its work goes back to the event loop."""


class _ParserProcess:
    """One child process and the futures of its requests, answered in order."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.pending: deque[asyncio.Future[Extracted]] = deque()
        self.gone = False
        self.reader = asyncio.create_task(self._read_answers())

    async def parse(self, body: bytes, charset: str | None, url: str, anchors: bool) -> Extracted:
        stdin = self.process.stdin
        assert stdin is not None
        frame = marshal.dumps((body, charset, url, anchors))
        future: asyncio.Future[Extracted] = asyncio.get_running_loop().create_future()
        self.pending.append(future)
        try:
            stdin.write(_LENGTH.pack(len(frame)) + frame)
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
                (size,) = _LENGTH.unpack(await stdout.readexactly(_LENGTH.size))
                answer = marshal.loads(await stdout.readexactly(size))
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


class Parser:
    """``async with Parser(processes) as parser: data = await parser.parse(body, cs, url)``."""

    def __init__(self, processes: int = 1, *, anchors: bool = False, backlog: int = 12) -> None:
        self.processes = processes
        self.anchors = anchors
        #: Pages a child may have waiting before the event loop parses the next one itself.
        #: Fetching costs the loop less than parsing costs a child, so without this the loop
        #: idles while its child is the bottleneck; with it, both cores stay busy.
        self.backlog = backlog
        self._children: list[_ParserProcess] = []

    async def __aenter__(self) -> Parser:
        for _ in range(self.processes - 1):
            process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "sitecrawl._parsing",
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                env=_child_env(),
            )
            self._children.append(_ParserProcess(process))
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
        if self._children:
            child = min(self._children, key=lambda c: len(c.pending))
            if len(child.pending) < self.backlog:
                try:
                    return await child.parse(body, charset, url, self.anchors)
                except _ChildGone:
                    if child in self._children:
                        self._children.remove(child)
        # No children, or all of them busy: the event loop has spare time, parse here.
        return _parse_or_error(body, charset, url, self.anchors)


def _serve(stdin: BinaryIO, stdout: BinaryIO) -> None:
    """The child's loop: read a frame, parse, answer; until the parent closes the pipe."""
    while header := stdin.read(_LENGTH.size):
        (size,) = _LENGTH.unpack(header)
        body, charset, url, anchors = marshal.loads(stdin.read(size))
        try:
            data = _parse_or_error(body, charset, url, anchors)
        except ParseError as exc:
            answer = marshal.dumps([url, str(exc)])
        else:
            # Shallow on purpose: dataclasses.astuple deep-copies every list, which cost more
            # than the parse itself.
            answer = marshal.dumps(tuple(getattr(data, name) for name in _FIELDS))
        stdout.write(_LENGTH.pack(len(answer)) + answer)
        stdout.flush()


if __name__ == "__main__":
    # Ctrl-C in a terminal reaches the whole process group: the parent decides how to stop
    # (it finishes the pages in flight, then closes our stdin), so the child ignores it.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _serve(sys.stdin.buffer, sys.stdout.buffer)
