"""Issue 33: ``-o FILE.warc.gz`` / ``.warc`` / ``.wacz`` archive every HTTP exchange of a crawl
of a real local site, as archive tools read them: ``warcio check`` passes, payloads are the
bytes the server sent, revisits stand for repeats, no credential is in any record, segments
appear whole, and a crawl killed with ``kill -9`` and resumed has every page archived."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from warcio.archiveiterator import ArchiveIterator

from conftest import ServeFn
from servers import ServerThread, checkout_env
from sitecrawl._cli import main

BIN = Path(sys.executable).parent
SECRETS = ("tok-SECRET-1", "sid-SECRET-2", "key-SECRET-3", "set-SECRET-4")


def _page(title: str, links: list[str], extra: str = "") -> bytes:
    anchors = "".join(f'<a href="{link}">{link}</a>' for link in links)
    return f"<html><head><title>{title}</title></head><body>{anchors}{extra}</body></html>".encode()


def archive_app() -> tuple[web.Application, dict[str, bytes], list[dict[str, str]]]:
    """A small site with what an archive must hold: redirects, a gzip body, a chunked body,
    two URLs with one body, a cookie, ETags (a 304 on a re-crawl), robots.txt, a sitemap.
    Returns the app, the bodies sent (decoded) by path, and the request headers seen."""
    same = _page("same", [], "<p>one body, two URLs</p>")
    bodies = {
        "/": _page("home", ["/a", "/b", "/gz", "/chunked", "/old", "/dup1", "/dup2"]),
        "/a": _page("a", ["/"], "<p>" + "a" * 3000 + "</p>"),
        "/b": _page("b", ["/a"]),
        "/gz": _page("gz", [], "<p>" + "compressible " * 400 + "</p>"),
        "/chunked": _page("chunked", [], "<p>" + "c" * 5000 + "</p>"),
        "/dup1": same,
        "/dup2": same,
        "/robots.txt": b"User-agent: *\nAllow: /\n",
    }
    seen: list[dict[str, str]] = []

    async def handle(request: web.Request) -> web.StreamResponse:
        seen.append(dict(request.headers))
        path = request.path
        if path == "/sitemap.xml":
            return web.Response(
                body=b'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/'
                b'sitemap/0.9"><url><loc>/b</loc></url></urlset>',
                content_type="application/xml",
            )
        if path == "/old":
            raise web.HTTPMovedPermanently("/b")
        body = bodies.get(path)
        if body is None:
            raise web.HTTPNotFound()
        etag = '"' + hashlib.sha1(body).hexdigest()[:16] + '"'
        headers = {"ETag": etag}
        if request.headers.get("If-None-Match") == etag:
            return web.Response(status=304, headers=headers)
        kind = "text/plain" if path == "/robots.txt" else "text/html"
        if path == "/":
            response = web.Response(body=body, content_type=kind, headers=headers)
            response.set_cookie("session", "set-SECRET-4")
            return response
        if path == "/gz":
            headers["Content-Encoding"] = "gzip"
            return web.Response(body=gzip.compress(body), content_type=kind, headers=headers)
        if path == "/chunked":
            stream = web.StreamResponse(headers={**headers, "Content-Type": kind})
            stream.enable_chunked_encoding()
            await stream.prepare(request)
            for start in range(0, len(body), 1000):
                await stream.write(body[start : start + 1000])
            await stream.write_eof()
            return stream
        return web.Response(body=body, content_type=kind, headers=headers)

    app = web.Application()
    app.router.add_route("GET", "/{tail:.*}", handle)
    return app, bodies, seen


@pytest.fixture
def archive_site(serve: ServeFn) -> Iterator[tuple[ServerThread, dict[str, bytes], list[Any]]]:
    app, bodies, seen = archive_app()
    yield serve(app), bodies, seen


def records(*paths: Path) -> list[Any]:
    """Every record of the archives, digests checked, payloads read: (record, payload)."""
    out = []
    for path in paths:
        with open(path, "rb") as stream:
            for record in ArchiveIterator(stream, check_digests="raise"):
                out.append((record, record.content_stream().read()))
    return out


def segments(folder: Path, stem: str = "out") -> list[Path]:
    return sorted(folder.glob(f"{stem}*.warc.gz"), key=lambda p: (len(p.name), p.name))


def by_type(recs: list[Any], kind: str) -> list[Any]:
    return [(r, p) for r, p in recs if r.rec_type == kind]


def warcio_check(*paths: Path) -> None:
    result = subprocess.run(
        [str(BIN / "warcio"), "check", "-v", *map(str, paths)], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "digest pass" in result.stdout and "fail" not in result.stdout


def crawl(site: ServerThread, *extra: str) -> int:
    return main(["crawl", site.url + "/", "-q", "-c", "4", *extra])


def test_every_exchange_is_archived_as_sent_and_warcio_checks_it(
    archive_site: Any, tmp_path: Path
) -> None:
    site, bodies, _ = archive_site
    out = tmp_path / "out.warc.gz"
    assert crawl(site, "--no-state", "-o", str(out)) == 0
    assert segments(tmp_path) == [out]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no open segment
    warcio_check(out)
    recs = records(out)
    assert recs[0][0].rec_type == "warcinfo"
    info = recs[0][1].decode()
    assert "software: sitecrawl/" in info and "robots: obey" in info
    responses = {
        r.rec_headers.get_header("WARC-Target-URI"): (r, p) for r, p in by_type(recs, "response")
    }
    base = site.url
    # Pages, robots.txt, the sitemap, and the redirect as its own response.
    for path in ["/", "/a", "/b", "/gz", "/chunked", "/robots.txt", "/sitemap.xml"]:
        assert base + path in responses, path
    assert (base + "/dup1" in responses) != (base + "/dup2" in responses)  # one body, once
    redirect, _ = responses[base + "/old"]
    assert redirect.http_headers.get_statuscode() == "301"
    assert redirect.http_headers.get_header("Location") == "/b"
    # Payloads: the bytes the server sent, decoded (the headers say the coding was undone).
    for path, body in bodies.items():
        if base + path in responses:
            record, payload = responses[base + path]
            assert payload == body, path
            assert record.http_headers.get_header("Content-Length") == str(len(body))
    gz = responses[base + "/gz"][0].http_headers
    assert gz.get_header("Content-Encoding") is None
    assert gz.get_header("X-Archive-Orig-Content-Encoding") == "gzip"
    chunked = responses[base + "/chunked"][0].http_headers
    assert chunked.get_header("Transfer-Encoding") is None
    assert chunked.get_header("X-Archive-Orig-Transfer-Encoding") == "chunked"
    # Each request names its response.
    ids = {r.rec_headers.get_header("WARC-Record-ID") for r, _ in recs}
    requests = by_type(recs, "request")
    assert len(requests) == len(by_type(recs, "response")) + len(by_type(recs, "revisit"))
    for request, _ in requests:
        assert request.rec_headers.get_header("WARC-Concurrent-To") in ids
        line = request.http_headers
        assert line.protocol == "GET" and line.statusline.endswith(" HTTP/1.1")
        assert line.get_header("Host") == site.url.removeprefix("http://")
        assert request.rec_headers.get_header("WARC-Date")
    # The second URL of one body is a revisit naming the first.
    revisits = {r.rec_headers.get_header("WARC-Target-URI"): r for r, _ in by_type(recs, "revisit")}
    first, second = sorted([base + "/dup1", base + "/dup2"], key=lambda url: url in revisits)
    revisit = revisits[second]
    assert revisit.rec_headers.get_header("WARC-Profile").endswith("identical-payload-digest")
    assert revisit.rec_headers.get_header("WARC-Refers-To-Target-URI") == first
    assert revisit.rec_headers.get_header("WARC-Payload-Digest") == (
        responses[first][0].rec_headers.get_header("WARC-Payload-Digest")
    )


@pytest.mark.parametrize("cookies", [False, True], ids=["default", "archive-cookies"])
def test_no_credential_reaches_the_archive(
    archive_site: Any, tmp_path: Path, cookies: bool
) -> None:
    site, _, seen = archive_site
    out = tmp_path / "out.warc"
    extra = ["--archive-cookies"] if cookies else []
    argv = ["--no-state", "-o", str(out), "-H", "Authorization: Bearer tok-SECRET-1"]
    argv += ["--cookie", "sid=sid-SECRET-2", "-H", "X-Api-Key: key-SECRET-3", *extra]
    assert crawl(site, *argv) == 0
    # They were sent (so the test can fail) ...
    sent = json.dumps(seen)
    assert all(secret in sent for secret in SECRETS[:3])
    # ... and are in no record (the plain .warc: grep the bytes themselves).
    data = out.read_bytes()
    for secret in SECRETS[:3]:
        assert secret.encode() not in data
    assert (b"set-SECRET-4" in data) is cookies
    assert (b"Set-Cookie" in data) is cookies
    for name in (b"\r\nAuthorization:", b"\r\nCookie:", b"\r\nX-Api-Key:"):
        assert name not in data
    warcio_check(out)


def test_a_recrawl_answered_304_is_revisits_in_the_next_segment(
    archive_site: Any, tmp_path: Path
) -> None:
    site, _, _ = archive_site
    out, state = tmp_path / "out.warc.gz", tmp_path / "s.db"
    assert crawl(site, "--state", str(state), "-o", str(out)) == 0
    assert crawl(site, "--state", str(state), "-o", str(out)) == 0  # the next crawl: 304s
    first, second = segments(tmp_path)
    assert second.name == "out-00001.warc.gz"
    warcio_check(first, second)
    # What each URL's revisit refers to: its response, or the response it was a copy of.
    captures = {}
    for record, _ in records(first):
        headers = record.rec_headers
        if record.rec_type == "response":
            captures[headers.get_header("WARC-Target-URI")] = headers
    for record, _ in by_type(records(first), "revisit"):
        headers = record.rec_headers
        original = captures[headers.get_header("WARC-Refers-To-Target-URI")]
        captures[headers.get_header("WARC-Target-URI")] = original
    recs = records(second)
    not_modified = [
        r for r, _ in by_type(recs, "revisit") if r.http_headers.get_statuscode() == "304"
    ]
    assert len(not_modified) >= 6
    for revisit in not_modified:
        headers = revisit.rec_headers
        assert headers.get_header("WARC-Profile").endswith("server-not-modified")
        original = captures[headers.get_header("WARC-Target-URI")]
        assert headers.get_header("WARC-Refers-To-Target-URI") == original.get_header(
            "WARC-Target-URI"
        )
        assert headers.get_header("WARC-Refers-To-Date") == original.get_header("WARC-Date")
        assert headers.get_header("WARC-Refers-To") == original.get_header("WARC-Record-ID")
    # Nothing the first run archived is archived again in full.
    again = {r.rec_headers.get_header("WARC-Target-URI") for r, _ in by_type(recs, "response")}
    assert not again & {
        url
        for url, h in captures.items()
        if h.get_header("WARC-Payload-Digest") and url.endswith(("/a", "/b", "/gz", "/chunked"))
    }


def test_segments_are_numbered_by_size_and_appear_whole(archive_site: Any, tmp_path: Path) -> None:
    site, _, _ = archive_site
    out = tmp_path / "out.warc.gz"
    assert crawl(site, "--no-state", "-o", str(out), "--warc-max-size", "3k") == 0
    found = segments(tmp_path)
    assert len(found) >= 3
    assert [p.name for p in found] == ["out.warc.gz"] + [
        f"out-{n:05d}.warc.gz" for n in range(1, len(found))
    ]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]
    warcio_check(*found)
    for path in found:  # each segment begins with its warcinfo
        assert records(path)[0][0].rec_type == "warcinfo"
    uris = {r.rec_headers.get_header("WARC-Target-URI") for r, _ in records(*found)}
    assert {site.url + p for p in ["/", "/a", "/b", "/gz", "/chunked"]} <= uris


def test_wacz_is_valid_and_indexes_every_capture(archive_site: Any, tmp_path: Path) -> None:
    site, _, _ = archive_site
    out = tmp_path / "site.wacz"
    assert crawl(site, "--no-state", "-o", str(out)) == 0
    result = subprocess.run(
        [str(BIN / "wacz"), "validate", "-f", str(out)], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Validation succeeded" in result.stdout
    with zipfile.ZipFile(out) as package:
        names = set(package.namelist())
        assert {"archive/data.warc.gz", "indexes/index.cdx", "pages/pages.jsonl"} <= names
        assert package.getinfo("archive/data.warc.gz").compress_type == zipfile.ZIP_STORED
        index = package.read("indexes/index.cdx").decode().splitlines()
        pages = [json.loads(line) for line in package.read("pages/pages.jsonl").splitlines()]
        warc = package.read("archive/data.warc.gz")
        described = json.loads(package.read("datapackage.json"))
    assert described["wacz_version"] == "1.1.1"
    assert index == sorted(index)
    (tmp_path / "x.warc.gz").write_bytes(warc)
    recs = records(tmp_path / "x.warc.gz")
    captures = by_type(recs, "response") + by_type(recs, "revisit")
    assert len(index) == len(captures)
    for line in index:  # each line's offset and length find its record
        key, stamp, fields = line.split(" ", 2)
        entry = json.loads(fields)
        chunk = warc[entry["offset"] : entry["offset"] + entry["length"]]
        assert entry["url"].encode() in gzip.decompress(chunk)
        assert len(stamp) == 14 and key.endswith(entry["url"].split("/", 3)[3].lower())
    assert pages[0]["format"] == "json-pages-1.0"
    urls = {page["url"]: page for page in pages[1:]}
    assert {site.url + p for p in ["/", "/a", "/b", "/gz", "/chunked"]} <= set(urls)
    assert urls[site.url + "/a"]["title"] == "a" and urls[site.url + "/a"]["ts"]


SURT_CASES = [
    "http://127.0.0.1:8080/a/B?z=1&a=2",
    "https://www.Example.com/",
    "http://example.com:80/x",
    "https://sub.example.co.uk/p;q?x",
    "http://[::1]:8000/a",
    "https://example.com:8443/a%20b?q=x",
]


@pytest.mark.parametrize("url", SURT_CASES)
def test_index_keys_are_the_surt_package_s(url: str) -> None:
    import surt

    from sitecrawl.sinks._cdxj import surt_key

    assert surt_key(url) == surt.surt(url)


TARGET_CASES = [
    ("http://a/", "/"),
    ("http://a", "/"),
    ("http://a?x=1", "/?x=1"),
    ("http://a#f", "/"),
    ("http://a#/x?y", "/"),
    ("http://a/b/c?d=e#f?g", "/b/c?d=e"),
    ("https://u:p@a:81/x?y=/z", "/x?y=/z"),
    ("http://a?q=/x/y", "/?q=/x/y"),
    ("http://a/?", "/?"),  # the empty query as aiohttp sends it (urlsplit drops it)
    ("http://[::1]:8080/p;q?r", "/p;q?r"),
]


@pytest.mark.parametrize(("url", "target"), TARGET_CASES)
def test_the_request_record_names_the_target_sent(url: str, target: str) -> None:
    from sitecrawl.sinks._warc_records import request_target

    assert request_target(url) == target


def fastwarc_record(
    kind: str, fields: list[tuple[str, str]], block: bytes, content_type: str
) -> bytes:
    """The record FastWARC's ``WarcRecord.write`` makes of the same fields (what the
    archive wrote through FastWARC until bench/RESULTS.md section 38)."""
    import io

    from fastwarc.warc import WarcRecord, WarcRecordType

    made = WarcRecord()
    made.init_headers(getattr(WarcRecordType, kind), fields[0][1][5:-1].encode())
    for name, value in fields[1:]:
        if name == "WARC-Date":
            made.headers.set(name, value)
        else:
            made.headers.append(name, value)
    made.headers.append("Content-Type", content_type)
    made.set_bytes_content(block)
    out = io.BytesIO()
    made.write(out, checksum_data=True)
    return out.getvalue()


@pytest.mark.parametrize(
    ("kind", "extra", "block"),
    [
        (
            "response",
            [("WARC-IP-Address", "127.0.0.1")],
            (b"HTTP/1.1 200 OK\r\n\r\n", b"<p>\xc3\xa9</p>"),
        ),
        ("request", [("WARC-Concurrent-To", "<urn:uuid:0>")], (b"GET / HTTP/1.1\r\n\r\n",)),
        ("revisit", [("WARC-Profile", "server-not-modified")], (b"HTTP/1.1 304 \r\n\r\n",)),
        ("response", [], (b"", b"")),
    ],
)
def test_a_record_is_what_fastwarc_writes_of_it(
    kind: str, extra: list[tuple[str, str]], block: tuple[bytes, ...]
) -> None:
    from sitecrawl.sinks._warc_records import record, record_id, warc_date

    fields = [
        ("WARC-Record-ID", record_id()),
        ("WARC-Date", warc_date(1_764_000_000.25)),
        ("WARC-Target-URI", "http://127.0.0.1:8000/caf%C3%A9?q=1"),
        *extra,
        ("WARC-Payload-Digest", "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"),
    ]
    ours = b"".join(record(kind, fields, block, "application/http; msgtype=response"))
    reference = fastwarc_record(kind, fields, b"".join(block), "application/http; msgtype=response")
    # FastWARC's own block digest is in base 32 too: the same bytes, digest included
    assert ours == reference


def test_without_warcio_the_error_names_the_extra(archive_site: Any, tmp_path: Path) -> None:
    site, _, seen = archive_site
    script = (
        "import sys\nsys.modules['warcio'] = None\nfrom sitecrawl._cli import main\n"
        "raise SystemExit(main(sys.argv[1:]))\n"
    )
    out = tmp_path / "out.warc.gz"
    result = subprocess.run(
        [sys.executable, "-c", script, "crawl", site.url + "/", "-o", str(out)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=checkout_env(),
    )
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1, result.stderr
    assert "pip install 'sitecrawl[warc]'" in result.stderr
    assert seen == [] and list(tmp_path.iterdir()) == []  # no request, no state file


def test_an_open_segment_left_by_a_kill_is_cut_to_whole_records(tmp_path: Path) -> None:
    """Recovery without a crawl: a segment cut in its last record keeps the records before."""
    from sitecrawl.sinks._warc_files import Segments, recover

    source = tmp_path / "full.warc.gz"
    members = [gzip.compress(f"WARC/1.1\r\nrecord {n}\r\n\r\n".encode()) for n in range(3)]
    dead = 2**22 + 7  # no such process
    segments_ = Segments(str(tmp_path / "a.warc.gz"))
    temp = Path(segments_.temp(4, pid=dead))
    temp.write_bytes(b"".join(members) + members[0][:10])
    source.write_bytes(b"")
    assert recover(segments_) == [str(tmp_path / "a-00004.warc.gz")]
    assert (tmp_path / "a-00004.warc.gz").read_bytes() == b"".join(members)
    assert not temp.exists() and segments_.next_number() == 5
    alive = Path(segments_.temp(5, pid=os.getpid()))
    alive.write_bytes(members[0])
    assert recover(segments_) == [] and alive.exists()  # a running process's: left alone


KILL_PAGES = 80


@pytest.mark.parametrize("after", [5, KILL_PAGES // 2], ids=["early", "middle"])
def test_kill_9_then_resume_archives_every_page(serve: ServeFn, tmp_path: Path, after: int) -> None:
    from servers import site_app

    site = serve(site_app(KILL_PAGES, delay=0.02))
    out, state = tmp_path / "out.warc.gz", tmp_path / "s.db"
    argv = [sys.executable, "-m", "sitecrawl", "crawl", site.url, "--state", str(state)]
    argv += ["-c", "4", "-o", str(out)]
    process = subprocess.Popen(
        [*argv, "-o", "-"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=checkout_env(),
        cwd=tmp_path,
    )
    assert process.stdout is not None
    for _ in range(after):
        assert process.stdout.readline(), process.communicate()[1]
    process.kill()
    process.communicate()
    left = [p for p in tmp_path.iterdir() if ".sitecrawl-open-" in p.name]
    assert len(left) == 1 and segments(tmp_path) == []  # open, not under its name yet
    result = subprocess.run(
        [*argv, "-q"], capture_output=True, text=True, timeout=90, env=checkout_env(), cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    found = segments(tmp_path)
    assert [p.name for p in found] == ["out.warc.gz", "out-00001.warc.gz"]
    assert not [p for p in tmp_path.iterdir() if ".sitecrawl-open-" in p.name]
    warcio_check(*found)
    archived = {
        r.rec_headers.get_header("WARC-Target-URI")
        for r, _ in records(*found)
        if r.rec_type in ("response", "revisit")
    }
    pages = tmp_path / "pages.jsonl"
    assert main(["export", str(state), "-o", str(pages), "-q"]) == 0
    urls = [json.loads(line)["url"] for line in pages.read_text().splitlines()]
    assert len(urls) == KILL_PAGES
    assert [url for url in urls if url not in archived] == []


OUT = ("-o", "out.warc.gz")


def test_an_archive_at_its_size_limit_is_one_line_and_stays_whole(
    serve: ServeFn, tmp_path: Path
) -> None:
    """The kernel's EFBIG (``RLIMIT_FSIZE``) writing a segment: one line naming it, exit 1,
    and the segment closed with the whole records it holds."""
    import resource

    from servers import site_app

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (20_000, 20_000))

    site = serve(site_app(60))
    result = subprocess.run(
        [sys.executable, "-m", "sitecrawl", "crawl", site.url, "--no-state", "-q", *OUT],
        capture_output=True,
        text=True,
        timeout=100,
        env=checkout_env(),
        cwd=tmp_path,
        preexec_fn=limit,
    )
    assert (result.returncode, result.stderr) == (
        1,
        "sitecrawl: error: file too large writing out.warc.gz\n",
    )
    assert os.listdir(tmp_path) == ["out.warc.gz"]
    warcio_check(tmp_path / "out.warc.gz")
    assert len(records(tmp_path / "out.warc.gz")) > 3


async def test_the_library_archives_through_a_recorder(archive_site: Any, tmp_path: Path) -> None:
    """``AsyncCrawler(recorder=WarcArchive(...))``: every exchange archived, written once
    ``synced()`` returns, whole once closed."""
    from sitecrawl import AsyncCrawler
    from sitecrawl.sinks import WarcArchive

    site, bodies, _ = archive_site
    archive = WarcArchive(str(tmp_path / "lib.warc.gz"), max_size=10**9)
    async with AsyncCrawler(site.url + "/", recorder=archive) as crawler:
        await crawler.crawl()
    await archive.synced()
    assert archive.backlog == 0
    archive.close()
    assert archive.paths == [str(tmp_path / "lib.warc.gz")]
    payloads = {
        r.rec_headers.get_header("WARC-Target-URI"): p
        for r, p in by_type(records(tmp_path / "lib.warc.gz"), "response")
    }
    assert payloads[site.url + "/a"] == bodies["/a"]
    assert len(crawler.page_data) >= 7
