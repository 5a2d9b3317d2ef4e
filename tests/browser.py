"""Real headless Chromium for the tests: Debian's ``chromium`` driven by Playwright over CDP.

Nothing is downloaded: Playwright's bundled driver talks to the system browser, launched with
every background network feature off. A page opened through :func:`open_page` records its
console messages, uncaught errors, dialogs and requests, so a test can assert there were none.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import pytest
from playwright.sync_api import Browser, ConsoleMessage, Dialog, Page, Playwright, sync_playwright

CHROMIUM_ARGS = [
    "--no-sandbox",  # the tests run as root in CI
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
]


def chromium_path() -> str:
    path = os.environ.get("SITECRAWL_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    if not os.path.exists(path):
        pytest.fail(
            f"Chromium not found at {path}: run .ci/install-chromium.sh "
            "(apt-get install chromium) or set SITECRAWL_CHROMIUM",
            pytrace=False,
        )
    return path


@contextmanager
def launch_chromium() -> Iterator[Browser]:
    """Headless Chromium, or a test failure that says why it could not start."""
    path = chromium_path()
    with sync_playwright() as playwright:
        browser = _launch(playwright, path)
        try:
            yield browser
        finally:
            browser.close()


def _launch(playwright: Playwright, path: str) -> Browser:
    try:
        # launch() gives the browser a fresh temporary profile (--user-data-dir) of its own.
        return playwright.chromium.launch(executable_path=path, args=CHROMIUM_ARGS, timeout=60_000)
    except Exception as exc:  # any launch failure must fail the test, with its reason
        pytest.fail(f"headless Chromium ({path}) did not start: {exc}", pytrace=False)


@dataclass
class Events:
    """What happened on a page: anything in here but ``requests`` is a problem."""

    console: list[ConsoleMessage] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)

    @property
    def console_problems(self) -> list[str]:
        return [f"{m.type}: {m.text}" for m in self.console if m.type in ("error", "warning")]


@contextmanager
def open_page(
    browser: Browser, width: int = 1280, height: int = 900
) -> Iterator[tuple[Page, Events]]:
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    events = Events()
    page.on("console", lambda message: events.console.append(message))
    page.on("pageerror", lambda exc: events.page_errors.append(str(exc)))
    page.on("request", lambda request: events.requests.append(request.url))

    def on_dialog(dialog: Dialog) -> None:
        events.dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    page.on("dialog", on_dialog)
    try:
        yield page, events
    finally:
        context.close()
