"""Output files are never destroyed or left half-written; one writer per format, streaming."""

from __future__ import annotations

import asyncio
import csv
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from conftest import ServeFn
from servers import ServerThread, checkout_env, site_app
from sitecrawl._cli import main
from sitecrawl.frontier import SqliteFrontier
from sitecrawl.sinks import (
    CELL_LIMIT,
    FORMATS,
    TEMP_MARK,
    ParquetSink,
    csv_cell,
    open_writer,
    write_rows,
)
from sitecrawl.sinks._tables import LINKS, PAGES

PREVIOUS = "page_url,h1\nhttp://previous.example/,kept\n"


@pytest.fixture(autouse=True)
def _in_tmp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def leftovers(directory: Path) -> list[str]:
    return [name for name in os.listdir(directory) if TEMP_MARK in name]


def another_site(path: Path, site: ServerThread) -> None:
    assert main(["crawl", site.url + "/p/1", "--state", str(path), "-q", "-n", "1"]) == 0


def corrupt(path: Path, site: ServerThread) -> None:
    path.write_bytes(b"this is not a database\n" * 200)


def newer(path: Path, site: ServerThread) -> None:
    another_site(path, site)
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 99")
    conn.close()


REFUSED: dict[str, Callable[[Path, ServerThread], None]] = {
    "another start URL": another_site,
    "corrupt": corrupt,
    "newer schema": newer,
}


