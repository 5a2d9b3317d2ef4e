"""Where monitors are kept: ``DATA/monitors.sqlite``, beside each monitor's crawls in its own
state file ``DATA/monitor-<id>.sitecrawl.db``.

Tables::

    monitors   (id TEXT PRIMARY KEY, created REAL, spec TEXT (JSON, no secret),
                secrets BLOB (encrypted), last_started REAL, last_finished REAL,
                last_crawl INTEGER, last_status TEXT, last_error TEXT)
    deliveries (id INTEGER PRIMARY KEY, monitor TEXT, crawl INTEGER, at REAL, ok INTEGER,
                attempts INTEGER, http_status INTEGER, error TEXT)

Secrets (the webhook URL and its signing secret, the crawl's headers, cookies and auth) are
stored encrypted (Fernet: AES-128-CBC and HMAC-SHA256) with a key kept in ``DATA/monitors.key``
(created once, mode 0600): the database can be copied, backed up or read by the API's code
without a secret in it. A schedule is its spec and ``last_started``: after a restart the next
run is due from the stored last run. ``DATA/monitors.lock`` is held (``flock``) while a
:class:`MonitorStore` is open: a second server on the same data refuses to start instead of
running every monitor twice.
"""

from __future__ import annotations

import fcntl
import json
import os
import sqlite3
import time
from pathlib import Path
from typing import Any

from .._exceptions import MissingExtra, StateError
from ._monitor_spec import MonitorSpec, Secrets

SERVE_HINT = "pip install 'sitecrawl[serve]'"
SCHEMA = """
CREATE TABLE IF NOT EXISTS monitors (
    id TEXT PRIMARY KEY, created REAL NOT NULL, spec TEXT NOT NULL, secrets BLOB NOT NULL,
    last_started REAL, last_finished REAL, last_crawl INTEGER, last_status TEXT,
    last_error TEXT
);
CREATE TABLE IF NOT EXISTS deliveries (
    id INTEGER PRIMARY KEY, monitor TEXT NOT NULL, crawl INTEGER, at REAL NOT NULL,
    ok INTEGER NOT NULL, attempts INTEGER NOT NULL, http_status INTEGER, error TEXT
);
CREATE INDEX IF NOT EXISTS deliveries_monitor ON deliveries (monitor, id);
"""
#: Deliveries kept per monitor (the oldest go).
KEEP_DELIVERIES = 100


def _key(path: Path) -> bytes:
    """The data directory's encryption key, made (mode 0600, whole or not at all) when it
    has none."""
    try:
        from cryptography.fernet import Fernet
    except ImportError:
        raise MissingExtra(f"monitors need cryptography: {SERVE_HINT}", extra="serve") from None
    try:
        return path.read_bytes().strip()
    except FileNotFoundError:
        pass
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(Fernet.generate_key())
        out.flush()
        os.fsync(out.fileno())
    try:
        os.link(temp, path)  # the first writer's key wins; a racing one reads it
    except FileExistsError:
        pass
    finally:
        temp.unlink()
    return path.read_bytes().strip()


class MonitorStore:
    """The monitors of one data directory (open: :meth:`open`; :meth:`close`)."""

    def __init__(self, data_dir: str | os.PathLike[str]) -> None:
        self.data = Path(data_dir)
        self._conn: sqlite3.Connection | None = None
        self._lock: int | None = None
        self._fernet: Any = None

    def open(self) -> MonitorStore:
        from cryptography.fernet import Fernet

        self.data.mkdir(parents=True, exist_ok=True)
        self._fernet = Fernet(_key(self.data / "monitors.key"))
        lock = os.open(self.data / "monitors.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(lock)
            raise StateError(
                f"{self.data}: another server runs these monitors", path=str(self.data)
            ) from None
        self._lock = lock
        conn = sqlite3.connect(self.data / "monitors.sqlite", isolation_level=None)
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA journal_mode=WAL")
        conn.executescript(SCHEMA)
        self._conn = conn
        return self

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        if self._lock is not None:
            os.close(self._lock)  # (the flock goes with it)
            self._lock = None

    @property
    def conn(self) -> sqlite3.Connection:
        assert self._conn is not None, "the store is not open"
        return self._conn

    def state_path(self, monitor: str) -> Path:
        return self.data / f"monitor-{monitor}.sitecrawl.db"

    # -- monitors -------------------------------------------------------------------------

    def add(self, monitor: str, spec: MonitorSpec, secrets: Secrets) -> None:
        sealed = self._fernet.encrypt(json.dumps(secrets.to_dict()).encode())
        self.conn.execute(
            "INSERT INTO monitors (id, created, spec, secrets) VALUES (?, ?, ?, ?)",
            (monitor, time.time(), json.dumps(spec.to_dict()), sealed),
        )

    def remove(self, monitor: str) -> bool:
        with self.conn:
            gone = self.conn.execute("DELETE FROM monitors WHERE id = ?", (monitor,)).rowcount
            self.conn.execute("DELETE FROM deliveries WHERE monitor = ?", (monitor,))
        return bool(gone)

    def rows(self) -> list[sqlite3.Row]:
        return list(self.conn.execute("SELECT * FROM monitors ORDER BY created DESC, id"))

    def row(self, monitor: str) -> sqlite3.Row | None:
        found: sqlite3.Row | None = self.conn.execute(
            "SELECT * FROM monitors WHERE id = ?", (monitor,)
        ).fetchone()
        return found

    def secrets(self, row: sqlite3.Row) -> Secrets:
        return Secrets.from_dict(json.loads(self._fernet.decrypt(row["secrets"])))

    def started(self, monitor: str, when: float) -> None:
        self.conn.execute(
            "UPDATE monitors SET last_started = ?, last_status = 'running', last_error = NULL"
            " WHERE id = ?",
            (when, monitor),
        )

    def finished(self, monitor: str, *, crawl: int | None, status: str, error: str | None) -> None:
        self.conn.execute(
            "UPDATE monitors SET last_finished = ?, last_crawl = coalesce(?, last_crawl),"
            " last_status = ?, last_error = ? WHERE id = ?",
            (time.time(), crawl, status, error, monitor),
        )

    # -- deliveries -----------------------------------------------------------------------

    def delivered(
        self,
        monitor: str,
        crawl: int | None,
        *,
        ok: bool,
        attempts: int,
        http_status: int | None,
        error: str | None,
    ) -> None:
        with self.conn:
            self.conn.execute(
                "INSERT INTO deliveries (monitor, crawl, at, ok, attempts, http_status, error)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (monitor, crawl, time.time(), int(ok), attempts, http_status, error),
            )
            self.conn.execute(
                "DELETE FROM deliveries WHERE monitor = ? AND id NOT IN (SELECT id FROM"
                " deliveries WHERE monitor = ? ORDER BY id DESC LIMIT ?)",
                (monitor, monitor, KEEP_DELIVERIES),
            )

    def deliveries(self, monitor: str, limit: int = 20) -> list[dict[str, Any]]:
        rows = self.conn.execute(
            "SELECT crawl, at, ok, attempts, http_status, error FROM deliveries"
            " WHERE monitor = ? ORDER BY id DESC LIMIT ?",
            (monitor, limit),
        )
        return [{**dict(row), "ok": bool(row["ok"])} for row in rows]
