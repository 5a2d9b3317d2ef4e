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
waits for a ready child rather than being parsed on the loop. Markdown
(``markdown=``: trafilatura and html-to-markdown, ~20 ms a page and not bounded by the scan)
is the same, with a child for each of ``processes``. When the crawl is stopped
(:meth:`Parser.stop`, Ctrl-C), the deadline becomes :data:`STOP_DEADLINE`, and a page whose
child is gone is an error instead of waiting for another child: a stop takes seconds, not
one deadline per page in flight.
"""

from __future__ import annotations

import asyncio
import contextlib
from types import TracebackType
from typing import TYPE_CHECKING

from .._exceptions import ParseError
from ._child import parse_or_error
from ._content import Scope, require_markdown
from ._extract import Extracted
from ._extraction import Extraction
from ._process import ChildGone, ParserProcess, spawn

if TYPE_CHECKING:
    from ._pdf import PdfText

#: Seconds a parser process may spend on one page before it is killed and replaced.
PARSE_DEADLINE = 10.0
#: The deadline once the crawl is stopping (the pages in flight finish, but not slowly).
STOP_DEADLINE = 1.0
#: With extraction rules: the children a page may lose (each ended while holding it, not
#: killed for another page's deadline) before it is recorded with an error; and the
#: children that may end before they are ready, one after the other, before pages are.
ATTEMPTS = 3


class Parser:
    """``async with Parser(processes) as parser: data = await parser.parse(body, cs, url)``."""

    def __init__(
        self,
        processes: int = 1,
        *,
        link_details: bool = False,
        extraction: Extraction | None = None,
        markdown: Scope | None = None,
        backlog: int = 12,
        deadline: float = PARSE_DEADLINE,
        isolated: bool = False,
        structured_data: bool = False,
        near_duplicates: bool = False,
        requisites: bool = False,
    ) -> None:
        self.processes = processes
        self.deadline = deadline  # seconds a child may spend on one page
        #: Fill :attr:`Extracted.links` (``CrawlConfig.link_details``); a child is told once,
        #: when it starts.
        self.link_details = link_details
        #: The custom extraction rules run on every page (a child is given them when it
        #: starts); with rules, pages are parsed in children only.
        self.extraction = extraction
        self.markdown = markdown
        #: Fill :attr:`Extracted.structured_data` (``CrawlConfig.structured_data``).
        self.structured_data = structured_data
        #: Fill ``content_hash`` and ``content_minhash`` (``CrawlConfig.near_duplicates``).
        self.near_duplicates = near_duplicates
        #: Fill :attr:`Extracted.requisites` (``CrawlConfig.archive_assets``, with an archive).
        self.requisites = requisites
        #: Pages a child may have waiting before the event loop parses the next one itself.
        #: Fetching costs the loop less than parsing costs a child, so without this the loop
        #: idles while its child is the bottleneck; with it, both cores stay busy.
        self.backlog = backlog
        #: Pages parsed on the event loop, and by the children.
        self.parsed_here = 0
        self.parsed_by_children = 0
        #: The children's answers read when the loop last parsed a page itself (see parse).
        self._answers_seen = -1
        self._children: list[ParserProcess] = []
        #: Children that died or were killed, and the starts of those taking their place.
        self._ended: list[ParserProcess] = []
        self._starting: set[asyncio.Task[None]] = set()
        #: Set when a child becomes ready or is gone, or a start fails (pages waiting for a
        #: child look again).
        self._changed = asyncio.Event()
        #: Children that ended before they were ready, one after the other.
        self._failed_starts = 0
        self._start_error: str | None = None
        self.stopping = False
        self._isolated = isolated
        #: The PDFs' own parser, with one child, started with the first PDF (:meth:`read_pdf`).
        self._pdfs: Parser | None = None

    @property
    def markdown(self) -> Scope | None:
        """Each page's content as Markdown of this scope (None: none); like the rules, it
        makes every page parsed in a child. Set, it raises :class:`~sitecrawl.MissingExtra`
        (before any page) when the markdown extra is not installed."""
        return self._markdown

    @markdown.setter
    def markdown(self, scope: Scope | None) -> None:
        if scope is not None:
            require_markdown()
        self._markdown = scope

    @property
    def isolated(self) -> bool:
        """True when every page is parsed in a child (there are extraction rules, pages get
        their Markdown: a cost the markup scan does not bound, or this parser reads the PDFs)."""
        return self._isolated or bool(self.extraction) or self.markdown is not None

    async def __aenter__(self) -> Parser:
        # With Markdown, the event loop parses nothing and the conversion is most of a page's
        # cost: a child for each process asked for (the loop's own work is small beside it).
        wanted = (
            max(self.processes, 1)
            if self.markdown is not None
            else max(self.processes - 1, 1 if self.isolated else 0)
        )
        try:
            while len(self._children) < wanted:
                self._children.append(await self._spawn())
        except BaseException as exc:  # cancelled or failed midway: end those started
            await self.__aexit__(type(exc), exc, exc.__traceback__)
            raise
        return self

    async def _spawn(self) -> ParserProcess:
        """A new child; a cancel (a second Ctrl-C during the start-up) lets the start finish,
        then kills the child and waits for it: cancelled midway, uvloop left the process it
        had started to end after the event loop closed, with a traceback."""
        starting = asyncio.ensure_future(
            spawn(
                self.link_details,
                self.deadline,
                self.extraction,
                self._changed,
                self.markdown,
                self.structured_data,
                self.near_duplicates,
                self.requisites,
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
        if self._pdfs is not None:
            self._pdfs.stop()

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
        if self._pdfs is not None:
            await self._pdfs.__aexit__(exc_type, exc, tb)

    async def read_pdf(self, body: bytes, url: str) -> PdfText:
        """Read one PDF (:func:`~._pdf.read_pdf`) in a child of its own, under the deadline,
        never on the event loop: PDFium's time is not bounded by the markup scan, and a PDF
        must not hold up the HTML pages queued behind it. Raises :class:`ParseError`
        (:class:`PdfBroken`, :class:`PdfEncrypted`) for a PDF that cannot be read."""
        if self._pdfs is None:
            self._pdfs = Parser(1, deadline=self.deadline, isolated=True)
            if self.stopping:
                self._pdfs.stop()
        data = await self._pdfs._parse_in_child(body, None, url, "pdf")
        assert not isinstance(data, Extracted)
        return data

    async def parse(self, body: bytes, charset: str | None, url: str) -> Extracted:
        """Parse one page here or in a child; raises :class:`ParseError` for a page that
        cannot be parsed. A child that dies is replaced and its pages are parsed here (with
        extraction rules: in another child)."""
        if self.isolated:
            data = await self._parse_in_child(body, charset, url)
            assert isinstance(data, Extracted)
            return data
        if any(child.gone for child in self._children):
            self._replace_gone()
        ready = [child for child in self._children if child.ready and not child.gone]
        if ready:
            child = min(ready, key=lambda c: len(c.pending))
            if len(child.pending) < self.backlog or not self._answered_since_own(ready):
                try:
                    data = await child.parse(body, charset, url)
                except ChildGone:
                    self._replace_gone()
                else:
                    self.parsed_by_children += 1
                    assert isinstance(data, Extracted)
                    return data
        # No child ready, or all of them busy: the event loop has spare time, parse here.
        self.parsed_here += 1
        return parse_or_error(
            body,
            charset,
            url,
            self.link_details,
            self.extraction,
            self.markdown,
            self.structured_data,
            self.near_duplicates,
            self.requisites,
        )

    async def _parse_in_child(
        self, body: bytes, charset: str | None, url: str, kind: str = "html"
    ) -> Extracted | PdfText:
        """With extraction rules (or a PDF): parse in a child, never on the event loop (a rule
        may take any time; only a child's deadline bounds it)."""
        lost = 0  # children that ended while they held this page, not killed for another
        while lost < ATTEMPTS:
            child = await self._ready_child(url)
            try:
                data = await child.parse(body, charset, url, kind)
            except ChildGone as gone:
                self._replace_gone()
                if not gone.overdue:
                    lost += 1
                continue
            self.parsed_by_children += 1
            return data
        raise ParseError(f"its parser process ended {ATTEMPTS} times", url=url)

    async def _ready_child(self, url: str) -> ParserProcess:
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

    def _answered_since_own(self, children: list[ParserProcess]) -> bool:
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