@pytest.mark.parametrize("kind", REFUSED)
def test_a_refused_run_leaves_the_previous_outputs(
    kind: str, site: ServerThread, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    REFUSED[kind](tmp_path / "s.db", site)
    (tmp_path / "pages.csv").write_text(PREVIOUS)
    (tmp_path / "pages.jsonl").write_text("{}\n")
    capsys.readouterr()
    argv = ["crawl", site.url, "--state", "s.db", "-o", "pages.csv", "-o", "pages.jsonl"]
    assert main(argv) == 2
    assert capsys.readouterr().err.startswith("sitecrawl: error: ")
    assert (tmp_path / "pages.csv").read_text() == PREVIOUS
    assert (tmp_path / "pages.jsonl").read_text() == "{}\n"
    assert leftovers(tmp_path) == []


def test_a_run_refused_by_a_lock_leaves_the_previous_outputs(
    site: ServerThread, tmp_path: Path
) -> None:
    live = SqliteFrontier(tmp_path / "s.db", base_url=site.url + "/")
    asyncio.run(live.open())  # holds the lock, as a running crawl does
    try:
        (tmp_path / "pages.csv").write_text(PREVIOUS)
        assert main(["crawl", site.url, "--state", "s.db", "-o", "pages.csv", "-q"]) == 2
        assert (tmp_path / "pages.csv").read_text() == PREVIOUS
    finally:
        asyncio.run(live.close())


def test_the_same_command_twice_at_once(serve: ServeFn, tmp_path: Path) -> None:
    """The second is refused (the state is locked) and the first's outputs are whole."""
    gate = threading.Event()  # the site answers once the second has been refused
    site = serve(site_app(40, delay=0.01, gate=gate))
    argv = [sys.executable, "-m", "sitecrawl", "crawl", site.url, "-c", "2", "-q"]
    argv += ["-o", "pages.jsonl", "-o", "pages.csv", "--state", "s.db"]
    env = checkout_env()
    first = subprocess.Popen(argv, cwd=tmp_path, env=env, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not leftovers(tmp_path) and time.monotonic() < deadline:
            time.sleep(0.02)  # the first one has opened its outputs
        # (not refused, it would wait on the gate: the timeout fails the test)
        second = subprocess.run(
            argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
        )
    finally:
        gate.set()
    assert second.returncode == 2 and "is locked" in second.stderr
    _, err = first.communicate(timeout=60)
    assert first.returncode == 0, err
    raw = (tmp_path / "pages.jsonl").read_bytes()
    assert b"\0" not in raw
    records = [json.loads(line) for line in raw.decode().splitlines()]
    assert len(records) == len({r["url"] for r in records}) == 40
    with (tmp_path / "pages.csv").open(newline="", encoding="utf-8") as handle:
        assert len(list(csv.DictReader(handle))) == 40
    assert leftovers(tmp_path) == []


def test_outputs_appear_only_at_the_end(serve: ServeFn, tmp_path: Path) -> None:
    """While the crawl runs, the final name keeps what it held; the temporary file beside it
    is recognisable by its name."""
    site = serve(site_app(20, delay=0.05))
    (tmp_path / "pages.jsonl").write_text("previous\n")
    argv = [sys.executable, "-m", "sitecrawl", "crawl", site.url, "-c", "1", "--no-state"]
    process = subprocess.Popen(
        [*argv, "-q", "-o", "pages.jsonl"], cwd=tmp_path, env=checkout_env(), text=True
    )
    temp = tmp_path / f".pages.jsonl{TEMP_MARK}{process.pid}"
    deadline = time.monotonic() + 30
    while not (temp.exists() and temp.stat().st_size) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert temp.exists() and (tmp_path / "pages.jsonl").read_text() == "previous\n"
    assert process.wait(60) == 0
    assert len((tmp_path / "pages.jsonl").read_text().splitlines()) == 20
    assert leftovers(tmp_path) == []


def test_stdout_twice_is_a_usage_error(
    site: ServerThread, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["crawl", site.url, "-o", "-", "-o", "-", "-n", "2", "--no-state"]) == 2
    err = capsys.readouterr().err
    assert err == "sitecrawl: error: output - (stdout) is given twice\n"
    assert site.traffic.paths == []
    assert main(["crawl", site.url, "-o", "a.csv", "-o", "./a.csv", "--no-state"]) == 2
    assert "output './a.csv' is given twice" in capsys.readouterr().err


def test_crawl_writes_parquet_too(site: ServerThread, tmp_path: Path) -> None:
    assert main(["crawl", site.url, "-o", "p.parquet", "-o", "p.jsonl", "-q", "--no-state"]) == 0
    rows = pq.read_table(tmp_path / "p.parquet").to_pylist()
    lines = [json.loads(line) for line in (tmp_path / "p.jsonl").read_text().splitlines()]
    assert [row["url"] for row in rows] == [line["url"] for line in lines] and len(rows) == 60
    assert rows[0]["outgoing_links"] == lines[0]["outgoing_links"]


def test_parquet_is_written_in_bounded_row_groups(tmp_path: Path) -> None:
    writer = open_writer(str(tmp_path / "links.parquet"), LINKS)
    assert isinstance(writer, FORMATS[".parquet"])
    writer._rows_per_group = 10  # type: ignore[attr-defined]
    for i in range(25):
        writer.write({"source_url": "http://a/", "position": i, "target_url": f"http://a/{i}"})
    writer.close()
    parquet = pq.ParquetFile(tmp_path / "links.parquet")
    assert [parquet.metadata.row_group(g).num_rows for g in range(3)] == [10, 10, 5]
    assert parquet.read().column("position").to_pylist() == list(range(25))


def test_a_failed_export_writes_no_file(tmp_path: Path) -> None:
    def rows() -> object:
        yield {"url": "http://a/"}
        raise RuntimeError("the store failed")

    with pytest.raises(RuntimeError):
        write_rows(["a.csv", "a.parquet", "a.json"], PAGES, rows())  # type: ignore[arg-type]
    assert os.listdir(tmp_path) == []


def test_a_sink_interrupted_by_ctrl_c_keeps_the_pages_so_far(tmp_path: Path) -> None:
    from sitecrawl import Page

    with pytest.raises(KeyboardInterrupt), ParquetSink(str(tmp_path / "p.parquet")) as sink:
        sink.write(Page(url="http://a/"))
        raise KeyboardInterrupt
    assert pq.read_table(tmp_path / "p.parquet").column("url").to_pylist() == ["http://a/"]
    with pytest.raises(ValueError), ParquetSink(str(tmp_path / "q.parquet")) as sink:
        sink.write(Page(url="http://a/"))
        raise ValueError
    assert sorted(os.listdir(tmp_path)) == ["p.parquet"]


def test_csv_lists_are_one_item_per_line() -> None:
    urls = ["http://a/x;y", "http://a/b,c", "http://a/?q=1;2"]
    assert csv_cell(urls).split("\n") == urls
    assert csv_cell([("http://a/old", 301), ("http://a/new", 302)]) == (
        "http://a/old 301\nhttp://a/new 302"
    )


def test_csv_cells_past_excels_limit_are_cut_visibly() -> None:
    cell = csv_cell("x" * 100_000)
    assert len(cell) == CELL_LIMIT
    assert cell.endswith(" [cut: 100,000 characters in all]") and cell.startswith("x" * 1000)
    assert csv_cell("y" * CELL_LIMIT) == "y" * CELL_LIMIT
    cut = csv_cell([f"http://a/{i}" for i in range(5000)])
    assert len(cut) == CELL_LIMIT and "[cut: " in cut


def test_a_page_with_semicolons_in_its_links_round_trips_through_csv(
    serve: ServeFn, tmp_path: Path
) -> None:
    from aiohttp import web

    async def home(request: web.Request) -> web.Response:
        body = '<a href="/a;b">one</a> <a href="/c;d?x=1;2">two</a>'
        return web.Response(text=f"<html><body>{body}</body></html>", content_type="text/html")

    async def other(request: web.Request) -> web.Response:
        return web.Response(text="<html><body>x</body></html>", content_type="text/html")

    app = web.Application()
    app.router.add_get("/", home)
    app.router.add_get("/{tail:.+}", other)
    site = serve(app)
    assert main(["crawl", site.url, "-o", "p.csv", "-o", "p.jsonl", "-q", "--no-state"]) == 0
    with (tmp_path / "p.csv").open(newline="", encoding="utf-8") as handle:
        rows = {row["page_url"]: row for row in csv.DictReader(handle)}
    records = {
        r["url"]: r for r in map(json.loads, (tmp_path / "p.jsonl").read_text().splitlines())
    }
    home_url = site.url + "/"
    assert len(records[home_url]["outgoing_links"]) == 2
    assert rows[home_url]["outgoing_link_urls"].split("\n") == records[home_url]["outgoing_links"]


COPIES = 400


@pytest.fixture(scope="module")
def big_state(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A state file of 60 x 400 = 24,000 pages: a crawl of the 60-page site, copied in SQL."""
    server = ServerThread(site_app(60)).start()
    try:
        path = tmp_path_factory.mktemp("big") / "big.db"
        assert main(["crawl", server.url, "--state", str(path), "-q"]) == 0
    finally:
        server.stop()
    conn = sqlite3.connect(path)
    columns = [row[1] for row in conn.execute("PRAGMA table_info(pages)") if row[1] != "id"]
    names = ", ".join(columns)
    with conn:
        conn.execute(
            f"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {COPIES})"
            " INSERT INTO urls (id, key, url, depth, state)"
            " SELECT u.id + n.i * 1000000, u.key || '#' || n.i, u.url || '?copy=' || n.i,"
            " u.depth, u.state FROM urls u JOIN pages p ON p.id = u.id, n"
        )
        conn.execute(
            f"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {COPIES})"
            f" INSERT INTO pages (id, {names}) SELECT p.id + n.i * 1000000, {names}"
            " FROM pages p, n"
        )
    conn.close()
    return path


@pytest.mark.parametrize(
    ("table", "name"),
    [("pages", "out.csv"), ("pages", "out.parquet"), ("links", "out.jsonl")],
)
def test_kill_9_during_export_leaves_no_partial_file(
    table: str, name: str, big_state: Path, tmp_path: Path
) -> None:
    argv = [sys.executable, "-m", "sitecrawl", "export", str(big_state), "-t", table, "-o", name]
    process = subprocess.Popen(argv, cwd=tmp_path, env=checkout_env(), stderr=subprocess.PIPE)
    temp = tmp_path / f".{name}{TEMP_MARK}{process.pid}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        if any(path.stat().st_size > 64 * 1024 for path in tmp_path.iterdir()):
            break  # well into the export
        time.sleep(0.005)
    process.kill()
    assert process.wait(10) == -9, "the export ended before the kill: make the state bigger"
    assert process.stderr is not None
    process.stderr.close()
    assert not (tmp_path / name).exists()
    assert os.listdir(tmp_path) == [temp.name]  # recognisable, safe to delete
    partial = temp.stat().st_size
    # The next run on that output removes it: its process is gone (issue 30, item 20).
    assert main(["export", str(big_state), "-t", table, "-o", str(tmp_path / name), "-q"]) == 0
    assert os.listdir(tmp_path) == [name]
    assert (tmp_path / name).stat().st_size > partial


def test_a_report_that_cannot_be_written_is_refused_before_the_crawl(
    site: ServerThread, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["crawl", site.url, "--no-state", "--report", "missing/r.html", "-o", "p.csv"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err == "sitecrawl: error: cannot write missing/r.html: No such file or directory\n"
    assert site.traffic.paths == [] and os.listdir(tmp_path) == []


def test_sigterm_during_export_writes_no_file(big_state: Path, tmp_path: Path) -> None:
    (tmp_path / "out.csv").write_text(PREVIOUS)
    argv = [sys.executable, "-m", "sitecrawl", "export", str(big_state), "-o", "out.csv"]
    process = subprocess.Popen(
        argv, cwd=tmp_path, env=checkout_env(), stderr=subprocess.PIPE, text=True
    )
    temp = tmp_path / f".out.csv{TEMP_MARK}{process.pid}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        if temp.exists() and temp.stat().st_size > 64 * 1024:
            break
        time.sleep(0.005)
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=30)
    assert process.returncode == 143, err
    assert err == "sitecrawl: interrupted\n"
    assert os.listdir(tmp_path) == ["out.csv"] and (tmp_path / "out.csv").read_text() == PREVIOUS


@pytest.mark.parametrize("binary", [True, False], ids=["buffer", "text only"])
def test_json_lines_to_stdout_come_after_what_was_printed(
    binary: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``-`` writes UTF-8 lines to stdout's binary buffer, after the text printed before it;
    a stdout without a buffer (a StringIO) gets the same lines as text."""
    import io

    raw = io.BytesIO()
    out = io.TextIOWrapper(raw, encoding="utf-8") if binary else io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    print("before")
    writer = open_writer("-", PAGES)
    for n in range(3):
        writer.write({"url": f"http://a/{n}", "title": "Café — ça"})
    writer.close()
    text = raw.getvalue().decode() if binary else out.getvalue()  # type: ignore[attr-defined]
    lines = text.splitlines()
    assert lines[0] == "before"
    assert [json.loads(line) for line in lines[1:]] == [
        {"url": f"http://a/{n}", "title": "Café — ça"} for n in range(3)
    ]
