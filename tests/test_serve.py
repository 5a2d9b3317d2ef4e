"""``sitecrawl serve``'s JSON API end to end: a real server subprocess on loopback crawling a
real aiohttp site on loopback, read back through every endpoint and format."""

from __future__ import annotations

import io
import json
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from aiohttp import web

from conftest import ServeFn
from serve_server import Server
from servers import ServerThread, html, site_app

PAUSED_SITE = 150


def small_site() -> web.Application:
    """Four pages: ``/`` links to /a, /b (no title: an issue) and /missing (404)."""

    async def root(request: web.Request) -> web.Response:
        links = '<a href="/a">a</a> <a href="/b">b</a> <a href="/missing">gone</a>'
        return html(f"<h1>Home</h1><main><p>The home page.</p>{links}</main>", title="Home")

    async def a(request: web.Request) -> web.Response:
        return html("<h1>Page A</h1><main><p>All about A.</p></main>", title="A page")

    async def b(request: web.Request) -> web.Response:
        return html("<h1>Page B</h1><main><p>B has no title.</p></main>")

    app = web.Application()
    app.router.add_get("/", root)
    app.router.add_get("/a", a)
    app.router.add_get("/b", b)
    return app


@pytest.fixture(scope="module")
def site() -> Iterator[ServerThread]:
    server = ServerThread(small_site()).start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    running = Server(tmp_path_factory.mktemp("serve") / "data").start()
    yield running
    running.stop()


@pytest.fixture(scope="module")
def crawled(server: Server, site: ServerThread) -> dict[str, Any]:
    answer = server.post("/api/crawls", {"url": site.url + "/", "markdown": True, "per_host": 2})
    assert answer.status == 201, answer.body
    created = answer.json()
    assert created["status"] in ("queued", "running")
    return server.wait(created["id"], "finished")


def lines(body: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in body.decode().splitlines()]


def test_a_crawl_runs_to_its_end_with_its_counts(
    crawled: dict[str, Any], site: ServerThread
) -> None:
    assert crawled["pages"] == 4 and crawled["queued"] == 0
    assert crawled["errors"] >= 1  # the 404
    assert crawled["started"] <= crawled["finished"]
    assert crawled["options"] == {"markdown": True, "per_host": 2}


def test_the_list_is_newest_first(
    server: Server, site: ServerThread, crawled: dict[str, Any]
) -> None:
    later = server.post("/api/crawls", {"url": site.url + "/a", "max_depth": 0}).json()
    server.wait(later["id"], "finished")
    ids = [crawl["id"] for crawl in server.get("/api/crawls").json()]
    assert ids.index(later["id"]) < ids.index(crawled["id"])
    assert server.get("/api/crawls/nosuchcrawl").status == 404


def test_pages_as_json_lines_csv_and_parquet(
    server: Server, crawled: dict[str, Any], site: ServerThread
) -> None:
    base = f"/api/crawls/{crawled['id']}/pages"
    answer = server.get(base)
    assert answer.status == 200 and answer.headers["content-type"].startswith(
        "application/x-ndjson"
    )
    pages = lines(answer.body)
    urls = sorted(page["url"] for page in pages)
    assert urls == sorted(site.url + path for path in ("/", "/a", "/b", "/missing"))
    assert {page["url"]: page["status"] for page in pages}[site.url + "/missing"] == 404
    cut = lines(server.get(base + "?fields=url,status").body)
    assert all(list(row) == ["url", "status"] for row in cut) and len(cut) == 4
    csv = server.get(base + "?format=csv&fields=url,title").body.decode().splitlines()
    assert csv[0] == "url,title" and len(csv) == 5
    assert f"{site.url}/a,A page" in csv
    table = pq.read_table(io.BytesIO(server.get(base + "?format=parquet").body))
    assert table.num_rows == 4 and "status" in table.column_names
    assert server.get(base + "?format=xml").status == 400
    bad = server.get(base + "?fields=url,nosuchfield")
    assert bad.status == 400 and "nosuchfield" in bad.json()["error"]


