"""The SQLite backend beyond the shared contract: its page store, a dead run's leases, the
library's ``state=``. (Bad files and the CLI are in test_state_cli.py.)"""

from __future__ import annotations

import asyncio
import shutil
import sqlite3
import threading
import tracemalloc
from pathlib import Path

import pytest

from servers import ServerThread, expected_paths
from sitecrawl import AsyncCrawler, ConfigError, Page, Request, crawl_site_async
from sitecrawl._cli import main
from sitecrawl.frontier import MemoryFrontier, SqliteFrontier
from sitecrawl.frontier._sqlite import _ROW as store_row
from sitecrawl.frontier._sqlite_schema import legacy_error

BASE = "http://site.test/"


def req(path: str, depth: int = 0) -> Request:
    return Request(url=BASE + path, key="site.test/" + path, depth=depth)


async def test_pages_round_trip_with_every_link(tmp_path: Path) -> None:
    page = Page(
        url=BASE + "a",
        final_url=BASE + "a/",
        status=200,
        content_type="text/html",
        depth=1,
        title="T",
        h1="H",
        first_paragraph="P",
        meta_description="M",
        canonical=BASE + "a",
        outgoing_links=[BASE + "b", "https://other.test/"],
        image_urls=[BASE + "i.png"],
        response_time_ms=1.5,
        size_bytes=99,
        attempts=2,
        redirects=[(BASE + "old-a", 301)],
        in_sitemap=True,
        indexable=False,
        links=[
            (BASE + "b", "to b", None, "a"),
            ("https://other.test/", "other", "nofollow noopener", "a"),
            (BASE + "b", "b again", None, "a"),
            (BASE + "i.png", None, None, "img"),
            (BASE + "s.css", None, "stylesheet", "link"),
        ],
        word_count=42,
        h2=["First", "Second"],
        lang="en",
        hreflang=[("de", BASE + "de/a")],
    )
    failed = Page(
        url=BASE + "c",
        depth=1,
        status=302,
        error="redirect out of scope: https://other.test/",
        error_kind="redirect_out_of_scope",
        location="https://other.test/",
    )
    async with SqliteFrontier(tmp_path / "s.db", base_url=BASE) as store:
        await store.add([req("a", 1), req("c", 1)])
        for stored in (page, failed):
            request = await store.next()
            assert request is not None
            await store.mark_done(request, stored)
    async with SqliteFrontier(tmp_path / "s.db", create=False) as store:
        assert store.base_url == BASE
        pages = list(store.pages())
    assert [p.to_dict() for p in pages] == [page.to_dict(), failed.to_dict()]
    assert pages[0].links == page.links
    with sqlite3.connect(tmp_path / "s.db") as conn:  # the documented layout
        rows = conn.execute("SELECT source, position, target, text, rel, kind FROM links")
        assert [row[1:] for row in rows] == [(n, *link) for n, link in enumerate(page.links)]
        images = conn.execute("SELECT page, position, src, alt FROM images").fetchall()
        assert images == [(1, 3, BASE + "i.png", None)]
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert conn.execute("PRAGMA user_version").fetchone() == (4,)


# The views as schema 2 to 4 made them, before ``links.origin`` (issue 18).
OLD_VIEWS = """
CREATE VIEW links (source, position, target, text, rel, kind) AS
    SELECT p.id, j.key, json_extract(j.value, '$[0]'), json_extract(j.value, '$[1]'),
           json_extract(j.value, '$[2]'), coalesce(json_extract(j.value, '$[3]'), 'a')
    FROM pages AS p, json_each(p.links) AS j;
CREATE VIEW images (page, position, src, alt) AS
    SELECT source, position, target, text FROM links WHERE kind = 'img';
"""


