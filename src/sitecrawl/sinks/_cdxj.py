"""A WACZ's capture index (``indexes/index.cdx``): one CDXJ line a response or revisit of the
archive's segments, sorted, as pywb and ReplayWeb.page look them up.

The lines are kept in SQLite's private temporary database (as the capture index is,
:mod:`._captures`) and read back sorted by SQLite's external sorter: a package's index is
made in bounded memory whatever the crawl's size (the lines of a million pages, ~250 MB,
were a Python list, then joined into one string, at close). The first capture of each URL
(what a gathered WACZ's page list dates its pages by) is a lookup in the same database.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

#: SQLite's page cache (KiB) for the lines, and what its sorter may hold before spilling.
CACHE_KIB = 16384
_WWW = re.compile(r"^www\d*\.")
_DEFAULT_PORTS = {"http": 80, "https": 443}


def surt_key(url: str) -> str:
    """The SURT form of ``url`` that CDXJ indexes sort by and pywb looks up (as the ``surt``
    package writes it for ordinary URLs): ``com,example)/a?b=1&c=2``."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    host = _WWW.sub("", host)
    if ":" not in host:  # IPv6 stays as it is
        host = ",".join(reversed(host.split(".")))
    try:
        port = parts.port
    except ValueError:
        port = None
    if port is not None and port != _DEFAULT_PORTS.get(parts.scheme):
        host += f":{port}"
    key = f"{host}){parts.path or '/'}"
    if parts.query:
        key += "?" + "&".join(sorted(parts.query.split("&")))
    return key.lower()


def timestamp14(warc_date: str) -> str:
    """``20261203133636`` from a WARC-Date."""
    return re.sub(r"\D", "", warc_date)[:14]


class CdxjIndex:
    """The CDXJ lines of the segments :meth:`add`-ed, read back sorted (:meth:`lines`)."""

    def __init__(self, cache_kib: int = CACHE_KIB) -> None:
        self._db = sqlite3.connect("", isolation_level=None)
        self._db.executescript(
            f"PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;"
            f" PRAGMA cache_size = -{int(cache_kib)};"
            " CREATE TABLE lines (line TEXT NOT NULL, url TEXT NOT NULL, stamp TEXT NOT NULL);"
            " CREATE TABLE listed (url TEXT PRIMARY KEY) WITHOUT ROWID;"
        )
        self._by_url = False
        #: Lines, and the bytes of all of them (the index's size, known before it is read).
        self.count = self.size = 0

    def add(self, path: str, filename: str) -> None:
        """Index the responses and revisits of the WARC file ``path``, named ``filename`` in
        the package."""
        self._db.execute("BEGIN")
        self._db.executemany("INSERT INTO lines VALUES (?, ?, ?)", self._counted(path, filename))
        self._db.execute("COMMIT")

    def _counted(self, path: str, filename: str) -> Iterator[tuple[str, str, str]]:
        for entry in _index_lines(path, filename):
            self.count += 1
            self.size += len(entry[0].encode())
            yield entry

    def lines(self) -> Iterator[str]:
        """Every line, sorted (each ends with a newline)."""
        for (line,) in self._db.execute("SELECT line FROM lines ORDER BY line"):
            yield line

    def first_capture(self, url: str) -> str | None:
        """The 14-digit timestamp of ``url``'s first capture (None: not captured)."""
        if not self._by_url:  # (made once, when first asked: a crawl's WACZ never asks)
            self._db.execute("CREATE INDEX lines_url ON lines (url, stamp)")
            self._by_url = True
        row = self._db.execute("SELECT min(stamp) FROM lines WHERE url = ?", (url,)).fetchone()
        return row[0] if row is not None else None

    def list_once(self, url: str) -> bool:
        """Whether ``url`` was not listed yet (it is now): a page list names a URL once."""
        return self._db.execute("INSERT OR IGNORE INTO listed VALUES (?)", (url,)).rowcount == 1

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> CdxjIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _index_lines(path: str, filename: str) -> Iterator[tuple[str, str, str]]:
    """The CDXJ lines of a segment's responses and revisits: (line, URL, timestamp)."""
    from warcio.archiveiterator import ArchiveIterator

    with open(path, "rb") as stream:
        records = ArchiveIterator(stream)
        for record in records:
            if record.rec_type not in ("response", "revisit"):
                continue
            headers = record.rec_headers
            url = headers.get_header("WARC-Target-URI")
            http = record.http_headers
            fields: dict[str, Any] = {"url": url}
            if http is not None:
                fields["mime"] = (http.get_header("Content-Type") or "").split(";")[0].strip()
                fields["status"] = http.get_statuscode()
            if record.rec_type == "revisit":
                fields["mime"] = "warc/revisit"
            if digest := headers.get_header("WARC-Payload-Digest"):
                fields["digest"] = digest
            fields["length"] = records.get_record_length()
            fields["offset"] = records.get_record_offset()
            fields["filename"] = filename
            date = timestamp14(headers.get_header("WARC-Date"))
            yield f"{surt_key(url)} {date} {json.dumps(fields)}\n", url, date