def test_issues_report_and_markdown(
    server: Server, crawled: dict[str, Any], site: ServerThread
) -> None:
    one = f"/api/crawls/{crawled['id']}"
    issues = lines(server.get(one + "/issues").body)
    assert any(row["url"] == site.url + "/missing" for row in issues), issues
    assert any(row["url"] == site.url + "/b" and "title" in row["check"] for row in issues), issues
    report = server.get(one + "/report")
    assert report.status == 200 and report.headers["content-type"].startswith("text/html")
    assert b"<html" in report.body and site.url.encode() in report.body
    page = urllib.parse.quote(site.url + "/a", safe="")
    markdown = server.get(f"{one}/markdown/{page}")
    assert markdown.status == 200 and "All about A." in markdown.body.decode()
    missing = urllib.parse.quote(site.url + "/nowhere", safe="")
    assert server.get(f"{one}/markdown/{missing}").status == 404


def test_events_stream_progress_then_the_end(server: Server, crawled: dict[str, Any]) -> None:
    request = urllib.request.Request(f"{server.url}/api/crawls/{crawled['id']}/events")
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        text = response.read().decode()
    events = [block for block in text.split("\n\n") if block.strip()]
    assert events[0].startswith("event: progress\ndata: ")
    assert events[-1].startswith("event: end\ndata: ")
    assert json.loads(events[-1].split("data: ", 1)[1])["status"] == "finished"


@pytest.mark.parametrize(
    ("body", "option"),
    [
        ({"url": "URL", "max_pagez": 3}, "max_pagez"),
        ({"url": "URL", "max_pages": 0}, "max_pages"),
        ({"url": "URL", "max_pages": "many"}, "max_pages"),
        ({"url": "URL", "obey_robots": "no"}, "obey_robots"),
        ({"url": "URL", "scope": "galaxy"}, "scope"),
        ({"url": "URL", "include": "not a list"}, "include"),
        ({"url": "URL", "headers": ["X: y"]}, "headers"),
        ({"url": "URL", "cookie_file": "/etc/passwd"}, "cookie_file"),
        ({"url": "URL", "browser": "/bin/sh"}, "browser"),
        ({"url": "URL", "render": "sometimes"}, "render"),
        ({"url": "URL", "extract": {"price": "nonsense:.x"}}, "extract"),
        ({"max_pages": 3}, "url"),
        ({"url": "not a url"}, "url"),
    ],
)
def test_bad_options_are_a_400_naming_the_option(
    server: Server, site: ServerThread, body: dict[str, Any], option: str
) -> None:
    body = {k: (site.url + "/" if v == "URL" else v) for k, v in body.items()}
    before = len(server.get("/api/crawls").json())
    answer = server.post("/api/crawls", body)
    assert answer.status == 400, answer.body
    assert answer.json()["option"] == option and option in answer.json()["error"]
    assert len(server.get("/api/crawls").json()) == before  # nothing was started


def test_a_body_that_is_not_json_is_a_400(server: Server) -> None:
    request = urllib.request.Request(server.url + "/api/crawls", data=b"{nope", method="POST")
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(request, timeout=10)
    with caught.value as answer:
        assert answer.code == 400 and "JSON" in json.loads(answer.read())["error"]


def test_credentials_are_never_answered_nor_stored(server: Server, site: ServerThread) -> None:
    secret = "hunter2-very-secret"
    answer = server.post(
        "/api/crawls",
        {
            "url": site.url + "/",
            "max_depth": 0,
            "auth": f"me:{secret}",
            "headers": {"X-Key": secret},
        },
    )
    assert answer.status == 201
    crawl = server.wait(answer.json()["id"], "finished")
    assert secret.encode() not in answer.body
    assert sorted(crawl["credentials"]) == ["auth", "header x-key"]
    assert secret not in json.dumps(server.get("/api/crawls").json())
    for path in server.data.iterdir():  # the bookkeeping and the state files
        assert secret.encode() not in path.read_bytes(), path


