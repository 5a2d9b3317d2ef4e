"""The changes drawn: ``sitecrawl diff --report`` writes them as an HTML page, and ``sitecrawl
report`` of a state file keeping an earlier crawl has a "Changes since crawl N" section. A real
site crawled, changed in every planted way, crawled again; the pages opened in Chromium."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page

from browser import launch_chromium, open_page
from servers import ServerThread, checkout_env
from sitecrawl._diff import Change, ChangeSet
from sitecrawl.report import render_changes
from test_diff import Site

#: The planted changes of test_diff's site, by table: the URL paths of its rows.
PLANTED = {
    "changes-new-broken": ["/missing"],
    "changes-removed": ["/p/1"],
    "changes-redirect": ["/old"],
    "changes-noindex": ["/p/4"],
    "changes-added": ["/p/new"],
    "changes-title": ["/p/2"],
    "changes-body": ["/", "/p/2", "/p/3", "/p/4", "/p/7", "/p/8"],  # the index lists others
}


def sitecrawl(tmp_path: Path, *argv: str) -> int:
    """The CLI in a process of its own (Playwright's sync API holds this thread's loop)."""
    command = [sys.executable, "-m", "sitecrawl", *argv]
    done = subprocess.run(command, cwd=tmp_path, env=checkout_env(), timeout=120, check=False)
    return done.returncode


@pytest.fixture(scope="module")
def chromium() -> Iterator[Browser]:
    with launch_chromium() as browser:
        yield browser


@pytest.fixture
def recrawled(tmp_path: Path) -> Iterator[tuple[str, str]]:
    """A state file of two crawls of test_diff's site, changed in between: (path, site URL)."""
    site = Site()
    server = ServerThread(site.app()).start()
    try:
        crawl = ["crawl", server.url, "--state", "s.db", "-q"]
        assert sitecrawl(tmp_path, *crawl) == 0
        site.changed = True
        assert sitecrawl(tmp_path, *crawl) == 0
        yield str(tmp_path / "s.db"), server.url
    finally:
        server.stop()


def shown(page: Page, base: str) -> dict[str, list[str]]:
    """Each change table's URL column as drawn, paths only."""
    tables: dict[str, list[str]] = {}
    for table in page.locator("[data-table^='changes-']").all():
        name = table.get_attribute("data-table")
        assert name is not None
        cells = table.locator("tbody tr td:first-child").all_text_contents()
        tables[name] = [cell.removeprefix(base) for cell in cells]
    return tables


def test_diff_report_and_report_section_show_exactly_the_planted_changes(
    recrawled: tuple[str, str], tmp_path: Path, chromium: Browser
) -> None:
    state, base = recrawled
    assert sitecrawl(tmp_path, "diff", state, "-q", "--report", "diff.html") == 1  # new-broken
    assert sitecrawl(tmp_path, "report", state, "-o", "report.html", "-q") == 0
    for name in ("diff.html", "report.html"):
        path = tmp_path / name
        with open_page(chromium) as (page, events):
            page.goto(path.as_uri(), wait_until="load")
            page.wait_for_selector("html[data-ready='1']", state="attached")
            section = page.locator("#changes")
            assert section.locator("h2").text_content() == "Changes since crawl 1" + "12"
            cards = section.locator(".card .label").all_text_contents()
            assert cards == [
                "new-broken",
                "removed",
                "redirect",
                "noindex",
                "added",
                "title",
                "body",
            ]  # most severe first
            assert shown(page, base) == PLANTED
            # The tables are the page's, most severe first, with what each change was.
            broken = page.locator("[data-table='changes-new-broken'] tbody tr td")
            assert [broken.nth(n).text_content() for n in (1, 2, 3, 4)] == ["—", "404", "1", "1"]
            assert broken.nth(5).locator("a.url").all_text_contents() == [base + "/p/3"]
            title = page.locator("[data-table='changes-title'] tbody tr td")
            assert title.all_text_contents()[1:] == ["Page 2", "Page 2 edited"]
            noindex = page.locator("[data-table='changes-noindex'] tbody tr td")
            assert noindex.all_text_contents()[1:] == ["indexable", "noindex"]
            redirect = page.locator("[data-table='changes-redirect'] tbody tr td")
            assert redirect.all_text_contents()[1:] == [base + "/p/5", base + "/p/6"]
            assert events.page_errors == [] and events.console_problems == []
            assert events.requests == [path.as_uri()]  # nothing loaded
            if name == "report.html":  # the crawl's own report is all there too
                assert page.locator("[data-table='pages']").get_attribute("data-shown") == "43"
                headings = page.locator("section.block > h2").all_text_contents()
                assert headings[0].startswith("Changes since crawl 1")
                assert headings[len(PLANTED) + 1].startswith("Issues")


def test_crawl_report_has_the_section_and_a_report_of_one_crawl_has_none(
    recrawled: tuple[str, str], tmp_path: Path
) -> None:
    state, url = recrawled
    crawl = ["crawl", url, "--state", state, "-q"]
    assert sitecrawl(tmp_path, *crawl, "--report", "three.html") == 0  # unchanged: crawl 3
    three = (tmp_path / "three.html").read_text(encoding="utf-8")
    assert "Changes since crawl 2" in three and "crawl 2 → crawl 3" in three
    assert '<div class="value">0</div><div class="label">changes</div>' in three
    # The same crawl alone in its state file (--keep 1): the report of one crawl, as before.
    assert sitecrawl(tmp_path, *crawl, "--keep", "1", "--report", "four.html") == 0
    assert sitecrawl(tmp_path, "report", state, "-o", "report.html", "-q") == 0
    for name in ("four.html", "report.html"):
        html = (tmp_path / name).read_text(encoding="utf-8")
        assert "Changes since" not in html and "changes-" not in html, name
        assert _block(html)[0]["id"] == "issues"


def _block(html: str) -> list[dict[str, object]]:
    found = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', html)
    assert found is not None
    tables: list[dict[str, object]] = json.loads(found.group(1))["tables"]
    return tables


def test_a_huge_diff_embeds_the_first_rows_of_each_kind_and_names_the_command() -> None:
    hostile = "</script><script>window.__pwned=1</script>"
    changes = [
        Change(f"https://x.test/p/{n:03}", "title", "title", "a", hostile) for n in range(25)
    ]
    changes.append(Change("https://x.test/gone", "removed", None, 200, None))
    found = ChangeSet(
        changes=changes, since="crawl 1", until="crawl 2", command="'my s.db' --from 1 --to 2"
    )
    html = render_changes(found, max_rows=10)
    tables = {str(table["id"]): table for table in _block(html)}
    assert list(tables) == ["changes-removed", "changes-title"]  # most severe first
    assert len(tables["changes-title"]["rows"]) == 10
    assert (
        "The first 10 rows of 25; 15 more: <code>sitecrawl diff &#x27;my s.db&#x27; --from 1"
        " --to 2 -o changes.csv</code>"
    ) in html
    assert html.count("<script") == 2 and hostile not in html
    empty = render_changes(ChangeSet(changes=[], since="crawl 2", until="crawl 3", command="s.db"))
    assert _block(empty) == [] and "Changes since crawl 2" in empty
    assert '<div class="value">0</div><div class="label">changes</div>' in empty


def test_diff_report_bad_path_is_one_line(recrawled: tuple[str, str], tmp_path: Path) -> None:
    state, _ = recrawled
    done = subprocess.run(
        [sys.executable, "-m", "sitecrawl", "diff", state, "--report", "/nonexistent/d.html"],
        cwd=tmp_path,
        env=checkout_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "/nonexistent/d.html" in done.stderr
