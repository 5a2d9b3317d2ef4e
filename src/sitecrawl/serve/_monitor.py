"""Monitors: a site re-crawled on a schedule, each run compared with the one before, the
changes posted to a webhook. :class:`MonitorService` owns them for one data directory::

    service = MonitorService("data")
    async with service:                  # the server's lifespan: the scheduler runs inside
        view = service.create({"url": "https://example.com/", "every": "1h",
                               "webhook": "https://hooks.example/x", "secret": "s"})

Each monitor's crawls live in its own state file (``DATA/monitor-<id>.sitecrawl.db``, the
last :data:`KEEP` crawls): a run is one more crawl of that file by the library's driver
(:meth:`~sitecrawl.AsyncCrawler.run`), so it revalidates pages with conditional requests
(``If-None-Match`` / ``If-Modified-Since``), and the changes are the library's diff of the
file's last two crawls (:func:`~sitecrawl._diff_crawls.between`). A run stopped with the
service (or killed) is resumed by the next one. One run of a monitor at a time: a run still
going when the next is due is not started again; the next starts when it ends. The schedule
is kept in ``DATA/monitors.sqlite`` (:mod:`._monitor_store`): after a restart each monitor
is due from its stored last run.

A run posts its webhook (:mod:`._monitor_payload`, :mod:`._monitor_webhook`) when it found
changes (``notify: changes``, the default) or only changes of its ``fail_on`` kinds
(``notify: fail_on``); the first run, with nothing to compare, posts nothing. Every delivery,
failed or not, is stored and shown by the API.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import replace
from types import TracebackType
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from .._crawler import AsyncCrawler
from .._diff_crawls import between
from .._exceptions import ConfigError, SitecrawlError
from ..frontier import SqliteFrontier
from ._monitor_payload import encode, payload, slack_message
from ._monitor_spec import MonitorSpec, config_from_options, next_due, parse_monitor
from ._monitor_store import MonitorStore
from ._monitor_webhook import deliver

if TYPE_CHECKING:
    import os
    import sqlite3

    import aiohttp

    from .._diff import ChangeSet
    from ._policy import TargetGuard

log = logging.getLogger("sitecrawl.monitor")
#: Crawls kept in a monitor's state file.
KEEP = 10
#: Seconds a stopping service waits for its runs to stop (they are cancelled after).
STOP_WAIT = 15.0


class MonitorService:
    """The monitors of ``data_dir`` (see the module's docstring). ``public_url`` begins the
    links a webhook carries (``diff_url``; default: a path alone); ``url_allowed(url)``
    refuses sites a caller may not crawl (the server's ``--allow-hosts``), ``guard(url,
    options)`` too, when a monitor is made and before each run (the server's private targets
    refused: :func:`~sitecrawl.serve._policy.refused_target`); ``attempts`` and
    ``backoff`` are the webhook's retries; ``tick`` the most the scheduler sleeps."""

    def __init__(
        self,
        data_dir: str | os.PathLike[str],
        *,
        public_url: str = "",
        url_allowed: Callable[[str], bool] | None = None,
        guard: TargetGuard | None = None,
        attempts: int = 5,
        backoff: float = 1.0,
        keep: int = KEEP,
        tick: float = 5.0,
    ) -> None:
        self.store = MonitorStore(data_dir)
        self.public_url = public_url.rstrip("/")
        self.url_allowed = url_allowed
        self.guard = guard
        self.attempts = attempts
        self.backoff = backoff
        self.keep = keep
        self.tick = tick
        self._runs: dict[str, asyncio.Task[None]] = {}
        self._crawlers: dict[str, AsyncCrawler] = {}
        self._wake = asyncio.Event()
        self._scheduler: asyncio.Task[None] | None = None
        self._closing = False
        self._session: aiohttp.ClientSession | None = None

    # -- lifetime -------------------------------------------------------------------------

    async def __aenter__(self) -> MonitorService:
        import aiohttp

        self.store.open()
        self._closing = False
        self._session = aiohttp.ClientSession()
        self._wake = asyncio.Event()
        self._scheduler = asyncio.create_task(self._schedule(), name="sitecrawl monitors")
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._scheduler is not None:
            self._scheduler.cancel()
            await asyncio.gather(self._scheduler, return_exceptions=True)
            self._scheduler = None
        self._closing = True  # a run still starting stops as soon as its crawler is open
        for crawler in list(self._crawlers.values()):
            crawler.stop()  # the run ends as Ctrl-C ends a crawl: resumed next time
        runs = list(self._runs.values())
        if runs:
            _, pending = await asyncio.wait(runs, timeout=STOP_WAIT)
            for task in pending:
                task.cancel()
            await asyncio.gather(*runs, return_exceptions=True)
        if self._session is not None:
            await self._session.close()
            self._session = None
        self.store.close()

    # -- the API's operations -------------------------------------------------------------

    def create(self, body: Any) -> dict[str, Any]:
        """A new monitor from a ``POST /api/monitors`` body (:class:`ConfigError` naming
        what is wrong); returns its view. Its first run is due at once (``every``) or at
        its cron time."""
        spec, secrets = parse_monitor(body)
        if self.url_allowed is not None and not self.url_allowed(spec.url):
            raise ConfigError(f"url: {spec.url} is not a host this server may crawl")
        monitor = uuid.uuid4().hex[:12]
        self.store.add(monitor, spec, secrets)
        self._wake.set()
        found = self.get(monitor)
        assert found is not None
        return found

    def list(self) -> list[dict[str, Any]]:
        return [self._view(row, deliveries=False) for row in self.store.rows()]

    def get(self, monitor: str) -> dict[str, Any] | None:
        row = self.store.row(monitor)
        return None if row is None else self._view(row, deliveries=True)

    async def delete(self, monitor: str) -> bool:
        """Remove a monitor (its run stopped, its state file deleted)."""
        task = self._runs.get(monitor)
        if task is not None:
            crawler = self._crawlers.get(monitor)
            if crawler is not None:
                crawler.stop()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(task), STOP_WAIT)
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        if not self.store.remove(monitor):
            return False
        path = self.store.state_path(monitor)
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(FileNotFoundError):
                path.with_name(path.name + suffix).unlink()
        return True

    def run_now(self, monitor: str) -> bool:
        """Start a run now unless one is going (False: none started)."""
        if self.store.row(monitor) is None or monitor in self._runs:
            return False
        self._start(monitor)
        return True

    async def diff(self, monitor: str, crawl: int | None = None) -> dict[str, Any] | None:
        """Every change of crawl ``crawl`` (default: the last) since the crawl before it;
        None for no such monitor or crawl. While a run holds the file (a crawl locks its state
        file), :class:`~sitecrawl.StateError`."""
        path = self.store.state_path(monitor)
        if self.store.row(monitor) is None or not path.exists():
            return None
        async with SqliteFrontier(path, create=False) as store:
            numbers = [found["id"] for found in store.crawls()]
            crawl = numbers[-1] if crawl is None else crawl
            if crawl not in numbers or numbers.index(crawl) == 0:
                return None
            found = between(store, str(path), numbers[numbers.index(crawl) - 1], crawl)
        return _changes_json(found)

    async def report(self, monitor: str) -> str | None:
        """The HTML report of the monitor's last crawl, with what changed since the crawl
        before it (None: no such monitor, or no crawl yet). While a run holds the file,
        :class:`~sitecrawl.StateError`."""
        from .._diff_crawls import previous_changes
        from ..report import render_report, store_report_data

        path = self.store.state_path(monitor)
        if self.store.row(monitor) is None or not path.exists():
            return None
        async with SqliteFrontier(path, create=False) as store:
            data = await store_report_data(store)
            changes = previous_changes(store, str(path))
        return render_report(data, export_source=path.name, changes=changes)

    # -- the schedule ---------------------------------------------------------------------

    async def _schedule(self) -> None:
        while True:
            now = time.time()
            wake = now + self.tick
            for row in self.store.rows():
                due = next_due(_spec(row), row["last_started"], row["created"])
                if row["id"] in self._runs:
                    continue
                if due <= now:
                    self._start(row["id"])
                else:
                    wake = min(wake, due)
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), max(0.0, wake - time.time()))

    def _start(self, monitor: str) -> None:
        task = asyncio.create_task(self._run(monitor), name=f"monitor {monitor}")
        self._runs[monitor] = task

        def done(_: asyncio.Task[None]) -> None:
            if self._runs.get(monitor) is task:
                del self._runs[monitor]
            self._wake.set()  # the next run is due from this one's start

        task.add_done_callback(done)

    async def _run(self, monitor: str) -> None:
        row = self.store.row(monitor)
        if row is None:
            return
        spec, secrets = _spec(row), self.store.secrets(row)
        self.store.started(monitor, time.time())
        crawl: int | None = None
        try:
            if self.guard is not None:  # the name may resolve elsewhere since
                refused = await self.guard(spec.url, spec.options)
                if refused is not None:
                    raise refused
            config = config_from_options(spec.url, {**spec.options, **secrets.credentials})
            if self.guard is not None:  # and at every connection of the run (rebinding)
                config = replace(config, public_only=True)
            path = self.store.state_path(monitor)
            frontier = SqliteFrontier(
                path, base_url=config.base_url, keep=self.keep, max_pages=config.limits.max_pages
            )
            async with AsyncCrawler(
                config.base_url, config=config, frontier=frontier, keep_pages=False
            ) as crawler:
                self._crawlers[monitor] = crawler
                if self._closing:
                    crawler.stop()
                try:
                    run = await crawler.run()
                finally:
                    self._crawlers.pop(monitor, None)
                crawl = frontier.crawl
                if run.interrupted:
                    self.store.finished(monitor, crawl=crawl, status="stopped", error=None)
                    return
                previous = frontier.previous
                found = (
                    None
                    if previous is None
                    else between(frontier, str(path), previous["id"], crawl)
                )
                pages = crawler.stats.pages + crawler.stats.resumed
                errors = crawler.stats.errors
        except SitecrawlError as exc:
            self.store.finished(monitor, crawl=crawl, status="failed", error=str(exc))
            return
        except Exception as exc:  # the run's guard: one monitor's failure stops no other
            log.exception("monitor %s: the run failed", monitor)
            error = f"{type(exc).__name__}: {exc}"
            self.store.finished(monitor, crawl=crawl, status="failed", error=error)
            return
        self.store.finished(monitor, crawl=crawl, status="finished", error=None)
        if found is None or secrets.webhook is None:
            return
        changes = found.changes
        failing = [change for change in changes if change.kind in spec.fail_on]
        if not changes or (spec.notify == "fail_on" and not failing):
            return
        message = payload(
            monitor=monitor,
            url=spec.url,
            crawl=crawl,
            previous_crawl=None if previous is None else previous["id"],
            pages=pages,
            errors=errors,
            changes=changes,
            fail_on=spec.fail_on,
            diff_url=f"{self.public_url}/api/monitors/{monitor}/diff?crawl={crawl}",
        )
        body = encode(slack_message(message) if spec.format == "slack" else message)
        assert self._session is not None
        delivery = await deliver(
            self._session,
            secrets.webhook,
            body,
            secret=secrets.secret,
            delivery_id=f"{monitor}-{crawl}",
            attempts=self.attempts,
            backoff=self.backoff,
        )
        self.store.delivered(
            monitor,
            crawl,
            ok=delivery.ok,
            attempts=delivery.attempts,
            http_status=delivery.http_status,
            error=delivery.error,
        )
        if not delivery.ok:
            log.warning("monitor %s: webhook not delivered: %s", monitor, delivery.error)

    def _view(self, row: sqlite3.Row, *, deliveries: bool) -> dict[str, Any]:
        """What the API shows of a monitor: never a secret (the webhook's origin only; the
        credentials' names only)."""
        spec, secrets = _spec(row), self.store.secrets(row)
        webhook = None
        if secrets.webhook is not None:
            parts = urlsplit(secrets.webhook)
            webhook = f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}/…"
        view: dict[str, Any] = {
            "id": row["id"],
            **spec.to_dict(),
            "webhook": webhook,
            "signed": secrets.secret is not None,
            "credentials": sorted(secrets.credentials),
            "created": row["created"],
            "last_started": row["last_started"],
            "last_finished": row["last_finished"],
            "last_crawl": row["last_crawl"],
            "last_status": row["last_status"],
            "last_error": row["last_error"],
            "running": row["id"] in self._runs,
            "next_run": next_due(spec, row["last_started"], row["created"]),
        }
        if deliveries:
            view["deliveries"] = self.store.deliveries(row["id"])
            view["failed_deliveries"] = sum(not d["ok"] for d in view["deliveries"])
        return view


def _spec(row: sqlite3.Row) -> MonitorSpec:
    return MonitorSpec.from_dict(json.loads(row["spec"]))


def _changes_json(found: ChangeSet) -> dict[str, Any]:
    return {
        "since": found.since,
        "until": found.until,
        "counts": found.counts(),
        "changes": [change.to_dict() for change in found.changes],
    }