def test_openapi_document_lists_every_route(server: Server) -> None:
    document = server.get("/openapi.json").json()
    assert document["openapi"].startswith("3.1")
    paths = document["paths"]
    assert set(paths["/api/crawls"]) == {"get", "post"}
    assert set(paths["/api/crawls/{id}"]) == {"get", "delete"}
    for tail in ("pause", "resume", "pages", "issues", "report", "markdown/{page}", "events"):
        assert f"/api/crawls/{{id}}/{tail}" in paths
    body = paths["/api/crawls"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert body["required"] == ["url"]
    assert body["properties"]["max_pages"]["type"] == "integer"
    assert body["properties"]["include"]["type"] == "array"
    # The monitors' routes, from their own table; /mcp/ as one entry.
    assert set(paths["/api/monitors"]) == {"get", "post"}
    assert set(paths["/api/monitors/{id}"]) == {"get", "delete"}
    assert set(paths["/api/monitors/{id}/run"]) == {"post"}
    assert set(paths["/api/monitors/{id}/diff"]) == {"get"}
    assert set(paths["/api/monitors/{id}/report"]) == {"get"}
    monitor = paths["/api/monitors"]["post"]
    schema = monitor["requestBody"]["content"]["application/json"]["schema"]
    assert schema["required"] == ["url"]
    assert {"every", "cron", "webhook"} <= set(schema["properties"])
    assert schema["properties"]["max_pages"]["type"] == "integer"  # crawl options too
    assert monitor["tags"] == ["monitors"]
    assert set(paths["/mcp/"]) == {"post"}
    operations = [op["operationId"] for item in paths.values() for op in item.values()]
    assert len(operations) == len(set(operations))


def test_pause_resume_cancel_and_purge(serve: ServeFn, tmp_path: Path) -> None:
    gate = threading.Event()  # closed: the site answers nothing (so nothing ends meanwhile)
    gate.set()
    site = serve(site_app(PAUSED_SITE, delay=0.02, gate=gate))
    server = Server(tmp_path / "data").start()
    try:
        crawl = server.post("/api/crawls", {"url": site.url + "/", "max_concurrency": 2}).json()
        one = f"/api/crawls/{crawl['id']}"
        deadline = time.monotonic() + 60
        while server.get(one).json()["pages"] < 5:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        # While it runs: its events show the count rising, its pages are read as they are.
        seen: list[int] = []
        with urllib.request.urlopen(f"{server.url}{one}/events", timeout=30) as stream:
            while len(set(seen)) < 3:
                line = stream.readline().decode()
                if line.startswith("data: "):
                    seen.append(json.loads(line[6:])["pages"])
        assert seen == sorted(seen) and seen[-1] > seen[0]
        running = lines(server.get(f"{one}/pages").body)
        assert len({row["url"] for row in running}) == len(running) >= seen[0]
        gate.clear()
        assert server.post(f"{one}/pause").status == 200
        gate.set()  # the requests in flight end, and are stored
        paused = server.wait(crawl["id"], "paused")
        time.sleep(0.3)
        assert server.get(one).json()["pages"] == paused["pages"] < PAUSED_SITE
        assert server.post(f"{one}/resume").status == 200
        done = server.wait(crawl["id"], "finished", timeout=120)
        assert done["pages"] == PAUSED_SITE
        urls = [row["url"] for row in lines(server.get(f"{one}/pages").body)]
        assert len(urls) == len(set(urls)) == PAUSED_SITE
        assert server.post(f"{one}/resume").status == 409  # finished

        gate.clear()
        other = server.post("/api/crawls", {"url": site.url + "/", "max_concurrency": 1}).json()
        server.wait(other["id"], "running")
        cancelled = server.request("DELETE", f"/api/crawls/{other['id']}")
        assert cancelled.status == 200
        gate.set()
        assert server.wait(other["id"], "cancelled")["pages"] < PAUSED_SITE
        assert server.request("DELETE", f"/api/crawls/{other['id']}?purge=true").status == 204
        assert server.get(f"/api/crawls/{other['id']}").status == 404
        assert not (tmp_path / "data" / f"{other['id']}.sitecrawl.db").exists()
    finally:
        gate.set()
        server.stop()


def test_max_crawls_queues_the_rest_and_one_host_shares_its_slot(
    serve: ServeFn, tmp_path: Path
) -> None:
    gate = threading.Event()
    site = serve(site_app(20, gate=gate))
    server = Server(tmp_path / "data", "--max-crawls", "2").start()
    try:
        options = {"per_host": 1, "sitemaps": False}
        ids = [
            server.post("/api/crawls", {"url": f"{site.url}/{path}", **options}).json()["id"]
            for path in ("", "p/1", "p/2")
        ]
        server.wait(ids[0], "running")
        server.wait(ids[1], "running")
        time.sleep(0.5)
        assert server.get(f"/api/crawls/{ids[2]}").json()["status"] == "queued"
        gate.set()
        for crawl_id in ids:
            server.wait(crawl_id, "finished")
        # per_host 1 for each crawl, two crawls of the host at once: one slot, one request
        assert site.traffic.host_peak[f"127.0.0.1:{site.port}"] == 1
    finally:
        server.stop()
