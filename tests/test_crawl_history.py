"""A state file keeps a history of crawls: a run after a finished crawl starts the next one,
an interrupted crawl resumes, older files become crawl 1, ``--keep`` bounds the history."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path

import pytest

from sitecrawl import Page, Request
from sitecrawl._cli import main
from sitecrawl.frontier import SqliteFrontier
from test_audit_cli import SCHEMA_1
from test_sqlite_store import BASE, SCHEMA_2


def old_file(path: Path, *, finished: bool) -> Path:
    with sqlite3.connect(path) as conn:
        conn.executescript(SCHEMA_2)
        if finished:
            conn.execute("DELETE FROM urls WHERE state = 0")
    conn.close()
    return path


async def test_a_schema_2_file_becomes_crawl_1_and_a_crawl_after_it_starts_crawl_2(
    tmp_path: Path,
) -> None:
    path = old_file(tmp_path / "v2.db", finished=True)
    async with SqliteFrontier(path, create=False) as store:  # read: no new crawl
        assert [(c["id"], c["status"]) for c in store.crawls()] == [(1, "finished")]
        assert store.crawl == 1 and len(list(store.pages())) == 3
    async with SqliteFrontier(path, base_url=BASE) as store:  # a crawl: crawl 2 begins
        assert store.new_crawl and store.crawl == 2
        assert store.previous is not None and store.previous["id"] == 1
        assert list(store.pages()) == [] and (await store.stats()).seen == 0
        old = dict(store.pages_by_key(1))
        assert sorted(old) == ["site.test/", "site.test/away", "site.test/private"]
        assert old["site.test/private"].error_kind == "blocked_robots"  # legacy kinds derived
        assert old["site.test/"].outgoing_links == [BASE + "away"]
        await store.add([Request(url=BASE, key="site.test/")])
        request = await store.next()
        assert request is not None
        await store.mark_done(request, Page(url=BASE, status=200, title="T2"))
        await store.finish()
    async with SqliteFrontier(path, create=False) as store:
        assert [c["status"] for c in store.crawls()] == ["finished", "finished"]
        assert [p.title for p in store.pages()] == ["T2"]
        assert [key for key, _ in store.pages_by_key()] == ["site.test/"]


async def test_an_unfinished_old_file_resumes_as_crawl_1(tmp_path: Path) -> None:
    path = old_file(tmp_path / "v2.db", finished=False)
    async with SqliteFrontier(path, base_url=BASE) as store:
        assert not store.new_crawl and store.crawl == 1 and store.previous is None
        request = await store.next()
        assert request is not None and request.url == BASE + "next"


async def test_keep_bounds_the_history_and_fresh_forgets_it(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    for n in range(4):
        async with SqliteFrontier(path, base_url=BASE, keep=2) as store:
            assert store.crawl == n + 1
            await store.add([Request(url=BASE, key="site.test/")])
            request = await store.next()
            assert request is not None
            await store.mark_done(request, Page(url=BASE, status=200, title=str(n)))
            await store.finish()
    async with SqliteFrontier(path, create=False) as store:
        assert [c["id"] for c in store.crawls()] == [3, 4]
        assert [p.title for _, p in store.pages_by_key(3)] == ["2"]
        assert list(store.pages_by_key(2)) == []
    async with SqliteFrontier(path, base_url=BASE, fresh=True) as store:
        assert store.crawl == 1 and store.previous is None
        assert [c["id"] for c in store.crawls()] == [1]


async def test_fresh_replaces_the_file_whatever_its_size(tmp_path: Path) -> None:
    """``fresh`` makes a new file in the old one's place (dropping a big file's tables freed
    each of its pages, ~1 s per 100 MB; the file kept its size)."""
    path = tmp_path / "s.db"
    links = [(f"{BASE}p{n}", "text " * 20, None, "a") for n in range(100)]
    async with SqliteFrontier(path, base_url=BASE) as store:
        await store.add([Request(url=f"{BASE}{n}", key=f"site.test/{n}") for n in range(500)])
        while (request := await store.next()) is not None:
            await store.mark_done(request, Page(url=request.url, status=200, links=links))
    big = path.stat().st_size
    assert big > 5_000_000
    async with SqliteFrontier(path, base_url=BASE, fresh=True) as store:
        assert list(store.pages()) == [] and (await store.stats()).seen == 0
        await store.add([Request(url=BASE, key="site.test/")])
        request = await store.next()
        assert request is not None
        await store.mark_done(request, Page(url=BASE, status=200))
    assert path.stat().st_size < big / 20
    async with SqliteFrontier(path, create=False) as store:
        assert [page.url for page in store.pages()] == [BASE]


async def test_a_crawl_cut_at_max_pages_resumes_only_when_allowed_more(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.db"
    async with SqliteFrontier(path, base_url=BASE) as store:
        await store.add([Request(url=BASE, key="a"), Request(url=BASE + "b", key="b")])
        request = await store.next()
        assert request is not None
        await store.mark_done(request, Page(url=BASE, status=200))
        await store.finish(cut_at=1)
    async with SqliteFrontier(path, base_url=BASE, max_pages=5) as store:
        assert store.crawl == 1  # allowed more: the cut crawl goes on
    async with SqliteFrontier(path, base_url=BASE, max_pages=1) as store:
        assert store.crawl == 2 and store.new_crawl  # the same cap: the next crawl


async def test_a_schema_1_file_becomes_crawl_1(tmp_path: Path) -> None:
    path = tmp_path / "v1.db"
    with sqlite3.connect(path) as conn:
        conn.executescript(SCHEMA_1)
    conn.close()
    async with SqliteFrontier(path, create=False) as store:
        crawls = store.crawls()
        assert [c["id"] for c in crawls] == [1]
        pages = list(store.pages())
    async with SqliteFrontier(path, create=False) as store:
        assert [key for key, _ in store.pages_by_key(1)] == sorted(
            key for key, _ in store.pages_by_key()
        )
        assert len(list(store.pages_by_key())) == len(pages)


@pytest.mark.parametrize("schema", [1, 2])
def test_an_old_file_diffs_as_crawl_1(
    schema: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``sitecrawl diff`` of an old file's crawl and a crawl after it (not finished: said so)."""
    path = tmp_path / f"v{schema}.db"
    with sqlite3.connect(path) as conn:
        conn.executescript(SCHEMA_1 if schema == 1 else SCHEMA_2)
        conn.execute("DELETE FROM urls WHERE id NOT IN (SELECT id FROM pages)")  # finished
    conn.close()
    base = "http://old.test/" if schema == 1 else BASE

    async def crawl_2() -> None:
        async with SqliteFrontier(path, base_url=base) as store:
            assert store.crawl == 2
            await store.add([Request(url=base, key=base.removeprefix("http://"))])
            request = await store.next()
            assert request is not None
            await store.mark_done(request, Page(url=base, status=200, title="T2", h1="H"))

    asyncio.run(crawl_2())
    out = tmp_path / "d.jsonl"
    assert main(["diff", str(path), "-o", str(out), "--fail-on", "title"]) == 1
    assert "crawl 1 -> crawl 2 (running): " in capsys.readouterr().err
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    title = [(row["url"], row["old"], row["new"]) for row in rows if row["kind"] == "title"]
    assert title == [(base, "T", "T2")]
    removed = sorted(row["url"] for row in rows if row["kind"] == "removed")
    assert removed == ([] if schema == 1 else [BASE + "away", BASE + "private"])
