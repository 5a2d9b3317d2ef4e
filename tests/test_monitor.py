"""Monitors end to end over loopback: the routes served by a real uvicorn server, a site that
changes between runs, webhook receivers (aiohttp) that check the signature over the exact
body, fail first, or take Slack's shape; a restart keeps the schedule and runs nothing twice."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import inspect
import json
import os
import stat
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from starlette.applications import Starlette

from conftest import ServeFn
from servers import ServerThread, html
from sitecrawl import StateError
from sitecrawl.frontier import SqliteFrontier
from sitecrawl.serve import MonitorService, monitor_routes
from uvicorn_server import UvicornThread

SECRET = "s3cret-for-signing"


def changing_site(
    titles: dict[str, str], *, delay: float = 0.0, revalidated: list[str] | None = None
) -> web.Application:
    """``/`` links to ``/a``, ``/b`` and ``/gone``; the titles are the test's to change
    (``/gone`` answers 404 once ``titles["gone"]`` is ``"404"``). Each page has an ETag; a
    request that sends it back (``If-None-Match``) gets 304, its path noted in
    ``revalidated``."""

    async def page(request: web.Request) -> web.Response:
        if delay:
            await asyncio.sleep(delay)
        name = request.match_info.get("name", "home")
        if name not in ("home", "a", "b", "gone"):
            raise web.HTTPNotFound()
        if name == "gone" and titles.get("gone") == "404":
            return html("<p>gone</p>", title="Not found", status=404)
        links = '<a href="/a">a</a> <a href="/b">b</a> <a href="/gone">gone</a>'
        response = html(f"<h1>{name}</h1><p>text</p>{links}", title=titles.get(name, name))
        assert response.text is not None
        etag = '"' + hashlib.sha256(response.text.encode()).hexdigest()[:16] + '"'
        if request.headers.get("If-None-Match") == etag:
            if revalidated is not None:
                revalidated.append(request.path)
            return web.Response(status=304, headers={"ETag": etag})
        response.headers["ETag"] = etag
        return response

    app = web.Application()
    app.router.add_get("/", page)
    app.router.add_get("/{name}", page)
    return app


class Receiver:
    """A webhook receiver: every request's headers and exact body; the first ``fail``
    answers are ``fail_status``."""

    def __init__(self, fail: int = 0, fail_status: int = 503) -> None:
        self.got: list[tuple[dict[str, str], bytes]] = []
        self.fail = fail
        self.fail_status = fail_status

    def app(self) -> web.Application:
        async def hook(request: web.Request) -> web.Response:
            self.got.append((dict(request.headers), await request.read()))
            if len(self.got) <= self.fail:
                return web.Response(status=self.fail_status)
            return web.Response(text="ok")

        app = web.Application()
        app.router.add_post("/hook/{token:.*}", hook)
        return app


def monitors_app(service: MonitorService) -> Starlette:
    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with service:
            yield

    return Starlette(routes=monitor_routes(service), lifespan=lifespan)


@pytest.fixture
def api(tmp_path: Path) -> Iterator[Callable[..., UvicornThread]]:
    started: list[UvicornThread] = []

    def start(**options: Any) -> UvicornThread:
        options = {"attempts": 3, "backoff": 0.05, "tick": 0.2, **options}
        server = UvicornThread(monitors_app(MonitorService(tmp_path / "data", **options)))
        started.append(server.start())
        return server

    yield start
    for server in started:
        if server.server.started and not server.server.should_exit:
            server.stop()


async def wait_for(check: Callable[[], Any], timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if inspect.isawaitable(found):
            found = await found
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting")
        await asyncio.sleep(0.05)


async def get(session: aiohttp.ClientSession, url: str) -> Any:
    async with session.get(url) as response:
        assert response.status == 200, await response.text()
        return await response.json()


async def crawled(session: aiohttp.ClientSession, url: str, crawl: int) -> Any:
    async def check() -> Any:
        view = await get(session, url)
        done = view["last_crawl"] == crawl and view["last_status"] == "finished"
        return view if done and not view["running"] else None

    return await wait_for(check)


async def test_changed_page_posts_a_signed_webhook(
    serve: ServeFn, api: Callable[..., UvicornThread], tmp_path: Path
) -> None:
    titles: dict[str, str] = {}
    revalidated: list[str] = []
    site = serve(changing_site(titles, revalidated=revalidated))
    receiver = Receiver()
    hook = serve(receiver.app())
    server = api()
    body = {
        "url": site.url + "/",
        "every": "1h",
        "webhook": f"{hook.url}/hook/private-path-token",
        "secret": SECRET,
        "max_pages": 10,
        "headers": {"X-Api-Key": "credential-value"},
    }
    async with aiohttp.ClientSession() as session:
        async with session.post(server.url + "/api/monitors", json=body) as response:
            assert response.status == 201, await response.text()
            created = await response.json()
        url = f"{server.url}/api/monitors/{created['id']}"
        first = await crawled(session, url, 1)
        assert not receiver.got  # a first crawl has nothing to compare with
        titles["a"] = "A changed"
        titles["gone"] = "404"
        async with session.post(url + "/run") as response:
            assert response.status == 202
        view = await crawled(session, url, 2)
        await wait_for(lambda: receiver.got)
        headers, raw = receiver.got[0]
        expected = hmac.new(SECRET.encode(), raw, hashlib.sha256).hexdigest()
        assert headers["X-Sitecrawl-Signature"] == f"sha256={expected}"
        sent = json.loads(raw)
        assert sent["monitor"] == created["id"] and sent["crawl"] == 2
        assert sent["previous_crawl"] == 1
        kinds = {(c["url"].removeprefix(site.url), c["kind"]) for c in sent["changes"]}
        assert ("/a", "title") in kinds and ("/gone", "new-broken") in kinds
        title = next(c for c in sent["changes"] if c["kind"] == "title")
        assert (title["old"], title["new"]) == ("a", "A changed")
        assert sent["failing"] == ["new-broken", "status"]
        assert sent["summary"]["counts"]["title"] == 2 and not sent["truncated"]
        whole = await get(session, sent["diff_url"].replace("/api", server.url + "/api", 1))
        assert len(whole["changes"]) == sent["changes_total"]
        async with session.get(url + "/report") as response:  # the last crawl, its changes
            assert response.status == 200 and response.content_type == "text/html"
            report = await response.text()
        assert "Changes since" in report and "A changed" in report
        async with session.get(f"{server.url}/api/monitors/nope/report") as response:
            assert response.status == 404
        # The second crawl asked conditionally: the pages that had not changed were 304s.
        assert sorted(revalidated) == ["/", "/b"]
        # Secrets are never shown nor stored in plain text.
        listed = json.dumps([first, view, await get(session, server.url + "/api/monitors")])
        for secret in (SECRET, "private-path-token", "credential-value"):
            assert secret not in listed
            for name in os.listdir(tmp_path / "data"):
                assert secret.encode() not in (tmp_path / "data" / name).read_bytes()
        assert view["signed"] and view["credentials"] == ["headers"]
        assert view["webhook"] == f"{hook.url}/…"
        assert view["deliveries"][0]["ok"] and view["deliveries"][0]["attempts"] == 1
    key = tmp_path / "data" / "monitors.key"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600


async def test_failed_deliveries_are_retried_with_backoff_and_shown(
    serve: ServeFn, api: Callable[..., UvicornThread]
) -> None:
    titles: dict[str, str] = {}
    site = serve(changing_site(titles))
    flaky, down = Receiver(fail=2), Receiver(fail=100, fail_status=500)
    flaky_site, down_site = serve(flaky.app()), serve(down.app())
    server = api(attempts=3, backoff=0.1)
    async with aiohttp.ClientSession() as session:
        urls = []
        for hook in (flaky_site, down_site):
            body = {"url": site.url + "/", "every": 3600, "webhook": f"{hook.url}/hook/x"}
            async with session.post(server.url + "/api/monitors", json=body) as response:
                urls.append(f"{server.url}/api/monitors/{(await response.json())['id']}")
        for url in urls:
            await crawled(session, url, 1)
        titles["b"] = "B changed"
        for url in urls:
            async with session.post(url + "/run") as response:
                assert response.status == 202
        good, bad = [await crawled(session, url, 2) for url in urls]
        await wait_for(lambda: len(flaky.got) == 3 and len(down.got) == 3)

        async def delivered() -> Any:
            views = [await get(session, url) for url in urls]
            return views if all(view["deliveries"] for view in views) else None

        good, bad = await wait_for(delivered)
    assert good["deliveries"][0] == {**good["deliveries"][0], "ok": True, "attempts": 3}
    assert good["failed_deliveries"] == 0
    failed = bad["deliveries"][0]
    assert (failed["ok"], failed["attempts"], failed["http_status"]) == (False, 3, 500)
    assert failed["error"] == "HTTP 500" and bad["failed_deliveries"] == 1
    # Each try the same bytes, the same signature; the waits grow (0.1 s, then 0.2 s).
    assert len({body for _, body in flaky.got}) == 1


async def test_slack_format_and_notify_on_fail_on_kinds_only(
    serve: ServeFn, api: Callable[..., UvicornThread]
) -> None:
    titles: dict[str, str] = {}
    site = serve(changing_site(titles))
    slack, quiet = Receiver(), Receiver()
    slack_site, quiet_site = serve(slack.app()), serve(quiet.app())
    server = api()
    async with aiohttp.ClientSession() as session:
        urls = []
        for body in (
            {"webhook": f"{slack_site.url}/hook/T000/B000/XXXX", "format": "slack"},
            {"webhook": f"{quiet_site.url}/hook/q", "notify": "fail_on", "fail_on": ["status"]},
        ):
            body |= {"url": site.url + "/", "every": "1h"}
            async with session.post(server.url + "/api/monitors", json=body) as response:
                assert response.status == 201
                urls.append(f"{server.url}/api/monitors/{(await response.json())['id']}")
        for url in urls:
            await crawled(session, url, 1)
        titles["a"] = "A again"  # a change, but not a failing one
        for url in urls:
            await session.post(url + "/run")
        for url in urls:
            await crawled(session, url, 2)
        await wait_for(lambda: slack.got)
        message = json.loads(slack.got[0][1])
        assert set(message) == {"text", "blocks"}
        assert message["text"] == f"sitecrawl: 2 changes on {site.url}/"  # title, body
        assert any(
            "`title`" in block.get("text", {}).get("text", "") for block in message["blocks"]
        )
        assert not quiet.got  # notify: fail_on, and no status changed
        titles["gone"] = "404"  # now a status change
        await session.post(urls[1] + "/run")
        await crawled(session, urls[1], 3)
        await wait_for(lambda: quiet.got)
        assert json.loads(quiet.got[0][1])["failing"] == ["status"]


async def test_bad_monitors_are_refused_naming_the_option(
    api: Callable[..., UvicornThread], site: ServerThread
) -> None:
    server = api()
    bodies = {
        "max_pagez": {"url": site.url, "every": "1h", "max_pagez": 3},
        "every": {"url": site.url, "every": "soon"},
        "cron": {"url": site.url, "cron": "every day"},
        "fail_on": {"url": site.url, "every": 60, "fail_on": ["nope"]},
        "url": {"url": "ftp://x/", "every": 60},
        "proxy": {"url": site.url, "every": 60, "proxy": "http://127.0.0.1:1/"},
        "max_pages": {"url": site.url, "every": 60, "max_pages": "many"},
    }
    async with aiohttp.ClientSession() as session:
        for name, body in bodies.items():
            async with session.post(server.url + "/api/monitors", json=body) as response:
                assert response.status == 400, name
                assert name in (await response.json())["error"], name
        async with session.get(server.url + "/api/monitors/nope") as response:
            assert response.status == 404
        async with session.delete(server.url + "/api/monitors/nope") as response:
            assert response.status == 404
        assert await get(session, server.url + "/api/monitors") == []


async def test_a_cron_monitor_waits_for_its_time(
    api: Callable[..., UvicornThread], site: ServerThread
) -> None:
    server = api()
    body = {"url": site.url + "/", "cron": "0 6 * * *"}
    async with aiohttp.ClientSession() as session:
        async with session.post(server.url + "/api/monitors", json=body) as response:
            assert response.status == 201
            view = await response.json()
        created = datetime.fromtimestamp(view["created"], UTC)
        six = created.replace(hour=6, minute=0, second=0, microsecond=0)
        expected = six if six > created else six + timedelta(days=1)
        assert view["next_run"] == expected.timestamp()
        await asyncio.sleep(0.6)  # three ticks of the scheduler
        view = await get(session, f"{server.url}/api/monitors/{view['id']}")
    assert view["last_started"] is None and not site.traffic.paths


async def test_restart_keeps_the_schedule_and_never_runs_twice(
    serve: ServeFn, api: Callable[..., UvicornThread], tmp_path: Path
) -> None:
    slow, fast = serve(changing_site({}, delay=0.3)), serve(changing_site({}))
    server = api()
    async with aiohttp.ClientSession() as session:
        ids = {}
        for every, site in (("1h", slow), (2, fast)):
            body = {"url": site.url + "/", "every": every, "max_pages": 4, "max_concurrency": 1}
            async with session.post(server.url + "/api/monitors", json=body) as response:
                ids[every] = (await response.json())["id"]
        hourly = f"{server.url}/api/monitors/{ids['1h']}"
        # A run still going is not started again, by hand or by the schedule.
        view = await wait_for(lambda: _running(session, hourly))
        async with session.post(hourly + "/run") as response:
            assert response.status == 409
        async with session.get(hourly + "/diff") as response:  # the run holds its file
            assert response.status == 409
            assert "running" in (await response.json())["error"]
        first = await crawled(session, hourly, 1)
        # A second server on the same data would run every monitor twice: it refuses.
        with pytest.raises(StateError, match="another server"):
            MonitorService(tmp_path / "data").store.open()
        server.stop()
        stopped = time.time()
        server = api()
        hourly = f"{server.url}/api/monitors/{ids['1h']}"
        often = f"{server.url}/api/monitors/{ids[2]}"
        view = await get(session, hourly)
        assert view["next_run"] == pytest.approx(first["last_started"] + 3600)
        runs_before = (await get(session, often))["last_started"]
        await wait_for(
            lambda: _started_after(session, often, max(stopped, (runs_before or 0) + 2) - 0.5)
        )
        await asyncio.sleep(1.0)
        assert (await get(session, hourly))["last_crawl"] == 1  # not run again
        async with session.delete(often) as response:
            assert response.status == 204
        assert not (tmp_path / "data" / f"monitor-{ids[2]}.sitecrawl.db").exists()
    path = tmp_path / "data" / f"monitor-{ids['1h']}.sitecrawl.db"
    async with SqliteFrontier(path, create=False) as store:
        assert [crawl["id"] for crawl in store.crawls()] == [1]
    # One request at a time (max_concurrency 1): never two runs of the monitor at once.
    assert slow.traffic.peak_in_flight == 1


async def _running(session: aiohttp.ClientSession, url: str) -> Any:
    view = await get(session, url)
    return view if view["running"] else None


async def _started_after(session: aiohttp.ClientSession, url: str, when: float) -> Any:
    view = await get(session, url)
    return view if (view["last_started"] or 0) > when else None
