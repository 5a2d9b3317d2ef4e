"""The SQLite state file's schema and statements, as data (the layout is drawn in
:mod:`._sqlite`'s docstring)."""

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
    hreflang TEXT
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
LEASE_NEXT = (
    "UPDATE urls SET state = 1 WHERE id ="
    " (SELECT id FROM urls WHERE state = 0 ORDER BY depth, id LIMIT 1)"
    " RETURNING id, key, url, depth"
)
PAGE_COLUMNS = (
    "final_url, status, content_type, depth, title, h1, first_paragraph, meta_description, "
    "canonical, image_urls, response_time_ms, size_bytes, error, attempts, redirects, "
    "in_sitemap, indexable, links, word_count, h2, lang, hreflang"
)
