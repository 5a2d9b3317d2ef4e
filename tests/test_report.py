"""The HTML report: its safety on the server side, then the real thing in headless Chromium."""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import re
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from browser import Events, launch_chromium, open_page
from sitecrawl import Page as PageRow
from sitecrawl.audit import ImageRow, LinkRow, audit
from sitecrawl.report import ReportData, render_report
from sitecrawl.report._html import embed_json

ARTIFACTS = Path(__file__).parent / "artifacts"
S = "https://ex.com"
HOSTILE_TITLE = "<script>alert(1)</script>"
HOSTILE_TITLE_2 = '<img src=x onerror="window.__pwned=1">'
HOSTILE_ALT = '" onerror="alert(2)'
HOSTILE_ALT_2 = '" onerror="window.__pwned=2'
HOSTILE_ANCHOR = "</script><script>window.__pwned=3;alert(3)</script>"
HOSTILE_BASE = S + '/?q="><script>window.__pwned=4</script>'
JS_URL = "javascript:window.__pwned=6"
N_PLAIN = 110


def hostile_data() -> ReportData:
    """117 pages: 110 plain ones, two failures, hostile titles, a redirect, a slow page."""
    pages: list[dict[str, Any]] = [{"url": S + "/", "status": 200, "title": "Home", "depth": 0}]
    for i in range(N_PLAIN):
        pages.append(
            {
                "url": f"{S}/p{i}",
                "status": 200,
                "depth": 1 + i % 3,
                "title": "Same" if i < 2 else f"Page {i}",
                "h1": f"Heading {i}",
                "meta_description": f"Description {i}",
                "response_time_ms": 100.0 + i,
                "size_bytes": 2000 + 100 * i,
                "word_count": 300 + i,
            }
        )
    pages += [
        {"url": S + "/gone", "status": 404, "error": "HTTP 404", "depth": 1},
        {"url": S + "/boom", "status": 500, "error": "HTTP 500", "depth": 2},
        {"url": S + "/hostile", "status": 200, "title": HOSTILE_TITLE, "depth": 1},
        {"url": S + "/hostile2", "status": 200, "title": HOSTILE_TITLE_2, "h1": HOSTILE_TITLE},
        {
            "url": S + "/old",
            "final_url": S + "/p1",
            "status": 200,
            "title": "Same",
            "redirects": [[S + "/old", 301], [S + "/older", 302]],
        },
        {"url": S + "/slow", "status": 200, "title": "Slow", "response_time_ms": 2500.0},
    ]
    links: list[dict[str, Any]] = [
        {"source_url": S + "/", "target_url": f"{S}/p{i}", "anchor_text": f"Page {i}"}
        for i in range(N_PLAIN)
    ]
    links += [
        {"source_url": S + "/", "target_url": S + "/gone", "anchor_text": HOSTILE_ANCHOR},
        {"source_url": S + "/p3", "target_url": S + "/gone", "anchor_text": "gone again"},
        {  # added by JavaScript to the rendered /p4 (--render)
            "source_url": S + "/p4",
            "target_url": S + "/boom",
            "anchor_text": "Crash",
            "source": "js",
        },
        {"source_url": S + "/p5", "target_url": S + "/old", "anchor_text": "Legacy"},
        {
            "source_url": S + "/p5",
            "target_url": JS_URL,
            "anchor_text": "Script",
            "internal": False,
            "error": "unsupported URL scheme",
        },
    ]
    images = [
        {"page_url": S + "/p0", "src": S + "/a.png", "alt": HOSTILE_ALT},
        {"page_url": S + "/p1", "src": S + "/b.png", "alt": HOSTILE_ALT_2},
        {"page_url": S + "/p2", "src": S + "/c.png"},
    ]
    return ReportData.build(
        base_url=HOSTILE_BASE, pages=pages, links=links, images=images, duration_s=12.5
    )


# --- server side ---------------------------------------------------------------------------


def test_embedded_json_cannot_leave_its_script_block() -> None:
    value = {"s": "</script><!-- <script> & \u2028\u2029 é"}
    text = embed_json(value)
    assert not set(text) & {"<", ">", "&", "\u2028", "\u2029"}
    assert json.loads(text) == value
    assert "é" in text  # non-ASCII text stays compact