async def test_the_links_view_tells_links_javascript_added(tmp_path: Path) -> None:
    """``links.origin``: ``js`` for an ``a`` link whose target is in the rendered page's
    ``js_links``, else ``html``; a file whose views predate it gets them when opened."""
    rendered = Page(
        url=BASE + "app",
        status=200,
        depth=0,
        rendered=True,
        js_links=[BASE + "b"],
        js_links_added=1,
        links=[
            (BASE, "home", None, "a"),
            (BASE + "b", "b", None, "a"),
            (BASE + "b", "b again", None, "a"),
            (BASE + "b", None, None, "img"),  # not an <a>: its target's origin does not count
        ],
    )
    plain = Page(url=BASE + "c", status=200, depth=1, links=[(BASE + "b", "b", None, "a")])
    path = tmp_path / "s.db"
    async with SqliteFrontier(path, base_url=BASE) as store:
        await store.add([req("app"), req("c", 1)])
        for stored in (rendered, plain):
            request = await store.next()
            assert request is not None
            await store.mark_done(request, stored)
    query = "SELECT source, position, target, kind, origin FROM links ORDER BY source, position"
    expected = [
        (1, 0, BASE, "a", "html"),
        (1, 1, BASE + "b", "a", "js"),
        (1, 2, BASE + "b", "a", "js"),
        (1, 3, BASE + "b", "img", "html"),
        (2, 0, BASE + "b", "a", "html"),
    ]
    with sqlite3.connect(path) as conn:
        assert conn.execute(query).fetchall() == expected
        assert conn.execute("SELECT page, src FROM images").fetchall() == [(1, BASE + "b")]
        conn.executescript("DROP VIEW images; DROP VIEW links;" + OLD_VIEWS)
        assert "origin" not in {row[1] for row in conn.execute("PRAGMA table_info(links)")}
    conn.close()
    async with SqliteFrontier(path, create=False) as store:
        assert [page.url for page in store.pages()] == [BASE + "app", BASE + "c"]
    with sqlite3.connect(path) as conn:
        assert conn.execute(query).fetchall() == expected
        assert conn.execute("SELECT page, src FROM images").fetchall() == [(1, BASE + "b")]
        assert conn.execute("PRAGMA user_version").fetchone() == (4,)
    conn.close()


async def test_leases_of_a_dead_run_are_reclaimed_on_open(tmp_path: Path) -> None:
    live, dead = tmp_path / "live", tmp_path / "dead"
    live.mkdir()
    dead.mkdir()
    store = SqliteFrontier(live / "s.db", base_url=BASE)
    await store.open()
    await store.add([req("a"), req("b"), req("c")])
    a, b = await store.next(), await store.next()
    assert a is not None and b is not None
    await store.mark_done(a, Page(url=a.url))
    # The files as a kill -9 would leave them: b leased, never released.
    for name in ("s.db", "s.db-wal"):
        shutil.copy(live / name, dead / name)
    await store.close()
    async with SqliteFrontier(dead / "s.db", base_url=BASE) as revived:
        assert revived.reclaimed == 1
        stats = await revived.stats()
        assert (stats.done, stats.queued, stats.in_flight) == (1, 2, 0)
        again = await revived.next()
        assert again is not None and again.key == b.key


async def test_each_page_is_in_the_file_when_mark_done_returns(tmp_path: Path) -> None:
    """Thirty requests finish together (their pages share COMMITs, run in the committer
    thread, while others lease and queue): the moment each ``mark_done`` returns, the files
    as a kill -9 would leave them hold its page and the links it queued."""
    live = tmp_path / "live"
    live.mkdir()
    store = SqliteFrontier(live / "s.db", base_url=BASE)
    await store.open()
    await store.add([req(f"p{i}") for i in range(30)])
    snapshots: list[tuple[str, Path]] = []

    async def work(n: int) -> None:
        leased = await store.next()
        assert leased is not None
        await asyncio.sleep(0)
        await store.add([req(f"{leased.key.rsplit('/', 1)[1]}-child", 1)])
        await store.mark_done(leased, Page(url=leased.url, status=200))
        dead = tmp_path / f"dead{n}"  # no await since mark_done returned: as at a kill
        dead.mkdir()
        for name in ("s.db", "s.db-wal"):
            shutil.copy(live / name, dead / name)
        snapshots.append((leased.url, dead / "s.db"))

    async with asyncio.TaskGroup() as group:
        for n in range(30):
            group.create_task(work(n))
    await store.close()
    assert len(snapshots) == 30
    for url, path in snapshots:
        async with SqliteFrontier(path, base_url=BASE) as revived:
            assert url in {page.url for page in revived.pages()}
            child = Request(url=url + "-child", key=url.removeprefix("http://") + "-child")
            assert not await revived.add([child])  # queued with the page


