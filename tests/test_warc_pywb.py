"""Issue 33: what ``-o FILE.warc.gz`` and ``-o FILE.wacz`` write replays through pywb, the
archive tool, started on loopback after the site is gone: ``id_`` (the archived payload) is
byte-equal to what the site sent, and the rewritten replay (``mp_``) is the page.

pywb lives in its own venv (it pins ``redis==2.10.6``; the project needs ``redis>=5``):
``$SITECRAWL_PYWB_VENV`` or ``.venv-pywb`` at the repository root, made by
``.ci/install-pywb.sh``. Without it the tests fail (they do not skip)."""

from __future__ import annotations

import gzip
import os
import socket
import subprocess
import time
import urllib.error
import urllib.request
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from io import BytesIO
from pathlib import Path

import pytest
from aiohttp import web
from warcio.archiveiterator import ArchiveIterator

from servers import ServerThread
from sitecrawl._cli import main

ROOT = Path(__file__).resolve().parent.parent
INSTALL = ".ci/install-pywb.sh"


def _page(title: str, links: list[str], extra: str = "") -> bytes:
    anchors = "".join(f'<a href="{link}">{link}</a>' for link in links)
    return f"<html><head><title>{title}</title></head><body>{anchors}{extra}</body></html>".encode()


BODIES = {
    "/": _page("Replay home", ["/a", "/gz", "/chunked"]),
    "/a": _page("Replay page a", ["/"], "<p>" + "a" * 3000 + "</p>"),
    "/gz": _page("Replay gzip", ["/"], "<p>" + "compressible " * 400 + "</p>"),
    "/chunked": _page("Replay chunked", ["/"], "<p>" + "c" * 5000 + "</p>"),
}


def replay_site() -> web.Application:
    """Pages sent plain, gzip-coded and chunked (the archive holds each payload decoded)."""

    async def handle(request: web.Request) -> web.StreamResponse:
        body = BODIES.get(request.path)
        if body is None:
            raise web.HTTPNotFound()
        if request.path == "/gz":
            coded = gzip.compress(body)
            headers = {"Content-Encoding": "gzip"}
            return web.Response(body=coded, content_type="text/html", headers=headers)
        if request.path == "/chunked":
            stream = web.StreamResponse(headers={"Content-Type": "text/html"})
            stream.enable_chunked_encoding()
            await stream.prepare(request)
            for start in range(0, len(body), 1000):
                await stream.write(body[start : start + 1000])
            await stream.write_eof()
            return stream
        return web.Response(body=body, content_type="text/html")

    app = web.Application()
    app.router.add_route("GET", "/{tail:.*}", handle)
    return app


def pywb(name: str) -> str:
    """A pywb command from its venv; a one-line failure naming the installer when missing."""
    venv = Path(os.environ.get("SITECRAWL_PYWB_VENV") or ROOT / ".venv-pywb")
    command = venv / "bin" / name
    if not command.exists():
        pytest.fail(f"pywb is not installed in {venv}: run {INSTALL}", pytrace=False)
    return str(command)


def run(tmp: Path, *argv: str) -> str:
    result = subprocess.run(argv, cwd=tmp, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, f"{argv}: {result.stdout}{result.stderr}"
    return result.stdout + result.stderr


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def fetch(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


@contextmanager
def wayback(tmp_path: Path) -> Iterator[str]:
    """``wayback`` serving the collections under tmp_path on a free loopback port, once it
    answers: its base URL. Killed at the end."""
    command = pywb("wayback")
    port = free_port()
    log = (tmp_path / "wayback.log").open("wb")
    server = subprocess.Popen(
        [command, "-b", "127.0.0.1", "-p", str(port)], cwd=tmp_path, stdout=log, stderr=log
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert server.poll() is None, (tmp_path / "wayback.log").read_text()
            try:
                if fetch(base + "/")[0] == 200:
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline, "wayback did not answer in 60 s"
            time.sleep(0.2)
        yield base
    finally:
        server.kill()
        server.wait(10)
        log.close()


def response_dates(warc: bytes) -> dict[str, str]:
    """URL -> the 14-digit timestamp of its response record."""
    dates = {}
    for record in ArchiveIterator(BytesIO(warc)):
        if record.rec_type == "response":
            date = record.rec_headers.get_header("WARC-Date")
            stamp = "".join(ch for ch in date if ch.isdigit())[:14]
            dates[record.rec_headers.get_header("WARC-Target-URI")] = stamp
    return dates


@pytest.mark.parametrize("suffix", [".warc.gz", ".wacz"])
def test_the_archive_replays_in_pywb_as_the_site_sent_it(tmp_path: Path, suffix: str) -> None:
    pywb("wayback")  # fail first, before crawling, when pywb is missing
    site = ServerThread(replay_site()).start()
    out = tmp_path / f"site{suffix}"
    try:
        assert main(["crawl", site.url + "/", "-q", "-c", "4", "--no-state", "-o", str(out)]) == 0
    finally:
        site.stop()  # what replays comes from the archive, not the site
    base_url = site.url
    if suffix == ".wacz":
        with zipfile.ZipFile(out) as package:
            warc = package.read("archive/data.warc.gz")
        add = ["--unpack-wacz"]
    else:
        warc = out.read_bytes()
        add = []
    dates = response_dates(warc)
    assert {base_url + path for path in BODIES} <= set(dates)
    manager = pywb("wb-manager")
    run(tmp_path, manager, "init", "coll")
    run(tmp_path, manager, "add", *add, "coll", str(out))
    indexed = list((tmp_path / "collections" / "coll" / "indexes").iterdir())
    assert indexed, "wb-manager add indexed nothing"
    with wayback(tmp_path) as base:
        for path, body in BODIES.items():
            url = base_url + path
            status, replayed = fetch(f"{base}/coll/{dates[url]}id_/{url}")
            assert status == 200, (path, replayed[:300])
            assert replayed == body, path
            status, page = fetch(f"{base}/coll/{dates[url]}mp_/{url}")
            assert status == 200, (path, page[:300])
            title = body.split(b"<title>")[1].split(b"</title>")[0]
            assert b"<title>" + title + b"</title>" in page, path
            # Rewritten, not passed through: its links point into the collection.
            assert f"/coll/{dates[url]}mp_/{base_url}/".encode() in page or path != "/", path
        # Nothing else is served: a URL never archived is not found.
        assert fetch(f"{base}/coll/2id_/{base_url}/never-crawled")[0] == 404
