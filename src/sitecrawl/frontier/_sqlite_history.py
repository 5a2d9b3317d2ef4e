"""The history of crawls in a state file (schema 4): ``crawls`` lists them, ``urls`` and
``pages`` hold the current one (the last), ``history`` the pages of the earlier ones by
``(crawl, key)``. A new crawl moves the current pages to ``history`` in the transaction that
begins it, so the frontier of a crawl is the same as in a file of one crawl."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Generator, Iterator
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from typing import Any

from .._models import Page
from .._pagecodec import COLUMN_TYPES, decode
from ._sqlite_schema import (
    PAGE_COLUMNS,
    SCHEMA_VERSION,
    SELECT_PAGES,
    legacy_error,
    now,
    read_meta,
)

#: How the codec stores a list: a diff reads such a column as its length.
_LISTS = ("list", "tuples")

#: A crawl's pages in ``key`` order (for a merge of two crawls): the current crawl's, or one
#: kept in ``history`` (``WHERE crawl = ?``).
SELECT_CURRENT_BY_KEY = (
    "SELECT u.key AS key, u.url AS url, {} FROM urls u JOIN pages p ON p.id = u.id"
    " ORDER BY u.key".format(", ".join("p." + name for name in PAGE_COLUMNS))
)
SELECT_HISTORY_BY_KEY = "SELECT key, url, {} FROM history WHERE crawl = ? ORDER BY key".format(
    ", ".join(PAGE_COLUMNS)
)
ARCHIVE_CURRENT = (
    "INSERT INTO history (crawl, key, url, {}) SELECT ?, u.key, u.url, {}"
    " FROM pages p JOIN urls u ON u.id = p.id".format(
        ", ".join(PAGE_COLUMNS), ", ".join("p." + name for name in PAGE_COLUMNS)
    )
)


def crawl_rows(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    """Every crawl the file keeps, oldest first, as dicts of the ``crawls`` columns."""
    cursor = conn.execute(
        "SELECT id, started, finished, status, seconds, max_pages FROM crawls ORDER BY id"
    )
    names = [column[0] for column in cursor.description]
    return [dict(zip(names, values, strict=True)) for values in cursor]


def start_crawl(conn: sqlite3.Connection, keep: int | None) -> int:
    """In one transaction: the current crawl's pages go to ``history``, ``urls`` and ``pages``
    are emptied, and a new crawl begins; with ``keep``, only the last ``keep`` crawls (the new
    one included) stay. Returns the new crawl's id."""
    current = conn.execute("SELECT max(id) FROM crawls").fetchone()[0]
    conn.execute("BEGIN")
    conn.execute(ARCHIVE_CURRENT, (current,))
    conn.execute("DELETE FROM pages")
    conn.execute("DELETE FROM urls")
    new = conn.execute(
        "INSERT INTO crawls (id, started, status) VALUES (?, ?, 'running') RETURNING id",
        (current + 1, now()),
    ).fetchone()[0]
    if keep is not None:
        conn.execute("DELETE FROM history WHERE crawl <= ?", (new - keep,))
        conn.execute("DELETE FROM crawls WHERE id <= ?", (new - keep,))
    conn.execute("COMMIT")
    return int(new)


def page_in(conn: sqlite3.Connection, crawl: int, key: str) -> Page | None:
    """The page of ``key`` in kept crawl ``crawl``, or None."""
    cursor = conn.execute(
        SELECT_HISTORY_BY_KEY.replace("ORDER BY key", "AND key = ?"), (crawl, key)
    )
    values = cursor.fetchone()
    if values is None:
        return None
    names = [column[0] for column in cursor.description]
    return decode(dict(zip(names, values, strict=True)))


def by_key(conn: sqlite3.Connection, crawl: int | None) -> Iterator[tuple[str, Page]]:
    """``(url key, page)`` of crawl ``crawl`` (None: the current one) in key order, read as
    the rows come. Pages a file kept from before schema 3 get the ``error_kind`` their message
    implies."""
    legacy = int(read_meta(conn).get("upgraded_from", SCHEMA_VERSION)) < 3
    if crawl is None:
        cursor = conn.execute(SELECT_CURRENT_BY_KEY)
    else:
        cursor = conn.execute(SELECT_HISTORY_BY_KEY, (crawl,))
    names = [column[0] for column in cursor.description]
    for values in cursor:
        record = dict(zip(names, values, strict=True))
        page = decode(record)
        if legacy and page.error is not None and page.error_kind is None:
            page.error_kind, page.location = legacy_error(page.error)
        yield record["key"], page


