"""Conditional requests: crawl N+1 of a state file asks with ``If-None-Match`` /
``If-Modified-Since``; a ``304`` reuses the previous record (its links still followed), marked
``revalidated``; ``--no-revalidate`` fetches everything. Counted on a real server."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from aiohttp import web

from servers import ServerThread
from sitecrawl._cli import main

PAGES = 100
#: A revalidated record's fields of this crawl (the rest is the previous record).
THIS_CRAWL = ("revalidated", "response_time_ms", "attempts", "depth")
LAST_MODIFIED = "Tue, 01 Dec 2026 10:00:00 GMT"


@dataclass
class Site:
    """100 pages in a chain of links; ``edited`` pages have another body."""

    edited: set[int] = field(default_factory=set)
    body_bytes: int = 0  # bytes of page bodies sent
    not_modified: list[str] = field(default_factory=list)

    def body(self, n: int) -> bytes:
        text = "edited " if n in self.edited else ""
        links = "".join(
            f'<a href="/p/{m}">page {m}</a>' for m in ((n + 1) % PAGES, (n * 7) % PAGES)
        )
        return (
            f"<html><head><title>Page {n}</title></head><body><h1>{text}{n}</h1>"
            f"<p>{'words ' * 200}</p>{links}</body></html>"
        ).encode()

    def app(self) -> web.Application:
        async def page(request: web.Request) -> web.Response:
            n = int(request.match_info["n"])
            if n >= PAGES:
                raise web.HTTPNotFound()
            body = self.body(n)
            etag = '"' + hashlib.sha1(body).hexdigest() + '"'
            headers = {"ETag": etag}
            if n % 2:  # odd pages: Last-Modified only
                headers = {"Last-Modified": LAST_MODIFIED if n not in self.edited else "x"}
            match = request.headers.get("If-None-Match") == etag or (
                n % 2 and request.headers.get("If-Modified-Since") == headers["Last-Modified"]
            )
            if match:
                self.not_modified.append(request.path)
                return web.Response(status=304, headers=headers)
            self.body_bytes += len(body)
            return web.Response(body=body, content_type="text/html", headers=headers)

        async def root(request: web.Request) -> web.Response:  # no validators: always sent
            return web.Response(text='<a href="/p/0">start</a>', content_type="text/html")

        app = web.Application()
        app.router.add_get("/", root)
        app.router.add_get("/p/{n}", page)
        return app


def records(path: Path) -> dict[str, dict[str, object]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return {str(row["url"]).rsplit("/", 2)[-1]: row for row in rows if "/p/" in str(row["url"])}


@pytest.fixture
def site() -> Site:
    return Site()


def test_a_second_crawl_revalidates_and_transfers_only_the_changed_bodies(
    site: Site, tmp_path: Path
) -> None:
    server = ServerThread(site.app()).start()
    try:
        argv = ["crawl", server.url, "--state", str(tmp_path / "s.db"), "-q"]
        assert main([*argv, "-o", str(tmp_path / "one.jsonl")]) == 0
        first = site.body_bytes
        one = records(tmp_path / "one.jsonl")
        assert len(one) == PAGES and not any(row["revalidated"] for row in one.values())
        assert all(row["body_hash"] for row in one.values())
        site.edited = set(range(0, PAGES, 20))  # 5 %
        site.body_bytes = 0
        assert main([*argv, "-o", str(tmp_path / "two.jsonl")]) == 0
        two = records(tmp_path / "two.jsonl")
        assert len(two) == PAGES
        assert site.body_bytes <= first // 10
        revalidated = {name for name, row in two.items() if row["revalidated"]}
        assert revalidated == {str(n) for n in range(PAGES) if n not in site.edited}
        for name in revalidated:  # the previous record, fields and all
            assert {k: v for k, v in two[name].items() if k not in THIS_CRAWL} == {
                k: v for k, v in one[name].items() if k not in THIS_CRAWL
            }
        for n in site.edited:
            assert two[str(n)]["body_hash"] != one[str(n)]["body_hash"]
        # --no-revalidate: every page fetched again, none revalidated.
        site.body_bytes = 0
        assert main([*argv, "--no-revalidate", "-o", str(tmp_path / "three.jsonl")]) == 0
        three = records(tmp_path / "three.jsonl")
        assert not any(row["revalidated"] for row in three.values())
        assert site.body_bytes >= first
    finally:
        server.stop()


def test_a_revalidated_recrawl_counts_its_304s_and_the_bytes_it_received(
    site: Site, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 30 (9): every unchanged page of a re-crawl is a 304, said as such in the summary
    and the report (not ``200``), and only the bodies sent are counted as received."""
    import re

    server = ServerThread(site.app()).start()
    try:
        state = str(tmp_path / "s.db")
        argv = ["crawl", server.url, "--state", state]
        assert main(argv) == 0
        first = capsys.readouterr().err
        site.edited = {0, 50}
        assert main(argv) == 0
        second = capsys.readouterr().err
    finally:
        server.stop()
    # (the status as the summary names it: the server's random port may hold "304")
    assert f"200: {PAGES + 1}" in first and "304 (not modified" not in first
    # The root and the two edited pages sent a body; the others a 304.
    assert "200: 3 · 304 (not modified: record kept): 98 ·" in second

    def received(summary: str) -> float:
        found = re.search(r"received: ([\d.,]+) kB", summary)
        assert found is not None, summary
        return float(found[1].replace(",", ""))

    assert received(second) * 10 < received(first)
    report = tmp_path / "r.html"
    assert main(["report", state, "-o", str(report), "-q"]) == 0
    text = report.read_text(encoding="utf-8")
    assert '>98</div><div class="label">of them 304 not modified (record kept)<' in text
