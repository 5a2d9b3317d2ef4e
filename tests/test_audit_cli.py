"""The audit's files: ``export --table`` in every format, formula-safe CSV, the schema 1
migration, and ``report`` / ``crawl --report`` (opened in real Chromium)."""

from __future__ import annotations

import csv
import json
import re
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from audit_site import HOSTILE_TITLE, Externals, audit_app, unused_port
from browser import launch_chromium, open_page
from conftest import ServeFn
from servers import checkout_env
from sitecrawl._cli import main
from sitecrawl.sinks import TABLES as SPECS
from sitecrawl.sinks import csv_cell, csv_columns, csv_row
from test_report import _assert_quiet, _keep_screenshot, _open_report, _rows

TABLES = ("pages", "links", "redirects", "images")


@pytest.fixture(autouse=True)
def _in_tmp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def crawled(serve: ServeFn) -> str:
    """The audit site crawled into s.db (external links present, not fetched); its URL."""
    ext = Externals("http://127.0.0.1:1", "http://127.0.0.1:2", f"http://127.0.0.1:{unused_port()}")
    site = serve(audit_app(ext))
    argv = ["crawl", site.url, "--state", "s.db", "-o", "pages.csv", "-o", "pages.jsonl"]
    assert main([*argv, "-q", "--retries", "0"]) == 0
    return site.url


def jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def from_parquet(path: Path) -> list[dict[str, Any]]:
    """Parquet rows in the JSON shape: structs (hops, hreflang) back to [a, b] lists, the
    ``extracted`` and ``html_values`` objects (JSON text) back to objects."""
    rows = pq.read_table(path).to_pylist()
    for row in rows:
        for name, value in row.items():
            if name in ("extracted", "html_values", "structured_data", "a11y"):
                row[name] = json.loads(value)
            elif isinstance(value, list) and value and isinstance(value[0], dict):
                row[name] = [list(item.values()) for item in value]
    return rows


def test_every_table_round_trips_through_every_format(crawled: str, tmp_path: Path) -> None:
    s = crawled
    tables: dict[str, list[dict[str, Any]]] = {}
    for table in TABLES:
        outs = [f"{table}.{ext}" for ext in ("jsonl", "json", "csv", "parquet")]
        assert (
            main(["export", "s.db", "-t", table, "-q", *(a for o in outs for a in ("-o", o))]) == 0
        )
        rows = jsonl(tmp_path / f"{table}.jsonl")
        # (Crawled without --structured-data: test_structured_data exports that table.)
        assert rows or table == "structured_data", table
        assert json.loads((tmp_path / f"{table}.json").read_text(encoding="utf-8")) == rows
        assert from_parquet(tmp_path / f"{table}.parquet") == rows
        with (tmp_path / f"{table}.csv").open(encoding="utf-8", newline="") as handle:
            # The pages table as a crawl's -o writes it: the course's columns first.
            assert list(csv.reader(handle)) == [
                [heading for heading, _ in csv_columns(SPECS[table])],
                *(csv_row(row, SPECS[table]) for row in rows),
            ]
        tables[table] = rows
    # The same pages the crawl wrote, field for field; the new fields are there.
    assert tables["pages"] == jsonl(tmp_path / "pages.jsonl")
    home = next(p for p in tables["pages"] if p["url"] == s + "/")
    assert (home["h2"], home["lang"], home["hreflang"]) == (["Links"], None, [])
    assert home["word_count"] == 24  # h1, h2, the paragraph and 18 anchor words
    links = {(r["source_url"], r["target_url"], r["kind"]): r for r in tables["links"]}
    missing = links[(s + "/", s + "/missing", "a")]
    assert (missing["anchor_text"], missing["internal"], missing["target_status"]) == (
        "Missing page",
        True,
        404,
    )
    assert links[(s + "/", s + "/style.css", "link")]["rel"] == "stylesheet"
    dead = next(r for r in tables["links"] if r["anchor_text"] == "Dead host")
    assert (dead["internal"], dead["target_status"]) == (False, None)
    assert [
        (r["hop"], r["hop_url"], r["status"], r["final_url"], r["final_status"])
        for r in tables["redirects"]
    ] == [(1, s + "/old", 301, s + "/about", 200), (2, s + "/older", 302, s + "/about", 200)]
    assert {(r["page_url"], r["src"], r["alt"]) for r in tables["images"]} == {
        (s + "/", s + "/img/logo.png", "Logo"),
        (s + "/", s + "/img/missing.png", None),
        (s + "/about", s + "/img/logo.png", "Logo again"),
        # /old redirected to /about, crawled at its own URL: its images are /about's (links_of)
        (s + "/tricky", s + "/img/logo.png", None),
    }


