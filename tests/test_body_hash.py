"""The body hash every record keeps (XXH3-64) and how `sitecrawl diff` compares it."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from pathlib import Path

import pytest
from aiohttp import web

from servers import ServerThread
from sitecrawl._cli import main
from sitecrawl._models import body_hash


def test_body_hash_is_16_hex_digits_and_tells_bodies_apart() -> None:
    one, two = body_hash(b"<p>alpha</p>"), body_hash(b"<p>alphb</p>")
    assert len(one) == 16 and int(one, 16) >= 0
    assert one != two
    assert one == body_hash(b"<p>alpha</p>")


@pytest.fixture
def site() -> ServerThread:
    async def page(request: web.Request) -> web.Response:
        return web.Response(text="<title>T</title><p>same words</p>", content_type="text/html")

    app = web.Application()
    app.router.add_get("/", page)
    server = ServerThread(app).start()
    yield server
    server.stop()


def _body_changes(state: str, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> list[str]:
    out = tmp_path / "d.jsonl"
    assert main(["diff", state, "-q", "-o", str(out)]) == 0, capsys.readouterr().err
    capsys.readouterr()
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    return [row["url"] for row in rows if row["kind"] == "body"]


def _set_old_hashes(state: str, value: str) -> None:
    with contextlib.closing(sqlite3.connect(state)) as db, db:
        db.execute("UPDATE history SET body_hash = ? WHERE crawl = 1", (value,))


def test_diff_compares_hashes_of_one_algorithm_only(
    site: ServerThread, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = str(tmp_path / "s.db")
    for _ in range(2):  # two crawls of an unchanged site
        assert main(["crawl", site.url, "--state", state, "-q"]) == 0
    assert _body_changes(state, capsys, tmp_path) == []
    # An older version's hash (SHA-256 cut to 32 hex digits) of the same body: unknown.
    _set_old_hashes(state, "ab" * 16)
    assert _body_changes(state, capsys, tmp_path) == []
    _set_old_hashes(state, "0" * 16)  # a hash of this version's length that differs: a change
    assert _body_changes(state, capsys, tmp_path) == [site.url + "/"]
