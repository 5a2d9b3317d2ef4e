"""SQLite frontier and page store: one file holds a crawl's whole state, so it survives a crash.

The file's format (its tables and views, and how an older file is migrated) is drawn in
:mod:`._sqlite_schema`.

A file holds a history of crawls of its site (:mod:`._sqlite_history`). Opened for a crawl
(``base_url`` given) after a finished one, a new crawl begins: in one transaction the current
pages move to ``history``, ``urls`` and ``pages`` are emptied (``keep``: only the last crawls
stay); after an interrupted one, the crawl resumes. :meth:`SqliteFrontier.finish` marks the
end of a crawl; a crawl cut at ``max_pages`` resumes when a run allows more pages.

A page is written in :meth:`~SqliteFrontier.mark_done`, in the transaction that marks its
URL done: after any crash, a URL is done exactly when its page is stored.

Durability: WAL with ``synchronous = NORMAL`` (a commit is an append to the WAL, no fsync; a
killed process loses nothing committed, a power cut at most the last commits; the fsyncs come
with checkpoints, every ~40 MB of WAL). Writes collect in one open transaction. By default
(``commit_interval = 0``) :meth:`~SqliteFrontier.mark_done` returns only once its page is
committed, and the pages finished in one turn of the event loop share that commit (group
commit, :mod:`._sqlite_commit`); with ``commit_interval > 0`` a commit happens when that many
seconds have passed, and whenever the queue runs dry.

The file is opened with ``locking_mode = EXCLUSIVE``: while a crawl runs, no other process can
open it, and the OS drops the lock when the process dies, so leases found on opening belong to a
dead run and go back to the queue. The connection is used from the event loop's thread: each
call is a few index lookups in SQLite's page cache, cheaper than a hop to a worker thread. The
group COMMIT, which writes the pages to the WAL, is the exception: it runs in a committer
thread (SQLite releases the GIL), and the connection's other calls wait until it ends.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from .._exceptions import StateError
from .._models import Page, Request
from .._pagecodec import row_encoder
from .._urls import url_key
from ._base import Frontier, FrontierStats
from ._sqlite_commit import GroupCommit
from ._sqlite_history import CrawlHistory, crawl_rows, start_crawl
from ._sqlite_schema import (
    LEASE,
    NEXT_QUEUED,
    PAGE_COLUMNS,
    SCHEMA_VERSION,
    check_writable,
    create,
    inspect,
    migrate,
    read_crawl,
    read_meta,
    write_crawl,
    write_pages,
)

_QUEUED, _LEASED, _DONE, _CLAIMED = 0, 1, 2, 3
_LOCK_TIMEOUT = 0.2  # seconds to wait for a lock before calling the file busy
_CACHE_KIB = 32 * 1024  # SQLite's page cache: bounded, whatever the number of URLs
# Checkpoint (copy the WAL into the file, with an fsync) every ~40 MB of WAL instead of SQLite's
# 4 MB: with a commit per page, checkpoints and their fsyncs were the largest cost.
_CHECKPOINT_PAGES = 10_000
_ROW = row_encoder(PAGE_COLUMNS)  # a page's values for INSERT_PAGE, after its id
# Python's sqlite3 binds a parameter that is not exactly an int, float, str or bytes (None, a
# bool) only after looking for an adapter: two failed attribute lookups, each building an
# AttributeError, for every such value bound. A page's row binds ~20 of them: registered
# adapters (None as it is, a bool as its int: what sqlite3 binds anyway) are found at once
# (bench/RESULTS.md section 32: an INSERT of 50 values, half None or bool, 44 % less CPU).
sqlite3.register_adapter(type(None), lambda value: value)
sqlite3.register_adapter(bool, int)


class SqliteFrontier(CrawlHistory, Frontier):
    """A durable frontier and page store in one SQLite file at ``path``.

    ``base_url`` binds a new file to a crawl and is checked against an existing one (another
    site's state is refused); None skips the check (export). ``config`` (the stored crawl,
    :func:`sitecrawl.frontier._stored.encode`) is stored with a new crawl; an existing crawl's
    stored one replaces it in :attr:`config` when opened. ``fresh`` replaces an existing
    state file with a new one (its crawls forgotten); ``create=False`` refuses a missing one.
    Every problem with the file raises :class:`~sitecrawl.StateError` and leaves the file as it was.
    """

    stores_pages = True

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        base_url: str | None = None,
        fresh: bool = False,
        create: bool = True,
        commit_interval: float = 0.0,
        config: dict[str, Any] | None = None,
        keep: int | None = None,
        max_pages: int | None = None,
    ) -> None:
        if keep is not None and keep < 1:
            raise StateError(f"keep must be at least 1 crawl, not {keep}", path=os.fspath(path))
        self.path = os.fspath(path)
        self._keep = keep
        self._max_pages = max_pages
        self._given_config = config
        #: The current crawl (the last of the file's ``crawls``), set by :meth:`open`.
        self.crawl = 1
        #: True when :meth:`open` started a new crawl after a finished one.
        self.new_crawl = False
        #: The crawl before the current one: ``{"id", "started", "finished", "status"}``.
        self.previous: dict[str, Any] | None = None
        self.base_url = base_url
        self._given_base = base_url
        self.config = config
        self._fresh = fresh
        self._create = create
        self._commit_interval = commit_interval
        self._conn: sqlite3.Connection | None = None
        self._leases: dict[str, int] = {}
        self._seen = self._queued = self._done = 0
        self._last_commit = 0.0
        self._commits: GroupCommit | None = None
        #: Pages done, their rows not written yet: the committer thread writes them with the
        #: next group COMMIT (:func:`write_pages`), off the event loop.
        self._stored: list[tuple[Any, ...]] = []
        self._version = SCHEMA_VERSION
        #: Leases of a dead run put back in the queue by :meth:`open`.
        self.reclaimed = 0

    # -- lifetime ---------------------------------------------------------------------------

    async def open(self) -> None:
        if self._conn is not None:  # opened ahead of the crawler (the CLI checks it first)
            return
        if not self._create and not os.path.isfile(self.path):
            raise StateError(f"no such state file: {self.path}", path=self.path)
        check_writable(self.path, create=self._create)
        conn = self._connect()
        try:
            with self._guard():
                if self._fresh and not inspect(conn, self.path)[0]:
                    conn = self._start_over(conn)
                self._prepare(conn)
        except BaseException:
            conn.close()
            raise
        self._conn = conn
        self._commits = GroupCommit(conn, self._state_error, before=self._take_stored)
        self._last_commit = time.monotonic()

    async def close(self) -> None:
        if self._conn is None:
            return
        await self._ready()
        conn, self._conn = self._conn, None
        commits, self._commits = self._commits, None
        error: StateError | None = None
        try:
            with self._guard():
                if self._stored:
                    write_pages(conn, self._take_all())
                if self._leases:
                    self._begin(conn)
                    conn.executemany(
                        "UPDATE urls SET state = 0 WHERE id = ?",
                        [(lease,) for lease in self._leases.values()],
                    )
                    self._queued += len(self._leases)
                    self._leases.clear()
                if conn.in_transaction:
                    conn.execute("COMMIT")
        except StateError as exc:
            error = exc
            raise
        finally:
            if commits is not None:
                commits.close(error)
            conn.close()

    def _connect(self) -> sqlite3.Connection:
        try:  # used by one thread at a time: the event loop's, or a COMMIT's (GroupCommit)
            conn = sqlite3.connect(
                self.path, timeout=_LOCK_TIMEOUT, isolation_level=None, check_same_thread=False
            )
            conn.execute("PRAGMA locking_mode = EXCLUSIVE")
        except sqlite3.Error as exc:
            raise StateError(f"cannot open state file {self.path}: {exc}", path=self.path) from exc
        return conn

    def _start_over(self, conn: sqlite3.Connection) -> sqlite3.Connection:
        """``fresh``: the file (a state file, checked) is removed with its WAL while this
        connection holds its lock, and a new one is made in its place, whatever its size at
        the same cost (dropping its tables freed every page of it: bench/RESULTS.md 15)."""
        conn.execute("BEGIN EXCLUSIVE")  # nobody else reads or writes it meanwhile
        try:
            for suffix in ("-wal", "-shm", ""):  # the WAL first: never a WAL without its file
                with contextlib.suppress(FileNotFoundError):
                    os.remove(self.path + suffix)
        except OSError as exc:
            raise StateError(f"cannot start {self.path} over: {exc}", path=self.path) from exc
        finally:
            conn.close()
        return self._connect()

    def _prepare(self, conn: sqlite3.Connection) -> None:
        """Check the file, then (only then) change it: schema, WAL, reclaimed leases."""
        new, self._version = inspect(conn, self.path)
        if not new:
            stored = read_meta(conn).get("base_url", "")
            if self.base_url is not None and url_key(stored) != url_key(self.base_url):
                raise StateError(
                    f"state file {self.path} holds a crawl of {stored}, not {self.base_url}"
                    " (start over with --fresh, or pick another file with --state)",
                    path=self.path,
                )
            else:
                self.base_url = stored
                try:
                    self.config, self.options = read_crawl(conn)
                except ValueError as exc:  # not JSON: a page of the file was overwritten
                    raise StateError(
                        f"state file {self.path} is corrupt: its crawl settings cannot be read",
                        path=self.path,
                    ) from exc
        if new and self.base_url is None:
            raise StateError(f"{self.path} holds no crawl state", path=self.path)
        if conn.execute("PRAGMA journal_mode = WAL").fetchone()[0] != "wal":
            raise StateError(f"cannot use WAL mode for {self.path}", path=self.path)
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute(f"PRAGMA cache_size = -{_CACHE_KIB}")
        conn.execute(f"PRAGMA wal_autocheckpoint = {_CHECKPOINT_PAGES}")
        if new:
            assert self.base_url is not None
            create(conn, self.base_url)
            write_crawl(conn, self.config, None)
        else:
            migrate(conn, self._version)
            self._next_crawl(conn)
        conn.execute("BEGIN")
        self.reclaimed = conn.execute("UPDATE urls SET state = 0 WHERE state = 1").rowcount
        conn.execute("COMMIT")
        counts = dict(conn.execute("SELECT state, count(*) FROM urls GROUP BY state").fetchall())
        self._seen = sum(counts.values())
        self._queued = counts.get(_QUEUED, 0)
        self._done = counts.get(_DONE, 0)

    def _next_crawl(self, conn: sqlite3.Connection) -> None:
        """Opened for a crawl (``base_url`` given) after a finished one: a new crawl begins,
        with this run's config; otherwise the last crawl goes on (or is read)."""
        last = crawl_rows(conn)[-1]
        over = last["status"] == "finished" or (
            last["status"] == "cut"
            and self._max_pages is not None
            and self._max_pages <= last["max_pages"]
        )
        if self._given_base is not None and over:
            start_crawl(conn, self._keep)
            self.new_crawl = True
            self.config, self.options = self._given_config, None
            write_crawl(conn, self.config, None)
        rows = crawl_rows(conn)
        self.crawl = rows[-1]["id"]
        self.previous = rows[-2] if len(rows) > 1 else None

    @contextmanager
    def _guard(self) -> Iterator[None]:
        """SQLite's errors become :class:`StateError`, here and nowhere else (the calls made
        for every page catch them inline, through :meth:`_state_error`)."""
        try:
            yield
        except sqlite3.Error as exc:
            raise self._state_error(exc) from exc

    def _state_error(self, exc: sqlite3.Error) -> StateError:
        error = StateError(f"state file {self.path}: {exc}", path=self.path)
        error.__cause__ = exc  # also when raised in the committer thread (SQLITE_FULL: the CLI)
        return error

    def _connection(self) -> sqlite3.Connection:
        """The connection, once no COMMIT runs (the calls made for every page wait for that
        first, in :meth:`_ready`, without blocking the event loop), every page done written
        (a reader of the pages sees them all)."""
        conn = self._writer()
        if self._stored:
            with self._guard():
                write_pages(conn, self._take_all())
        return conn

    def _writer(self) -> sqlite3.Connection:
        """The connection, once no COMMIT runs, for the calls made for every page (none
        reads the pages: the rows not yet written may wait for the next COMMIT)."""
        if self._conn is None:
            raise RuntimeError("SqliteFrontier used before open() or after close()")
        if self._commits is not None:
            self._commits.wait()
        return self._conn

    def _take_all(self) -> list[tuple[Any, ...]]:
        rows, self._stored = self._stored, []
        return rows

    def _take_stored(self) -> Callable[[sqlite3.Connection], None] | None:
        """What the committer thread writes before its COMMIT: the rows of the pages done
        since the last one (None: none)."""
        if not self._stored:
            return None
        return functools.partial(write_pages, rows=self._take_all())

    async def _ready(self) -> None:
        """Return once no COMMIT runs in the committer thread."""
        if self._commits is not None and self._commits.busy:
            await self._commits.ready()

    @staticmethod
    def _begin(conn: sqlite3.Connection) -> None:
        if not conn.in_transaction:
            conn.execute("BEGIN")

    def _tick(self, conn: sqlite3.Connection, *, force: bool = False) -> None:
        """Commit the open transaction when it is old enough (or ``force``)."""
        if conn.in_transaction:
            now = time.monotonic()
            if force or now - self._last_commit >= self._commit_interval:
                conn.execute("COMMIT")
                self._last_commit = now

    # -- the contract -----------------------------------------------------------------------

    async def add(self, requests: Sequence[Request]) -> int:
        """Queue unseen requests. Not committed here: the transaction is committed with the
        page that found these links (:meth:`mark_done`), so a page is done exactly when its
        links are queued. (The crawler offers each URL once, through its link memo: no memo
        of keys seen is kept here too.)"""
        if not requests:
            return 0
        await self._ready()
        conn = self._writer()
        try:
            if not conn.in_transaction:
                conn.execute("BEGIN")
            before = conn.total_changes
            conn.executemany(
                "INSERT OR IGNORE INTO urls (key, url, depth, state) VALUES (?, ?, ?, 0)",
                [(r.key, r.url, r.depth) for r in requests],
            )
            added = conn.total_changes - before
        except sqlite3.Error as exc:
            raise self._state_error(exc) from exc
        self._seen += added
        self._queued += added
        return added

    async def claim(self, key: str) -> bool:
        await self._ready()
        conn = self._writer()
        with self._guard():
            self._begin(conn)
            cursor = conn.execute(
                "INSERT OR IGNORE INTO urls (key, depth, state) VALUES (?, 0, 3)", (key,)
            )
            self._tick(conn)
        claimed = cursor.rowcount == 1
        self._seen += claimed
        return claimed

    async def next(self) -> Request | None:
        if not self._queued:  # known without a statement: idle workers ask often
            if self._commit_interval:  # idle: a good moment to make everything durable
                await self._ready()
                with self._guard():
                    self._tick(self._connection(), force=True)
            return None
        await self._ready()
        conn = self._writer()
        try:
            if not conn.in_transaction:
                conn.execute("BEGIN")
            row = conn.execute(NEXT_QUEUED).fetchone()
            if row is not None:
                conn.execute(LEASE, (row[0],))
        except sqlite3.Error as exc:
            raise self._state_error(exc) from exc
        if row is None:  # (only if the file was changed behind our back)
            self._queued = 0
            return None
        self._leases[row[1]] = row[0]
        self._queued -= 1
        return Request(url=row[2], key=row[1], depth=row[3])

    async def mark_done(self, request: Request, page: Page | None = None) -> None:
        await self._ready()
        conn = self._writer()
        lease = self._leases.pop(request.key)
        try:
            if not conn.in_transaction:
                conn.execute("BEGIN")
            if page is None:
                conn.execute("UPDATE urls SET state = 0 WHERE id = ?", (lease,))
                self._queued += 1
            elif self._commit_interval:
                write_pages(conn, [(lease, *_ROW(page))])
                self._done += 1
            else:  # written by the committer thread, with the COMMIT this call waits for
                self._stored.append((lease, *_ROW(page)))
                self._done += 1
            if self._commit_interval:
                self._tick(conn)
                return
        except sqlite3.Error as exc:
            raise self._state_error(exc) from exc
        await self._group_commit()

    async def _group_commit(self) -> None:
        """Return once the open transaction is committed. Every page finished in the same
        turn of the event loop shares one COMMIT (a WAL append of each dirty page), run in
        the committer thread (:class:`._sqlite_commit.GroupCommit`) after it wrote their rows
        (:func:`._sqlite_schema.write_pages`, off the event loop: bench/RESULTS.md section 40),
        and none returns before it is durable: a page is done exactly when it is stored."""
        if self._commits is None:
            raise RuntimeError("SqliteFrontier used after close()")
        await self._commits.durable()

    async def is_finished(self) -> bool:
        return not self._queued and not self._leases

    async def stats(self) -> FrontierStats:
        return FrontierStats(
            seen=self._seen, queued=self._queued, in_flight=len(self._leases), done=self._done
        )

    async def save_config(self, config: dict[str, Any]) -> None:
        self.config = config
        await self.save_options(self.options)

    async def save_options(self, options: dict[str, Any] | None) -> None:
        self.options = options
        await self._ready()
        conn = self._connection()
        with self._guard():
            self._begin(conn)
            write_crawl(conn, self.config, options)
            self._tick(conn, force=True)