def test_csv_cells_that_would_run_as_formulas_are_neutralized(crawled: str, tmp_path: Path) -> None:
    with (tmp_path / "pages.csv").open(encoding="utf-8", newline="") as handle:
        tricky = next(r for r in csv.DictReader(handle) if r["page_url"].endswith("/tricky"))
    assert tricky["title"] == "'" + HOSTILE_TITLE
    assert (tricky["h1"], tricky["first_paragraph"]) == ("'@cmd", "'-2+3")
    assert tricky["status"] == "200"  # ordinary cells untouched
    assert main(["export", "s.db", "-t", "links", "-o", "links.csv", "-q"]) == 0
    with (tmp_path / "links.csv").open(encoding="utf-8", newline="") as handle:
        texts = {r["anchor_text"] for r in csv.DictReader(handle)}
    assert "'+SUM(1)" in texts and "+SUM(1)" not in texts
    for raw in ("=1", "+1", "-1", "@a", "\tx", "\rx"):
        assert csv_cell(raw) == "'" + raw
    assert csv_cell(["=a", "b"]) == "'=a\nb" and csv_cell(-1) == "'-1" and csv_cell("a=b") == "a=b"


def test_parquet_without_pyarrow_names_the_extra(crawled: str, tmp_path: Path) -> None:
    blocker = tmp_path / "no_pyarrow" / "pyarrow"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ImportError('pyarrow is not installed')\n")
    env = checkout_env()
    env["PYTHONPATH"] = f"{blocker.parent}:{env['PYTHONPATH']}"
    done = subprocess.run(
        [sys.executable, "-m", "sitecrawl", "export", "s.db", "-t", "links", "-o", "x.parquet"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "sitecrawl: error: writing .parquet needs pyarrow: pip install 'sitecrawl[parquet]'"
    ]
    assert not (tmp_path / "x.parquet").exists()


SCHEMA_1 = """
PRAGMA application_id = 1396920919;  -- 0x53435257 "SCRW"
CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE urls (id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, url TEXT,
    depth INTEGER NOT NULL, state INTEGER NOT NULL);
CREATE INDEX urls_queue ON urls (depth, id) WHERE state = 0;
CREATE TABLE pages (id INTEGER PRIMARY KEY, final_url TEXT, status INTEGER, content_type TEXT,
    depth INTEGER NOT NULL, title TEXT, h1 TEXT, first_paragraph TEXT, meta_description TEXT,
    canonical TEXT, image_urls TEXT NOT NULL, response_time_ms REAL, size_bytes INTEGER,
    error TEXT, attempts INTEGER NOT NULL, redirects TEXT NOT NULL, in_sitemap INTEGER NOT NULL,
    indexable INTEGER, links TEXT NOT NULL);
CREATE VIEW links (source, position, target, text, rel) AS
    SELECT p.id, j.key, json_extract(j.value, '$[0]'), json_extract(j.value, '$[1]'),
           json_extract(j.value, '$[2]')
    FROM pages AS p, json_each(p.links) AS j;
INSERT INTO meta VALUES ('base_url', 'http://old.test/'), ('created', 'x'), ('sitecrawl', '0');
INSERT INTO urls VALUES (1, 'old.test/', 'http://old.test/', 0, 2), (2, 'old.test/b', NULL, 1, 0);
INSERT INTO pages VALUES (1, 'http://old.test/', 200, 'text/html', 0, 'T', 'H', 'P', NULL, NULL,
    '[]', 1.0, 10, NULL, 1, '[]', 0, 1, '[["http://old.test/b", "to b", null]]');
PRAGMA user_version = 1;
"""


def test_a_schema_1_state_file_is_migrated_in_place(tmp_path: Path) -> None:
    with sqlite3.connect(tmp_path / "v1.db") as conn:
        conn.executescript(SCHEMA_1)
    conn.close()
    assert main(["export", "v1.db", "-t", "links", "-o", "links.jsonl", "-q"]) == 0
    assert jsonl(tmp_path / "links.jsonl") == [
        {
            "source_url": "http://old.test/",
            "position": 0,
            "target_url": "http://old.test/b",
            "anchor_text": "to b",
            "rel": None,
            "kind": "a",
            "internal": True,
            "target_status": None,
            "target_error": None,
            "target_error_kind": None,
            "source": "html",
        }
    ]
    assert main(["export", "v1.db", "-o", "pages.jsonl", "-q"]) == 0
    (page,) = jsonl(tmp_path / "pages.jsonl")
    assert (page["word_count"], page["h2"], page["lang"], page["outgoing_links"]) == (
        None,
        [],
        None,
        ["http://old.test/b"],
    )
    with sqlite3.connect(tmp_path / "v1.db") as conn:
        assert conn.execute("PRAGMA user_version").fetchone() == (4,)
        assert conn.execute("SELECT kind FROM links").fetchall() == [("a",)]
    conn.close()


def test_report_of_a_state_file_opens_in_chromium(
    crawled: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", "s.db", "-o", "report.html"]) == 0
    assert "report of 7 pages: report.html" in capsys.readouterr().err
    report = tmp_path / "report.html"
    html = report.read_text(encoding="utf-8")
    assert HOSTILE_TITLE not in html.split('id="report-data">')[0]  # drawn as text by the script
    with launch_chromium() as browser, open_page(browser) as (page, events):
        _open_report(page, report)
        # /missing, /boom, /private/secret: a crawl fetches pages, not images (check does)
        assert _rows(page, "broken") == 3
        assert _rows(page, "redirects") == 1
        broken = page.locator("[data-table='broken']")
        assert broken.locator("a.url", has_text=crawled + "/missing").count() == 1
        assert page.get_by_text("blocked by robots.txt").count() >= 1
        assert page.locator(".charts svg").count() == 4
        _assert_quiet(events, report.as_uri())
        _keep_screenshot(page, tmp_path, "audit-report.png")


def test_crawl_report_without_state_uses_the_records_in_memory(
    serve: ServeFn, tmp_path: Path
) -> None:
    site = serve(audit_app(None))
    argv = ["crawl", site.url, "--no-state", "--report", "r.html", "-q", "--retries", "0"]
    assert main(argv) == 0
    assert not list(tmp_path.glob("*.db"))
    block = re.search(r'id="report-data">(.*?)</script>', (tmp_path / "r.html").read_text())
    assert block is not None
    tables = {t["id"]: t for t in json.loads(block.group(1))["tables"]}
    broken = {row[0]: row[6] for row in tables["broken"]["rows"]}
    assert broken[site.url + "/missing"] == [
        [site.url + "/", "Missing page", "a", "html"],
        [site.url + "/about", "gone again", "a", "html"],
    ]
    assert site.url + "/private/secret" in broken
    assert [row[0] for row in tables["noalt"]["rows"]] == [site.url + "/", site.url + "/tricky"]


def test_report_and_export_refuse_bad_input(tmp_path: Path) -> None:
    assert main(["report", "nope.db", "-o", "r.html"]) == 2
    assert main(["export", "nope.db", "-t", "links", "-o", "x.csv"]) == 2
    assert main(["export", "nope.db", "-t", "bogus", "-o", "x.csv"]) == 2
