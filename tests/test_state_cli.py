"""The CLI's state file: where it goes, resume, export, and files it must refuse untouched."""

from __future__ import annotations

import asyncio
import csv
import json
import sqlite3
from pathlib import Path

import pytest

from conftest import ServeFn
from servers import ServerThread, expected_paths, site_app
from sitecrawl._cli import main
from sitecrawl.frontier import SqliteFrontier
from sitecrawl.sinks import CSV_COLUMNS


@pytest.fixture(autouse=True)
def _in_tmp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def jsonl(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def page_fetches(site: ServerThread) -> list[str]:
    return [p for p in site.traffic.paths if p == "/" or p.startswith("/p/")]


def snapshot(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


def test_state_goes_to_host_file_by_default_and_a_rerun_resumes(
    site: ServerThread, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["crawl", site.url, "-n", "10", "-o", "first.jsonl"]) == 0
    default = f"127.0.0.1_{site.port}.sitecrawl.db"
    assert (tmp_path / default).is_file()
    err = capsys.readouterr().err
    assert f"state: {default}\n" in err and "resum" not in err
    # Same command, higher cap: resumes; -n counts every run's pages; the output is whole.
    assert main(["crawl", site.url, "-n", "25", "-o", "second.jsonl", "-o", "second.csv"]) == 0
    err = capsys.readouterr().err
    assert "resuming crawl 1: 10 pages done" in err
    assert "resumed after 10 pages: 15 pages in" in err
    assert len(page_fetches(site)) == 25
    first, second = jsonl(tmp_path / "first.jsonl"), jsonl(tmp_path / "second.jsonl")
    assert len({r["url"] for r in second}) == len(second) == 25
    assert [r["url"] for r in second[:10]] == sorted(
        (r["url"] for r in first), key=[r["url"] for r in second].index
    )
    assert {r["url"] for r in first} <= {r["url"] for r in second}
    with (tmp_path / "second.csv").open(encoding="utf-8", newline="") as handle:
        assert len(list(csv.DictReader(handle))) == 25
    # Run to the end: nothing is fetched twice. Once more: crawl 2 fetches every page again.
    assert main(["crawl", site.url, "-q"]) == 0
    assert sorted(page_fetches(site)) == sorted(expected_paths(60))
    assert main(["crawl", site.url]) == 0
    assert sorted(page_fetches(site)) == sorted([*expected_paths(60), *expected_paths(60)])
    assert "(crawl 2 of this site; crawl 1 finished 20" in capsys.readouterr().err


def test_export_writes_each_page_once_in_every_format(
    site: ServerThread, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # -p 2: links with their text come back from a parser process too
    assert main(["crawl", site.url, "--state", "s.db", "-o", "crawl.jsonl", "-q", "-p", "2"]) == 0
    conn = sqlite3.connect(tmp_path / "s.db")
    texts = conn.execute(
        "SELECT text, kind FROM links WHERE source = 1 ORDER BY position"
    ).fetchall()
    conn.close()
    assert texts == [
        *((f"to {n}", "a") for n in (1, 2, 0, 0)),
        ("external", "a"),
        ("image 0", "img"),
    ]
    outputs = ["x.csv", "x.jsonl", "x.json"]
    assert main(["export", "s.db", *(arg for out in outputs for arg in ("-o", out))]) == 0
    assert "60 pages from s.db" in capsys.readouterr().err
    crawled = {r["url"]: r for r in jsonl(tmp_path / "crawl.jsonl")}
    exported = jsonl(tmp_path / "x.jsonl")
    assert len(exported) == 60
    # The same records, field for field, but the inlinks: counted once the crawl has ended.
    assert all(r.pop("inlinks") is r.pop("unique_inlinks") is None for r in crawled.values())
    counts = {r["url"]: (r.pop("inlinks"), r.pop("unique_inlinks")) for r in exported}
    assert {r["url"]: r for r in exported} == crawled
    assert counts[site.url + "/"][1] >= 1 and all(n >= m >= 0 for n, m in counts.values())
    assert [
        {k: v for k, v in r.items() if "inlinks" not in k}
        for r in json.loads((tmp_path / "x.json").read_text(encoding="utf-8"))
    ] == exported
    with (tmp_path / "x.csv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.reader(handle))
    assert tuple(rows[0]) == CSV_COLUMNS and len(rows) == 61
    assert {row[0] for row in rows[1:]} == set(crawled)


def test_no_state_writes_no_file(site: ServerThread, tmp_path: Path) -> None:
    assert main(["crawl", site.url, "--no-state", "-n", "3", "-q"]) == 0
    assert list(tmp_path.iterdir()) == []


def test_fresh_starts_over(site: ServerThread, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["crawl", site.url, "--state", "s.db", "-n", "5", "-q"]) == 0
    assert main(["crawl", site.url, "--state", "s.db", "-n", "5", "--fresh"]) == 0
    assert "resum" not in capsys.readouterr().err
    assert len(page_fetches(site)) == 10


def test_another_sites_state_is_refused_unless_fresh(
    serve: ServeFn, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    one, two = serve(site_app(5)), serve(site_app(5))
    assert main(["crawl", one.url, "--state", "s.db", "-q"]) == 0
    before = snapshot(tmp_path)
    assert main(["crawl", two.url, "--state", "s.db", "-q"]) == 2
    err = capsys.readouterr().err
    assert f"holds a crawl of {one.url}/, not {two.url}/" in err and "--fresh" in err
    assert err.count("\n") == 1
    assert snapshot(tmp_path) == before and two.traffic.paths == []
    assert main(["crawl", two.url, "--state", "s.db", "--fresh", "-q"]) == 0
    assert main(["export", "s.db", "-o", "out.jsonl", "-q"]) == 0
    assert {r["url"] for r in jsonl(tmp_path / "out.jsonl")} == {
        two.url + p for p in ("/", "/p/1", "/p/2", "/p/3", "/p/4")
    }


def make_corrupt(path: Path) -> None:
    path.write_bytes(b"this is not a database\n" * 200)


def make_foreign(path: Path) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE notes (body TEXT)")
        conn.execute("INSERT INTO notes VALUES ('mine')")
    conn.close()


def make_newer(path: Path) -> None:
    asyncio.run(_touch_state(path))
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 99")
    conn.close()


async def _touch_state(path: Path) -> None:
    async with SqliteFrontier(path, base_url="http://127.0.0.1/"):
        pass


BAD_FILES = {
    "corrupt": (make_corrupt, "not a sitecrawl state file (corrupt, or not SQLite"),
    "not ours": (make_foreign, "not a sitecrawl state file (an SQLite database of something"),
    "newer schema": (make_newer, "has schema 99, newer than this sitecrawl"),
}


@pytest.mark.parametrize("kind", BAD_FILES)
@pytest.mark.parametrize("command", ["crawl", "crawl --fresh", "export"])
def test_bad_state_file_is_one_line_exit_2_and_untouched(
    kind: str, command: str, site: ServerThread, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    make, message = BAD_FILES[kind]
    make(tmp_path / "s.db")
    before = snapshot(tmp_path)
    argv = (
        ["export", "s.db", "-o", "out.jsonl"]
        if command == "export"
        else ["crawl", site.url, "--state", "s.db", *command.split()[1:]]
    )
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("sitecrawl: error: ") and message in err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert snapshot(tmp_path) == before
    assert site.traffic.paths == []


@pytest.mark.parametrize("command", ["crawl", "export"])
def test_state_locked_by_a_live_crawl_is_refused(
    command: str, site: ServerThread, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    live = SqliteFrontier(tmp_path / "s.db", base_url=site.url + "/")
    asyncio.run(live.open())  # holds the lock, as a running crawl does
    try:
        argv = (
            ["export", "s.db", "-o", "out.jsonl"]
            if command == "export"
            else ["crawl", site.url, "--state", "s.db", "--fresh"]
        )
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert "is locked: another crawl is using it" in err and err.count("\n") == 1
        assert site.traffic.paths == []
    finally:
        asyncio.run(live.close())
    assert main(["crawl", site.url, "--state", "s.db", "-q", "-n", "2"]) == 0


def test_export_of_a_missing_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["export", "nope.db", "-o", "out.csv"]) == 2
    assert "no such state file: nope.db" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_no_state_conflicts_with_state_options(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["crawl", "http://127.0.0.1/", "--no-state", "--fresh"]) == 2
    assert "--no-state cannot be combined" in capsys.readouterr().err
