"""The web UI in real headless Chromium: the page asks for the token once, starts a crawl from
its form, shows the count rising without a reload, and opens the crawl's report."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from browser import launch_chromium, open_page
from conftest import ServeFn
from serve_server import Server
from servers import site_app

TOKEN = "ui-token-42"


@pytest.fixture(scope="module")
def chromium() -> Iterator[Browser]:
    with launch_chromium() as browser:
        yield browser


def test_start_a_crawl_from_the_form_watch_it_and_open_its_report(
    chromium: Browser, serve: ServeFn, tmp_path: Path
) -> None:
    site = serve(site_app(40, delay=0.05))
    server = Server(tmp_path / "data", token=TOKEN).start()
    try:
        with open_page(chromium) as (page, events):
            page.goto(server.url + "/")
            token = page.locator("#token")
            expect(token).to_be_visible()  # the API said 401: the page asks, once
            token.fill(TOKEN)
            page.locator("#token-form button").click()
            expect(page.locator("#token-box")).to_be_hidden()
            assert page.evaluate("sessionStorage.getItem('sitecrawl-token')") == TOKEN

            form = page.locator("#start")
            form.locator("input[name=url]").fill(site.url + "/")
            form.locator("input[name=per_host]").fill("1")
            form.locator("button[type=submit]").click()
            row = page.locator("#crawls tbody tr").first
            expect(row.locator(".status")).to_have_text(re.compile("queued|running"))
            pages = row.locator(".pages")
            expect(pages).to_have_text(re.compile(r"^[1-9]\d*$"), timeout=30_000)
            first = int(pages.inner_text())
            expect(pages).not_to_have_text(str(first), timeout=30_000)  # rising, no reload
            assert int(pages.inner_text()) > first
            expect(row.locator(".status")).to_have_text("finished", timeout=60_000)
            expect(pages).to_have_text("40")

            with page.context.expect_page() as opened:
                row.locator("button", has_text="Report").click()
            report = opened.value
            report.wait_for_load_state()
            expect(report.locator("body")).to_contain_text(site.url)
            expect(report.locator("body")).to_contain_text("40")

        server_requests = [url for url in events.requests if url.startswith(server.url)]
        assert any(url.endswith("/api/crawls") for url in server_requests)
        problems = [p for p in events.console_problems if "401" not in p]
        assert problems == [] and events.page_errors == [] and events.dialogs == []
    finally:
        server.stop()
