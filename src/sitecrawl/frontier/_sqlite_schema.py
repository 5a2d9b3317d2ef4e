"""The SQLite state file as a format: its schema and statements, and the functions that
recognise, create, migrate and empty a file (the layout is drawn in :mod:`._sqlite`'s
docstring). Every function raises :class:`~sitecrawl.StateError` for a file it cannot use."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime

from .._exceptions import StateError
from .._version import __version__

APPLICATION_ID = 0x53435257  # "SCRW"
SCHEMA_VERSION = 3

SCHEMA = """
CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE urls (
    id INTEGER PRIMARY KEY,
    key TEXT NOT NULL UNIQUE,
    url TEXT,
    depth INTEGER NOT NULL,
    state INTEGER NOT NULL
);
CREATE INDEX urls_queue ON urls (depth, id) WHERE state = 0;
CREATE TABLE pages (
    id INTEGER PRIMARY KEY,
    final_url TEXT,
    status INTEGER,
    content_type TEXT,
    depth INTEGER NOT NULL,
    title TEXT,
    h1 TEXT,
    first_paragraph TEXT,
    meta_description TEXT,
    canonical TEXT,
    image_urls TEXT NOT NULL,
    response_time_ms REAL,
    size_bytes INTEGER,
    error TEXT,
    attempts INTEGER NOT NULL,
    redirects TEXT NOT NULL,
    in_sitemap INTEGER NOT NULL,
    indexable INTEGER,
    links TEXT NOT NULL,
    word_count INTEGER,
    h2 TEXT,
    lang TEXT,
    hreflang TEXT,
    error_kind TEXT,
    location TEXT
);
"""
# Views: recreated by the migration from schema 1.
VIEWS = """
CREATE VIEW links (source, position, target, text, rel, kind) AS
    SELECT p.id, j.key, json_extract(j.value, '$[0]'), json_extract(j.value, '$[1]'),
           json_extract(j.value, '$[2]'), coalesce(json_extract(j.value, '$[3]'), 'a')
    FROM pages AS p, json_each(p.links) AS j;
CREATE VIEW images (page, position, src, alt) AS
    SELECT source, position, target, text FROM links WHERE kind = 'img';
"""
MIGRATE_FROM_1 = """
ALTER TABLE pages ADD COLUMN word_count INTEGER;
ALTER TABLE pages ADD COLUMN h2 TEXT;
ALTER TABLE pages ADD COLUMN lang TEXT;
ALTER TABLE pages ADD COLUMN hreflang TEXT;
DROP VIEW links;
"""
MIGRATE_FROM_2 = """
ALTER TABLE pages ADD COLUMN error_kind TEXT;
ALTER TABLE pages ADD COLUMN location TEXT;
"""
LEASE_NEXT = (
    "UPDATE urls SET state = 1 WHERE id ="
    " (SELECT id FROM urls WHERE state = 0 ORDER BY depth, id LIMIT 1)"
    " RETURNING id, key, url, depth"
)
PAGE_COLUMNS = (
    "final_url, status, content_type, depth, title, h1, first_paragraph, meta_description, "
    "canonical, image_urls, response_time_ms, size_bytes, error, attempts, redirects, "
    "in_sitemap, indexable, links, word_count, h2, lang, hreflang, error_kind, location"
)


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
            ("created", datetime.now(UTC).isoformat(timespec="seconds")),
            ("sitecrawl", __version__),
        ],
    )
    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    conn.execute("COMMIT")


def migrate(conn: sqlite3.Connection, version: int) -> None:
    """Schema 1 or 2 -> 3 in one transaction (columns added, views recreated, no row
    rewritten)."""
    conn.execute("BEGIN")
    if version < 2:
        _run_script(conn, MIGRATE_FROM_1 + VIEWS)
    _run_script(conn, MIGRATE_FROM_2)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    conn.execute("COMMIT")


def drop_all(conn: sqlite3.Connection) -> None:
    """Empty a state file (``--fresh``): every table and view goes."""
    objects = conn.execute(
        "SELECT type, name FROM sqlite_master WHERE type IN ('table', 'view')"
        " ORDER BY type = 'table'"
    ).fetchall()
    conn.execute("BEGIN")
    for kind, name in objects:  # views first: they name the tables
        conn.execute(f'DROP {kind.upper()} "{name}"')
    conn.execute("COMMIT")


def read_meta(conn: sqlite3.Connection) -> dict[str, str]:
    return dict(conn.execute("SELECT name, value FROM meta").fetchall())


def _run_script(conn: sqlite3.Connection, script: str) -> None:
    """Each statement of ``script`` in the open transaction (``executescript`` would commit)."""
    for statement in script.split(";"):
        if statement.strip():
            conn.execute(statement)
