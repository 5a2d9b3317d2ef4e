"""What an archive has captured, by URL and by payload digest: what its revisits refer to.

The index lives in SQLite's private temporary database (``sqlite3.connect("")``): its pages
stay in a bounded cache (:data:`CACHE_KIB`) and spill to a file in the system's temporary
directory that SQLite has already unlinked, so the archive's memory stays flat with the
crawl's size (a Python dict of them held ~420 bytes a page, bench/RESULTS.md section 37) and
nothing is left behind, not even after ``kill -9``. It need not outlive the run: an archive
rebuilds it from its closed segments when it is opened. A WACZ's page list keeps the URLs it
has listed here too. One user: the archive's writer process.
"""

from __future__ import annotations

import sqlite3

from ._warc_records import Capture

#: SQLite's page cache for the index (KiB): ~150 bytes a capture stay cached up to ~50,000.
CACHE_KIB = 8192

_SCHEMA = """
PRAGMA journal_mode = OFF;
PRAGMA synchronous = OFF;
PRAGMA cache_size = -{cache};
CREATE TABLE urls (url TEXT PRIMARY KEY, uri TEXT, date TEXT, record_id TEXT) WITHOUT ROWID;
CREATE TABLE digests (digest TEXT PRIMARY KEY, uri TEXT, date TEXT, record_id TEXT)
    WITHOUT ROWID;
CREATE TABLE listed (url TEXT PRIMARY KEY) WITHOUT ROWID;
"""


class CaptureIndex:
    """URL -> its last capture, payload digest -> its first capture; the URLs listed."""

    def __init__(self, cache_kib: int = CACHE_KIB) -> None:
        self._db = sqlite3.connect("", isolation_level=None)
        self._db.executescript(_SCHEMA.format(cache=int(cache_kib)))

    def by_url(self, url: str) -> Capture | None:
        """The last capture of ``url`` (None: not captured)."""
        return self._find("SELECT uri, date, record_id FROM urls WHERE url = ?", url)

    def by_digest(self, digest: str) -> Capture | None:
        """The first capture of a payload with ``digest`` (None: none)."""
        return self._find("SELECT uri, date, record_id FROM digests WHERE digest = ?", digest)

    def _find(self, query: str, key: str) -> Capture | None:
        row = self._db.execute(query, (key,)).fetchone()
        return Capture(*row) if row is not None else None

    def note(self, url: str, capture: Capture, digest: str | None = None) -> None:
        """``url``'s last capture is ``capture``; with ``digest``, the payload's first
        capture unless it has one. Written in a transaction left open until :meth:`commit`
        (a statement's own transaction cost twice the statement: bench/RESULTS.md section
        39); the index's own reads see it."""
        if not self._db.in_transaction:
            self._db.execute("BEGIN")
        self._db.execute(
            "INSERT OR REPLACE INTO urls VALUES (?, ?, ?, ?)",
            (url, capture.uri, capture.date, capture.record_id),
        )
        if digest is not None:
            self._db.execute(
                "INSERT OR IGNORE INTO digests VALUES (?, ?, ?, ?)",
                (digest, capture.uri, capture.date, capture.record_id),
            )

    def list_once(self, url: str) -> bool:
        """Whether ``url`` was not listed yet (it is now)."""
        if not self._db.in_transaction:
            self._db.execute("BEGIN")
        cursor = self._db.execute("INSERT OR IGNORE INTO listed VALUES (?)", (url,))
        return cursor.rowcount == 1

    def commit(self) -> None:
        """End the open transaction (nothing need outlive the run: this only keeps it short)."""
        if self._db.in_transaction:
            self._db.execute("COMMIT")

    def close(self) -> None:
        self._db.close()
