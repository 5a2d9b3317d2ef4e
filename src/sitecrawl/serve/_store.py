"""The server's bookkeeping: one SQLite file in the data directory, beside the crawls' own
state files (``DATA/<id>.sitecrawl.db``, the frontier and pages of each crawl).

Layout (``DATA/server.sqlite``)::

    crawls (id TEXT PRIMARY KEY,        12 hex digits; the state file is DATA/<id>.sitecrawl.db
            seq INTEGER UNIQUE,         creation order (the list is newest first)
            url TEXT, options TEXT,     the start URL; the options as given, JSON, without the
                                        credentials (never stored here: see _options.SECRETS)
            secrets TEXT,               JSON list of the credentials' names only ("auth", ...)
            status TEXT,                queued running paused finished failed cancelled
            created, started, finished  Unix times (NULL until then)
            pages, queued, errors,      the last counts seen (pages done, URLs queued, failed)
            error TEXT)                 why it failed, or what it waits for

A crawl's row is written when it is created and whenever its status changes, and its counts
every few seconds while it runs: a server killed mid-crawl finds its crawls ``running`` on
restart and runs them on from their state files (whose own durability is the frontier's).
WAL, ``synchronous = NORMAL``: a killed process loses nothing committed. One server uses a
data directory at a time: it holds ``DATA/server.lock`` (``flock``, dropped by the OS when the
process dies, ``kill -9`` included).
"""

from __future__ import annotations

import fcntl
import json
import os
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from .._exceptions import StateError

STATUSES = ("queued", "running", "paused", "finished", "failed", "cancelled")
#: The statuses a crawl ends in (it runs again only when resumed).
ENDED = ("finished", "failed", "cancelled")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS crawls (
    id TEXT PRIMARY KEY,
    seq INTEGER UNIQUE NOT NULL,
    url TEXT NOT NULL,
    options TEXT NOT NULL,
    secrets TEXT NOT NULL,
    status TEXT NOT NULL,
    created REAL NOT NULL,
    started REAL,
    finished REAL,
    pages INTEGER NOT NULL DEFAULT 0,
    queued INTEGER NOT NULL DEFAULT 0,
    errors INTEGER NOT NULL DEFAULT 0,
    error TEXT
)
"""
_COLUMNS = (
    "id",
    "seq",
    "url",
    "options",
    "secrets",
    "status",
    "created",
    "started",
    "finished",
    "pages",
    "queued",
    "errors",
    "error",
)


@dataclass(slots=True)
class CrawlRecord:
    """One crawl as the server keeps it (a row of ``crawls``)."""

    id: str
    seq: int
    url: str
    options: dict[str, Any]
    secrets: list[str]
    status: str
    created: float
    started: float | None = None
    finished: float | None = None
    pages: int = 0
    queued: int = 0
    errors: int = 0
    error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def row(self) -> tuple[Any, ...]:
        values = {
            name: getattr(self, name) for name in _COLUMNS if name not in ("options", "secrets")
        }
        values["options"] = json.dumps(self.options)
        values["secrets"] = json.dumps(self.secrets)
        return tuple(values[name] for name in _COLUMNS)


class ServerStore:
    """The ``crawls`` table of ``DATA/server.sqlite`` (see the module docstring)."""

    def __init__(self, data: str) -> None:
        self.data = data
        self.path = os.path.join(data, "server.sqlite")
        try:
            os.makedirs(data, exist_ok=True)
            self._lock = open(os.path.join(data, "server.lock"), "a+b")  # noqa: SIM115
        except OSError as exc:
            raise StateError(f"cannot use {data}: {exc}", path=data) from None
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self._lock.close()
            raise StateError(f"another sitecrawl serve uses {data}", path=data) from None
        try:
            self._conn = sqlite3.connect(self.path, isolation_level=None)
            self._conn.execute("PRAGMA journal_mode = WAL")
            self._conn.execute("PRAGMA synchronous = NORMAL")
            self._conn.execute(_SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            raise StateError(f"cannot open {self.path}: {exc}", path=self.path) from None

    def state_path(self, crawl_id: str) -> str:
        """Where the crawl's own state (frontier and pages) lives."""
        return os.path.join(self.data, f"{crawl_id}.sitecrawl.db")

    def next_seq(self) -> int:
        (found,) = self._conn.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM crawls").fetchone()
        return int(found)

    def save(self, record: CrawlRecord) -> None:
        marks = ", ".join("?" * len(_COLUMNS))
        self._conn.execute(
            f"INSERT OR REPLACE INTO crawls ({', '.join(_COLUMNS)}) VALUES ({marks})",
            record.row(),
        )

    def delete(self, crawl_id: str) -> None:
        self._conn.execute("DELETE FROM crawls WHERE id = ?", (crawl_id,))

    def records(self) -> Iterator[CrawlRecord]:
        """Every crawl, oldest first."""
        cursor = self._conn.execute(f"SELECT {', '.join(_COLUMNS)} FROM crawls ORDER BY seq")
        for values in cursor.fetchall():
            row = dict(zip(_COLUMNS, values, strict=True))
            row["options"] = json.loads(row["options"])
            row["secrets"] = json.loads(row["secrets"])
            yield CrawlRecord(**row)

    def close(self) -> None:
        self._conn.close()
        self._lock.close()  # (the lock goes with it)
