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
    from .audit._linkcheck import LinkChecker


def summary(stats: CrawlStats) -> str:
    """``1,234 pages in 2.1 s (587.6 pages/s) · 200: 1,230 · 404: 4 · errors: 4``."""
    parts = [
        f"{stats.pages:,} pages in {stats.elapsed:.1f} s ({stats.pages_per_second:,.1f} pages/s)"
    ]
    if stats.resumed:
        parts[0] = f"resumed after {stats.resumed:,} pages: " + parts[0]
    statuses = sorted(stats.statuses.items(), key=lambda item: (item[0] is None, item[0] or 0))
    parts += [f"{status or 'no response'}: {count:,}" for status, count in statuses]
    parts.append(f"errors: {stats.errors:,}")
    if stats.blocked:
        parts.append(f"blocked by robots.txt: {stats.blocked:,}")
    if stats.retries:
        parts.append(f"retries: {stats.retries:,}")
    if stats.sitemap_urls:
        parts.append(f"in sitemaps: {stats.sitemap_urls:,}")
    if stats.dropped_links:
        parts.append(f"trap links skipped: {stats.dropped_links:,}")
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
    return "\n".join(printable(line) for line in [*lines, *stats.notes])


class LiveProgress:
    """Redraws pages, pages/s, queued and errors four times a second while a crawl runs."""

    def __init__(self, crawler: AsyncCrawler, stream: TextIO = sys.stderr) -> None:
        from rich.console import Console
        from rich.live import Live

        self._crawler = crawler
        self._live = Live(console=Console(file=stream), transient=True, auto_refresh=False)
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> LiveProgress:
        self._live.start()
        self._task = asyncio.create_task(self._refresh())
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
        self._live.stop()

    async def _refresh(self) -> None:
        from rich.markup import escape
        from rich.text import Text

        while True:
            stats = self._crawler.stats
            frontier = await self._crawler.frontier.stats()
            line = (
                f"[bold]{stats.pages:,}[/] pages · {stats.pages_per_second:,.0f}/s · "
                f"{frontier.queued:,} queued · {frontier.in_flight} in flight · "
                f"[red]{stats.errors:,}[/] errors · {stats.elapsed:,.0f} s"
            )
            waits = self._crawler.throttle.reasons()
            if waits:
                host, why = next(iter(waits.items()))
                more = f" (+{len(waits) - 1} hosts)" if len(waits) > 1 else ""
                line += f" · [cyan]{escape(printable(f'{host}: {why}'))}[/]{more}"
            if self._crawler.stopped:
                line += " · [yellow]stopping[/]"
            self._live.update(Text.from_markup(line), refresh=True)
            await asyncio.sleep(0.25)


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
