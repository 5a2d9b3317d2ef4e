"""Group commit for the SQLite frontier, the COMMIT itself in a thread of its own.

The pages finished in one turn of the event loop share one COMMIT (:meth:`GroupCommit.durable`
returns once the caller's writes are committed). A COMMIT appends every page it changed to the
WAL: the largest part of what the state file costs the event loop, and SQLite runs it without
Python's GIL. So it runs in a committer thread while the event loop goes on fetching and
parsing; the connection is used by one thread at a time: until the COMMIT ends, the frontier's
calls wait for it (:meth:`GroupCommit.ready` on the event loop; :meth:`GroupCommit.wait` where
a call cannot wait asynchronously), and no write joins a transaction being committed.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import sqlite3
import threading
from collections.abc import Callable

from .._exceptions import StateError

#: Writes the committer thread makes before a COMMIT (the rows of the pages it commits).
Work = Callable[[sqlite3.Connection], None]


class GroupCommit:
    """Commits of ``conn``'s open transaction; ``error`` turns SQLite's errors into
    :class:`StateError`; ``before``, called on the event loop as a COMMIT is begun, gives
    what the thread writes first (None: nothing). The committer thread starts with the
    first COMMIT."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        error: Callable[[sqlite3.Error], StateError],
        before: Callable[[], Work | None] | None = None,
    ) -> None:
        self._conn = conn
        self._error = error
        self._before = before
        self._waiters: list[asyncio.Future[None]] = []
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        #: Set while no COMMIT runs in the thread.
        self._idle = threading.Event()
        self._idle.set()
        #: The end of the COMMIT running, as the event loop sees it.
        self._ended: asyncio.Future[None] | None = None
        self._closed = False

    @property
    def busy(self) -> bool:
        """True while a COMMIT runs (or its end is not yet seen by the event loop)."""
        return self._ended is not None

    async def ready(self) -> None:
        """Return once no COMMIT runs: the connection is the event loop's."""
        while self._ended is not None:
            await asyncio.shield(self._ended)

    def wait(self) -> None:
        """Block until no COMMIT runs (for calls that cannot wait asynchronously)."""
        if not self._idle.is_set():  # (is_set takes no lock: this is called for every page)
            self._idle.wait()

    async def durable(self) -> None:
        """Return once the writes made so far are committed: with the others of this turn of
        the event loop, in one COMMIT."""
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[None] = loop.create_future()
        self._waiters.append(waiter)
        if len(self._waiters) == 1 and self._ended is None:
            loop.call_soon(self._start)
        await waiter

    def _start(self) -> None:
        if self._ended is not None or not self._waiters:
            return  # the COMMIT running starts the next one when it ends
        waiters, self._waiters = self._waiters, []
        work = self._before() if self._before is not None and not self._closed else None
        if self._closed or not self._conn.in_transaction:  # committed meanwhile
            _settle(waiters, None)
            return
        loop = asyncio.get_running_loop()
        self._ended = loop.create_future()
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="sitecrawl-commit", daemon=True)
            self._thread.start()
        self._idle.clear()
        self._jobs.put((loop, waiters, work))

    def _run(self) -> None:  # the committer thread
        while (job := self._jobs.get()) is not None:
            loop, waiters, work = job
            error: BaseException | None = None
            try:
                if work is not None:  # (the writes of the pages it commits)
                    work(self._conn)
                self._conn.execute("COMMIT")
            except BaseException as exc:
                error = exc
            self._idle.set()
            with contextlib.suppress(RuntimeError):  # a closed event loop: nobody waits
                loop.call_soon_threadsafe(self._end, waiters, error)

    def _end(self, waiters: list[asyncio.Future[None]], exc: BaseException | None) -> None:
        ended, self._ended = self._ended, None
        if ended is not None:
            ended.set_result(None)
        if exc is None:
            _settle(waiters, None)
        elif isinstance(exc, sqlite3.Error):
            _settle(waiters, self._error(exc))
        else:  # not SQLite's: a bug, for every waiter to see
            for waiter in waiters:
                if not waiter.done():
                    waiter.set_exception(exc)
        if self._waiters:  # (no write joins a COMMIT running: none waits here)
            self._start()

    def close(self, error: StateError | None) -> None:
        """The connection's last COMMIT is made (``error``: it failed): tell whoever still
        waits, and end the thread."""
        self.wait()
        self._closed = True
        waiters, self._waiters = self._waiters, []
        _settle(waiters, error)
        if self._thread is not None:
            self._jobs.put(None)
            self._thread.join()


_Job = tuple[asyncio.AbstractEventLoop, list[asyncio.Future[None]], "Work | None"]


def _settle(waiters: list[asyncio.Future[None]], error: StateError | None) -> None:
    for waiter in waiters:
        if waiter.done():  # its caller was cancelled
            continue
        if error is None:
            waiter.set_result(None)
        else:
            waiter.set_exception(error)
