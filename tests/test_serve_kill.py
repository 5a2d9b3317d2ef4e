"""``kill -9`` of the server mid-crawl, then a server started again on the same ``--data``: the
crawl goes on where it was (status running again) and ends with every page once, nothing
fetched twice beyond what was in flight at the kill."""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path

from conftest import ServeFn
from serve_server import Server
from servers import expected_paths, site_app

PAGES = 100
CONCURRENCY = 4


def test_kill_9_mid_crawl_then_restart_resumes(serve: ServeFn, tmp_path: Path) -> None:
    site = serve(site_app(PAGES, delay=0.03))
    data = tmp_path / "data"
    server = Server(data).start()
    crawl = server.post(
        "/api/crawls", {"url": site.url + "/", "max_concurrency": CONCURRENCY, "sitemaps": False}
    ).json()
    deadline = time.monotonic() + 60
    while server.get(f"/api/crawls/{crawl['id']}").json()["pages"] < 25:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    server.kill()
    before = len(site.traffic.paths)
    assert before < PAGES + 1  # killed mid-crawl (robots.txt and some pages)

    again = Server(data).start()
    try:
        deadline = time.monotonic() + 30
        while True:  # running again, from the pages done before the kill
            resumed = again.get(f"/api/crawls/{crawl['id']}").json()
            if resumed["status"] == "running" and resumed["pages"] >= 25:
                break
            assert resumed["status"] in ("queued", "running") and time.monotonic() < deadline
            time.sleep(0.01)
        assert resumed["pages"] < PAGES
        done = again.wait(crawl["id"], "finished")
        assert done["pages"] == PAGES and done["queued"] == 0
        body = again.get(f"/api/crawls/{crawl['id']}/pages").body.decode()
        urls = [json.loads(line)["url"] for line in body.splitlines()]
        assert len(urls) == len(set(urls)) == PAGES
        assert {url.removeprefix(site.url) for url in urls} == expected_paths(PAGES)
    finally:
        again.stop()
    fetched = Counter(path for path in site.traffic.paths if path != "/robots.txt")
    twice = [path for path, count in fetched.items() if count > 1]
    assert len(twice) <= CONCURRENCY, twice  # at most the requests in flight at the kill
