"""The crawl manager: the server's crawls, each run by the library's one driver
(:meth:`sitecrawl.AsyncCrawler.run`) on its own state file, ``DATA/<id>.sitecrawl.db``.

A crawl is created ``queued``; at most ``max_crawls`` run at once, the others wait in
creation order. ``pause`` stops one as Ctrl-C stops the command line (requests in flight
finish and are stored), ``resume`` queues it again and its next run goes on from its state
file (the frontier's resume: nothing fetched twice beyond what was in flight); ``cancel``
stops it for good (its pages stay readable), ``purge`` removes it and its file. The crawls
that were running when the server stopped (``kill -9`` included) are run on first when it
starts again on the same data directory.

Credentials (:data:`._options.SECRETS`) live in this process only: a crawl given some that
has to be run again after a restart waits ``paused`` until they are given again with
``resume``, as a state file's resumed crawl asks the command line for them again.

One host's politeness slot is shared by every crawl of the host (:mod:`._throttle`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets as random_ids
import time
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from .._config import CrawlConfig
from .._exceptions import ConfigError, SitecrawlError
from ._config import ServeConfig
from ._options import (
    OptionError,
    config_from_options,
    secret_names,
    split_secrets,
    with_cli_defaults,
)
from ._policy import checked_config
from ._store import ENDED, CrawlRecord, ServerStore
from ._throttle import CrawlThrottle, SharedSlots

if TYPE_CHECKING:
    from .._crawler import AsyncCrawler
    from ..frontier import PageStore

#: Seconds between two writes of a running crawl's counts to the bookkeeping.
SAVE_EVERY = 2.0
#: Seconds between two looks at a running crawl's counts.
TICK = 0.25


class CrawlNotFound(SitecrawlError):
    """No crawl has this id."""


class CrawlConflict(SitecrawlError):
    """The crawl is not in a status that allows what was asked."""


@dataclass(slots=True, eq=False)
class Crawl:
    """One crawl of the server: its record, its config, its credentials (memory only) and,
    while it runs, its crawler."""

    record: CrawlRecord
    secrets: dict[str, Any] = field(default_factory=dict)
    crawler: AsyncCrawler | None = None
    task: asyncio.Task[None] | None = None
    #: What a stop asked for: "paused" or "cancelled" (None: not stopped).
    want: str | None = None
    #: True while the crawler's frontier is open (the pages are read through it).
    live: bool = False
    readers: int = 0
    errors_before: int = 0
    saved: float = 0.0
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    idle: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def id(self) -> str:
        return self.record.id

    @property
    def status(self) -> str:
        return self.record.status


def iso(when: float | None) -> str | None:
    """A Unix time as ISO 8601 UTC (``2026-12-03T16:40:00Z``)."""
    if when is None:
        return None
    return datetime.fromtimestamp(when, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class CrawlManager:
    """The server's crawls (see the module docstring); used from the server's event loop."""

    def __init__(self, config: ServeConfig) -> None:
        self.config = config
        self.store = ServerStore(config.data)
        self.slots = SharedSlots()
        self.crawls: dict[str, Crawl] = {}
        self._closing = False
        self._ticker: asyncio.Task[None] | None = None

    # -- lifetime ---------------------------------------------------------------------------

    async def start(self) -> None:
        """Take the crawls of the data directory back; run the ones that were running."""
        for record in self.store.records():
            crawl = Crawl(record)
            self.crawls[record.id] = crawl
            if record.status in ("running", "queued") and record.secrets:
                record.status = "paused"
                record.error = (
                    "the server restarted and keeps no credentials: resume this crawl with"
                    f" them again ({', '.join(record.secrets)})"
                )
                self.store.save(record)
        self._schedule(first=True)
        self._ticker = asyncio.create_task(self._tick())

    async def close(self) -> None:
        """Stop every running crawl (left ``running``: the next start runs them on)."""
        self._closing = True
        if self._ticker is not None:
            self._ticker.cancel()
            await asyncio.gather(self._ticker, return_exceptions=True)
        running = [crawl for crawl in self.crawls.values() if crawl.task is not None]
        for crawl in running:
            if crawl.crawler is not None:
                crawl.crawler.stop()
            elif crawl.task is not None:  # not begun (waiting for its state file): it will
                crawl.task.cancel()  # begin at the next start, still "running"
        await asyncio.gather(*(c.task for c in running if c.task), return_exceptions=True)
        self.store.close()

    # -- the API's verbs ----------------------------------------------------------------------

    def check(self, url: Any, options: Mapping[str, Any]) -> CrawlConfig:
        """The config of a crawl of ``url`` with ``options``, checked: :class:`OptionError`,
        :class:`HostNotAllowed`, or what this machine cannot run."""
        return checked_config(url, options, self.config.allow_hosts)

    def create(self, url: Any, options: Mapping[str, Any]) -> Crawl:
        """A new crawl, queued (and started when a place is free)."""
        self.check(url, options)
        plain, secrets = split_secrets(options)
        record = CrawlRecord(
            id=random_ids.token_hex(6),
            seq=self.store.next_seq(),
            url=str(url),
            options=plain,
            secrets=secret_names(secrets),
            status="queued",
            created=time.time(),
        )
        crawl = Crawl(record, secrets=dict(secrets))
        self.crawls[record.id] = crawl
        self.store.save(record)
        self._schedule()
        return crawl

    def get(self, crawl_id: str) -> Crawl:
        crawl = self.crawls.get(crawl_id)
        if crawl is None:
            raise CrawlNotFound(f"no crawl {crawl_id!r}")
        return crawl

    def newest_first(self) -> list[Crawl]:
        return sorted(self.crawls.values(), key=lambda crawl: -crawl.record.seq)

    def pause(self, crawl_id: str) -> Crawl:
        crawl = self.get(crawl_id)
        if crawl.status == "queued":
            self._set(crawl, "paused")
        elif crawl.status == "running":
            self._stop(crawl, "paused")
        elif crawl.status != "paused":
            raise CrawlConflict(
                f"crawl {crawl_id} is {crawl.status}: only a queued or running one pauses"
            )
        return crawl

    def resume(self, crawl_id: str, secrets: Mapping[str, Any] | None = None) -> Crawl:
        """Queue a paused (or failed, or cancelled) crawl again; ``secrets``: its
        credentials, given again after a restart."""
        crawl = self.get(crawl_id)
        if crawl.status in ("queued", "running"):
            return crawl
        if crawl.status == "finished":
            raise CrawlConflict(f"crawl {crawl_id} is finished: start a new one")
        if crawl.task is not None:
            raise CrawlConflict(f"crawl {crawl_id} is still stopping: try again in a moment")
        if secrets:
            plain, given = split_secrets(secrets)
            if plain:
                raise OptionError(sorted(plain)[0], "resume takes only credentials")
            config_from_options(crawl.record.url, {**crawl.record.options, **given})
            crawl.secrets = dict(given)
        missing = set(crawl.record.secrets) - set(secret_names(crawl.secrets))
        if missing:
            raise CrawlConflict(
                f"give this crawl's credentials again: {', '.join(sorted(missing))}"
            )
        crawl.record.error = None
        self._set(crawl, "queued")
        self._schedule()
        return crawl

    async def cancel(self, crawl_id: str) -> Crawl:
        crawl = self.get(crawl_id)
        if crawl.status == "running":
            self._stop(crawl, "cancelled")
        elif crawl.status in ("queued", "paused"):
            self._set(crawl, "cancelled", ended=True)
        return crawl

    async def purge(self, crawl_id: str) -> None:
        """Cancel the crawl, then remove it and its state file."""
        crawl = self.get(crawl_id)
        await self.cancel(crawl_id)
        if crawl.task is not None:
            await asyncio.gather(crawl.task, return_exceptions=True)
        async with crawl.lock:
            del self.crawls[crawl_id]
            self.store.delete(crawl_id)
            path = self.store.state_path(crawl_id)
            for suffix in ("-wal", "-shm", ""):
                with contextlib.suppress(FileNotFoundError):
                    os.remove(path + suffix)

    def view(self, crawl: Crawl) -> dict[str, Any]:
        """The crawl as the API answers it: never a credential's value."""
        record = crawl.record
        return {
            "id": record.id,
            "url": record.url,
            "status": record.status,
            "pages": record.pages,
            "queued": record.queued,
            "errors": record.errors,
            "created": iso(record.created),
            "started": iso(record.started),
            "finished": iso(record.finished),
            "error": record.error,
            "options": record.options,
            "credentials": record.secrets,
        }

    @contextlib.asynccontextmanager
    async def open_store(self, crawl: Crawl) -> AsyncIterator[PageStore | None]:
        """The crawl's pages: through its running crawler's frontier, else its state file
        (None: it has none yet)."""
        from ..frontier import SqliteFrontier

        while crawl.task is not None and not crawl.live:
            await asyncio.sleep(0.05)  # starting (its frontier opens) or ending
        if crawl.live and crawl.crawler is not None:
            crawl.readers += 1
            crawl.idle.clear()
            try:
                yield crawl.crawler.frontier  # type: ignore[misc]  # a SqliteFrontier
            finally:
                crawl.readers -= 1
                if not crawl.readers:
                    crawl.idle.set()
            return
        async with crawl.lock:
            path = self.store.state_path(crawl.id)
            if not os.path.exists(path):
                yield None
                return
            async with SqliteFrontier(path, create=False) as store:
                yield store

    # -- running ----------------------------------------------------------------------------

    def _set(self, crawl: Crawl, status: str, *, ended: bool = False) -> None:
        crawl.record.status = status
        if ended:
            crawl.record.finished = time.time()
        self.store.save(crawl.record)

    def _stop(self, crawl: Crawl, want: str) -> None:
        crawl.want = want
        if crawl.crawler is not None:
            crawl.crawler.stop()

    def _schedule(self, *, first: bool = False) -> None:
        """Start queued crawls while fewer than ``max_crawls`` run (on a restart, the ones
        that were running first)."""
        if self._closing:
            return
        running = sum(1 for crawl in self.crawls.values() if crawl.task is not None)
        order = sorted(self.crawls.values(), key=lambda c: (c.status != "running", c.record.seq))
        for crawl in order:
            if running >= self.config.max_crawls:
                break
            wanted = crawl.status == "queued" or (first and crawl.status == "running")
            if wanted and crawl.task is None:
                crawl.want = None
                crawl.task = asyncio.create_task(self._run(crawl), name=f"crawl {crawl.id}")
                running += 1
        for crawl in order:  # restarted crawls beyond max_crawls wait their turn
            if first and crawl.status == "running" and crawl.task is None:
                self._set(crawl, "queued")

    async def _run(self, crawl: Crawl) -> None:
        record = crawl.record
        record.status = "running"
        record.started = record.started or time.time()
        record.finished = None
        crawl.errors_before = record.errors
        self.store.save(record)
        outcome, error = "finished", None
        try:
            outcome, error = await self._crawl(crawl)
        except Exception as exc:  # the per-crawl guard: one crawl's failure is its own
            outcome, error = "failed", f"{type(exc).__name__}: {exc}"
        finally:
            crawl.task = None
            crawl.crawler = None
            crawl.live = False
        if self._closing and crawl.want is None:
            self.store.save(record)  # left running: the next start runs it on
            return
        outcome = crawl.want or outcome
        record.error = error
        self._set(crawl, outcome, ended=outcome in ENDED)
        crawl.want = None
        self._schedule()

    async def _crawl(self, crawl: Crawl) -> tuple[str, str | None]:
        """One run of the crawl; its outcome (``finished`` or ``failed``) and why."""
        from .._crawler import AsyncCrawler
        from ..frontier import SqliteFrontier

        record = crawl.record
        try:
            config = config_from_options(
                record.url, with_cli_defaults({**record.options, **crawl.secrets})
            )
        except ConfigError as exc:
            return "failed", str(exc)
        # the report reads every page's links; private targets refused: at every connection
        # (the start URL's name may have been rebound since it was checked)
        public_only = not self.config.private_targets
        config = replace(config, link_details=True, public_only=public_only)
        throttle = CrawlThrottle(
            config.politeness, max_concurrency=config.limits.max_concurrency, shared=self.slots
        )
        async with crawl.lock:
            frontier = SqliteFrontier(
                self.store.state_path(crawl.id),
                base_url=config.base_url,
                keep=3,
                max_pages=config.limits.max_pages,
            )
            crawler = AsyncCrawler(
                config.base_url,
                config=config,
                frontier=frontier,
                keep_pages=False,
                throttle=throttle,
            )
            crawl.crawler = crawler
            try:
                async with crawler:
                    crawl.live = True
                    await self._count(crawl, crawler)  # a resumed crawl's pages done so far
                    if crawl.want is not None:
                        crawler.stop()
                    try:
                        run = await crawler.run([])
                        await self._count(crawl, crawler)
                    finally:
                        crawl.live = False
                        if crawl.readers:
                            await crawl.idle.wait()
            except SitecrawlError as exc:
                return "failed", str(exc)
            finally:
                throttle.leave()
        if run.start_failure is not None:
            page = run.start_failure
            return "failed", f"could not crawl {page.url}: {page.error}"
        return "finished", None

    async def _count(self, crawl: Crawl, crawler: AsyncCrawler) -> None:
        stats = await crawler.frontier.stats()
        record = crawl.record
        record.pages, record.queued = stats.done, stats.queued + stats.in_flight
        record.errors = crawl.errors_before + crawler.stats.errors

    async def _tick(self) -> None:
        """Keep the running crawls' counts current (and saved every few seconds)."""
        while True:
            await asyncio.sleep(TICK)
            now = time.monotonic()
            for crawl in list(self.crawls.values()):
                if not crawl.live or crawl.crawler is None:
                    continue
                with contextlib.suppress(SitecrawlError):
                    await self._count(crawl, crawl.crawler)
                if now - crawl.saved >= SAVE_EVERY:
                    crawl.saved = now
                    self.store.save(crawl.record)
