"""The SQLite state file as a format: its schema and statements, and the functions that
recognise, create, migrate and empty a file. Every function raises
:class:`~sitecrawl.StateError` for a file it cannot use. (:mod:`._sqlite` is the frontier
that reads and writes it.)

Layout (``PRAGMA application_id`` = 0x53435257 "SCRW", ``PRAGMA user_version`` = schema 4)::

    meta   (name TEXT PRIMARY KEY, value TEXT)            base_url, created, sitecrawl version,
                                                          crawl_seconds (all runs together),
                                                          upgraded_from (an older file's schema),
                                                          config (JSON: the stored crawl, see
                                                          sitecrawl.frontier._stored), options
                                                          (JSON: what it learnt as it went)
    urls   (id INTEGER PRIMARY KEY,                       discovery order
            key TEXT UNIQUE NOT NULL,                     url_key(): the seen set
            url TEXT,                                     NULL for keys only claimed
            depth INTEGER NOT NULL,
            state INTEGER NOT NULL)                       0 queued, 1 leased, 2 done, 3 claimed
           INDEX urls_queue (depth, id) WHERE state = 0   the queue, breadth-first
    pages  (id INTEGER PRIMARY KEY,                       = urls.id of the page's request
            final_url, status, ..., links)                the page codec's columns, by name
                                                          (sitecrawl._pagecodec): every Page
                                                          field but url (in urls) and
                                                          outgoing_links (derived from links);
                                                          lists as JSON arrays: image_urls,
                                                          redirects [[url, status], ...], h2,
                                                          hreflang [[lang, url], ...], links
                                                          [[target, text, rel, kind], ...]
    VIEW links (source, position, target, text, rel,      every link, duplicates included:
                kind, origin)                             pages.links through json_each(); kind
                                                          a, img, link, script or iframe;
                                                          origin js for an a link whose target
                                                          is in the page's js_links, else html
    VIEW images (page, position, src, alt)                the links of kind img (text: the alt)
    crawls (id INTEGER PRIMARY KEY, started, finished,    the crawls the file keeps; the last
            status, seconds, max_pages)                   is current (in urls and pages);
                                                          status running, finished or cut
                                                          (ended at max_pages pages)
    history (crawl, key, url, <the pages columns>)        earlier crawls' pages,
           UNIQUE INDEX history_key (crawl, key)          moved there when a crawl begins

A page's links are one JSON array in its row, not one row each: a page is one insert however
many links it has (not an insert and a B-tree entry per link), and the ``links`` view still
answers ``SELECT target, text FROM links WHERE rel LIKE '%nofollow%'``. ``outgoing_links`` are
the links' distinct targets in order, so they are not stored twice.

An older file is migrated when opened, in one transaction: every page column it lacks is
added (``ALTER TABLE ADD COLUMN``, NULL for the pages already stored: not measured, rather than
a made-up 0), views that lack a column are recreated (schema 1's had no link kinds, schema 4's
before rendering no ``origin``: a change of views alone keeps the schema number, so an older
sitecrawl still reads the file), and before schema 4 the file's crawl becomes crawl 1
(finished when nothing was left to fetch); a link array of three items is an ``a`` link. No
stored row is rewritten, so the migration is instant whatever the file's size. Pages stored
before schema 3 have no ``error_kind``: it is derived on reading from their ``error`` message,
which only one kind of failure could write. A newer schema is refused.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
from datetime import UTC, datetime
from typing import Any

from .._exceptions import ERROR_KINDS, StateError
from .._pagecodec import COLUMN_TYPES, COLUMNS, COMPRESSED, OPTIONAL
from .._version import __version__

APPLICATION_ID = 0x53435257  # "SCRW"
SCHEMA_VERSION = 4


def _sql_type(name: str) -> str:
    """The declared type of page column ``name``, from its :class:`Page` field's type."""
    sql = {"int": "INTEGER", "float": "REAL", "bool": "INTEGER"}.get(COLUMN_TYPES[name], "TEXT")
    if name in COMPRESSED or COLUMN_TYPES[name] == "bytes":
        sql = "BLOB"  # a zstd frame (the page codec's), or bytes
    return sql if name in OPTIONAL else sql + " NOT NULL"