async def test_the_group_commit_runs_off_the_event_loop(tmp_path: Path) -> None:
    commits: list[int] = []
    async with SqliteFrontier(tmp_path / "s.db", base_url=BASE) as store:
        store._connection().set_trace_callback(
            lambda sql: commits.append(threading.get_ident()) if sql == "COMMIT" else None
        )
        await store.add([req("a"), req("b")])
        for _ in range(2):
            leased = await store.next()
            assert leased is not None
            await store.mark_done(leased, Page(url=leased.url, status=200))
        assert len(commits) == 2
        assert threading.get_ident() not in commits
        assert [page.url for page in store.pages()] == [BASE + "a", BASE + "b"]


async def test_the_page_rows_are_written_by_the_committer_thread(tmp_path: Path) -> None:
    """A page's row (links and all: a fifth of a durable crawl's event loop) is written with
    the COMMIT that makes it durable, in the committer thread; a reader of the pages before
    that COMMIT sees it all the same."""
    writers: list[int] = []
    async with SqliteFrontier(tmp_path / "s.db", base_url=BASE) as store:
        store._connection().set_trace_callback(
            lambda sql: writers.append(threading.get_ident()) if "INTO pages" in sql else None
        )
        await store.add([req("a"), req("b"), req("c")])
        for _ in range(2):
            leased = await store.next()
            assert leased is not None
            await store.mark_done(leased, Page(url=leased.url, status=200))
        assert len(writers) == 2 and threading.get_ident() not in writers
        store._stored.append((3, *store_row(Page(url=BASE + "c", status=200))))  # (not yet)
        store._leases.pop("site.test/c", None)
        assert [page.url for page in store.pages()] == [BASE + "a", BASE + "b", BASE + "c"]
        assert writers[-1] == threading.get_ident()  # the reader wrote it first


async def test_a_page_row_that_cannot_be_written_leaves_its_url_to_fetch_again(
    tmp_path: Path,
) -> None:
    """The INSERT of a page fails in the committer thread (here a trigger; a full disk in
    life): its ``mark_done`` raises StateError, and its URL is not done either (all or
    none), so the next run fetches it again; the pages stored before stay."""
    from sitecrawl import StateError

    path = tmp_path / "s.db"
    store = SqliteFrontier(path, base_url=BASE)
    await store.open()
    store._connection().execute(
        "CREATE TEMP TRIGGER boom BEFORE INSERT ON main.pages WHEN NEW.title = 'boom'"
        " BEGIN SELECT RAISE(ABORT, 'no room'); END"
    )
    await store.add([req("a"), req("b")])
    first = await store.next()
    assert first is not None
    await store.mark_done(first, Page(url=first.url, status=200, title="ok"))
    second = await store.next()
    assert second is not None
    with pytest.raises(StateError, match="no room"):
        await store.mark_done(second, Page(url=second.url, status=200, title="boom"))
    await store.close()
    async with SqliteFrontier(path, base_url=BASE) as again:
        assert [page.url for page in again.pages()] == [first.url]
        assert again.reclaimed == 1
        leased = await again.next()
        assert leased is not None and leased.key == second.key


async def test_library_state_resumes_and_counts_max_pages_across_runs(
    site: ServerThread, tmp_path: Path
) -> None:
    state = tmp_path / "crawl.db"
    first = await crawl_site_async(site.url, 4, max_pages=10, state=state)
    assert len(first) == 10
    async with AsyncCrawler(site.url, 4, max_pages=25, state=state) as crawler:
        second = await crawler.crawl()
        assert crawler.stats.resumed == 10
    assert len(second) == 15 and not set(first) & set(second)
    rest = await crawl_site_async(site.url, 4, state=state)
    assert len(first) + len(second) + len(rest) == len(expected_paths(60))
    page_requests = [p for p in site.traffic.paths if p == "/" or p.startswith("/p/")]
    assert sorted(page_requests) == sorted(expected_paths(60))  # none fetched twice
    # The crawl finished: the same call starts crawl 2, whose pages are page_data.
    again = await crawl_site_async(site.url, 4, state=state)
    assert sorted(again) == sorted(set(first) | set(second) | set(rest))
    async with SqliteFrontier(state, create=False) as store:
        assert [(c["id"], c["status"]) for c in store.crawls()] == [
            (1, "finished"),
            (2, "finished"),
        ]
        assert len([page async for page in store.read_pages()]) == len(expected_paths(60))
        assert len(list(store.pages_by_key(1))) == len(expected_paths(60))