def diff_rows(
    conn: sqlite3.Connection, crawl: int | None, columns: tuple[str, ...]
) -> Iterator[tuple[Any, ...]]:
    """``(key, url, *columns)`` of every page of crawl ``crawl`` (None: the current one) in
    key order, a list (``redirects``) as its length: what a diff reads, without the links."""
    picked = ", ".join(
        f"json_array_length({{0}}{name})" if COLUMN_TYPES[name] in _LISTS else f"{{0}}{name}"
        for name in columns
    )
    if crawl is None:
        sql = f"SELECT u.key, u.url, {picked.format('p.')} FROM urls u JOIN pages p"
        yield from conn.execute(sql + " ON p.id = u.id ORDER BY u.key")
    else:
        sql = f"SELECT key, url, {picked.format('')} FROM history WHERE crawl = ? ORDER BY key"
        yield from conn.execute(sql, (crawl,))


def referrers(
    conn: sqlite3.Connection, crawl: int | None, targets: list[str], most: int
) -> dict[str, tuple[list[str], int, int]]:
    """For each URL of ``targets``, the pages of crawl ``crawl`` (None: the current one)
    linking to it (the first ``most``), how many pages and how many links in all, through the
    ``links`` JSON arrays."""
    found: dict[str, list[str]] = {}
    pages: dict[str, int] = {}
    links: dict[str, int] = {}
    target = "json_extract(j.value, '$[0]')"
    for start in range(0, len(targets), 500):
        chunk = targets[start : start + 500]
        marks = ", ".join("?" * len(chunk))
        if crawl is None:
            sql = (
                f"SELECT u.url, {target} AS t, COUNT(*) FROM urls u JOIN pages p ON p.id = u.id,"
                f" json_each(p.links) j WHERE t IN ({marks}) GROUP BY u.id, t ORDER BY u.id"
            )
            params: tuple[Any, ...] = tuple(chunk)
        else:
            sql = (
                f"SELECT h.url, {target} AS t, COUNT(*) FROM history h, json_each(h.links) j"
                f" WHERE h.crawl = ? AND t IN ({marks}) GROUP BY h.rowid, t ORDER BY h.rowid"
            )
            params = (crawl, *chunk)
        for source, linked, n in conn.execute(sql, params):
            first = found.setdefault(linked, [])
            pages[linked] = pages.get(linked, 0) + 1
            links[linked] = links.get(linked, 0) + n
            if len(first) < most:
                first.append(source)
    return {url: (first, pages[url], links[url]) for url, first in found.items()}