def test_inline_html_escapes_crawled_strings_and_pins_code_by_hash() -> None:
    html = render_report(hostile_data())
    # Exactly our two scripts; no hostile string arrives raw anywhere.
    assert html.count("<script") == 2
    for raw in (HOSTILE_TITLE, HOSTILE_ALT, HOSTILE_ANCHOR, '"><script>'):
        assert raw not in html
    assert "&quot;&gt;&lt;script&gt;window.__pwned=4" in html  # the base URL, escaped
    # Nothing is loaded from anywhere: no src attribute, every href is in-page.
    markup = re.sub(r'<script type="application/json".*?</script>', "", html, flags=re.S)
    assert re.search(r"\ssrc\s*=", markup) is None
    assert set(re.findall(r'href="(.)', markup)) == {"#"}
    # The CSP admits exactly the inline style and script, by hash.
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html)
    assert policy is not None
    css = re.search(r"<style>(.*?)</style>", html, re.S)
    js = re.search(r"<script>(.*?)</script>", html, re.S)
    assert css is not None and js is not None
    assert policy.group(1) == (
        f"default-src 'none'; style-src '{_hash(css.group(1))}'; "
        f"script-src '{_hash(js.group(1))}'; img-src data:; base-uri 'none'; form-action 'none'"
    )


def test_the_data_block_holds_the_audit() -> None:
    data = hostile_data()
    html = render_report(data)
    block = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', html)
    assert block is not None
    tables = {t["id"]: t for t in json.loads(block.group(1))["tables"]}
    found = audit(data.pages, data.links, data.images, start_url=data.meta.base_url)
    assert [row[0] for row in tables["broken"]["rows"]] == [S + "/gone", S + "/boom", JS_URL]
    assert tables["broken"]["rows"][0][4:] == [
        2,  # pages
        2,  # links
        [[S + "/", HOSTILE_ANCHOR, "a", "html"], [S + "/p3", "gone again", "a", "html"]],
    ]
    assert tables["broken"]["rows"][1][6] == [[S + "/p4", "Crash", "a", "js"]]
    assert len(tables["broken"]["rows"]) == len(found.broken_links)
    assert tables["redirects"]["rows"] == [
        [
            S + "/old",
            2,
            [[S + "/old", 301], [S + "/older", 302]],
            S + "/p1",
            200,
            [[S + "/p5", "Legacy", "a", "html"]],
        ]
    ]
    assert tables["duplicates"]["rows"] == [["title", "Same", 2, [S + "/p0", S + "/p1"]]]
    assert tables["slow"]["rows"] == [[S + "/slow", 2500.0, None]]
    assert len(tables["pages"]["rows"]) == len(data.pages) == N_PLAIN + 7
    assert [r[2] for r in tables["images"]["rows"]] == [HOSTILE_ALT, HOSTILE_ALT_2, None]
    assert tables["noalt"]["rows"] == [[S + "/p2", S + "/c.png"]]


def test_report_data_accepts_rows_and_derives_links_and_rate() -> None:
    data = ReportData.build(
        base_url=S,
        pages=[
            PageRow(url=S + "/", status=200, outgoing_links=(S + "/x",)),
            {"url": S + "/x", "status": 404, "error": "HTTP 404"},
        ],
        duration_s=4.0,
    )
    assert data.meta.pages_per_second == 0.5
    assert data.links == (LinkRow(source_url=S + "/", target_url=S + "/x"),)
    assert data.images == ()
    explicit = ReportData.build(
        base_url=S, pages=[], links=[], images=[ImageRow(page_url=S, src=S + "/i.png")]
    )
    assert explicit.links == () and explicit.meta.duration is None
    assert "No data" in render_report(explicit)  # empty charts say so