def test_frontier_and_state_are_exclusive(tmp_path: Path) -> None:
    with pytest.raises(ConfigError):
        AsyncCrawler("http://site.test/", frontier=MemoryFrontier(), state=tmp_path / "s.db")


# A state file as sitecrawl wrote it with schema 2 (before error_kind and location).
SCHEMA_2 = """
PRAGMA application_id = 1396920919;
CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE urls (id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, url TEXT,
    depth INTEGER NOT NULL, state INTEGER NOT NULL);
CREATE INDEX urls_queue ON urls (depth, id) WHERE state = 0;
CREATE TABLE pages (id INTEGER PRIMARY KEY, final_url TEXT, status INTEGER, content_type TEXT,
    depth INTEGER NOT NULL, title TEXT, h1 TEXT, first_paragraph TEXT, meta_description TEXT,
    canonical TEXT, image_urls TEXT NOT NULL, response_time_ms REAL, size_bytes INTEGER,
    error TEXT, attempts INTEGER NOT NULL, redirects TEXT NOT NULL, in_sitemap INTEGER NOT NULL,
    indexable INTEGER, links TEXT NOT NULL, word_count INTEGER, h2 TEXT, lang TEXT,
    hreflang TEXT);
CREATE VIEW links (source, position, target, text, rel, kind) AS
    SELECT p.id, j.key, json_extract(j.value, '$[0]'), json_extract(j.value, '$[1]'),
           json_extract(j.value, '$[2]'), coalesce(json_extract(j.value, '$[3]'), 'a')
    FROM pages AS p, json_each(p.links) AS j;
CREATE VIEW images (page, position, src, alt) AS
    SELECT source, position, target, text FROM links WHERE kind = 'img';
INSERT INTO meta VALUES ('base_url', 'http://site.test/'), ('created', 'x'), ('sitecrawl', '0');
INSERT INTO urls VALUES (1, 'site.test/', 'http://site.test/', 0, 2),
    (2, 'site.test/private', 'http://site.test/private', 1, 2),
    (3, 'site.test/away', 'http://site.test/away', 1, 2),
    (4, 'site.test/next', 'http://site.test/next', 1, 0);
INSERT INTO pages VALUES
    (1, 'http://site.test/', 200, 'text/html', 0, 'T', 'H', 'P', NULL, NULL, '[]', 1.0, 10,
     NULL, 1, '[]', 0, 1, '[["http://site.test/away","Away",null,"a"]]', 3, '[]', 'en', '[]'),
    (2, NULL, NULL, NULL, 1, NULL, NULL, NULL, NULL, NULL, '[]', NULL, NULL,
     'blocked by robots.txt', 0, '[]', 0, NULL, '[]', NULL, '[]', NULL, '[]'),
    (3, 'http://site.test/away', 302, NULL, 1, NULL, NULL, NULL, NULL, NULL, '[]', 2.0, NULL,
     'redirect out of scope: https://other.test/', 1, '[]', 0, NULL, '[]', NULL, '[]', NULL,
     '[]');
PRAGMA user_version = 2;
"""


async def test_a_schema_2_state_file_is_migrated_to_3_in_place(tmp_path: Path) -> None:
    path = tmp_path / "v2.db"
    with sqlite3.connect(path) as conn:
        conn.executescript(SCHEMA_2)
    conn.close()
    async with SqliteFrontier(path, base_url=BASE) as store:
        old = {page.url: page for page in store.pages()}
        assert old[BASE].title == "T" and old[BASE].error is None
        assert old[BASE].outgoing_links == [BASE + "away"]
        # Kinds of pages stored before schema 3, derived from their (exact) messages.
        assert old[BASE].error_kind is None
        assert old[BASE + "private"].error == "blocked by robots.txt"
        assert old[BASE + "private"].error_kind == "blocked_robots"
        away = old[BASE + "away"]
        assert (away.error_kind, away.location) == ("redirect_out_of_scope", "https://other.test/")
        request = await store.next()  # the queue survived: the crawl resumes
        assert request is not None and request.url == BASE + "next"
        await store.mark_done(
            request,
            Page(url=request.url, status=None, error="timeout", error_kind="timeout", depth=1),
        )
    async with SqliteFrontier(path, create=False) as store:
        pages = {page.url: page for page in store.pages()}
    assert (pages[BASE + "next"].error, pages[BASE + "next"].error_kind) == ("timeout", "timeout")
    assert pages[BASE + "private"].error_kind == "blocked_robots"
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone() == (4,)
        assert conn.execute("SELECT error_kind FROM pages").fetchall() == [
            (None,),
            (None,),
            (None,),
            ("timeout",),
        ]  # no row rewritten: the old ones are read as they were
        columns = [row[1] for row in conn.execute("PRAGMA table_info(pages)")]
        assert columns[23:25] == ["error_kind", "location"]  # after schema 2's 23 columns
        assert conn.execute("SELECT origin FROM links").fetchall() == [("html",)]
    conn.close()