#: The ``pages`` table's columns besides ``id``: the page codec's, but ``url`` (in ``urls``).
PAGE_COLUMNS: tuple[str, ...] = tuple(name for name in COLUMNS if name != "url")
PAGES_TABLE = "CREATE TABLE pages (\n    id INTEGER PRIMARY KEY,\n{}\n);\n".format(
    ",\n".join(f"    {name} {_sql_type(name)}" for name in PAGE_COLUMNS)
)
# Schema 4: the history of crawls. ``urls`` and ``pages`` hold the current crawl (the last row of
# ``crawls``); when a new crawl starts, the current one's pages move to ``history``.
HISTORY = """
CREATE TABLE crawls (
    id INTEGER PRIMARY KEY,
    started TEXT NOT NULL,
    finished TEXT,
    status TEXT NOT NULL,
    seconds REAL,
    max_pages INTEGER
);
CREATE TABLE history (
    crawl INTEGER NOT NULL,
    key TEXT NOT NULL,
    url TEXT,
{}
);
CREATE UNIQUE INDEX history_key ON history (crawl, key);
""".format(  # an archive: a column may be NULL (added to pages after their rows were)
    ",\n".join(f"    {name} {_sql_type(name).removesuffix(' NOT NULL')}" for name in PAGE_COLUMNS)
)
SCHEMA = (
    """
CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE urls (
    id INTEGER PRIMARY KEY,
    key TEXT NOT NULL UNIQUE,
    url TEXT,
    depth INTEGER NOT NULL,
    state INTEGER NOT NULL
);
CREATE INDEX urls_queue ON urls (depth, id) WHERE state = 0;
"""
    + PAGES_TABLE
    + HISTORY
)
# Views: recreated by the migration when the file's differ (:func:`_views_stale`).
# ``origin``: ``js`` for an ``a`` link whose target JavaScript added (``--render``: the page's
# ``js_links``), else ``html`` (the export's links table calls it ``source``; here ``source``
# is the page, as it was from schema 1). The ``js_links`` of every rendered page are read once
# into a table SQLite indexes for the join (an automatic index): each link is one lookup. (An
# ``IN (SELECT ... FROM json_each(p.js_links))`` per link read a page's ``js_links`` once for
# each of its links: 134 s for one page of 10,000 links, bench/RESULTS.md section 17.)
VIEWS = """
CREATE VIEW links (source, position, target, text, rel, kind, origin) AS
    WITH js (page, target) AS MATERIALIZED (
        SELECT DISTINCT p.id, v.value FROM pages AS p, json_each(p.js_links) AS v
        WHERE p.rendered)
    SELECT p.id, j.key, json_extract(j.value, '$[0]'), json_extract(j.value, '$[1]'),
           json_extract(j.value, '$[2]'), coalesce(json_extract(j.value, '$[3]'), 'a'),
           CASE WHEN js.page IS NOT NULL AND coalesce(json_extract(j.value, '$[3]'), 'a') = 'a'
                THEN 'js' ELSE 'html' END
    FROM pages AS p, json_each(p.links) AS j
    LEFT JOIN js ON js.page = p.id AND js.target = json_extract(j.value, '$[0]');
CREATE VIEW images (page, position, src, alt) AS
    SELECT source, position, target, text FROM links WHERE kind = 'img';
"""
# A lease: the queue's first URL (breadth-first, through ``urls_queue``), then marked leased by
# its id. Two statements: one ``UPDATE ... RETURNING`` cost 3-5x more (30-43 against 5.5-11
# us, alone), SQLite keeping what RETURNING returns in an ephemeral table with a pager of its
# own, made and dropped for every lease (bench/RESULTS.md section 42).
NEXT_QUEUED = "SELECT id, key, url, depth FROM urls WHERE state = 0 ORDER BY depth, id LIMIT 1"
LEASE = "UPDATE urls SET state = 1 WHERE id = ?"
INSERT_PAGE = "INSERT INTO pages (id, {}) VALUES (?{})".format(
    ", ".join(PAGE_COLUMNS), ", ?" * len(PAGE_COLUMNS)
)
SELECT_PAGES = (
    "SELECT u.url AS url, {} FROM pages p JOIN urls u ON u.id = p.id ORDER BY p.id".format(
        ", ".join("p." + name for name in PAGE_COLUMNS)
    )
)


def check_writable(path: str, *, create: bool) -> None:
    """A :class:`StateError` saying so when the state file ``path`` or its folder is
    read-only: SQLite writes to the file, and beside it (``-wal``, ``-shm``), even to read it,
    and says only "disk I/O error" or "unable to open database file". ``create``: the caller
    crawls (may create it), so another file or none is the way out; else a copy."""
    folder = os.path.dirname(os.path.abspath(path))
    beside = all(os.path.exists(path + suffix) for suffix in ("-wal", "-shm"))
    if os.path.exists(path) and not os.access(path, os.W_OK):
        problem = f"state file {path} is read-only"
    elif not os.access(folder, os.W_OK) and not (os.path.exists(path) and beside):
        what = "state file" if os.path.exists(path) else "cannot create state file"
        problem = f"{what} {path}: its folder {folder} is read-only"
    else:
        return
    way_out = (
        "pick a writable one with --state PATH, or none: crawl --no-state"
        if create
        else "SQLite writes to a state file and beside it even to read it: copy it somewhere"
        " writable"
    )
    raise StateError(f"{problem} ({way_out})", path=path)


