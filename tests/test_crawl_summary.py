"""What a crawl says on stderr (issue 30, item 12): the summary names the failed pages (the
first few with their kinds, then how many more and where they all are), a crawl off a
terminal prints a progress line every few seconds, and ``-v`` logs each request."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from aiohttp import web

from conftest import ServeFn
from servers import html, site_app
from sitecrawl import _progress
from sitecrawl._cli import main


def broken_app(broken: int) -> web.Application:
    """A home page linking to ``broken`` pages that answer 404 and one good page."""

    async def home(request: web.Request) -> web.Response:
        links = "".join(f'<a href="/gone/{n}">gone {n}</a>' for n in range(broken))
        return html(links + '<a href="/ok">ok</a>', title="home")

    async def ok(request: web.Request) -> web.Response:
        return html("fine", title="ok")

    app = web.Application()
    app.router.add_get("/", home)
    app.router.add_get("/ok", ok)
    return app


def test_the_summary_names_the_first_failed_pages_and_where_the_rest_are(
    serve: ServeFn, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    site = serve(broken_app(8))
    state = tmp_path / "s.db"
    assert main(["crawl", site.url, "--state", str(state), "-c", "1"]) == 0
    lines = capsys.readouterr().err.splitlines()
    start = lines.index("failed: 8 pages")
    named = lines[start + 1 : start + 6]
    assert all(re.fullmatch(rf"  {site.url}/gone/\d  http_status 404", line) for line in named)
    assert lines[start + 6] == (
        f"  and 3 more: sitecrawl export {state} -o pages.csv (error, error_kind)"
    )
    # Without a state file, the rest are in the outputs.
    out = tmp_path / "out.csv"
    assert main(["crawl", site.url, "--no-state", "-o", str(out), "-c", "1"]) == 0
    assert f"  and 3 more: the error and error_kind of {out}" in capsys.readouterr().err


def test_a_crawl_off_a_terminal_prints_a_progress_line_every_few_seconds(
    serve: ServeFn, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(_progress, "CRAWL_LINE_EVERY", 0.2)
    site = serve(site_app(20, delay=0.1))
    assert main(["crawl", site.url, "--no-state", "-c", "1", "--per-host", "1"]) == 0
    err = capsys.readouterr().err
    progress = r"[\d,]+ pages · [\d,]+/s · [\d,]+ queued · \d+ in flight · [\d,]+ errors · \d+ s.*"
    lines = [line for line in err.splitlines() if re.fullmatch(progress, line)]
    assert len(lines) >= 3, err  # 2 s or more of crawling
    # -q: none.
    assert main(["crawl", site.url, "--no-state", "-q"]) == 0
    assert capsys.readouterr().err == ""


def test_verbose_logs_each_request_on_stderr(
    serve: ServeFn, capsys: pytest.CaptureFixture[str]
) -> None:
    site = serve(broken_app(2))
    assert main(["crawl", site.url, "--no-state", "-v"]) == 0
    err = capsys.readouterr().err.splitlines()
    request = r"(\d{3}) [\d,]+ ms ([\d,]+) B (\S+)( \[http_status\] HTTP 404)?"
    logged = {found[3]: found[1] for line in err if (found := re.fullmatch(request, line))}
    assert logged == {
        f"{site.url}/": "200",
        f"{site.url}/ok": "200",
        f"{site.url}/gone/0": "404",
        f"{site.url}/gone/1": "404",
    }, err
    # Without -v: none.
    assert main(["crawl", site.url, "--no-state"]) == 0
    assert not [line for line in capsys.readouterr().err.splitlines() if re.match(request, line)]


def test_the_state_keeps_3_crawls_by_default_and_says_its_size(
    serve: ServeFn, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 30 (10): a state file grew by a whole crawl each re-run; by default it keeps the
    last 3 (``--keep all``: every one), and each run ends saying its size."""
    import sqlite3

    site = serve(site_app(10))
    state = tmp_path / "s.db"
    for run in range(1, 6):
        assert main(["crawl", site.url, "--state", str(state)]) == 0
        last = capsys.readouterr().err.splitlines()[-1]
        kept = min(run, 3)
        assert re.fullmatch(
            rf"state: {re.escape(str(state))}, [\d.,]+ kB, {kept} crawls? kept", last
        ), last
    conn = sqlite3.connect(state)
    try:
        assert [row[0] for row in conn.execute("SELECT id FROM crawls")] == [3, 4, 5]
        assert {row[0] for row in conn.execute("SELECT DISTINCT crawl FROM history")} == {3, 4}
    finally:
        conn.close()
    assert main(["crawl", site.url, "--state", str(state), "--keep", "all"]) == 0
    assert capsys.readouterr().err.splitlines()[-1].endswith(", 4 crawls kept")
    assert main(["crawl", site.url, "--state", str(state), "--keep", "0"]) == 2
    assert "--keep: at least 1 crawl, not 0" in capsys.readouterr().err