@pytest.mark.parametrize(
    ("error", "kind", "location"),
    [
        ("timeout", "timeout", None),
        ("HTTP 404", "http_status", None),
        ("body cut at 1048576 bytes", "too_large", None),
        ("robots.txt unreachable (HTTP 500)", "robots_unreachable", None),
        ("redirect loop at http://site.test/a", "redirect_loop", None),
        ("more than 10 redirects", "too_many_redirects", None),
        ("redirect out of scope: ftp://x/y", "redirect_out_of_scope", "ftp://x/y"),
        ("could not parse: RecursionError()", "parse", None),
        ("bad response: 400, message='Invalid header'", "protocol", None),
        ("connection failed: Connect call failed ('127.0.0.1', 9)", "connect", None),
        ("server disconnected", "connect", None),
        ("HTTP 404 or so", None, None),  # not a message sitecrawl wrote: no kind made up
        ("a timeout", None, None),
    ],
)
def test_the_kind_of_an_old_error_message(error: str, kind: str, location: str | None) -> None:
    assert legacy_error(error) == (kind, location)


async def test_a_page_column_the_file_lacks_is_added_on_open(tmp_path: Path) -> None:
    """A field added to Page needs no edit of the store: its column is added when an older
    file is opened, and the pages stored before read it as the field's default."""
    path = tmp_path / "s.db"
    async with SqliteFrontier(path, base_url=BASE) as store:
        await store.add([req("a")])
        request = await store.next()
        assert request is not None
        await store.mark_done(request, Page(url=request.url, lang="en", h2=["x"]))
    with sqlite3.connect(path) as conn:  # a file of a sitecrawl without these two fields
        conn.execute("ALTER TABLE pages DROP COLUMN lang")
        conn.execute("ALTER TABLE pages DROP COLUMN h2")
    conn.close()
    async with SqliteFrontier(path, create=False) as store:
        (page,) = store.pages()
    assert (page.lang, page.h2) == (None, [])
    with sqlite3.connect(path) as conn:
        columns = [row[1] for row in conn.execute("PRAGMA table_info(pages)")]
    conn.close()
    assert columns[-2:] == ["h2", "lang"]  # in Page order


def test_export_streams_a_table_from_the_state_file(tmp_path: Path) -> None:
    """``export -t links`` holds a few pages at a time, not the crawl: its peak of allocated
    memory is a small part of what reading every page at once takes."""
    path = tmp_path / "big.db"
    text = "y" * 1000

    async def fill() -> None:
        async with SqliteFrontier(path, base_url=BASE, commit_interval=60) as store:
            await store.add([req(f"p/{i}", 1) for i in range(1500)])
            while (leased := await store.next()) is not None:
                links = [(f"{BASE}p/{j}", text, None, "a") for j in range(20)]
                await store.mark_done(leased, Page(url=leased.url, status=200, links=links))

    async def read_all() -> int:
        async with SqliteFrontier(path, create=False) as store:
            return len([page async for page in store.read_pages()])

    asyncio.run(fill())
    tracemalloc.start()
    try:
        assert asyncio.run(read_all()) == 1500
        _, whole = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        out = tmp_path / "links.jsonl"
        assert main(["export", str(path), "-t", "links", "-o", str(out), "-q"]) == 0
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert out.read_text(encoding="utf-8").count("\n") == 1500 * 20
    assert peak < whole / 4, (peak, whole)


async def _rendered_page_state(path: Path, links: int) -> None:
    """A state file of one rendered page with ``links`` links, JavaScript's every other one."""
    url = "http://site.test/"
    targets = [f"{url}p/{i}" for i in range(links)]
    page = Page(url=url, final_url=url, status=200, rendered=True, js_links=targets[::2])
    page.links = [(target, "t", "", "a") for target in targets]
    page.links.append(("http://site.test/i.png", "", "", "img"))
    async with SqliteFrontier(path, base_url=url) as store:
        await store.add([Request(url=url, key="site.test/")])
        request = await store.next()
        assert request is not None
        await store.mark_done(request, page)