def inspect(conn: sqlite3.Connection, path: str) -> tuple[bool, int]:
    """``(is the file empty, its schema version)``; raise :class:`StateError` unless it is
    sitecrawl state this version can read. Reads only: the file is left as it was."""
    try:
        app_id = conn.execute("PRAGMA application_id").fetchone()[0]
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        tables = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
    except sqlite3.OperationalError as exc:
        if exc.sqlite_errorname.startswith("SQLITE_BUSY"):
            raise StateError(
                f"state file {path} is locked: another crawl is using it", path=path
            ) from exc
        raise StateError(f"cannot read state file {path}: {exc}", path=path) from exc
    except sqlite3.DatabaseError as exc:
        raise StateError(
            f"{path} is not a sitecrawl state file (corrupt, or not SQLite: {exc})", path=path
        ) from exc
    if app_id == 0 and version == 0 and tables == 0:
        return True, version
    if app_id != APPLICATION_ID or version < 1:
        raise StateError(
            f"{path} is not a sitecrawl state file (an SQLite database of something else)",
            path=path,
        )
    if version > SCHEMA_VERSION:
        raise StateError(
            f"state file {path} has schema {version}, newer than this sitecrawl"
            f" {__version__} reads ({SCHEMA_VERSION}); upgrade sitecrawl",
            path=path,
        )
    return False, version


def create(conn: sqlite3.Connection, base_url: str) -> None:
    """Lay out an empty file for a crawl of ``base_url``."""
    conn.execute("BEGIN")
    _run_script(conn, SCHEMA + VIEWS)
    conn.executemany(
        "INSERT INTO meta VALUES (?, ?)",
        [
            ("base_url", base_url),
            ("created", now()),
            ("sitecrawl", __version__),
        ],
    )
    conn.execute("INSERT INTO crawls (id, started, status) VALUES (1, ?, 'running')", (now(),))
    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    conn.execute("COMMIT")


def migrate(conn: sqlite3.Connection, version: int) -> None:
    """Bring a file to :data:`SCHEMA_VERSION` and the page codec's columns, in one
    transaction (nothing to do, nothing written): each page column the file lacks is added
    (``ALTER TABLE ADD COLUMN``: NULL, so no row is rewritten and the migration is instant
    whatever the file's size), and views that lack a column are recreated (a view stores
    no rows: instant too; a link array of three items is an ``a`` link). ``meta`` remembers
    the schema an upgraded file had (``upgraded_from``): the error kinds of its older pages
    are derived on reading (:func:`legacy_error`)."""
    tables = ("pages", "history") if version >= 4 else ("pages",)
    missing = [
        (table, name)
        for table in tables
        for have in [{row[1] for row in conn.execute(f"PRAGMA table_info({table})")}]
        for name in PAGE_COLUMNS
        if name not in have
    ]
    stale = _views_stale(conn)
    if version == SCHEMA_VERSION and not missing and not stale:
        return
    conn.execute("BEGIN")
    for table, name in missing:
        sql_type = _sql_type(name).removesuffix(" NOT NULL")
        conn.execute(f"ALTER TABLE {table} ADD COLUMN {name} {sql_type}")
    if version < 4:
        _run_script(conn, HISTORY)
        _first_crawl(conn)
    if stale:
        conn.execute("DROP VIEW IF EXISTS images")  # it reads links
        conn.execute("DROP VIEW IF EXISTS links")
        _run_script(conn, VIEWS)
    conn.execute("INSERT OR IGNORE INTO meta VALUES ('upgraded_from', ?)", (str(version),))
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    conn.execute("COMMIT")


