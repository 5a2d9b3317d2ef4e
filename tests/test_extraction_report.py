"""The HTML report's "Custom extraction" tables, in Chromium: a crawl with -x and --report, the
report built from the state file (streamed) and from memory."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from browser import launch_chromium, open_page
from conftest import ServeFn
from extraction_site import product_pages, shop_app
from servers import checkout_env
from test_extraction import reference


@pytest.fixture(scope="module")
def chromium() -> Iterator[Browser]:
    with launch_chromium() as browser:
        yield browser


@pytest.mark.parametrize("state", [True, False])
def test_the_report_shows_each_rule_and_each_pages_values(
    serve: ServeFn, tmp_path: Path, chromium: Browser, state: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    site = serve(shop_app(30))
    argv = ["crawl", site.url, "-q", "--report", "r.html", "-x", "sku=css:.sku"]
    argv += ["-x", "ga=exists:regex:gtag\\(", *([] if state else ["--no-state"])]
    # A process of its own: Playwright's sync API holds this thread's event loop.
    command = [sys.executable, "-m", "sitecrawl", *argv]
    subprocess.run(command, cwd=tmp_path, env=checkout_env(), check=True, timeout=120)
    refs = [reference(html) for html in product_pages(30)]
    with_sku = sum(1 for r in refs if r["has_sku"])
    with_ga = sum(1 for html in product_pages(30) if "gtag(" in html)
    with open_page(chromium) as (page, events):
        page.goto((tmp_path / "r.html").as_uri(), wait_until="load")
        page.wait_for_selector("html[data-ready='1']", state="attached")
        summary = page.locator("[data-table='extraction'] tbody tr")
        expect(summary).to_have_count(2)
        cells = [row.locator("td").all_text_contents() for row in summary.all()]
        # The home page has no .sku and no gtag: an empty page for each rule.
        assert cells[0][:4] == ["sku", str(with_sku), str(31 - with_sku), str(with_sku)]
        assert cells[1][:4] == ["ga", str(with_ga), str(31 - with_ga), "1"]
        values = page.locator("[data-table='extracted']")
        assert values.get_attribute("data-shown") == "31"
        values.locator("input.filter").fill("SKU-00007")
        expect(values).to_have_attribute("data-shown", "1")
        assert events.page_errors == []
