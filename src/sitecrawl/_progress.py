"""Live progress on stderr (rich) and the one-paragraph summary printed after a crawl; the
link checks' progress (a live line on a terminal, plain lines in a CI log)."""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from types import TracebackType
from typing import TYPE_CHECKING, TextIO

from ._terminal import printable

if TYPE_CHECKING:
    from ._crawler import AsyncCrawler
    from ._models import CrawlStats
    from .audit import LinkChecker


def summary(stats: CrawlStats, rest: str | None = None) -> str:
    """``1,234 pages in 2.1 s (587.6 pages/s) · 200: 1,230 · 404: 4 · errors: 4 · ...``, then
    the first failed pages and, when there are more, ``rest``: where to find them all (the
    export command)."""
    parts = [
        f"{stats.pages:,} pages in {stats.elapsed:.1f} s ({stats.pages_per_second:,.1f} pages/s)"
    ]
    if stats.resumed:
        parts[0] = f"resumed after {stats.resumed:,} pages: " + parts[0]
    statuses = sorted(stats.statuses.items(), key=lambda item: (item[0] is None, item[0] or 0))
    for status, count in statuses:
        name = "304 (not modified: record kept)" if status == 304 and stats.revalidated else status
        parts.append(f"{name or 'no response'}: {count:,}")
    parts.append(f"errors: {stats.errors:,}")
    if stats.pages:
        parts.append(f"received: {size_text(stats.received_bytes)}")
    counted = (
        ("blocked by robots.txt", stats.blocked),
        ("retries", stats.retries),
        ("in sitemaps", stats.sitemap_urls),
        ("trap links skipped", stats.dropped_links),
    )
    parts += [f"{name}: {count:,}" for name, count in counted if count]
    if stats.scope:
        parts.append(f"scope: {stats.scope}")
    lines = [" · ".join(parts)]
    if stats.refused:
        refused = sorted(stats.refused.items(), key=lambda item: (-item[1], item[0]))
        lines.append(
            "not followed (distinct URLs): "
            + " · ".join(f"{rule}: {count:,}" for rule, count in refused)
        )
    if stats.rendered:
        rendered = sorted(stats.rendered.items(), key=lambda item: (-item[1], item[0]))
        lines.append(
            f"rendered in Chromium: {stats.rendered.total():,} of {stats.pages:,} pages ("
            + " · ".join(f"{why}: {count:,}" for why, count in rendered)
            + ")"
            + (
                f" · cut off at the render timeout (maybe partial): {stats.render_cut:,}"
                if stats.render_cut
                else ""
            )
        )
    if stats.unconverted:
        lines.append(
            "not of their rule's type (null): "
            + " · ".join(f"{rule}: {count:,}" for rule, count in sorted(stats.unconverted.items()))
        )
    lines += failures(stats, rest)
    return "\n".join(printable(line) for line in [*lines, *stats.notes])


def failures(stats: CrawlStats, rest: str | None = None) -> list[str]:
    """The failed pages the summary names: a header, the first few (URL, kind, status), and
    how many more with ``rest``, where they all are."""
    if not stats.errors:
        return []
    lines = [f"failed: {stats.errors:,} page{'s' * (stats.errors != 1)}"]
    for url, kind, status in stats.failures:
        lines.append(f"  {url}  {kind or 'error'}{f' {status}' if status else ''}")
    more = stats.errors - len(stats.failures)
    if more > 0:
        lines.append(f"  and {more:,} more" + (f": {rest}" if rest else ""))
    return lines


def size_text(count: int) -> str:
    """Bytes for people: ``812 B``, ``12.3 kB``, ``255.9 MB``."""
    size = float(count)
    for unit in ("B", "kB", "MB", "GB"):
        if size < 1000 or unit == "GB":
            return f"{size:,.0f} {unit}" if unit == "B" else f"{size:,.1f} {unit}"
        size /= 1000
    raise AssertionError("unreachable")


def crawl_line(crawler: AsyncCrawler, queued: int, in_flight: int) -> str:
    """``1,234 pages · 58/s · 300 queued · 8 in flight · 3 errors · 20 s``, and why a host
    waits, and whether the crawl is stopping."""
    stats = crawler.stats
    line = (
        f"{stats.pages:,} pages · {stats.pages_per_second:,.0f}/s · {queued:,} queued · "
        f"{in_flight} in flight · {stats.errors:,} errors · {stats.elapsed:,.0f} s"
    )
    waits = crawler.throttle.reasons()
    if waits:
        host, why = next(iter(waits.items()))
        more = f" (+{len(waits) - 1} hosts)" if len(waits) > 1 else ""
        line += f" · {host}: {why}{more}"
    if crawler.stopped:
        line += " · stopping"
    return printable(line)