def _views_stale(conn: sqlite3.Connection) -> bool:
    """Whether the file's views differ from :data:`VIEWS` (schema 1's ``links`` had no
    ``kind``; before issue 18's ``origin``, no ``origin``; before issue 30's, its ``origin``
    was quadratic): their SQL tells."""
    have = dict(conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'view'"))
    want = [statement.strip() for statement in VIEWS.split(";") if statement.strip()]
    return [have.get(name) for name in ("links", "images")] != want


# What sitecrawl wrote as ``error`` before schema 3 stored its kind, message by message: each
# message was made by one exception class only, so the kind read from it is exact. (A DNS
# failure was a "connection failed" then, like a refused connection: it reads as ``connect``.)
_LEGACY_ERRORS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), kind)
    for pattern, kind in (
        (r"blocked by robots\.txt", "blocked_robots"),
        (r"robots\.txt unreachable .*", "robots_unreachable"),
        (r"timeout", "timeout"),
        (r"HTTP \d{3}", "http_status"),
        (r"body cut at \d+ bytes", "too_large"),
        (r"redirect out of scope: (?P<location>.*)", "redirect_out_of_scope"),
        (r"redirect loop at .*", "redirect_loop"),
        (r"more than \d+ redirects", "too_many_redirects"),
        (r"could not parse: .*", "parse"),
        (r"bad response: .*", "protocol"),
        (r"(connection failed: |connection error: |request failed: ).*", "connect"),
        (r"server disconnected", "connect"),
    )
)
assert all(kind in ERROR_KINDS for _, kind in _LEGACY_ERRORS)


def legacy_error(error: str) -> tuple[str | None, str | None]:
    """``(error_kind, location)`` of a page stored before schema 3, from its ``error``
    message; ``(None, None)`` for a message sitecrawl did not write."""
    for pattern, kind in _LEGACY_ERRORS:
        if (match := pattern.fullmatch(error)) is not None:
            return kind, match.groupdict().get("location")
    return None, None


def _first_crawl(conn: sqlite3.Connection) -> None:
    """A file from before schema 4 holds one crawl: it becomes crawl 1, finished when nothing
    is left to fetch (what a finished crawl left then), with the file's creation time and its
    ``crawl_seconds``."""
    meta = read_meta(conn)
    left = conn.execute("SELECT count(*) FROM urls WHERE state IN (0, 1)").fetchone()[0]
    done = conn.execute("SELECT count(*) FROM pages").fetchone()[0]
    finished = not left and done > 0
    conn.execute(
        "INSERT INTO crawls (id, started, finished, status, seconds) VALUES (1, ?, ?, ?, ?)",
        (
            meta.get("created", now()),
            meta.get("created") if finished else None,
            "finished" if finished else "running",
            float(meta["crawl_seconds"]) if meta.get("crawl_seconds") else None,
        ),
    )


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def read_meta(conn: sqlite3.Connection) -> dict[str, str]:
    return dict(conn.execute("SELECT name, value FROM meta").fetchall())


#: What a crawl learns as it goes (``options``), beside its stored ``config``.
_LEARNT = ("start_redirects",)


def read_crawl(conn: sqlite3.Connection) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """The stored crawl's ``config`` (:func:`sitecrawl.frontier._stored.encode`'s dict) and
    ``options`` (what it learnt). A file of an older version kept its config (rules, which
    credentials, extraction rules, rendering) in ``options``: it gets its ``config`` row."""
    meta = read_meta(conn)
    options = json.loads(meta.get("options", "null"))
    if "config" in meta or not isinstance(options, dict):
        return json.loads(meta.get("config", "null")), options
    learnt = {name: value for name, value in options.items() if name in _LEARNT}
    config = {name: value for name, value in options.items() if name not in _LEARNT}
    write_crawl(conn, config or None, learnt or None)
    return config or None, learnt or None


def write_crawl(
    conn: sqlite3.Connection, config: dict[str, Any] | None, options: dict[str, Any] | None
) -> None:
    """Replace the stored crawl's ``config`` and ``options`` (None: none)."""
    conn.execute("DELETE FROM meta WHERE name IN ('config', 'options')")
    for name, value in (("config", config), ("options", options)):
        if value is not None:
            conn.execute("INSERT INTO meta VALUES (?, ?)", (name, json.dumps(value)))


def _run_script(conn: sqlite3.Connection, script: str) -> None:
    """Each statement of ``script`` in the open transaction (``executescript`` would commit)."""
    for statement in script.split(";"):
        if statement.strip():
            conn.execute(statement)


def write_pages(conn: sqlite3.Connection, rows: list[tuple[Any, ...]]) -> None:
    """Store the pages ``rows`` (each the request's id, then its row) and mark their URLs
    done, all or none of them: a URL is done exactly when its page is stored, even when the
    INSERT fails (a full disk) and the transaction around it is committed later."""
    conn.execute("SAVEPOINT pages")
    try:
        conn.executemany(INSERT_PAGE, rows)
        conn.executemany("UPDATE urls SET state = 2 WHERE id = ?", [(row[0],) for row in rows])
    except BaseException:
        conn.execute("ROLLBACK TO pages")
        raise
    finally:
        conn.execute("RELEASE pages")