class CrawlHistory:
    """:class:`~sitecrawl.frontier.SqliteFrontier`'s reading of the crawls a file keeps and
    ending of the current one (the methods past the frontier contract)."""

    crawl: int
    previous: dict[str, Any] | None

    def _connection(self) -> sqlite3.Connection:
        raise NotImplementedError

    def _writer(self) -> sqlite3.Connection:
        raise NotImplementedError

    def _guard(self) -> AbstractContextManager[None]:
        raise NotImplementedError

    def _tick(self, conn: sqlite3.Connection, *, force: bool = False) -> None:
        raise NotImplementedError

    async def _ready(self) -> None:
        raise NotImplementedError

    def _begin(self, conn: sqlite3.Connection) -> None:
        raise NotImplementedError

    async def crawl_seconds(self) -> float | None:
        """How long the current crawl ran, every run of it together."""
        with self._guard():
            seconds = (
                self._connection()
                .execute("SELECT seconds FROM crawls WHERE id = ?", (self.crawl,))
                .fetchone()
            )
        return float(seconds[0]) if seconds and seconds[0] is not None else None

    def add_crawl_time(self, seconds: float) -> None:
        """Add one run's duration to ``crawl_seconds`` (the report's duration and rate)."""
        conn = self._connection()
        with self._guard():
            self._begin(conn)
            conn.execute(
                "INSERT INTO meta VALUES ('crawl_seconds', ?) ON CONFLICT (name) DO UPDATE"
                " SET value = CAST(value AS REAL) + excluded.value",
                (round(seconds, 3),),
            )
            conn.execute(
                "UPDATE crawls SET seconds = coalesce(seconds, 0) + ? WHERE id = ?",
                (round(seconds, 3), self.crawl),
            )
            self._tick(conn, force=True)

    async def previous_page(self, key: str) -> Page | None:
        """The previous crawl's page of ``key``, or None (no previous crawl kept, or the URL
        was not in it)."""
        if self.previous is None:
            return None
        await self._ready()  # not while a COMMIT runs
        with self._guard():  # (an earlier crawl's: the current pages need not be written)
            return page_in(self._writer(), self.previous["id"], key)

    def diff_rows(
        self, crawl: int, columns: tuple[str, ...]
    ) -> Generator[tuple[Any, ...], None, None]:
        """``(key, url, *columns)`` of crawl ``crawl``'s pages in key order (a diff's side)."""
        with self._guard():
            current = None if crawl == self.crawl else crawl
            yield from diff_rows(self._connection(), current, columns)

    def referrers(
        self, crawl: int, targets: list[str], most: int = 20
    ) -> dict[str, tuple[list[str], int, int]]:
        """The pages of crawl ``crawl`` linking to each of ``targets``: the first ``most``,
        how many distinct pages and how many links in all."""
        with self._guard():
            current = None if crawl == self.crawl else crawl
            return referrers(self._connection(), current, targets, most)

    def crawls(self) -> list[dict[str, Any]]:
        """The crawls the file keeps, oldest first: ``id``, ``started``, ``finished`` (ISO
        8601, None until finished), ``status`` (``running`` or ``finished``), ``seconds``."""
        with self._guard():
            return crawl_rows(self._connection())

    async def finish(self, cut_at: int | None = None) -> None:
        """The current crawl ran to its end, or to ``cut_at`` pages (``max_pages``) with URLs
        left: the next crawl opening the file starts a new one (a cut crawl resumes when the
        run opening it allows more pages, or any number)."""
        await self._ready()
        conn = self._connection()
        with self._guard():
            if not conn.in_transaction:
                conn.execute("BEGIN")
            conn.execute(
                "UPDATE crawls SET status = ?, finished = ?, max_pages = ? WHERE id = ?",
                (
                    "finished" if cut_at is None else "cut",
                    datetime.now(UTC).isoformat(timespec="seconds"),
                    cut_at,
                    self.crawl,
                ),
            )
            self._tick(conn, force=True)

    def pages_by_key(self, crawl: int | None = None) -> Iterator[tuple[str, Page]]:
        """``(url key, page)`` of every page of crawl ``crawl`` (default: the current one) in
        key order, read as the rows come (a merge of two crawls holds two pages at a time)."""
        with self._guard():
            current = crawl is None or crawl == self.crawl
            yield from by_key(self._connection(), None if current else crawl)

    def pages(self) -> Iterator[Page]:
        """Every stored page, once each, in discovery order (for exports and resumed outputs),
        read as the rows come. Pages a file kept from before schema 3 get the ``error_kind``
        (and ``location``) their message implies (:func:`._sqlite_schema.legacy_error`)."""
        conn = self._connection()
        with self._guard():
            legacy = int(read_meta(conn).get("upgraded_from", SCHEMA_VERSION)) < 3
            cursor = conn.execute(SELECT_PAGES)
            names = [column[0] for column in cursor.description]
            for values in cursor:
                page = decode(dict(zip(names, values, strict=True)))
                if legacy and page.error is not None and page.error_kind is None:
                    page.error_kind, page.location = legacy_error(page.error)
                yield page

    async def read_pages(self) -> AsyncIterator[Page]:
        """:meth:`pages`, for :class:`~sitecrawl.frontier.PageStore`: the rows are read as
        they are iterated, through SQLite's cursor."""
        for page in self.pages():
            yield page

    def meta(self) -> dict[str, str]:
        """The file's ``meta`` table: ``base_url``, ``created``, ``crawl_seconds``, ..."""
        with self._guard():
            return read_meta(self._connection())

    async def read_meta(self) -> dict[str, str]:
        return self.meta()
