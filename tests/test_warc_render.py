"""Issue 33: with ``--render``, what the browser loaded is archived: every request Chromium
makes to a crawled host goes through sitecrawl's polite client (:mod:`sitecrawl.render._routes`),
whose exchanges the archive records, so the script, the API answers and the document a
JavaScript page needs are in the WARC as the server sent them (real headless Chromium)."""

from __future__ import annotations

import urllib.request
from pathlib import Path

import pytest

from browser import chromium_path
from conftest import ServeFn
from sitecrawl._cli import main
from spa_site import EXTRA_CALLS, spa_app
from test_warc import records, warcio_check

pytestmark = pytest.mark.timeout(120)


def test_a_rendered_crawl_archives_what_the_browser_loaded(serve: ServeFn, tmp_path: Path) -> None:
    server = serve(spa_app(8))
    archive = tmp_path / "site.warc.gz"
    argv = ["crawl", server.url + "/", "-q", "--no-state", "-p", "1", "-o", str(archive)]
    assert main([*argv, "--render", "always", "--browser", chromium_path()]) == 0
    warcio_check(archive)
    payloads: dict[str, list[bytes]] = {}
    revisits = []
    for record, payload in records(archive):
        headers = record.rec_headers
        url = (headers.get_header("WARC-Target-URI") or "").removeprefix(server.url)
        if record.rec_type == "response":
            payloads.setdefault(url, []).append(payload)
        elif record.rec_type == "revisit":  # the app shells: one document, archived once
            revisits.append((url, headers.get_header("WARC-Refers-To-Target-URI")))
    for url, refers in revisits:
        assert refers is not None, url  # identical payloads: each names its first capture
        payloads.setdefault(url, []).extend(payloads[refers.removeprefix(server.url)])
    needed = ["/app/1", "/app.js", "/api/page/app/1"]  # the app page, its script, its API call
    needed += [f"/api/extra/{k}" for k in range(EXTRA_CALLS)]
    for path in needed:
        with urllib.request.urlopen(server.url + path) as answer:  # what the server sends
            assert answer.read() in payloads[path], path
    assert len(payloads["/app.js"]) == 1  # the renders share one fetch of the script
    assert "/api/secret" not in payloads  # robots.txt disallows it: neither asked nor archived