class LiveProgress:
    """The crawl's progress on stderr while it runs: on a terminal a line redrawn four times
    a second; without one (a CI log, ``-v``), a line every :data:`CRAWL_LINE_EVERY` seconds
    (as the link checks do), so a log shows the crawl is alive."""

    def __init__(
        self, crawler: AsyncCrawler, stream: TextIO | None = None, *, live: bool = True
    ) -> None:
        self._crawler = crawler
        self._stream = sys.stderr if stream is None else stream
        self._live = live
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> LiveProgress:
        self._task = asyncio.create_task(self._redraw() if self._live else self._lines())
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._task is not None:
            self._task.cancel()
            # A frontier that failed (a lost Redis) fails the crawl too, which says so.
            await asyncio.gather(self._task, return_exceptions=True)

    async def _line(self) -> str:
        frontier = await self._crawler.frontier.stats()
        return crawl_line(self._crawler, frontier.queued, frontier.in_flight)

    async def _lines(self) -> None:
        while True:
            await asyncio.sleep(CRAWL_LINE_EVERY)
            print(await self._line(), file=self._stream, flush=True)

    async def _redraw(self) -> None:
        from rich.console import Console
        from rich.live import Live
        from rich.text import Text

        with Live(console=Console(file=self._stream), transient=True, auto_refresh=False) as live:
            while True:
                live.update(Text(await self._line()), refresh=True)
                await asyncio.sleep(0.25)


#: Without a terminal, the crawl's progress is one line this often, in seconds.
CRAWL_LINE_EVERY = 5.0
#: Without a terminal (a CI log), the check's progress is one line this often, in seconds.
CHECK_LINE_EVERY = 5.0


class CheckProgress:
    """The link checks' progress on stderr: how many of how many, broken, hosts unreachable.

    A line when they start and when they end; in between a live line on a terminal, else a
    line every :data:`CHECK_LINE_EVERY` seconds, so a CI log shows the run is alive. Nothing
    with ``quiet``."""

    def __init__(
        self,
        checker: LinkChecker,
        targets: list[str],
        *,
        quiet: bool = False,
        stream: TextIO | None = None,
    ) -> None:
        from ._urls import split_host

        self._checker = checker
        self._total = len(targets)
        self._hosts = len({split_host(url) for url in targets})
        self._quiet = quiet
        self._stream = sys.stderr if stream is None else stream
        self._started = 0.0
        self._task: asyncio.Task[None] | None = None

    def line(self) -> str:
        results = self._checker.results
        broken = sum(1 for status in results.values() if status.broken)
        line = f"checked {len(results):,} of {self._total:,} link targets · {broken:,} broken"
        if self._checker.unreachable:
            line += f" · {len(self._checker.unreachable):,} hosts unreachable"
        return line

    def _print(self, line: str) -> None:
        print(printable(line), file=self._stream, flush=True)

    async def __aenter__(self) -> CheckProgress:
        if self._quiet or not self._total:
            return self
        self._started = time.monotonic()
        hosts = f" on {self._hosts:,} host{'s' * (self._hosts != 1)}"
        self._print(f"checking {self._total:,} link targets{hosts}")
        live = self._stream.isatty()
        self._task = asyncio.create_task(self._live() if live else self._lines())
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._task is None:
            return
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        self._print(f"{self.line()} in {time.monotonic() - self._started:.1f} s")

    async def _lines(self) -> None:
        while True:
            await asyncio.sleep(CHECK_LINE_EVERY)
            self._print(f"{self.line()} · {time.monotonic() - self._started:,.0f} s")

    async def _live(self) -> None:
        from rich.console import Console
        from rich.live import Live
        from rich.text import Text

        with Live(console=Console(file=self._stream), transient=True, auto_refresh=False) as live:
            while True:
                elapsed = time.monotonic() - self._started
                live.update(Text(printable(f"{self.line()} · {elapsed:,.0f} s")), refresh=True)
                await asyncio.sleep(0.25)