def _hash(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()


# --- in Chromium ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def chromium() -> Iterator[Browser]:
    with launch_chromium() as browser:
        yield browser


def _open_report(page: Page, path: Path) -> float:
    """Load the file and wait until its tables are interactive; return the seconds it took."""
    started = time.perf_counter()
    page.goto(path.as_uri(), wait_until="load", timeout=60_000)
    page.wait_for_selector("html[data-ready='1']", state="attached", timeout=60_000)
    return time.perf_counter() - started


def _rows(page: Page, table: str) -> int:
    return page.locator(f"[data-table='{table}'] tbody tr:not(.empty)").count()


def _shown(page: Page, table: str) -> str | None:
    return page.locator(f"[data-table='{table}']").get_attribute("data-shown")


def _wait_shown(page: Page, table: str, count: str) -> None:
    """Wait for a table to show ``count`` rows after filtering (no eval: the CSP forbids it)."""
    expect(page.locator(f"[data-table='{table}']")).to_have_attribute(
        "data-shown", count, timeout=30_000
    )


def _assert_quiet(events: Events, url: str) -> None:
    assert events.console_problems == []
    assert events.page_errors == []
    assert events.dialogs == []
    assert events.requests == [url]  # the file itself, nothing else


def _keep_screenshot(page: Page, tmp_path: Path, name: str) -> None:
    shot = tmp_path / name
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 10_000
    ARTIFACTS.mkdir(exist_ok=True)
    shutil.copyfile(shot, ARTIFACTS / name)
    print(f"\nscreenshot: {shot}\n      copy: {ARTIFACTS / name}")


def test_report_in_chromium_is_inert_interactive_and_complete(
    chromium: Browser, tmp_path: Path
) -> None:
    report = tmp_path / "report.html"
    report.write_text(render_report(hostile_data()), encoding="utf-8")
    with open_page(chromium) as (page, events):
        _open_report(page, report)

        # No script from the data ran: no flag, no dialog, no foreign element or handler.
        assert page.evaluate("typeof window.__pwned") == "undefined"
        assert page.evaluate("document.scripts.length") == 2
        assert page.locator("img, iframe, object, embed").count() == 0
        assert page.locator("a[href^='javascript']").count() == 0
        assert not page.evaluate(
            "[...document.querySelectorAll('*')]"
            ".some(e => [...e.attributes].some(a => a.name.startsWith('on')))"
        )

        # Summary and charts.
        assert page.locator(".cards .card").count() == 12
        assert page.locator(".charts svg").count() == 4
        assert page.locator(".charts svg").first.locator("rect").count() == 3  # 200, 404, 500

        # Tables, with their row counts.
        assert _rows(page, "broken") == 3
        assert _rows(page, "redirects") == 1
        assert _rows(page, "duplicates") == 1
        assert _rows(page, "noalt") == 1
        assert _rows(page, "images") == 3
        assert _rows(page, "pages") == 50
        assert _shown(page, "pages") == str(N_PLAIN + 7)
        assert page.locator("[data-table='sitemap'] tbody tr.empty").count() == 1

        # Hostile strings are text, exactly as crawled.
        broken = page.locator("[data-table='broken']")
        assert broken.locator(".anchor").first.text_content() == HOSTILE_ANCHOR
        # The one referrer whose link JavaScript added says so.
        assert broken.locator(".origin").all_text_contents() == ["added by JavaScript"]
        assert broken.locator("a.url", has_text=JS_URL).get_attribute("href") is None
        assert page.get_by_text(HOSTILE_ALT, exact=True).count() == 1
        pages = page.locator("[data-table='pages']")
        for query, title in (("alert(1)", HOSTILE_TITLE), ("__pwned=1", HOSTILE_TITLE_2)):
            pages.locator("input.filter").fill(query)
            expect(pages.locator("tbody td:nth-child(4)")).to_have_text([title])
            assert _shown(page, "pages") == "1"

        # Filtering.
        pages.locator("input.filter").fill("")
        _wait_shown(page, "pages", str(N_PLAIN + 7))
        broken.locator("input.filter").fill("gone again")
        _wait_shown(page, "broken", "1")
        assert broken.locator("tbody a.url").first.text_content() == S + "/gone"

        # Sorting: response time, slowest first, then fastest first.
        time_header = pages.locator("th", has_text="Time")
        time_header.locator("button").click()
        assert time_header.get_attribute("aria-sort") == "descending"
        assert pages.locator("tbody tr").first.locator("td").first.text_content() == S + "/slow"
        assert pages.locator("tbody tr").first.locator("td").nth(4).text_content() == "2.50 s"
        time_header.locator("button").click()
        assert time_header.get_attribute("aria-sort") == "ascending"
        assert pages.locator("tbody tr").first.locator("td").nth(4).text_content() == "100 ms"

        # Paging.
        pages.locator("button.page-next").click()
        assert pages.locator(".page-info").text_content() == "Page 2 of 3"
        assert _rows(page, "pages") == 50
        pages.locator("button.page-next").click()
        assert _rows(page, "pages") == N_PLAIN + 7 - 100

        assert page.evaluate("typeof window.__pwned") == "undefined"
        _assert_quiet(events, report.as_uri())
        page.locator("#broken").scroll_into_view_if_needed()
        _keep_screenshot(page, tmp_path, "report.png")


def big_data(n: int) -> ReportData:
    """A synthetic crawl of ``n`` pages: 3 links and 1 image each, some failures and redirects."""
    pages = []
    links = []
    images = []
    for i in range(n):
        url = f"https://big.test/section-{i % 97}/article-{i}"
        status = 404 if i % 211 == 0 else 500 if i % 503 == 0 else 200
        pages.append(
            PageRow(
                url=url,
                final_url=url,
                status=status,
                content_type="text/html",
                depth=1 + i % 9,
                title=f"Article {i} about section {i % 97}" if i % 50 else "A shared title",
                h1=f"Article {i}",
                meta_description=f"Everything about article {i} in section {i % 97}.",
                response_time_ms=float(20 + (i * 7919) % 3000),
                size_bytes=5_000 + (i * 104729) % 400_000,
                error=None if status == 200 else f"HTTP {status}",
                word_count=200 + i % 1500,
                indexable=i % 333 != 0,
                in_sitemap=i % 7 != 0,
                redirects=((url.replace("article", "old"), 301),) if i % 101 == 0 else (),
            )
        )
        for step in (1, 17, 4099):
            j = (i + step) % n
            links.append(
                LinkRow(
                    source_url=url,
                    target_url=f"https://big.test/section-{j % 97}/article-{j}",
                    anchor_text=f"Read article {j}",
                )
            )
        images.append(ImageRow(page_url=url, src=f"https://big.test/img/{i}.jpg", alt=None))
    return ReportData(
        meta=ReportData.build(base_url="https://big.test/", pages=(), duration_s=900.0).meta,
        pages=tuple(pages),
        links=tuple(links),
        images=tuple(images),
    )


def test_a_100k_page_report_opens_in_seconds(chromium: Browser, tmp_path: Path) -> None:
    n = 100_000
    data = big_data(n)
    started = time.perf_counter()
    html = render_report(data)
    render_s = time.perf_counter() - started
    report = tmp_path / "big.html"
    report.write_text(html, encoding="utf-8")
    size_mb = report.stat().st_size / 1e6
    with open_page(chromium) as (page, events):
        load_s = _open_report(page, report)
        assert _shown(page, "pages") == str(n)
        assert _rows(page, "pages") == 50

        pages = page.locator("[data-table='pages']")
        started = time.perf_counter()
        pages.locator("input.filter").fill("article-99999")
        _wait_shown(page, "pages", "1")
        filter_s = time.perf_counter() - started
        started = time.perf_counter()
        pages.locator("input.filter").fill("")
        _wait_shown(page, "pages", str(n))
        pages.locator("th", has_text="Time").locator("button").click()
        sort_s = time.perf_counter() - started
        assert pages.locator("tbody tr").first.locator("td").nth(4).text_content() == "3.02 s"
        _assert_quiet(events, report.as_uri())
    print(
        f"\n100k pages: render {render_s:.2f} s, file {size_mb:.1f} MB, "
        f"open until interactive {load_s:.2f} s, filter {filter_s:.2f} s, "
        f"clear + sort {sort_s:.2f} s"
    )
    assert load_s < 15, f"the 100k-page report took {load_s:.1f} s to become interactive"
    assert filter_s < 10 and sort_s < 10
    assert size_mb < 80


def test_a_table_past_its_cap_embeds_the_first_rows_and_names_the_export() -> None:
    data = big_data(300)
    broken = PageRow(url="https://big.test/gone", status=404, error="HTTP 404")
    everyone = tuple(
        LinkRow(source_url=p.url, target_url=broken.url, anchor_text="gone") for p in data.pages
    )
    data = ReportData(
        meta=data.meta,
        pages=(*data.pages, broken),
        links=data.links + everyone,
        images=data.images,
    )
    html = render_report(data, max_rows=40, export_source="'my crawl.db'")
    block = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', html)
    assert block is not None
    tables = {t["id"]: t for t in json.loads(block.group(1))["tables"]}
    assert len(tables["pages"]["rows"]) == 40
    assert (
        "The first 40 rows of 301; 261 more: <code>sitecrawl export &#x27;my crawl.db&#x27; "
        "-t pages -o pages.csv</code>"
    ) in html
    [gone] = [row for row in tables["broken"]["rows"] if row[0] == broken.url]
    assert gone[4] == gone[5] == 300  # pages, links
    assert gone[6]["total"] == 300 and len(gone[6]["items"]) == 20  # 20 embedded
    assert tables["broken"]["more"] == "sitecrawl export 'my crawl.db' -t links -o links.csv"


def test_a_list_cut_short_says_its_real_count_and_the_export(
    chromium: Browser, tmp_path: Path
) -> None:
    """300 pages link to one broken target, twice each: the cell embeds 20 and says the
    other 280 exist, and where; counted in distinct pages, links beside."""
    data = big_data(300)
    broken = PageRow(url="https://big.test/gone", status=404, error="HTTP 404")
    everyone = tuple(
        LinkRow(source_url=p.url, target_url=broken.url, anchor_text=text)
        for p in data.pages
        for text in ("gone", "again")
    )
    data = ReportData(
        meta=data.meta, pages=(*data.pages, broken), links=data.links + everyone, images=()
    )
    report = tmp_path / "report.html"
    report.write_text(render_report(data, export_source="c.db"), encoding="utf-8")
    with open_page(chromium) as (page, events):
        _open_report(page, report)
        table = page.locator("[data-table='broken']")
        row = table.locator("tbody tr", has_text=broken.url)
        cells = row.locator("td")
        assert cells.nth(4).text_content() == "300" and cells.nth(5).text_content() == "600"
        assert row.locator("summary").text_content() == "+295 more"
        assert row.locator("li.not-embedded").text_content() == (
            "280 more, not in this file: sitecrawl export c.db -t links -o links.csv"
        )
        assert row.locator("ul li").count() == 21  # 20 pages (each once), the note
        _assert_quiet(events, report.as_uri())


def test_chart_labels_carry_units_and_never_run_together(chromium: Browser, tmp_path: Path) -> None:
    data = big_data(2000)  # every bucket filled; depths 0, 1-9 and 20 (16 bars: 0 to 15+)
    home = PageRow(url="https://big.test/", status=200, depth=0)
    deep = PageRow(url="https://big.test/deep", status=200, depth=20)
    data = ReportData(meta=data.meta, pages=(home, *data.pages, deep), links=(), images=())
    html = render_report(data)
    assert not re.search(r"(?<![\d,.])1 pages", html)
    assert "Depth 0: 1 page</title>" in html
    report = tmp_path / "report.html"
    report.write_text(html, encoding="utf-8")
    with open_page(chromium) as (page, events):
        _open_report(page, report)
        charts = page.locator(".charts svg")
        labels = page.evaluate(
            """() => [...document.querySelectorAll('.charts svg')].map(svg =>
                [...svg.querySelectorAll('text:not(.v)')].map(t => {
                    const box = t.getBBox();
                    return [t.textContent, box.x, box.x + box.width, box.y];
                }))"""
        )
        assert charts.count() == 4
        for chart in labels:
            for line in {round(y) for _, _, _, y in chart}:  # labels, then units
                row = sorted((left, right) for _, left, right, y in chart if round(y) == line)
                for (_, right), (left, _) in itertools.pairwise(row):
                    assert left - right >= 3, chart  # a gap between neighbours
        texts = [[text for text, *_ in chart] for chart in labels]
        assert texts[2][:4] == ["<100", "ms", "100-250", "ms"]
        assert texts[3][:4] == ["<10", "KB", "10-50", "KB"]
        _assert_quiet(events, report.as_uri())


BIDI_TITLE = "invoice\u202efdp.exe"  # with the override live: "invoiceexe.pdf"
BIDI_ANCHOR = "\u2067click\u2069 \u200fhere\u061c"


def test_bidi_controls_in_crawled_text_are_shown_not_obeyed(
    chromium: Browser, tmp_path: Path
) -> None:
    data = ReportData.build(
        base_url=S + "/",
        pages=[
            {"url": S + "/", "status": 200, "title": "Home", "depth": 0},
            {"url": S + "/bill", "status": 200, "title": BIDI_TITLE, "depth": 1},
            {"url": S + "/gone", "status": 404, "error": "HTTP 404", "depth": 1},
        ],
        links=[{"source_url": S + "/", "target_url": S + "/gone", "anchor_text": BIDI_ANCHOR}],
        duration_s=1.0,
    )
    report = tmp_path / "bidi.html"
    report.write_text(render_report(data), encoding="utf-8")
    with open_page(chromium) as (page, events):
        _open_report(page, report)
        pages = page.locator("[data-table='pages']")
        pages.locator("input.filter").fill("invoice")
        _wait_shown(page, "pages", "1")
        cell = pages.locator("tbody td:nth-child(4)")
        expect(cell).to_have_text(["invoice\\u202efdp.exe"])
        anchor = page.locator("[data-table='broken'] .anchor").first.text_content()
        assert anchor == "\\u2067click\\u2069 \\u200fhere\\u061c"
        # Laid out left to right, character by character, as it reads.
        lefts = cell.evaluate(
            """td => {
                const text = td.firstChild, lefts = [];
                for (let i = 0; i < text.length; i++) {
                    const range = document.createRange();
                    range.setStart(text, i);
                    range.setEnd(text, i + 1);
                    lefts.push(range.getBoundingClientRect().left);
                }
                return lefts;
            }"""
        )
        assert len(lefts) == len("invoice\\u202efdp.exe")
        assert lefts == sorted(lefts) and len(set(lefts)) == len(lefts)
        _assert_quiet(events, report.as_uri())