def _view_steps(path: Path) -> int:
    """SQLite virtual-machine steps (in thousands) to read every link with its origin: the
    work the view does, counted, not timed."""
    steps = 0

    def count() -> int:
        nonlocal steps
        steps += 1
        return 0

    conn = sqlite3.connect(path)
    try:
        conn.set_progress_handler(count, 1000)
        rows = conn.execute("SELECT target, kind, origin FROM links").fetchall()
    finally:
        conn.close()
    origins = [origin for _, kind, origin in rows if kind == "a"]
    assert origins == ["js", "html"] * (len(origins) // 2)  # every other one added by JS
    assert rows[-1][1:] == ("img", "html")
    return steps


async def test_the_links_views_origin_is_linear_in_the_links(tmp_path: Path) -> None:
    """Issue 30 (25): ``origin`` read a page's ``js_links`` once per link (quadratic: 99 s for
    one page of 9,947 links). Twice the links must cost about twice the work."""
    await _rendered_page_state(tmp_path / "small.db", 1000)
    await _rendered_page_state(tmp_path / "big.db", 2000)
    small, big = _view_steps(tmp_path / "small.db"), _view_steps(tmp_path / "big.db")
    assert big < 3 * small, (small, big)


#: The ``links`` view sitecrawl wrote before issue 30 (its ``origin`` quadratic).
QUADRATIC_LINKS = """CREATE VIEW links (source, position, target, text, rel, kind, origin) AS
    SELECT p.id, j.key, json_extract(j.value, '$[0]'), json_extract(j.value, '$[1]'),
           json_extract(j.value, '$[2]'), coalesce(json_extract(j.value, '$[3]'), 'a'),
           CASE WHEN p.rendered AND coalesce(json_extract(j.value, '$[3]'), 'a') = 'a'
                     AND json_extract(j.value, '$[0]')
                         IN (SELECT value FROM json_each(p.js_links))
                THEN 'js' ELSE 'html' END
    FROM pages AS p, json_each(p.links) AS j"""


async def test_an_older_links_view_is_replaced_on_opening(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    await _rendered_page_state(path, 1000)
    conn = sqlite3.connect(path)
    conn.executescript(f"DROP VIEW images; DROP VIEW links; {QUADRATIC_LINKS};")
    conn.close()
    async with SqliteFrontier(path, create=False):
        pass
    conn = sqlite3.connect(path)
    try:
        views = dict(conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'view'"))
    finally:
        conn.close()
    assert set(views) == {"links", "images"} and views["links"] != QUADRATIC_LINKS
    await _rendered_page_state(tmp_path / "new.db", 1000)
    assert _view_steps(path) == _view_steps(tmp_path / "new.db")


async def test_an_older_files_options_become_its_stored_config(tmp_path: Path) -> None:
    """Before the stored-crawl codec a file kept its rules (and which credentials, extraction
    rules, rendering) in ``options``, beside what the crawl learnt: opened, the first become
    its ``config`` (which a resume is held to), the rest stay its ``options``."""
    import json

    from sitecrawl import CrawlConfig, Rules
    from sitecrawl._exceptions import ResumeRefused

    path = tmp_path / "old.db"
    base = "http://site.test/"
    async with SqliteFrontier(path, base_url=base) as store:
        await store.add([Request(url=base, key="site.test/")])
    old = {
        "rules": {"exclude": ["x"]},
        "requests": {"headers": [], "cookies": [], "auth": False},
        "start_redirects": {base: "http://www.site.test/"},
    }
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("DELETE FROM meta WHERE name IN ('config', 'options')")
        conn.execute("INSERT INTO meta VALUES ('options', ?)", (json.dumps(old),))
    conn.close()
    async with SqliteFrontier(path, base_url=base) as store:
        assert store.options == {"start_redirects": {base: "http://www.site.test/"}}
        assert store.config == {"rules": old["rules"], "requests": old["requests"]}
    other = CrawlConfig(base_url=base, rules=Rules(exclude=("y",)))
    with pytest.raises(ResumeRefused, match="began with --exclude x, not --exclude y"):
        async with AsyncCrawler(base, config=other, state=path):
            pass
